/**
 * GSI-aware pacing against the partition proxy, which gives each GSI partitions of its own:
 * a table key is paced by its own units, not by the units its writes cost an index, and a hot GSI key is
 * paced by the index's units. Every load is checked by scanning the table.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { partitionOf } from '../../src/estimating/partitionModel.js';
import { load, type LoadOptions, type LoadResult } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy, type PartitionProxy } from '../support/partitionProxy.js';

const KEYS: TableKeys = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'N' },
  gsis: [{ name: 'byDest', partitionKey: { name: 'dest', type: 'S' } }],
};
const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'gsipace', processCredentials: true, keys: KEYS });

// Four partitions of 100 WCU/s for the table and for the index: a real partition's 1,000 scaled by 10.
const MODEL = { tableWcu: 400, partitions: 4, burstSeconds: 0, initialSeconds: 1 } as const;
const KEY_WCU = 100;
/** The most a paced key may take in one whole second: its rate, the 0.1 s key burst, one batch of slack. */
const SECOND_MAX = KEY_WCU + 10 + 25;

async function proxy(): Promise<PartitionProxy> {
  // No partitionKeyName: the proxy reads the table (and its GSI) from DynamoDB Local.
  return closeAfterAll(await startPartitionProxy(endpoint, { model: MODEL }));
}

let seq = 0;
function run(p: PartitionProxy, options: Omit<LoadOptions, 'endpoint'>): Promise<LoadResult> {
  return load({ region: 'us-east-1', rejectsPath: join(dir(), `${++seq}.rejects.jsonl`), types: { sk: 'N' }, order: 'spread', ...options, endpoint: p.url });
}

/** Keys that land in `only` of a `partitions`-partition model, `count` of them. */
function keysIn(prefix: string, partitions: number, only: number[], count: number): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    const key = `${prefix}-${i}`;
    if (only.includes(partitionOf(key, partitions))) keys.push(key);
  }
  return keys;
}

async function csv(name: string, rows: Array<[pk: string, sk: number, dest: string]>): Promise<string> {
  const path = join(dir(), name);
  await writeFile(path, `pk,sk,dest,payload\n${rows.map(([pk, sk, dest]) => `${pk},${sk},${dest},${'x'.repeat(40)}`).join('\n')}\n`);
  return path;
}

describe('pacing with a GSI', () => {
  it('a hot table key whose index writes land on many index keys is held to its own units, and no partition of the table or the index throttles', async () => {
    const [hot] = keysIn('hot', MODEL.partitions, [0], 1);
    const others = keysIn('cust', MODEL.partitions, [1, 2, 3], 36);
    const rows: Array<[string, number, string]> = [];
    for (let i = 0; i < 300; i++) rows.push([hot!, i, `d-${i}`]);
    others.forEach((k, j) => {
      for (let i = 0; i < 8; i++) rows.push([k, i, `e-${j}-${i}`]);
    });
    const input = await csv('hotTable.csv', rows);

    const p = await proxy();
    const table = await newTable();
    const result = await run(p, { input, table, wcu: 600, keyWcu: KEY_WCU });
    expect(result).toMatchObject({ rowsRead: rows.length, written: rows.length, complete: true });
    expect((await scanAll(client(), table)).length).toBe(rows.length);

    const stats = p.stats();
    expect(stats.tables[table]!.throttledItems).toBe(0);
    expect(stats.indexes[`${table}/byDest`]!.acceptedItems).toBe(rows.length);
    expect(stats.indexes[`${table}/byDest`]!.throttledItems).toBe(0);
    // The hot key's 300 units at 100 WCU/s: 3 s. Charged its 300 index units as well it took 6 s.
    for (const second of stats.tables[table]!.perSecond) expect(second.acceptedWcu[0]!).toBeLessThanOrEqual(SECOND_MAX);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(2500);
    expect(result.elapsedMs).toBeLessThan(5000);
    // The summary's key units are the table's: 300, not 600.
    expect(result.hotKeys[0]).toMatchObject({ key: hot, units: 300 });
    expect(result.bottleneck).toMatchObject({ key: hot, units: 300 });
  });

  it('a hot GSI key (a low-cardinality status) is paced at --key-wcu of the index units although every table key is distinct', async () => {
    const rows: Array<[string, number, string]> = [];
    for (let i = 0; i < 300; i++) rows.push([`order-${i}`, 0, 'ACTIVE']);
    for (let i = 0; i < 200; i++) rows.push([`other-${i}`, 0, `s-${i}`]);
    const input = await csv('hotIndex.csv', rows);

    const p = await proxy();
    const table = await newTable();
    const result = await run(p, { input, table, wcu: 600, keyWcu: KEY_WCU });
    expect(result).toMatchObject({ written: rows.length, complete: true });
    expect((await scanAll(client(), table)).length).toBe(rows.length);
    const index = p.indexModel(table, 'byDest')!;
    const hotPartition = index.partitionOf('ACTIVE');
    const stats = index.stats();
    expect(stats.perPartition[hotPartition]!.throttledItems).toBe(0);
    expect(stats.acceptedItems).toBe(rows.length);
    for (const second of stats.perSecond) expect(second.acceptedWcu[hotPartition]!).toBeLessThanOrEqual(SECOND_MAX);
    // 300 units on ACTIVE at 100 WCU/s.
    expect(result.elapsedMs).toBeGreaterThanOrEqual(2500);

    // Paced at a real partition's 1,000 WCU/s, the scaled-down index partition of ACTIVE throttles.
    const unpacedProxy = await proxy();
    const unpacedTable = await newTable();
    const unpaced = await run(unpacedProxy, { input, table: unpacedTable, wcu: 600, maxAttempts: 100 });
    expect(unpaced).toMatchObject({ written: rows.length, complete: true });
    expect(unpacedProxy.indexModel(unpacedTable, 'byDest')!.stats().throttledItems).toBeGreaterThan(0);
  });
});
