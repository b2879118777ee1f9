/**
 * Rate control against a partition model in front of DynamoDB Local: DynamoDB Local never
 * throttles, so test/support/partitionProxy.ts refuses what a table of a few scaled-down partitions
 * would refuse, and injects faults. Every load is checked by scanning the table.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { partitionOf } from '../../src/estimating/partitionModel.js';
import { load, type LoadOptions, type LoadResult } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { GENERATED_HEADER, GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy, type PartitionProxy, type PartitionProxyOptions } from '../support/partitionProxy.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const BIN = new URL('../../bin/ddb-spread.js', import.meta.url).pathname;

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'rate', processCredentials: true, keys: KEYS });

async function proxyFor(options: Omit<PartitionProxyOptions, 'partitionKeyName'>): Promise<PartitionProxy> {
  const proxy = await startPartitionProxy(endpoint, { partitionKeyName: 'pk', ...options });
  closeAfterAll(proxy);
  return proxy;
}

let seq = 0;
function run(proxy: PartitionProxy, options: Omit<LoadOptions, 'endpoint'>): Promise<LoadResult> {
  return load({ region: 'us-east-1', rejectsPath: join(dir(), `${++seq}.rejects.jsonl`), ...options, endpoint: proxy.url });
}

/**
 * `count` partition key values per partition of a `partitions`-partition model, for the partitions
 * listed: hashing puts keys unevenly, and these tests are about the write order and the pacing, not
 * about the luck of the hash.
 */
function balancedKeys(prefix: string, partitions: number, perPartition: number, only?: number[]): string[] {
  const wanted = new Set(only ?? Array.from({ length: partitions }, (_, p) => p));
  const taken = new Map<number, number>();
  const keys: string[] = [];
  for (let i = 0; keys.length < wanted.size * perPartition; i++) {
    const key = `${prefix}-${String(i).padStart(4, '0')}`;
    const p = partitionOf(key, partitions);
    if (!wanted.has(p) || (taken.get(p) ?? 0) >= perPartition) continue;
    taken.set(p, (taken.get(p) ?? 0) + 1);
    keys.push(key);
  }
  return keys;
}

/** A key-sorted CSV (pk,sk,payload): each key's rows together, as an export has them. */
async function sortedCsv(name: string, rowsPerKey: Array<[key: string, rows: number]>): Promise<{ path: string; rows: number }> {
  const lines = ['pk,sk,payload'];
  for (const [key, rows] of [...rowsPerKey].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    for (let sk = 0; sk < rows; sk++) lines.push(`${key},${sk},${'x'.repeat(40)}`);
  }
  const path = join(dir(), name);
  await writeFile(path, `${lines.join('\n')}\n`);
  return { path, rows: lines.length - 1 };
}

async function countItems(table: string): Promise<number> {
  return (await scanAll(client(), table)).length;
}

// A table of 4 partitions taking 100 WCU/s each (400 WCU/s in all), with one second of burst: the
// 1,000 WCU/s of a real partition, scaled down by 10 so a load at capacity takes seconds.
const MODEL = { tableWcu: 400, partitions: 4, burstSeconds: 0, initialSeconds: 1 } as const;

