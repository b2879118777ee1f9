/**
 * Write sharding (--shard and its companions) end to end against DynamoDB Local: every scheme loads a
 * key-sorted, skewed input completely, each item under the partition key value docs/SHARDING.md's formulas give
 * (computed here with hashShard/timeBucket/randomShard from src/sharding/shard.ts from values the test knows,
 * not re-parsed from the input); the manifest lists exactly the values written; and every sharding error
 * is found before anything is written.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashShard, randomShard, timeBucket } from '../../src/sharding/shard.js';
import { type TimeUnit } from '../../src/sharding/shardRule.js';
import type { ShardManifestJson } from '../../src/sharding/shardManifest.js';
import type { LoadResult } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad, type LocalLoadOptions } from '../support/localLoad.js';
import { plainItem, type PlainValue } from '../support/plainItem.js';
import { rejectsOf } from '../support/rejects.js';

/** Events by user: the partition key gets the suffixes, the sort key is the event id. */
const KEYS: TableKeys = { partitionKey: { name: 'userId', type: 'S' }, sortKey: { name: 'eventId', type: 'S' } };
const PK_ONLY: TableKeys = { partitionKey: { name: 'userId', type: 'S' } };

const aws = useLocalAws({ name: 'shard', processCredentials: true, keys: KEYS });
const { client, dir, newTable, dropTable } = aws;
const { path, inputFile, run, runFailing } = localLoad(aws);

const manifestPath = (name: string) => path(`${name}.shards.json`);

async function readManifest(path: string): Promise<ShardManifestJson> {
  return JSON.parse(await readFile(path, 'utf8')) as ShardManifestJson;
}

// ---------------------------------------------------------------------------------------------------
// Input: JSON lines sorted by user, one user with ~30% of the rows; the event time in every format
// ---------------------------------------------------------------------------------------------------

interface Row {
  userId: string;
  eventId: string;
  /** The time as written in the input. */
  at: string | number;
  /** The instant `at` means, known to the test (never parsed back from `at`). */
  ms: number;
  /** Written as a JSON number with two decimals (`7.50`); DynamoDB's text of it drops the trailing zero. */
  amountText: string;
  v: number;
}

const HOT = 'user-007';
const userName = (j: number) => `user-${String(j).padStart(3, '0')}`;
const BASE = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The time of row i in one of six spellings: ISO with Z, epoch seconds, epoch milliseconds, ISO with a
 * +05:30 offset, ISO without an offset (UTC), a date alone (midnight UTC).
 */
function timeOf(i: number): { at: string | number; ms: number } {
  // 127 minutes and some seconds apart: ~1200 rows span about 100 days, so months, days and hours vary.
  const ms = BASE + i * 127 * 60_000 + ((i * 7919) % 60) * 1000;
  const iso = new Date(ms).toISOString();
  switch (i % 6) {
    case 0:
      return { at: iso, ms };
    case 1:
      return { at: ms / 1000, ms };
    case 2:
      return { at: ms, ms };
    case 3:
      return { at: `${new Date(ms + 5.5 * HOUR).toISOString().slice(0, 19)}+05:30`, ms };
    case 4:
      return { at: iso.slice(0, 19), ms };
    default: {
      const midnight = Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), new Date(ms).getUTCDate());
      return { at: iso.slice(0, 10), ms: midnight };
    }
  }
}

/** 40 users in sorted order; user j has 6 + (37·j mod 32) events, HOT has 30% of all of them. */
function skewedRows(): Row[] {
  const counts = Array.from({ length: 40 }, (_, j) => 6 + ((37 * j) % 32));
  const others = counts.reduce((sum, c, j) => (userName(j) === HOT ? sum : sum + c), 0);
  counts[7] = Math.round((others * 3) / 7);
  const rows: Row[] = [];
  counts.forEach((count, j) => {
    for (let r = 0; r < count; r++) {
      const i = rows.length;
      rows.push({ userId: userName(j), eventId: `e-${pad(r, 5)}`, ...timeOf(i), amountText: `${i}.5`, v: i });
    }
  });
  return rows;
}

