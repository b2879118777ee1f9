/**
 * Output-file safety, through the built CLI against DynamoDB Local: an output that is the
 * input is refused before a row is read; default reject files next to the input, one per
 * segment, and locked against a second process; a dry run never touches a real load's reject
 * file; files with rows are 0600 and never written through a symlink; an unwritable
 * output is refused before any write.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { link, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, assertCliBuilt } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'outputs-cli', keys: KEYS });
const { endpoint, client, dir, newTable } = aws;
let seq = 0;

const cli = localCli(aws, { stdin: '' });

/** 200 rows over 20 keys; rows 50 and 150 have a bad number (v:N), so they are rejected. */
function csv(rows = 200): string {
  const lines = ['pk,sk,v'];
  for (let i = 0; i < rows; i++) lines.push(`k${i % 20},s${i},${i === 50 || i === 150 ? 'abc' : i}`);
  return `${lines.join('\n')}\n`;
}
const BAD_ROWS = 2;

/** A fresh folder with the input in it. */
async function fixture(name = 'in.csv', content = csv()): Promise<{ folder: string; input: string }> {
  const folder = join(dir(), `case-${++seq}`);
  await mkdir(folder, { recursive: true });
  const input = join(folder, name);
  await writeFile(input, content);
  return { folder, input };
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const mode = (path: string) => statSync(path).mode & 0o777;
const rejectLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

describe('an output that is the input is refused before any row is read', () => {
  it.each([
    ['--rejects', []],
    ['--shard-manifest', ['--shard', 'hash:2']],
    ['--checkpoint', []],
    ['--report', []],
  ])('%s <the input>', async (option, extra) => {
    const table = await newTable();
    const { input } = await fixture();
    const before = sha256(input);
    const run = await cli(['load', input, '--table', table, '--types', 'v:N', ...extra, option, input]);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain(`${option} ${input} is the input file ${input}`);
    expect(sha256(input)).toBe(before);
    expect(await scanAll(client(), table)).toHaveLength(0);
  });

  it('through a symlink to the input, a hard link, and another spelling of its path', async () => {
    const table = await newTable();
    const { folder, input } = await fixture();
    const before = sha256(input);
    await symlink(input, join(folder, 'soft.csv'));
    await link(input, join(folder, 'hard.csv'));
    const soft = await cli(['load', input, '--table', table, '--types', 'v:N', '--rejects', join(folder, 'soft.csv')]);
    expect(soft.code).toBe(64);
    expect(soft.stderr).toMatch(/--rejects .*soft\.csv is the input file .*in\.csv \(.*soft\.csv resolves to .*in\.csv\)/);
    const hard = await cli(['load', input, '--table', table, '--types', 'v:N', '--checkpoint', join(folder, 'hard.csv')]);
    expect(hard.code).toBe(64);
    expect(hard.stderr).toMatch(/--checkpoint .*hard\.csv is the input file .*in\.csv \(a hard link to it\)/);
    const spelled = await cli(['load', 'in.csv', '--table', table, '--types', 'v:N', '--report', `../case-${seq}/./in.csv`], { cwd: folder });
    expect(spelled.code).toBe(64);
    expect(spelled.stderr).toMatch(/--report \.\.\/case-\d+\/\.\/in\.csv is the input file in\.csv/);
    expect(sha256(input)).toBe(before);
    expect(sha256(join(folder, 'hard.csv'))).toBe(before);
    expect(await scanAll(client(), table)).toHaveLength(0);
  });

  it('two outputs naming one file, and an output naming --schema, are refused', async () => {
    const table = await newTable();
    const { folder, input } = await fixture();
    const same = await cli(['load', input, '--table', table, '--types', 'v:N', '--rejects', join(folder, 'out.json'), '--report', join(folder, 'out.json')]);
    expect(same.code).toBe(64);
    expect(same.stderr).toMatch(/--rejects .*out\.json and --report .*out\.json are the same file/);
    const schema = join(folder, 'schema.json');
    await writeFile(schema, '{"v":"N"}');
    const overSchema = await cli(['load', input, '--table', table, '--schema', schema, '--report', schema]);
    expect(overSchema.code).toBe(64);
    expect(overSchema.stderr).toMatch(/--report .*schema\.json is the file of --schema/);
    expect(readFileSync(schema, 'utf8')).toBe('{"v":"N"}');
    expect(existsSync(join(folder, 'out.json'))).toBe(false);
    expect(await scanAll(client(), table)).toHaveLength(0);
  });
});

describe('default reject files and their lock', () => {
  it('the default reject file is next to the input, keeping its name; nothing goes to the working folder', async () => {
    const table = await newTable();
    const { input } = await fixture('x.csv');
    const cwd = join(dir(), `cwd-${++seq}`);
    await mkdir(cwd);
    const run = await cli(['load', input, '--table', table, '--types', 'v:N'], { cwd });
    expect(run.code).toBe(2);
    expect(rejectLines(`${input}.rejects.jsonl`)).toHaveLength(BAD_ROWS);
    expect(await readdir(cwd)).toEqual([]);
    // The lock is gone with the load.
    expect(existsSync(`${input}.rejects.jsonl.lock`)).toBe(false);
  });

  it('two segments over one file, in parallel, write two default reject files that hold every reject once', async () => {
    const table = await newTable();
    const { input } = await fixture('x.csv');
    const runs = await Promise.all([0, 1].map((i) => cli(['load', input, '--table', table, '--types', 'v:N', '--segment', `${i}/2`])));
    expect(runs.map((r) => r.code).every((c) => c === 0 || c === 2)).toBe(true);
    const files = [0, 1].map((i) => `${input}.seg-${i}-of-2.rejects.jsonl`).filter((f) => existsSync(f));
    const lines = files.flatMap(rejectLines);
    expect(lines).toHaveLength(BAD_ROWS);
    expect(lines.map((l) => (JSON.parse(l) as { line: number }).line).sort((a, b) => a - b)).toEqual([52, 152]);
    expect(await scanAll(client(), table)).toHaveLength(200 - BAD_ROWS);
  });

  it('a second process on the same reject file is refused while the first runs; the first is unharmed', async () => {
    const table = await newTable();
    const { folder } = await fixture('unused.csv');
    const rejects = join(folder, 'shared.rejects.jsonl');
    // The first load reads stdin, kept open so it runs until the test closes it.
    const first = spawn(process.execPath, [BIN, 'load', '-', '--input-format', 'csv', '--table', table, '--types', 'v:N', '--rejects', rejects], {
      cwd: folder,
      env: localEnv(endpoint),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let firstErr = '';
    first.stderr.setEncoding('utf8').on('data', (s: string) => (firstErr += s));
    const firstDone = new Promise<number | null>((resolve) => first.on('close', resolve));
    first.stdin.write('pk,sk,v\na,1,1\nb,2,oops\n');
    const lock = `${rejects}.lock`;
    // The loader creates the lock file (O_EXCL) and then writes its holder into it: wait for the holder,
    // not for the file, which can be read empty in between (seen under CPU load: 'Unexpected end of JSON').
    const holder = () => {
      try {
        return JSON.parse(readFileSync(lock, 'utf8')) as { pid?: number; host?: string };
      } catch {
        return undefined;
      }
    };
    for (let i = 0; i < 400 && holder()?.pid === undefined; i++) await new Promise((r) => setTimeout(r, 50));
    expect(holder()).toMatchObject({ pid: first.pid, host: hostname() });

    const { input } = await fixture('second.csv');
    const second = await cli(['load', input, '--table', table, '--types', 'v:N', '--rejects', rejects]);
    expect(second.code).toBe(75);
    expect(second.stderr).toContain(`--rejects ${rejects} is in use by process ${first.pid} on ${hostname()}`);

    first.stdin.end('c,3,3\n');
    expect(await firstDone).toBe(2);
    expect(firstErr).toMatch(/rows read\s+3\b/);
    expect(rejectLines(rejects).map((l) => (JSON.parse(l) as { raw: string }).raw)).toEqual(['b,2,oops']);
    expect(existsSync(lock)).toBe(false);
    // Only the first load wrote: a, b's reject, c.
    expect(await scanAll(client(), table)).toHaveLength(2);
  });

  it('a lock left by a process that died (kill -9) is taken over', async () => {
    const table = await newTable();
    const { input } = await fixture();
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('close', resolve));
    await writeFile(`${input}.rejects.jsonl.lock`, JSON.stringify({ pid: dead.pid, host: hostname(), since: new Date().toISOString() }));
    const run = await cli(['load', input, '--table', table, '--types', 'v:N']);
    expect(run.code).toBe(2);
    expect(rejectLines(`${input}.rejects.jsonl`)).toHaveLength(BAD_ROWS);
    expect(existsSync(`${input}.rejects.jsonl.lock`)).toBe(false);
  });
});

describe("a dry run never touches a real load's reject file", () => {
  it('estimate and load --dry-run leave it byte-identical and write their own', async () => {
    const table = await newTable();
    const { input } = await fixture();
    const real = `${input}.rejects.jsonl`;
    expect((await cli(['load', input, '--table', table, '--types', 'v:N'])).code).toBe(2);
    const before = sha256(real);
    const estimated = await cli(['estimate', input, '--table', table, '--types', 'v:N']);
    expect(estimated.code).toBe(2);
    const dry = await cli(['load', input, '--table', table, '--types', 'v:N', '--dry-run']);
    expect(dry.code).toBe(2);
    expect(sha256(real)).toBe(before);
    expect(rejectLines(`${input}.dry-run.rejects.jsonl`)).toEqual(rejectLines(real));
    // Told to write over it, a dry run refuses.
    const told = await cli(['estimate', input, '--table', table, '--types', 'v:N', '--rejects', real]);
    expect(told.code).toBe(64);
    expect(told.stderr).toContain(`--rejects ${real} exists`);
    expect(sha256(real)).toBe(before);
  });
});

describe('files holding rows are private and never written through a symlink', () => {
  it('reject file, report, checkpoint and shard manifest are 0600', async () => {
    const table = await newTable();
    const { folder, input } = await fixture();
    const files = { report: join(folder, 'run.report.json'), checkpoint: join(folder, 'run.checkpoint.json') };
    const run = await cli(['load', input, '--table', table, '--types', 'v:N', '--shard', 'hash:2', '--report', files.report, '--checkpoint', files.checkpoint]);
    expect(run.code).toBe(2);
    for (const path of [`${input}.rejects.jsonl`, `${input}.${table}.shards.json`, files.report, files.checkpoint])
      expect([path, mode(path).toString(8)]).toEqual([path, '600']);
    // No temporary file is left beside them.
    expect((await readdir(folder)).filter((f) => f.endsWith('.tmp') || f.endsWith('.lock'))).toEqual([]);
  });

  it('a symlink planted at the default reject path or at --report is refused; its target is unchanged', async () => {
    const table = await newTable();
    const { folder, input } = await fixture();
    const target = join(folder, 'precious.txt');
    await writeFile(target, 'do not overwrite\n');
    await symlink(target, `${input}.rejects.jsonl`);
    const planted = await cli(['load', input, '--table', table, '--types', 'v:N']);
    expect(planted.code).toBe(73);
    expect(planted.stderr).toContain(`--rejects ${input}.rejects.jsonl is a symbolic link`);
    await symlink(target, join(folder, 'report.json'));
    const report = await cli([
      'load',
      input,
      '--table',
      table,
      '--types',
      'v:N',
      '--rejects',
      join(folder, 'r.jsonl'),
      '--report',
      join(folder, 'report.json'),
    ]);
    expect(report.code).toBe(73);
    expect(report.stderr).toContain('is a symbolic link');
    expect(readFileSync(target, 'utf8')).toBe('do not overwrite\n');
    expect(lstatSync(`${input}.rejects.jsonl`).isSymbolicLink()).toBe(true);
    expect(await scanAll(client(), table)).toHaveLength(0);
  });
});

describe('an unwritable output is refused before any write', () => {
  it.each([
    ['--rejects', 'no-such-folder/r.jsonl', /--rejects .*no-such-folder\/r\.jsonl cannot be created: the folder .*no-such-folder does not exist/],
    ['--rejects', 'in.csv.d', /--rejects .*in\.csv\.d is a folder/],
    ['--rejects', 'in.csv/r.jsonl', /--rejects .*in\.csv\/r\.jsonl cannot be created: .*in\.csv is not a folder/],
    ['--report', 'no-such-folder/report.json', /--report .*report\.json cannot be created: the folder .*does not exist/],
    ['--checkpoint', 'no-such-folder/c.json', /--checkpoint .*c\.json cannot be created: the folder .*does not exist/],
  ])('%s %s', async (option, relative, message) => {
    const table = await newTable();
    const { folder, input } = await fixture();
    await mkdir(join(folder, 'in.csv.d'));
    const run = await cli(['load', input, '--table', table, '--types', 'v:N', option, join(folder, relative)]);
    expect(run.code).toBe(73);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/Cannot call end/);
    expect(await scanAll(client(), table)).toHaveLength(0);
    expect(await readFile(input, 'utf8')).toBe(csv());
  });
});
