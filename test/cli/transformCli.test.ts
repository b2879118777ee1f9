/**
 * --transform through the built CLI against DynamoDB Local (issue 33, item 1): a module that renames an
 * attribute, splits rows into two items and filters rows; a throw or an invalid return rejects only its row
 * (file, line, reason in the reject file) and the others load; the counters add up in --json; two --segment
 * workers write what one load writes; the estimate counts the transform's items; a checkpoint refuses a
 * changed module and resumes under the one it was taken with.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { localCli } from '../support/localCli.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { rawScan } from '../support/rawScan.js';
import { readRejects } from '../support/rejects.js';
import { batchesDone } from '../support/checkpoint.js';
import { scanAll } from '../support/ddb.js';

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'transformcli', keys: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } } });
const { endpoint, dir, newTable } = aws;
const cli = localCli(aws);
let seq = 0;

async function file(name: string, text: string): Promise<string> {
  const path = join(dir(), `${++seq}-${name}`);
  await writeFile(path, text);
  return path;
}

/** Renames name to title, splits "split" rows into the row and a copy under sk#copy, skips "skip" rows; throws or returns junk on request. */
const TRANSFORM = `
export default function (item, origin) {
  if (item.kind === 'skip') return null;
  if (item.kind === 'boom') throw new Error('no boom rows here');
  if (item.kind === 'junk') return 'not an item';
  if (item.kind === 'nokey') return { title: item.name };
  const { name, ...rest } = item;
  rest.title = name;
  if (item.kind === 'split') return [rest, { ...rest, sk: rest.sk + '#copy', from: origin.line }];
  return rest;
}
`;

const CSV = [
  'pk,sk,name,kind,qty',
  'a,1,alpha,keep,1', // line 2
  'a,2,beta,split,2', // 3: two items
  'b,1,gamma,skip,3', // 4: skipped
  'b,2,delta,boom,4', // 5: TRANSFORM_FAILED
  'c,1,eps,junk,5', // 6: TRANSFORM_OUTPUT_INVALID
  'c,2,zeta,nokey,6', // 7: MISSING_KEY of the output
  'd,1,eta,split,7', // 8: two items
  'd,2,theta,keep,8', // 9
].join('\n');

interface Counters {
  rowsRead: number;
  written: number;
  rejected: number;
  superseded: number;
  otherSegments: number;
  notWritten: number;
  complete: boolean;
  skippedByTransform: number;
  transformOutputs: number;
  splitWrites: number;
  rejectedByReason: Record<string, number>;
}

const scanned = async (table: string) => (await rawScan(endpoint, table)).map((text) => JSON.parse(text) as Record<string, Record<string, unknown>>);