function jsonLine(r: Row): string {
  return `{"userId":${JSON.stringify(r.userId)},"eventId":${JSON.stringify(r.eventId)},"at":${JSON.stringify(r.at)},"amount":${r.amountText}0,"v":${r.v}}`;
}

const jsonlOf = (rows: readonly Row[]) => `${rows.map(jsonLine).join('\n')}\n`;

/** The item a row must become, under partition key value `written`. */
function itemOf(r: Row, written: string, keep?: string): Record<string, PlainValue> {
  const item: Record<string, PlainValue> = {
    amount: { N: r.amountText },
    at: typeof r.at === 'number' ? { N: String(r.at) } : { S: r.at },
    eventId: { S: r.eventId },
    userId: { S: written },
    v: { N: String(r.v) },
  };
  if (keep) item[keep] = { S: r.userId };
  return Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1)));
}

async function tableItems(table: string, keys: TableKeys = KEYS): Promise<Map<string, Record<string, PlainValue>>> {
  const out = new Map<string, Record<string, PlainValue>>();
  for (const raw of await scanAll(client(), table)) {
    const item = plainItem(raw);
    const text = (name: string) => (item[name] as { S: string }).S;
    out.set(keys.sortKey ? `${text(keys.partitionKey.name)}|${text(keys.sortKey.name)}` : text(keys.partitionKey.name), item);
  }
  return out;
}

function expectSameTable(actual: Map<string, unknown>, expected: Map<string, unknown>) {
  const wrong = [...expected].filter(([k, v]) => JSON.stringify(actual.get(k)) !== JSON.stringify(v)).slice(0, 5);
  expect(wrong.map(([key, v]) => ({ key, expected: v, actual: actual.get(key) }))).toEqual([]);
  expect(actual.size).toBe(expected.size);
}

/** The manifest's `keys`: for each original key, the sorted distinct values written. */
function manifestKeys(pairs: Iterable<[original: string, written: string]>): Record<string, string[]> {
  const byKey = new Map<string, Set<string>>();
  for (const [original, written] of pairs) {
    if (!byKey.has(original)) byKey.set(original, new Set());
    byKey.get(original)!.add(written);
  }
  return Object.fromEntries([...byKey.keys()].sort().map((k) => [k, [...byKey.get(k)!].sort()]));
}

// ---------------------------------------------------------------------------------------------------

const rows = skewedRows();
const jsonl = jsonlOf(rows);

