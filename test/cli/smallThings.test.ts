/**
 * The smaller things a new user met in the first hour, each as they met it: an input whose folder does
 * not exist, an estimate that cannot gate a pipeline, another table's shard manifest, a finished
 * checkpoint's rerun, "1 rows", the top-level description, "into estimate", a pipe without `-`, and the
 * checkpoint's silent hash of the input.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'id', type: 'S' as const } };
beforeAll(assertCliBuilt);
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'small', keys: KEYS });

const cli = (args: string[], options: { stdin?: string } = {}): Promise<ProcessRun> =>
  runCli(args, { cwd: dir(), env: localEnv(endpoint), ...(options.stdin === undefined ? {} : { stdin: options.stdin }) });

async function csv(name: string, text: string): Promise<string> {
  const path = join(dir(), name);
  await writeFile(path, text);
  return path;
}

describe('inputs and exit codes', () => {
  it('an input whose folder does not exist is the missing input (66), not "--rejects ... cannot be created" (73)', async () => {
    const table = await newTable();
    const run = await cli(['load', 'missing-dir/file.csv', '--table', table]);
    expect(run.code, run.stderr).toBe(66);
    expect(run.stderr).toContain('input file missing-dir/file.csv does not exist (nor does its folder missing-dir)');
    expect(run.stderr).not.toContain('--rejects');
    // A glob under a missing folder is still the listing's to report, as before.
    expect((await cli(['load', 'missing-dir/*.csv', '--table', table])).code).toBe(66);
  });

  it('an estimate or a dry run where rows would be rejected exits 2, as the load would; a clean one 0', async () => {
    const table = await newTable();
    // A header that is right (a wrong one stops before any row: 65), and no row's total a number.
    const allBad = await csv('not-numbers.csv', 'id,total\na,x\nb,y\n');
    const offline = await cli(['estimate', allBad, '--partition-key', 'id:S', '--types', 'total:N', '--json']);
    expect(offline.code, offline.stderr).toBe(2);
    expect(JSON.parse(offline.stdout)).toMatchObject({ input: { rows: 2, rejected: 2 } });
    const dry = await cli(['load', allBad, '--table', table, '--types', 'total:N', '--dry-run', '--rejects', join(dir(), 'dry.rejects.jsonl')]);
    expect(dry.code, dry.stderr).toBe(2);
    const load = await cli(['load', allBad, '--table', table, '--types', 'total:N', '--rejects', join(dir(), 'load.rejects.jsonl')]);
    expect(load.code).toBe(dry.code);
    const clean = await csv('clean.csv', 'id,total\na,1\nb,2\n');
    expect((await cli(['estimate', clean, '--partition-key', 'id:S'])).code).toBe(0);
  });

  it('query --manifest of another table is refused (78), not 0 items and exit 0', async () => {
    const withSort = { ...KEYS, sortKey: { name: 'n', type: 'N' as const } };
    const table = await newTable(withSort);
    const other = await newTable(withSort);
    const input = await csv('sharded.csv', 'id,n\nhot,1\nhot,2\nhot,4\ncold,3\n');
    const manifest = join(dir(), 'sharded.manifest.json');
    const load = await cli([
      'load',
      input,
      '--table',
      table,
      '--types',
      'n:N',
      '--shard',
      'random:4',
      '--shard-seed',
      '7',
      '--shard-keys',
      'hot',
      '--shard-manifest',
      manifest,
    ]);
    expect(load.code, load.stderr).toBe(0);
    const right = await cli(['query', '--table', table, '--key', 'hot', '--manifest', manifest]);
    expect(right.code, right.stderr).toBe(0);
    expect(right.stdout.trim().split('\n')).toHaveLength(3);
    const wrong = await cli(['query', '--table', other, '--key', 'hot', '--manifest', manifest]);
    expect(wrong.code).toBe(78);
    expect(wrong.stderr).toContain(`is the shard manifest of table "${table}", not of table "${other}"`);
    expect(wrong.stdout).toBe('');
  });
});

describe('what the terminal says', () => {
  it("a finished checkpoint's rerun reports its outcome with this run's rate (0), not the units over a few milliseconds", async () => {
    const table = await newTable();
    const input = await csv('done.csv', `id,n\n${Array.from({ length: 60 }, (_, i) => `k${i},${i}`).join('\n')}\n`);
    const checkpoint = join(dir(), 'done.checkpoint.json');
    expect((await cli(['load', input, '--table', table, '--checkpoint', checkpoint])).code).toBe(0);
    const again = await cli(['load', input, '--table', table, '--checkpoint', checkpoint]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('already completed');
    expect(again.stderr).toMatch(/average 0 WCU\/s/);
    const json = await cli(['load', input, '--table', table, '--checkpoint', checkpoint, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ alreadyComplete: true, written: 60, rate: { averageWcu: 0 } });
  });

  it('one row reads "1 row", never "1 rows"', async () => {
    const table = await newTable();
    const run = await cli(['load', await csv('one.csv', 'id,n\nonly,1\n'), '--table', table, '--order', 'round-robin']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('read 1 row;');
    expect(run.stderr).not.toMatch(/\b1 (rows|batches|parts|keys|partitions)\b/);
    expect(await scanAll(client(), table)).toHaveLength(1);
  });

  it('--help names every input format; an offline estimate is not "into estimate"', async () => {
    const help = await cli(['--help']);
    expect(help.stdout).toMatch(/CSV, JSON Lines, Parquet, Ion and DynamoDB exports/);
    const offline = await cli(['estimate', await csv('offline.csv', 'id,n\na,1\n'), '--partition-key', 'id:S']);
    expect(offline.code, offline.stderr).toBe(0);
    // The title may wrap at the width of the report: its first paragraph, joined.
    const title = (stdout: string) => stdout.split('\n\n')[0]!.replace(/\s+/g, ' ');
    expect(title(offline.stdout)).toMatch(/^ddb-spread estimate: .*offline\.csv into a table described by --partition-key \(nothing written\)$/);
    expect(offline.stdout).not.toContain('into estimate');
    const named = await cli(['estimate', await csv('named.csv', 'id,n\na,1\n'), '--partition-key', 'id:S', '--table', 'Orders']);
    expect(title(named.stdout)).toContain('into Orders (nothing written)');
  });

  it('load with a pipe but no input says to pass -; without a pipe it does not', async () => {
    const piped = await cli(['load', '--table', 'Orders'], { stdin: 'id,n\na,1\n' });
    expect(piped.code).toBe(64);
    expect(piped.stderr).toContain("missing required argument 'file'");
    expect(piped.stderr).toContain('ddb-spread: stdin holds data (a pipe or a file); to load it, pass - as the input');
    const bare = await cli(['load', '--table', 'Orders']);
    expect(bare.code).toBe(64);
    expect(bare.stderr).not.toContain('pass - as the input');
  });

  it("--checkpoint's hash of the whole input is said (size, then time), not silent", async () => {
    const table = await newTable();
    const input = await csv('hashed.csv', `id,n\n${Array.from({ length: 20 }, (_, i) => `h${i},${i}`).join('\n')}\n`);
    const checkpoint = join(dir(), 'hashed.checkpoint.json');
    const run = await cli(['load', input, '--table', table, '--checkpoint', checkpoint, '--log-format', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const events = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; bytes?: number; ms?: number });
    const size = (await readFile(input)).length;
    expect(events.find((e) => e.type === 'hashing')).toMatchObject({ bytes: size });
    expect(events.find((e) => e.type === 'hashed')).toMatchObject({ bytes: size, ms: expect.any(Number) as number });
    expect(events.findIndex((e) => e.type === 'hashing')).toBeLessThan(events.findIndex((e) => e.type === 'hashed'));
  });
});