describe('pacing against a partition model at the table capacity', () => {
  it('key-sorted input: round-robin and spread with --wcu at capacity throttle 10x less than --order input without pacing, within 1.2x the ideal time', async () => {
    const keys = balancedKeys('cust', MODEL.partitions, 10);
    const input = await sortedCsv(
      'sorted.csv',
      keys.map((k) => [k, 50]),
    );
    const idealMs = (input.rows / MODEL.tableWcu) * 1000;

    const unpacedProxy = await proxyFor({ model: MODEL });
    const unpacedTable = await newTable();
    const unpaced = await run(unpacedProxy, { input: input.path, table: unpacedTable, types: { sk: 'N' }, order: 'input', pacing: false, maxAttempts: 100 });
    expect(unpaced).toMatchObject({ rowsRead: input.rows, written: input.rows, complete: true });
    expect(await countItems(unpacedTable)).toBe(input.rows);
    // The contrast must be real: sorted and unpaced, one partition takes every batch.
    expect(unpaced.throttledItems).toBeGreaterThan(input.rows / 2);

    for (const order of ['round-robin', 'spread'] as const) {
      const proxy = await proxyFor({ model: MODEL });
      const table = await newTable();
      const paced = await run(proxy, { input: input.path, table, types: { sk: 'N' }, order, wcu: MODEL.tableWcu });
      expect(paced, order).toMatchObject({ rowsRead: input.rows, written: input.rows, complete: true });
      expect(await countItems(table)).toBe(input.rows);
      expect(paced.throttledItems * 10, `${order}: ${paced.throttledItems} throttled vs ${unpaced.throttledItems} unpaced`).toBeLessThanOrEqual(
        unpaced.throttledItems,
      );
      expect(paced.elapsedMs, `${order}: ${paced.elapsedMs.toFixed(0)} ms vs ideal ${idealMs} ms`).toBeLessThanOrEqual(1.2 * idealMs);
      // Pacing is not a slow load either: at least 90% of the ideal rate.
      expect(paced.elapsedMs).toBeGreaterThanOrEqual(0.9 * idealMs);
      expect(proxy.stats().throttledItems).toBe(paced.throttledItems);
      expect(paced.rate).toMatchObject({ targetWcu: MODEL.tableWcu, keyWcu: 1000 });
    }
  });

  it('a hot key with 30% of the rows is paced at --key-wcu and never throttled; the summary names it as the bottleneck with its shard count', async () => {
    // The hot key alone in partition 0; 36 other keys, 12 in each of the three other partitions.
    const hot = balancedKeys('hot', MODEL.partitions, 1, [0])[0]!;
    const others = balancedKeys('cust', MODEL.partitions, 12, [1, 2, 3]);
    const input = await sortedCsv('hot.csv', [[hot, 600], ...others.map((k): [string, number] => [k, 39])]);
    expect(600 / input.rows).toBeCloseTo(0.3, 2);
    const hotPartition = 0;

    const proxy = await proxyFor({ model: MODEL });
    const table = await newTable();
    const paced = await run(proxy, { input: input.path, table, types: { sk: 'N' }, order: 'spread', wcu: MODEL.tableWcu, keyWcu: 100 });
    expect(paced).toMatchObject({ rowsRead: input.rows, written: input.rows, complete: true });
    expect(await countItems(table)).toBe(input.rows);
    const stats = proxy.model(table)!.stats();
    expect(stats.perPartition[hotPartition]!.acceptedItems).toBe(600);
    expect(stats.perPartition[hotPartition]!.throttledItems).toBe(0);
    // Paced, not merely lucky: never above --key-wcu in a whole second (the first second may hold the 0.1 s burst).
    for (const second of stats.perSecond) expect(second.acceptedWcu[hotPartition]!).toBeLessThanOrEqual(100 + 10 + 25);
    // 600 WCU at 100 WCU/s is 6 s against 5 s for the load at 400 WCU/s: the key bounds the load.
    expect(paced.bottleneck).toMatchObject({ key: hot, units: 600, minShards: 2, recommendedShards: 4 });
    expect(paced.hotKeys[0]).toMatchObject({ key: hot, units: 600 });
    expect(paced.elapsedMs).toBeGreaterThanOrEqual(5500);

    // The same load with the key at the default 1,000 WCU/s: the hot key's partition throttles.
    const unpacedProxy = await proxyFor({ model: MODEL });
    const unpacedTable = await newTable();
    const unpaced = await run(unpacedProxy, {
      input: input.path,
      table: unpacedTable,
      types: { sk: 'N' },
      order: 'spread',
      wcu: MODEL.tableWcu,
      maxAttempts: 100,
    });
    expect(unpaced).toMatchObject({ written: input.rows, complete: true });
    expect(unpacedProxy.model(unpacedTable)!.stats().perPartition[hotPartition]!.throttledItems).toBeGreaterThan(0);
  });
});

describe('faults through the partition proxy', () => {
  it('with 5% of each fault injected, a 50k-row load through the CLI ends with every row in the table and exit code 0', async () => {
    // 50,000 rows (2,000 calls and their retries: ~100 of each fault), in half the time 100,000 took (CI runs near its limit).
    const rows = 50_000;
    const input = join(dir(), 'faults.csv');
    await writeGeneratedCsv(input, rows);
    const proxy = await proxyFor({
      model: { tableWcu: 1_000_000, partitions: 8, partitionMaxWcu: 1_000_000 },
      seed: 42,
      faults: { internal: 0.05, unavailable: 0.05, throttling: 0.05, drop: 0.05, lostReply: 0.05, slow: { rate: 0.05, ms: 300 } },
    });
    const table = await newTable();
    const types = GENERATED_TYPES_FLAG;
    expect(GENERATED_HEADER.split(',')).toContain('sk');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [BIN, 'load', input, '--table', table, '--types', `${types},sk:N`, '--json', '--rejects', join(dir(), 'faults.rejects.jsonl')],
      {
        env: localEnv(proxy.url),
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const summary = JSON.parse(stdout) as LoadResult;
    expect(summary).toMatchObject({ rowsRead: rows, written: rows, rejected: 0, complete: true });
    const faults = proxy.stats().faults;
    for (const kind of ['internal', 'unavailable', 'throttling', 'drop', 'lostReply', 'slow'] as const) expect(faults[kind], kind).toBeGreaterThan(50);
    expect(summary.retries).toBeGreaterThanOrEqual(faults.internal + faults.unavailable + faults.throttling + faults.drop + faults.lostReply);
    expect(await countItems(table)).toBe(rows);
  }, 240_000);
});