describe('every deterministic scheme loads a sorted, skewed input completely, each item under its computed key', () => {
  it('the input is what the tests claim', () => {
    expect(rows.length).toBeGreaterThan(1000);
    expect(rows.map((r) => r.userId)).toEqual([...rows.map((r) => r.userId)].sort());
    expect(rows.filter((r) => r.userId === HOT).length / rows.length).toBeCloseTo(0.3, 2);
    expect(new Set(rows.map((r) => typeof r.at))).toEqual(new Set(['string', 'number']));
    // About 100 days: every time bucket has more than one value.
    expect(new Set(rows.map((r) => timeBucket(r.ms, 'month'))).size).toBeGreaterThanOrEqual(3);
  });

  const bucket = (unit: TimeUnit) => (r: Row) => timeBucket(r.ms, unit);
  it.each<{ rules: string[]; suffixes: Array<(r: Row) => string | number> }>([
    { rules: ['hash:4'], suffixes: [(r) => hashShard(r.eventId, 4)] },
    { rules: ['hash:8:amount'], suffixes: [(r) => hashShard(r.amountText, 8)] },
    { rules: ['time:hour:at'], suffixes: [bucket('hour')] },
    { rules: ['time:day:at'], suffixes: [bucket('day')] },
    { rules: ['time:month:at'], suffixes: [bucket('month')] },
    { rules: ['time:day:at', 'hash:4'], suffixes: [bucket('day'), (r) => hashShard(r.eventId, 4)] },
  ])('--shard $rules', async ({ rules, suffixes }) => {
    const table = await newTable();
    const shardManifestPath = manifestPath(rules.join('+'));
    const input = await inputFile('events.jsonl', jsonl);
    const result = await run({ input, table, shard: rules, shardManifestPath });
    expect(result).toMatchObject({
      rowsRead: rows.length,
      written: rows.length,
      superseded: 0,
      rejected: 0,
      complete: true,
      shardManifestPath,
      shardedKeys: 40,
    });

    const written = rows.map((r) => [r.userId, [r.userId, ...suffixes.map((s) => String(s(r)))].join('#')] as [string, string]);
    const expected = new Map(rows.map((r, i) => [`${written[i]![1]}|${r.eventId}`, itemOf(r, written[i]![1])]));
    expectSameTable(await tableItems(table), expected);

    const manifest = await readManifest(shardManifestPath);
    expect(manifest).toEqual({
      manifestVersion: 2,
      tool: { name: 'ddb-spread', version: expect.any(String) },
      algorithm: expect.objectContaining({ name: 'ddb-spread-shard', version: 2 }),
      valueText: expect.any(Object),
      table,
      partitionKey: 'userId',
      sortKey: 'eventId',
      separator: '#',
      suffixBase: 0,
      // The rule as given (hash:4) or with the attribute it resolved to (hash:4:eventId, as in
      // docs/SHARDING.md's example manifest): either names the rule.
      rules: rules.map((r) => (r === 'hash:4' ? expect.stringMatching(/^hash:4(:eventId)?$/) : r)),
      shardCounts: rules.map((r) => (r.startsWith('time:') ? null : Number(r.split(':')[1]))),
      seed: expect.any(Number),
      keepOriginalKey: null,
      shardedKeys: 'all',
      keys: manifestKeys(written),
      complete: true,
      valuesWritten: new Set(written.map(([, w]) => w)).size,
    });
    if (rules[0] === 'hash:4') expect(manifest.keys[HOT]).toEqual([`${HOT}#0`, `${HOT}#1`, `${HOT}#2`, `${HOT}#3`]);
    if (rules[0] === 'time:month:at') {
      // The hot user's events span about a month: exactly the months they touch.
      const months = [...new Set(rows.filter((r) => r.userId === HOT).map((r) => new Date(r.ms).toISOString().slice(0, 7)))].sort();
      expect(months.length).toBeGreaterThanOrEqual(2);
      expect(manifest.keys[HOT]).toEqual(months.map((m) => `${HOT}#${m}`));
    }
    await dropTable(table);
  });

  it('combined time:day then hash:4 gives user-1#2024-01-15#3 (the docs/SHARDING.md example)', async () => {
    const table = await newTable();
    // An event id whose md5 is 3 mod 4, found with docs/SHARDING.md's formula.
    const eventId = Array.from({ length: 100 }, (_, k) => `order-${k}`).find((id) => hashShard(id, 4) === 3)!;
    const lines = [
      { userId: 'user-1', eventId, at: '2024-01-15T13:45:00Z' },
      { userId: 'user-1', eventId: `${eventId}-b`, at: '2024-01-15T23:59:59.999-00:00' },
      { userId: 'user-1', eventId: `${eventId}-c`, at: '2024-01-16T01:30:00+02:00' },
      { userId: 'user-1', eventId: `${eventId}-d`, at: 1705276800 },
      { userId: 'user-1', eventId: `${eventId}-e`, at: 1705363199999 },
      { userId: 'user-1', eventId: `${eventId}-f`, at: '2024-01-15 08:00' },
      { userId: 'user-1', eventId: `${eventId}-g`, at: '2024-01-16T04:00:00+0530' },
    ];
    const result = await run({
      input: await inputFile('readme.jsonl', lines.map((l) => JSON.stringify(l)).join('\n')),
      table,
      shard: ['time:day:at', 'hash:4'],
      shardManifestPath: manifestPath('readme'),
    });
    expect(result).toMatchObject({ rowsRead: 7, written: 7, rejected: 0 });
    const items = await tableItems(table);
    expect(items.get(`user-1#2024-01-15#3|${eventId}`)).toEqual({
      at: { S: '2024-01-15T13:45:00Z' },
      eventId: { S: eventId },
      userId: { S: 'user-1#2024-01-15#3' },
    });
    // Every one of these instants is on 2024-01-15 UTC (01:30 at +02:00 is 23:30 the day before).
    expect([...items.values()].map((i) => (i['userId'] as { S: string }).S.split('#')[1])).toEqual(Array(7).fill('2024-01-15'));
    for (const [key, item] of items)
      expect((item['userId'] as { S: string }).S.split('#')[2], key).toBe(String(hashShard((item['eventId'] as { S: string }).S, 4)));
    await dropTable(table);
  });
});

