/**
 * Sharding you can read back, against DynamoDB Local: a random:N suffix depends only on the
 * seed and the row's primary key, so a reload from another folder overwrites and a repeated key lands
 * once (the later row winning); the manifest says how to compute every suffix and its default path is per
 * table; queryShards() returns every item of a logical key, merged by sort key, for random, hash, time and
 * combined rules; getSharded() reads one item by computing its suffix.
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getSharded, queryShards, randomShard, readShardManifest, type ShardManifestJson } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const KEYS: TableKeys = { partitionKey: { name: 'userId', type: 'S' }, sortKey: { name: 'eventId', type: 'S' } };
const NUMERIC_SORT: TableKeys = { partitionKey: { name: 'userId', type: 'S' }, sortKey: { name: 'seq', type: 'N' } };

const aws = useLocalAws({ name: 'shard-read', processCredentials: true, keys: KEYS });
const { client, newTable } = aws;
const { path, inputFile, run } = localLoad(aws);
const reader = () => ({ endpoint: aws.endpoint, region: 'us-east-1' });

const jsonl = (rows: object[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

async function items(table: string): Promise<Record<string, unknown>[]> {
  // Strings and numbers as their text: all these tests store.
  return (await scanAll(client(), table)).map((item) => Object.fromEntries(Object.entries(item).map(([name, v]) => [name, v.S ?? v.N])));
}

describe('random:N depends only on the seed and the primary key', () => {
  it.each(['input', 'round-robin', 'spread', 'window'] as const)(
    'a repeated primary key lands once, the later row winning, under the suffix of its key (order %s)',
    async (order) => {
      const table = await newTable();
      const rows = [
        ...Array.from({ length: 60 }, (_, i) => ({ userId: 'hot', eventId: `e${i}`, v: 'first' })),
        // The same 60 keys again, later in the input: each must replace its earlier row, not sit beside it.
        ...Array.from({ length: 60 }, (_, i) => ({ userId: 'hot', eventId: `e${i}`, v: 'second' })),
      ];
      const input = await inputFile('dup.jsonl', jsonl(rows));
      const result = await run({ input, table, shard: ['random:8'], shardSeed: 42, shardManifestPath: path('dup.shards.json'), order });
      expect(result).toMatchObject({ written: 120, rejected: 0 });
      const stored = await items(table);
      expect(stored).toHaveLength(60);
      for (const item of stored) {
        expect(item['v']).toBe('second');
        expect(item['userId']).toBe(`hot#${randomShard(42, 'hot', item['eventId'] as string, 8)}`);
      }
      // And the suffixes spread: 60 keys over 8 shards use most of them.
      expect(new Set(stored.map((i) => i['userId'])).size).toBeGreaterThanOrEqual(6);
    },
  );

  it('loading the same file again from another folder overwrites every item (no copies under other suffixes)', async () => {
    const table = await newTable();
    const rows = Array.from({ length: 300 }, (_, i) => ({ userId: `u${i % 3}`, eventId: `e${i}`, n: i }));
    const first = await inputFile('in.jsonl', jsonl(rows));
    const second = join(dirname(first), 'elsewhere', 'in.jsonl');
    await mkdir(dirname(second));
    await copyFile(first, second);
    for (const input of [first, second]) {
      await run({ input, table, shard: ['random:5'], shardSeed: 7, shardManifestPath: path('again.shards.json') });
    }
    expect(await items(table)).toHaveLength(300);
  });
});

describe('the manifest', () => {
  it('records the algorithm, the text of numbers and binary, the suffix base and the tool version; 1-based suffixes on request', async () => {
    const table = await newTable();
    const input = await inputFile('base.jsonl', jsonl(Array.from({ length: 200 }, (_, i) => ({ userId: 'k', eventId: `e${i}` }))));
    const manifestPath = path('base.shards.json');
    await run({ input, table, shard: ['random:200'], shardSeed: 3, shardSuffixBase: 1, shardManifestPath: manifestPath });
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as ShardManifestJson;
    expect(manifest).toMatchObject({
      manifestVersion: 2,
      table,
      suffixBase: 1,
      seed: 3,
      algorithm: { name: 'ddb-spread-shard', version: 2 },
      valueText: { number: expect.stringContaining('canonical') as unknown, binary: expect.stringContaining('base64') as unknown },
      tool: { name: 'ddb-spread', version: expect.stringMatching(/^\d+\.\d+\.\d+/) as unknown },
    });
    const suffixes = (await items(table)).map((i) => Number((i['userId'] as string).split('#')[1]));
    expect(Math.min(...suffixes)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...suffixes)).toBeLessThanOrEqual(200);
    for (const item of await items(table)) {
      expect(item['userId']).toBe(`k#${randomShard(3, 'k', item['eventId'] as string, 200) + 1}`);
    }
  });

  it('its default path is per table: one file loaded into two tables keeps both manifests', async () => {
    const [a, b] = [await newTable(), await newTable()];
    const input = await inputFile('two.jsonl', jsonl([{ userId: 'k', eventId: 'e1' }]));
    for (const table of [a, b]) await run({ input, table, shard: ['hash:4'] });
    for (const table of [a, b]) {
      const manifest = JSON.parse(await readFile(`${input}.${table}.shards.json`, 'utf8')) as ShardManifestJson;
      expect(manifest.table).toBe(table);
    }
  });
});

describe('reading back: queryShards and getSharded', () => {
  const rows = Array.from({ length: 240 }, (_, i) => ({
    userId: i % 4 === 0 ? 'cold' : 'hot',
    eventId: `e${String(i).padStart(4, '0')}`,
    at: new Date(Date.UTC(2024, 0, 1) + i * 5 * 3_600_000).toISOString(),
    n: i,
  }));
  const cases: Array<[string, string[]]> = [
    ['random', ['random:6']],
    ['hash', ['hash:5']],
    ['time', ['time:day:at']],
    ['combined', ['time:month:at', 'hash:3', 'random:2']],
  ];

  it.each(cases)('%s: every item of a logical key, in sort key order, across its shards; get reads one', async (name, shard) => {
    const table = await newTable();
    const input = await inputFile(`${name}.jsonl`, jsonl(rows));
    const manifestPath = path(`${name}.shards.json`);
    await run({ input, table, shard, shardSeed: 11, shardManifestPath: manifestPath });
    const manifest = await readShardManifest(manifestPath);
    for (const key of ['hot', 'cold']) {
      const got: Record<string, unknown>[] = [];
      // A page of 7 items: every shard is read over several pages.
      for await (const item of queryShards({ ...reader(), table, key, manifest, pageSize: 7 })) got.push(item);
      const expected = rows.filter((r) => r.userId === key).map((r) => r.eventId);
      expect(got.map((i) => i['eventId'])).toEqual(expected);
      expect(got.every((i) => (i['userId'] as string).startsWith(`${key}#`))).toBe(true);
      expect(Number(got[3]!['n'])).toBe(rows.filter((r) => r.userId === key)[3]!.n);
    }
    if (!shard.some((r) => r.startsWith('time'))) {
      const item = await getSharded({ ...reader(), table, key: 'hot', sort: 'e0005', manifest });
      expect(item?.['eventId']).toBe('e0005');
      expect(await getSharded({ ...reader(), table, key: 'hot', sort: 'e0004', manifest })).toBeUndefined();
    }
  });

  it('merges numeric sort keys numerically (9 before 10) and reads DynamoDB JSON', async () => {
    const table = await newTable(NUMERIC_SORT);
    const input = await inputFile('num.jsonl', jsonl(Array.from({ length: 30 }, (_, i) => ({ userId: 'k', seq: 30 - i }))));
    const manifestPath = path('num.shards.json');
    await run({ input, table, shard: ['hash:4'], shardManifestPath: manifestPath });
    const manifest = await readShardManifest(manifestPath);
    const got: unknown[] = [];
    for await (const item of queryShards({ ...reader(), table, key: 'k', manifest })) got.push(Number(item['seq']));
    expect(got).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const item = await getSharded({ ...reader(), table, key: 'k', sort: '12', manifest });
    expect(Number(item?.['seq'])).toBe(12);
  });
});
