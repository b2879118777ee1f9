/**
 * Attack: options beside a byte-range division. `--order` given by name: stripes cannot cut a worker's
 * range (they would cut the whole part), and must not turn into reading the range whole and holding it on
 * disk; round-robin, spread, window and input still write every row once. `--if-not-exists` over items
 * already in the table: each worker counts the rows it kept out (conditionFailed), none written over,
 * and the workers' counts add up to the file. `--item-conditions` with DynamoDB JSON lines cut into
 * ranges: each line's own condition is kept. Real processes against DynamoDB Local; the table read back.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack2-options' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RANGE_WAIT_MS: '30000' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 120_000 });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;

/** Both workers of a 2-way division of `path`, at once; their results. */
async function bothWorkers(path: string, table: string, name: string, extra: string[]): Promise<LoadResult[]> {
  const runs = await Promise.all(
    [0, 1].map((i) =>
      run([
        'load',
        path,
        '--table',
        table,
        '--segment',
        `${i}/2`,
        '--listing',
        join(dir(), `${name}.listing.json`),
        '--parts-disjoint',
        '--rejects',
        join(dir(), `${name}-${i}.rejects.jsonl`),
        '--json',
        ...extra,
      ]),
    ),
  );
  return runs.map((r) => {
    expect(r.code, r.stderr).toBe(EXIT.OK);
    const result = resultOf(r);
    expect(result.division?.by).toBe('ranges');
    return result;
  });
}

describe('options beside a byte-range division', () => {
  it('--order stripes by name streams each range through the window: never read whole first, nothing held on disk', async () => {
    // 3 partition keys of 1,000 rows each: runs longer than the window.
    const lines = ['pk,sk,note'];
    for (let i = 0; i < 3000; i++) lines.push(`key-${Math.floor(i / 1000)},${i},${'n'.repeat(90)}`);
    const path = join(dir(), 'stripes.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    const table = await newTable(KEYS);
    const results = await bothWorkers(path, table, 'stripes', ['--types', 'sk:N', '--order', 'stripes', '--memory', '64KB']);
    for (const result of results) expect(result).toMatchObject({ order: 'window', orderTempBytes: 0 });
    expect((await scanAll(client(), table)).length).toBe(3000);
    // A dry run of a worker plans as it loads: streaming, not the whole range read first in round-robin.
    const dry = await run([
      'load',
      path,
      '--table',
      table,
      '--types',
      'sk:N',
      '--segment',
      '1/2',
      '--listing',
      join(dir(), 'stripes.listing.json'),
      '--parts-disjoint',
      '--order',
      'stripes',
      '--dry-run',
      '--json',
    ]);
    expect(dry.code, dry.stderr).toBe(EXIT.OK);
    const plan = JSON.parse(dry.stdout) as { simulations: { planned: { order: string } } };
    expect(plan.simulations.planned.order).not.toBe('round-robin');
  });

  it.each(['round-robin', 'spread', 'window', 'input'])('--order %s: every row once, as in the file', async (order) => {
    const rows = 6000;
    const lines = ['pk,sk,v'];
    // Each primary key once (--parts-disjoint), partition keys in runs of 40.
    for (let i = 0; i < rows; i++) lines.push(`p${String(Math.floor(i / 40)).padStart(5, '0')},${i},v${i}${'x'.repeat(i % 60)}`);
    const path = join(dir(), `order-${order}.csv`);
    await writeFile(path, `${lines.join('\n')}\n`);
    expect((await stat(path)).size).toBeGreaterThan(2 * 64 * 1024);
    const table = await newTable(KEYS);
    const results = await bothWorkers(path, table, `order-${order}`, ['--types', 'sk:N', '--order', order]);
    const sum = (k: 'rowsRead' | 'written') => results.reduce((s, r) => s + r[k], 0);
    expect(sum('rowsRead')).toBe(rows);
    expect(sum('written')).toBe(rows);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    for (const item of items) expect(item['v']!.S!.replace(/x+$/, '')).toBe(`v${item['sk']!.N}`);
  });

  it('--if-not-exists over items already there: none written over, the workers count them conditionFailed', async () => {
    const rows = 6000;
    const lines = ['pk,sk,v'];
    for (let i = 0; i < rows; i++) lines.push(`p${String(Math.floor(i / 5)).padStart(6, '0')},${i},new${'y'.repeat(i % 60)}`);
    const path = join(dir(), 'ine.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    const table = await newTable(KEYS);
    const before = [7, 2999, 3000, 3001, 5999];
    for (const i of before)
      await client().send(new PutCommand({ TableName: table, Item: { pk: `p${String(Math.floor(i / 5)).padStart(6, '0')}`, sk: i, v: 'old' } }));
    const results = await bothWorkers(path, table, 'ine', ['--types', 'sk:N', '--if-not-exists']);
    const sum = (k: 'rowsRead' | 'written' | 'conditionFailed') => results.reduce((s, r) => s + (r[k] ?? 0), 0);
    expect(sum('rowsRead')).toBe(rows);
    expect(sum('conditionFailed')).toBe(before.length);
    expect(sum('written')).toBe(rows - before.length);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    for (const i of before) expect(items.find((it) => it['sk']!.N === String(i))!['v']!.S).toBe('old');
  });

  it('--item-conditions with DynamoDB JSON lines cut into ranges: each line keeps its own condition', async () => {
    const rows = 5000;
    const lines: string[] = [];
    for (let i = 0; i < rows; i++) {
      const item = { pk: { S: `p${String(Math.floor(i / 5)).padStart(6, '0')}` }, sk: { N: String(i) }, v: { S: `new${'z'.repeat(i % 50)}` } };
      lines.push(JSON.stringify(i % 10 === 0 ? { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } : { Item: item }));
    }
    const path = join(dir(), 'cond.jsonl');
    await writeFile(path, `${lines.join('\n')}\n`);
    expect((await stat(path)).size).toBeGreaterThan(2 * 64 * 1024);
    const table = await newTable(KEYS);
    // Rows 0 and 4990 (conditional) and 4991 (not) are there already.
    for (const i of [0, 4990, 4991])
      await client().send(new PutCommand({ TableName: table, Item: { pk: `p${String(Math.floor(i / 5)).padStart(6, '0')}`, sk: i, v: 'old' } }));
    const results = await bothWorkers(path, table, 'cond', ['--input-format', 'ddb-json', '--item-conditions']);
    const sum = (k: 'rowsRead' | 'written' | 'conditionFailed') => results.reduce((s, r) => s + (r[k] ?? 0), 0);
    expect(sum('rowsRead')).toBe(rows);
    expect(sum('conditionFailed')).toBe(2);
    expect(sum('written')).toBe(rows - 2);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    const v = (i: number) => items.find((it) => it['sk']!.N === String(i))!['v']!.S!.replace(/z+$/, '');
    expect([v(0), v(4990), v(4991)]).toEqual(['old', 'old', 'new']);
  });
});