describe('random:N', () => {
  it('puts every row under key#0..key#N-1 as the seed and the primary key say, and the same seed gives the same table', async () => {
    const input = await inputFile('random.jsonl', jsonl);
    const seed = 2814;
    const loads: Array<{ table: string; result: LoadResult; manifest: ShardManifestJson }> = [];
    for (const name of ['first', 'second']) {
      const table = await newTable();
      const shardManifestPath = manifestPath(`random-${name}`);
      const result = await run({ input, table, shard: ['random:4'], shardSeed: seed, shardManifestPath });
      loads.push({ table, result, manifest: await readManifest(shardManifestPath) });
    }
    for (const { result } of loads) expect(result).toMatchObject({ rowsRead: rows.length, written: rows.length, rejected: 0, complete: true, shardedKeys: 40 });

    const [first, second] = await Promise.all(loads.map(({ table }) => tableItems(table)));
    expect(first!.size).toBe(rows.length);
    // Contents: every input row once, its key with a suffix 0..3, everything else as in the input.
    const byOriginal = new Map(rows.map((r) => [`${r.userId}|${r.eventId}`, r]));
    const seen = new Set<string>();
    const suffixCounts = [0, 0, 0, 0];
    for (const item of first!.values()) {
      const written = (item['userId'] as { S: string }).S;
      const m = /^(.*)#([0-3])$/.exec(written);
      expect(m, written).not.toBeNull();
      const row = byOriginal.get(`${m![1]}|${(item['eventId'] as { S: string }).S}`)!;
      expect(item).toEqual(itemOf(row, written));
      seen.add(`${row.userId}|${row.eventId}`);
      if (row.userId === HOT) suffixCounts[Number(m![2])]!++;
    }
    expect(seen.size).toBe(rows.length);
    // Uniform enough: each shard of the hot key takes 15-35% of its rows.
    for (const count of suffixCounts) expect(count / suffixCounts.reduce((a, b) => a + b)).toBeGreaterThan(0.15);
    for (const count of suffixCounts) expect(count / suffixCounts.reduce((a, b) => a + b)).toBeLessThan(0.35);
    // Exactly the documented draw: the seed and the row's primary key.
    rows.forEach((r, i) => {
      const suffix = randomShard(seed, r.userId, r.eventId, 4);
      expect(first!.has(`${r.userId}#${suffix}|${r.eventId}`), `line ${i + 1}`).toBe(true);
    });
    expect(second).toEqual(first);

    for (const { manifest } of loads) {
      expect(manifest).toMatchObject({ rules: ['random:4'], shardCounts: [4], seed, shardedKeys: 'all', keepOriginalKey: null, complete: true });
      expect(manifest.keys[HOT]).toEqual([`${HOT}#0`, `${HOT}#1`, `${HOT}#2`, `${HOT}#3`]);
      expect(Object.keys(manifest.keys)).toEqual(Array.from({ length: 40 }, (_, j) => userName(j)));
    }
    expect(loads[1]!.manifest.keys).toEqual(loads[0]!.manifest.keys);
    for (const { table } of loads) await dropTable(table);
  });

  it('without --shard-seed draws a seed and records it in the manifest', async () => {
    const table = await newTable();
    const shardManifestPath = manifestPath('random-noseed');
    const small = rows.slice(0, 50);
    const input = await inputFile('random-noseed.jsonl', jsonlOf(small));
    const result = await run({ input, table, shard: ['random:3'], shardManifestPath });
    expect(result).toMatchObject({ written: 50, rejected: 0 });
    const { seed } = await readManifest(shardManifestPath);
    expect(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff).toBe(true);
    const items = await tableItems(table);
    small.forEach((r) => expect(items.has(`${r.userId}#${randomShard(seed, r.userId, r.eventId, 3)}|${r.eventId}`)).toBe(true));
    await dropTable(table);
  });
});