describe('--transform', () => {
  it('renames, splits and filters; a throw and an invalid return are rejects of their row; the counters add up', async () => {
    const table = await newTable();
    const input = await file('rows.csv', CSV);
    const module = await file('rename.mjs', TRANSFORM);
    const rejects = join(dir(), `${++seq}.rejects.jsonl`);
    const run = await cli(['load', input, '--table', table, '--types', 'qty:N', '--transform', module, '--rejects', rejects, '--json']);
    expect(run.code, run.stderr).toBe(2); // finished with rejected rows
    const result = JSON.parse(run.stdout) as Counters;
    expect(result).toMatchObject({
      rowsRead: 8,
      written: 6,
      rejected: 3,
      superseded: 0,
      notWritten: 0,
      skippedByTransform: 1,
      transformOutputs: 7,
      splitWrites: 2,
      rejectedByReason: { TRANSFORM_FAILED: 1, TRANSFORM_OUTPUT_INVALID: 1, MISSING_KEY: 1 },
    });
    // rows read + extra items of split rows = written + superseded + rejected + skipped.
    expect(result.rowsRead + result.splitWrites).toBe(result.written + result.superseded + result.rejected + result.skippedByTransform);

    const items = await scanned(table);
    const keys = items.map((i) => `${String(i['pk']!['S'])}/${String(i['sk']!['S'])}`).sort();
    expect(keys).toEqual(['a/1', 'a/2', 'a/2#copy', 'd/1', 'd/1#copy', 'd/2']);
    for (const item of items) {
      expect(item['name']).toBeUndefined();
      expect(item['title']).toBeDefined();
      expect(item['qty']).toHaveProperty('N'); // typed before the transform, as --types says
    }
    const copy = items.find((i) => i['pk']!['S'] === 'd' && i['sk']!['S'] === '1#copy');
    expect(copy?.['from']).toEqual({ N: '8' });

    const records = await readRejects(rejects);
    expect(records.map((r) => [r.line, r.code])).toEqual([
      [5, 'TRANSFORM_FAILED'],
      [6, 'TRANSFORM_OUTPUT_INVALID'],
      [7, 'MISSING_KEY'],
    ]);
    expect(records[0]!.file).toBe(input);
    expect(records[0]!.message).toContain('no boom rows here');
    expect(records[1]!.message).toMatch(/the transform returned a string/);
    expect(records[2]!.message).toMatch(/^the transform's output: /);
    expect(records[0]!.raw).toBe('b,2,delta,boom,4');
  });

  it('two --segment workers write what one load writes, each row counted by one of them', async () => {
    const input = await file('rows.csv', CSV);
    const module = await file('rename.mjs', TRANSFORM);
    const whole = await newTable();
    const one = await cli(['load', input, '--table', whole, '--types', 'qty:N', '--transform', module, '--rejects', join(dir(), `${++seq}.r.jsonl`), '--json']);
    expect(one.code, one.stderr).toBe(2);
    const split = await newTable();
    const runs: Counters[] = [];
    for (const segment of ['0/2', '1/2']) {
      const run = await cli([
        'load',
        input,
        '--table',
        split,
        '--types',
        'qty:N',
        '--transform',
        module,
        '--segment',
        segment,
        '--rejects',
        join(dir(), `${++seq}.r.jsonl`),
        '--json',
      ]);
      expect([0, 2]).toContain(run.code);
      runs.push(JSON.parse(run.stdout) as Counters);
    }
    const sum = (name: 'written' | 'rejected' | 'skippedByTransform') => runs.reduce((n, r) => n + r[name], 0);
    expect([sum('written'), sum('rejected'), sum('skippedByTransform')]).toEqual([6, 3, 1]);
    for (const r of runs) expect(r.rowsRead + r.splitWrites).toBe(r.written + r.superseded + r.rejected + r.skippedByTransform + r.otherSegments);
    expect((await rawScan(endpoint, split)).sort()).toEqual((await rawScan(endpoint, whole)).sort());
  });

  it('the estimate and --dry-run count the items the transform makes, and write nothing', async () => {
    const table = await newTable();
    const input = await file('rows.csv', CSV);
    const module = await file('rename.mjs', TRANSFORM);
    const estimate = await cli([
      'estimate',
      input,
      '--partition-key',
      'pk:S',
      '--sort-key',
      'sk:S',
      '--types',
      'qty:N',
      '--transform',
      module,
      '--rejects',
      join(dir(), `${++seq}.r.jsonl`),
      '--json',
    ]);
    expect(estimate.code, estimate.stderr).toBe(2); // rows rejected, as the load would
    expect(estimate.stderr).toMatch(/rows\.csv:5: TRANSFORM_FAILED: the transform threw: no boom rows here/);
    const report = JSON.parse(estimate.stdout) as { input: { rows: number; validRows: number; skippedByTransform: number; transformOutputs: number } };
    expect(report.input).toMatchObject({ rows: 8, validRows: 6, skippedByTransform: 1, transformOutputs: 7 });
    const dry = await cli([
      'load',
      input,
      '--table',
      table,
      '--types',
      'qty:N',
      '--transform',
      module,
      '--dry-run',
      '--rejects',
      join(dir(), `${++seq}.r.jsonl`),
    ]);
    expect([0, 2]).toContain(dry.code);
    expect(dry.stdout + dry.stderr).toMatch(/transform +7 items out, 1 rows skipped/);
    expect(await rawScan(endpoint, table)).toEqual([]);
  });

  it('a split row whose items share a key keeps their order in every order (the last returned is stored); an async transform and a config file', async () => {
    const table = await newTable();
    const input = await file('rows.jsonl', ['{"pk":"k","sk":"1","v":1}', '{"pk":"k","sk":"2","v":2}', '{"pk":"j","sk":"1","v":3}'].join('\n'));
    // Each row becomes two writes of one key: the first with step "first", the second with step "second".
    const module = await file(
      'twice.mjs',
      `export default async function (item) { await new Promise((r) => setTimeout(r, 1)); return [{ ...item, step: 'first' }, { ...item, step: 'second' }]; }`,
    );
    for (const order of ['input', 'round-robin', 'spread', 'window']) {
      const config = await file('job.json', JSON.stringify({ table, transform: module, order }));
      const run = await cli(['load', input, '--config', config, '--json']);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ rowsRead: 3, written: 3, superseded: 3, transformOutputs: 6, splitWrites: 3, complete: true });
      const items = await scanned(table);
      expect(items.map((i) => i['step'])).toEqual([{ S: 'second' }, { S: 'second' }, { S: 'second' }]);
    }
  });

  it('a module that is not there, or has no default function, is refused before anything is written (64)', async () => {
    const table = await newTable();
    const input = await file('rows.csv', CSV);
    const missing = await cli(['load', input, '--table', table, '--transform', join(dir(), 'nope.mjs')]);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/cannot read --transform .*nope\.mjs/);
    const noDefault = await file('named.mjs', 'export function transform(item) { return item; }');
    const run = await cli(['load', input, '--table', table, '--transform', noDefault]);
    expect(run.code).toBe(64);
    expect(run.stderr).toMatch(/has no default export that is a function/);
    const stripes = await cli(['load', input, '--table', table, '--transform', noDefault, '--order', 'stripes']);
    expect(stripes.code).toBe(64);
    expect(await rawScan(endpoint, table)).toEqual([]);
  });

  it('a checkpoint pins the module: a changed transform is refused (78), the one it was taken with resumes and completes', async () => {
    const table = await newTable();
    const rows = 4000;
    const lines = ['pk,sk,name,kind,qty'];
    for (let i = 0; i < rows; i++) lines.push(`p${i % 97},${i},n${i},${i % 10 === 0 ? 'split' : i % 10 === 1 ? 'skip' : 'keep'},${i}`);
    const input = await file('many.csv', lines.join('\n'));
    const module = await file('rename.mjs', TRANSFORM);
    const checkpoint = join(dir(), `${++seq}.checkpoint.json`);
    const args = ['load', input, '--table', table, '--types', 'qty:N', '--transform', module, '--checkpoint', checkpoint, '--order', 'input'];
    const stopped = await cli([...args, '--wcu', '400'], { kill: { signal: 'SIGINT', when: () => batchesDone(checkpoint) >= 4 }, timeoutMs: 120_000 });
    expect(stopped.code, stopped.stderr).toBe(130);

    await writeFile(module, TRANSFORM.replace('rest.title = name;', "rest.title = name + '!';"));
    const refused = await cli([...args, '--json']);
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/the --transform module changed since checkpoint .* \("sha256:[0-9a-f]{64}" then, "sha256:[0-9a-f]{64}" now\)/);
    const without = await cli(args.filter((a, i) => a !== '--transform' && args[i - 1] !== '--transform'));
    expect(without.code).toBe(78);
    expect(without.stderr).toMatch(/taken with --transform, and this load runs without one/);

    await writeFile(module, TRANSFORM);
    const resumed = await cli([...args, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    const result = JSON.parse(resumed.stdout) as Counters;
    expect(result).toMatchObject({ rowsRead: rows, skippedByTransform: rows / 10, splitWrites: rows / 10, complete: true, rejected: 0 });
    const items = await scanned(table);
    expect(items).toHaveLength(rows - rows / 10 + rows / 10);
    expect(items.every((i) => typeof i['title']?.['S'] === 'string' && !(i['title']['S'] as string).endsWith('!'))).toBe(true);
    expect(JSON.parse(await readFile(checkpoint, 'utf8'))).toMatchObject({ status: 'complete' });
  }, 120_000);

  it('a resume from a restart point goes on with the transform counters the point recorded: every row accounted for once', async () => {
    const table = await newTable();
    const rows = 12_000;
    const lines = ['pk,sk,name,kind,qty'];
    for (let i = 0; i < rows; i++) lines.push(`p${i % 997},${i},n${i},${i % 10 === 0 ? 'split' : i % 10 === 1 ? 'skip' : 'keep'},${i}`);
    const input = await file('large.csv', lines.join('\n'));
    const module = await file('rename.mjs', TRANSFORM);
    const checkpoint = join(dir(), `${++seq}.checkpoint.json`);
    const args = ['load', input, '--table', table, '--types', 'qty:N', '--transform', module, '--checkpoint', checkpoint, '--order', 'input', '--json'];
    // Restart points every 2,000 rows (the test seam; 16,384 for users): past the second (its batches all done) before the kill.
    const env = { ...localEnv(aws.endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '2000' };
    const killed = await cli(args, { env, kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 200 }, timeoutMs: 120_000 });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const resumed = await cli(args, { env, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/reading on from a restart point past the first [\d,]+ rows/);
    const result = JSON.parse(resumed.stdout) as Counters;
    expect(result).toMatchObject({
      rowsRead: rows,
      skippedByTransform: rows / 10,
      splitWrites: rows / 10,
      transformOutputs: rows,
      rejected: 0,
      complete: true,
    });
    expect(result.written + result.superseded).toBe(rows);
    expect(await scanAll(aws.client(), table)).toHaveLength(rows);
  }, 180_000);

  it('a TypeScript module loads where Node.js strips types, and is refused with what to do where it does not', async () => {
    const table = await newTable();
    const input = await file('rows.csv', 'pk,sk,name\na,1,x\n');
    const module = await file(
      'typed.ts',
      'interface Row { [name: string]: unknown }\nexport default function (item: Row): Row { return { ...item, typed: true }; }\n',
    );
    const run = await cli(['load', input, '--table', table, '--transform', module, '--json']);
    const strips = (process.features as { typescript?: unknown }).typescript;
    if (strips === 'strip' || strips === 'transform') {
      expect(run.code, run.stderr).toBe(0);
      expect((await scanned(table))[0]?.['typed']).toEqual({ BOOL: true });
    } else {
      expect(run.code).toBe(64);
      expect(run.stderr).toMatch(/does not run TypeScript itself .* compile it to JavaScript/);
    }
  });
});