describe('--shard-keys, --keep-original-key, --shard-separator', () => {
  it('--shard-keys shards only the hot keys and writes the others as they are', async () => {
    const table = await newTable();
    const shardManifestPath = manifestPath('hot');
    const hotKeys = [HOT, 'user-012', 'user-999'];
    const result = await run({ input: await inputFile('hot.jsonl', jsonl), table, shard: ['hash:4'], shardKeys: hotKeys, shardManifestPath });
    // user-999 is not in the input: two keys were sharded.
    expect(result).toMatchObject({ rowsRead: rows.length, written: rows.length, rejected: 0, shardedKeys: 2, shardManifestPath });
    const writtenOf = (r: Row) => (hotKeys.includes(r.userId) ? `${r.userId}#${hashShard(r.eventId, 4)}` : r.userId);
    expectSameTable(await tableItems(table), new Map(rows.map((r) => [`${writtenOf(r)}|${r.eventId}`, itemOf(r, writtenOf(r))])));
    const manifest = await readManifest(shardManifestPath);
    expect(manifest.shardedKeys).toEqual(['user-007', 'user-012', 'user-999']);
    expect(manifest.keys).toEqual({
      [HOT]: [`${HOT}#0`, `${HOT}#1`, `${HOT}#2`, `${HOT}#3`],
      'user-012': manifestKeys(rows.filter((r) => r.userId === 'user-012').map((r) => [r.userId, writtenOf(r)]))['user-012'],
    });
    await dropTable(table);
  });

  it('--keep-original-key stores the unsharded value; --shard-separator replaces "#"', async () => {
    const table = await newTable();
    const shardManifestPath = manifestPath('keep');
    const result = await run({
      input: await inputFile('keep.jsonl', jsonl),
      table,
      shard: ['time:month:at', 'hash:4'],
      shardSeparator: '::',
      keepOriginalKey: 'customer',
      shardManifestPath,
    });
    expect(result).toMatchObject({ rowsRead: rows.length, written: rows.length, rejected: 0, shardedKeys: 40 });
    const writtenOf = (r: Row) => `${r.userId}::${timeBucket(r.ms, 'month')}::${hashShard(r.eventId, 4)}`;
    expectSameTable(await tableItems(table), new Map(rows.map((r) => [`${writtenOf(r)}|${r.eventId}`, itemOf(r, writtenOf(r), 'customer')])));
    const manifest = await readManifest(shardManifestPath);
    expect(manifest).toMatchObject({
      separator: '::',
      keepOriginalKey: 'customer',
      rules: ['time:month:at', expect.stringMatching(/^hash:4(:eventId)?$/)],
      shardCounts: [null, 4],
    });
    expect(manifest.keys).toEqual(manifestKeys(rows.map((r) => [r.userId, writtenOf(r)])));
    await dropTable(table);
  });

  it('--keep-original-key rejects a row whose attribute already holds another value (SHARD_ATTRIBUTE)', async () => {
    const table = await newTable();
    const lines = ['{"userId":"u1","eventId":"a","customer":"u1"}', '{"userId":"u1","eventId":"b","customer":"someone else"}', '{"userId":"u2","eventId":"c"}'];
    const result = await run({
      input: await inputFile('keep-clash.jsonl', lines.join('\n')),
      table,
      shard: ['hash:2'],
      keepOriginalKey: 'customer',
      shardManifestPath: manifestPath('keep-clash'),
    });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1, rejectedByReason: { SHARD_ATTRIBUTE: 1 } });
    expect(await rejectsOf(result)).toMatchObject([{ line: 2, code: 'SHARD_ATTRIBUTE', field: 'customer', raw: lines[1] }]);
    const items = await tableItems(table);
    expect([...items.values()].map((i) => [i['eventId'], i['customer']])).toEqual(
      expect.arrayContaining([
        [{ S: 'a' }, { S: 'u1' }],
        [{ S: 'c' }, { S: 'u2' }],
      ]),
    );
    expect(items.size).toBe(2);
    await dropTable(table);
  });
});

describe('sharding errors are found before anything is written', () => {
  const sample = '{"userId":"u1","eventId":"a","at":"2024-01-15T10:00:00Z"}\n{"userId":"u2","eventId":"b","at":"2024-01-16T10:00:00Z"}\n';

  it.each<{ name: string; keys: TableKeys; options: Partial<LocalLoadOptions>; message: RegExp }>([
    {
      name: 'a number (N) partition key',
      keys: { partitionKey: { name: 'userId', type: 'N' } },
      options: { shard: ['random:4'] },
      message: /string partition key.*"userId".*number/,
    },
    {
      name: 'a binary (B) partition key',
      keys: { partitionKey: { name: 'userId', type: 'B' } },
      options: { shard: ['hash:4:eventId'] },
      message: /string partition key.*binary/,
    },
    { name: 'hash without an attribute and no sort key', keys: PK_ONLY, options: { shard: ['hash:4'] }, message: /needs an attribute.*no sort key/ },
    { name: 'time without an attribute and no sort key', keys: PK_ONLY, options: { shard: ['time:day'] }, message: /needs an attribute.*no sort key/ },
    { name: 'hash on the partition key itself', keys: KEYS, options: { shard: ['hash:4:userId'] }, message: /partition key "userId" itself/ },
    { name: '--keep-original-key naming the sort key', keys: KEYS, options: { shard: ['hash:4'], keepOriginalKey: 'eventId' }, message: /keep-original-key/ },
  ])('$name: INVALID_OPTION, the table stays empty, no manifest', async ({ keys, options, message }) => {
    const table = await newTable(keys);
    const shardManifestPath = manifestPath('invalid');
    const rejectsPath = path('invalid.rejects.jsonl');
    const error = await runFailing({ input: await inputFile('invalid.jsonl', sample), table, shardManifestPath, rejectsPath, ...options });
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toMatch(message);
    expect(error.result).toBeUndefined();
    expect((await scanAll(client(), table)).length).toBe(0);
    expect(existsSync(shardManifestPath)).toBe(false);
    expect(existsSync(rejectsPath)).toBe(false);
    await dropTable(table);
  });

  it.each<{ name: string; options: Partial<LocalLoadOptions>; code: string; message: RegExp }>([
    { name: 'hash:1', options: { shard: ['hash:1'] }, code: 'INVALID_OPTION', message: /hash:1.*2 to 10000/ },
    { name: 'time:week', options: { shard: ['time:week:at'] }, code: 'INVALID_OPTION', message: /time:week.*hour, day, month/ },
    { name: 'random with an attribute', options: { shard: ['random:4:at'] }, code: 'INVALID_OPTION', message: /random takes no attribute/ },
    { name: '--shard-keys without --shard', options: { shardKeys: ['u1'] }, code: 'INVALID_OPTION', message: /shardKeys.*shard/ },
    { name: 'an empty separator', options: { shard: ['hash:2'], shardSeparator: '' }, code: 'INVALID_OPTION', message: /shardSeparator/ },
    { name: 'a seed out of range', options: { shard: ['random:2'], shardSeed: 2 ** 32 }, code: 'INVALID_OPTION', message: /shardSeed/ },
    {
      name: 'a manifest in a missing folder',
      options: { shard: ['hash:2'], shardManifestPath: '/nonexistent-ddb-spread/m.json' },
      code: 'MANIFEST_UNWRITABLE',
      message: /nonexistent-ddb-spread/,
    },
  ])('$name: $code, nothing written', async ({ options, code, message }) => {
    const table = await newTable();
    const error = await runFailing({ input: await inputFile('invalid2.jsonl', sample), table, ...options });
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect((await scanAll(client(), table)).length).toBe(0);
    await dropTable(table);
  });

  it('CSV cells hold epoch seconds and milliseconds as text, typed N or not', async () => {
    const table = await newTable();
    const csv = 'userId,eventId,at,n\nu1,a,1705312800,1705312800\nu1,b,1705399199999,1705399199999\nu1,c,1705363200,1705363200\n';
    const byText = await run({
      input: await inputFile('epoch.csv', csv),
      table,
      shard: ['time:day:at', 'time:hour:n'],
      types: { n: 'N' },
      shardManifestPath: manifestPath('epoch'),
    });
    expect(byText).toMatchObject({ rowsRead: 3, written: 3, rejected: 0 });
    expect([...(await tableItems(table)).keys()].sort()).toEqual([
      'u1#2024-01-15#2024-01-15T10|a',
      'u1#2024-01-16#2024-01-16T00|c',
      'u1#2024-01-16#2024-01-16T09|b',
    ]);
    await dropTable(table);
  });

  it('a row whose time is missing or unreadable is rejected as SHARD_ATTRIBUTE (file, line, field); the others load', async () => {
    const table = await newTable();
    const lines = [
      '{"userId":"u1","eventId":"a","at":"2024-01-15T10:00:00Z"}', // 1 ok
      '{"userId":"u1","eventId":"b","at":"yesterday"}', // 2
      '{"userId":"u1","eventId":"c"}', // 3 missing
      '{"userId":"u1","eventId":"d","at":"2024-02-30T10:00:00Z"}', // 4 no such day
      '{"userId":"u1","eventId":"e","at":true}', // 5 not a time
      '{"userId":"u2","eventId":"f","at":1705312800}', // 6 ok (epoch seconds)
      '{"userId":"u2","eventId":"g","at":{"t":1}}', // 7 a map
      '{"userId":"u2","eventId":"h","at":"2024-13-01"}', // 8 no such month
      '{"userId":"u2","eventId":"i","at":1705312800000}', // 9 ok (epoch ms)
    ];
    const input = await inputFile('badtime.jsonl', `${lines.join('\n')}\n`);
    const result = await run({ input, table, shard: ['time:day:at'], shardManifestPath: manifestPath('badtime') });
    expect(result).toMatchObject({ rowsRead: 9, written: 3, rejected: 6, rejectedByReason: { SHARD_ATTRIBUTE: 6 }, complete: false });
    const rejects = await rejectsOf(result);
    expect(rejects.map((r) => [r.line, r.code, r.field, r.file])).toEqual([2, 3, 4, 5, 7, 8].map((line) => [line, 'SHARD_ATTRIBUTE', 'at', input]));
    expect(rejects.map((r) => r.raw)).toEqual([2, 3, 4, 5, 7, 8].map((line) => lines[line - 1]));
    // The key in the reject file is the key as read, not a sharded one.
    expect(rejects[0]!.key).toEqual({ userId: 'u1', eventId: 'b' });
    expect(rejects[1]!.message).toMatch(/"at".*none/);
    expect(rejects[0]!.message).toMatch(/not a readable time/);
    expect([...(await tableItems(table)).keys()].sort()).toEqual(['u1#2024-01-15|a', 'u2#2024-01-15|f', 'u2#2024-01-15|i']);
    await dropTable(table);
  });

  it('a row without the hash attribute is rejected as SHARD_ATTRIBUTE, never written unsharded', async () => {
    const table = await newTable(PK_ONLY);
    const lines = ['{"userId":"u1","orderId":"o1"}', '{"userId":"u1"}', '{"userId":"u1","orderId":""}', '{"userId":"u2","orderId":7}'];
    const result = await run({
      input: await inputFile('nohash.jsonl', lines.join('\n')),
      table,
      shard: ['hash:5:orderId'],
      shardManifestPath: manifestPath('nohash'),
    });
    expect(result).toMatchObject({ rowsRead: 4, written: 2, rejected: 2, rejectedByReason: { SHARD_ATTRIBUTE: 2 } });
    expect((await rejectsOf(result)).map((r) => [r.line, r.field])).toEqual([
      [2, 'orderId'],
      [3, 'orderId'],
    ]);
    // A number hashes as its DynamoDB text.
    expect([...(await tableItems(table, PK_ONLY)).keys()].sort()).toEqual([`u1#${hashShard('o1', 5)}`, `u2#${hashShard('7', 5)}`].sort());
    await dropTable(table);
  });

  it('a sharded key over 2048 bytes is KEY_TOO_LONG; exactly 2048 bytes is written', async () => {
    const table = await newTable();
    const fits = 'k'.repeat(2046); // + "#d" = 2048
    const over = 'k'.repeat(2047); // + "#d" = 2049
    const wide = 'é'.repeat(1023); // 2046 bytes + "#d" = 2048
    const wideOver = `${'é'.repeat(1023)}x`; // 2047 bytes + "#d" = 2049
    const lines = [fits, over, wide, wideOver].map((userId, i) => JSON.stringify({ userId, eventId: `e${i}` }));
    const result = await run({ input: await inputFile('long.jsonl', lines.join('\n')), table, shard: ['hash:4'], shardManifestPath: manifestPath('long') });
    expect(result).toMatchObject({ rowsRead: 4, written: 2, rejected: 2, rejectedByReason: { KEY_TOO_LONG: 2 } });
    const rejects = await rejectsOf(result);
    expect(rejects.map((r) => [r.line, r.code, r.field])).toEqual([
      [2, 'KEY_TOO_LONG', 'userId'],
      [4, 'KEY_TOO_LONG', 'userId'],
    ]);
    expect(rejects[0]!.message).toMatch(/2049 bytes/);
    const items = await tableItems(table);
    expect([...items.keys()].sort()).toEqual([`${fits}#${hashShard('e0', 4)}|e0`, `${wide}#${hashShard('e2', 4)}|e2`].sort());
    await dropTable(table);
  });
});

describe('the manifest', () => {
  it('is complete and right when the order goes through temporary files (64 KB)', async () => {
    const table = await newTable();
    const shardManifestPath = manifestPath('spill');
    const tempDir = await mkdtemp(join(dir(), 'spill-'));
    const result = await run({
      input: await inputFile('spill.jsonl', jsonl),
      table,
      shard: ['hash:4'],
      shardManifestPath,
      memoryBytes: 64 * 1024,
      tempDir,
      order: 'spread',
    });
    expect(result).toMatchObject({ rowsRead: rows.length, written: rows.length, rejected: 0, shardedKeys: 40, order: 'spread' });
    expect(result.orderTempBytes).toBeGreaterThan(0);
    const writtenOf = (r: Row) => `${r.userId}#${hashShard(r.eventId, 4)}`;
    expectSameTable(await tableItems(table), new Map(rows.map((r) => [`${writtenOf(r)}|${r.eventId}`, itemOf(r, writtenOf(r))])));
    const manifest = await readManifest(shardManifestPath);
    expect(manifest.keys).toEqual(manifestKeys(rows.map((r) => [r.userId, writtenOf(r)])));
    expect(manifest.valuesWritten).toBe(new Set(rows.map(writtenOf)).size);
    await dropTable(table);
  });

  it('lists exactly the values written, also when the load stops (--max-rejects)', async () => {
    const table = await newTable();
    const shardManifestPath = manifestPath('stopped');
    const lines = [...rows.slice(0, 100).map(jsonLine), '{"userId":"u9","eventId":"x","at":"never"}', ...rows.slice(100, 200).map(jsonLine)];
    const error = await runFailing({
      input: await inputFile('stopped.jsonl', lines.join('\n')),
      table,
      shard: ['time:day:at'],
      shardManifestPath,
      maxRejects: 1,
      order: 'input',
      concurrency: 1,
    });
    expect(error.code).toBe('MAX_REJECTS_REACHED');
    expect(error.result!.shardManifestPath).toBe(shardManifestPath);
    const manifest = await readManifest(shardManifestPath);
    const items = await scanAll(client(), table);
    // Exactly the values of the items that were written are listed.
    const written = items.map((i) => i['userId']!.S!);
    expect(written.length).toBe(error.result!.written);
    expect(manifest.valuesWritten).toBe(new Set(written).size);
    expect(Object.values(manifest.keys).flat().sort()).toEqual([...new Set(written)].sort());
    await dropTable(table);
  });
});
