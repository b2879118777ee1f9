/**
 * Shard suffixes and literal keys, against DynamoDB Local. A literal partition key that reads as a value a --shard-keys
 * key is written under (USER#3 beside USER with hash:4) is rejected SHARD_KEY_COLLISION whatever the
 * order of the rows, never overwrites or is overwritten by the sharded key's items, and query/get never
 * return an item of another logical key. Sharded deletes (--operation-column, export change
 * records) send exactly the key: with --keep-original-key, with hash:N on a non-key attribute (which the
 * delete row must carry), and with random:N (whose suffix follows from the seed and the key).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getSharded, queryShards, type LoadResult } from '../../src/index.js';
import { hashShard, randomShard } from '../../src/sharding/shard.js';
import type { TableKeys } from '../support/ddb.js';
import { buildExport, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { expectedScan, rawScan } from '../support/rawScan.js';
import { readRejects } from '../support/rejects.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 'shard-collide', processCredentials: true, keys: KEYS });
const { newTable, dir } = aws;
const { path, inputFile, run, runFailing } = localLoad(aws);
const reader = (table: string, manifest: string) => ({ table, manifest, endpoint: aws.endpoint, region: 'us-east-1' });

async function queryAll(table: string, key: string, manifest: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const item of queryShards({ ...reader(table, manifest), key })) items.push(item);
  return items;
}

/** rows read = written + superseded + rejected (+ not written: none here). */
function balanced(result: LoadResult): void {
  expect(result.rowsRead).toBe(result.written + result.superseded + result.rejected);
}

const S = (text: string) => ({ S: text });

describe('item 10: literal keys that collide with shard suffixes', () => {
  const sharded = ['USER,1,s1', 'USER,2,s2', 'USER,3,s3', 'USER,4,s4', 'USER,5,s5', 'USER,6,s6'];
  const literal = ['USER#0,1,lit0', 'USER#1,1,lit1', 'USER#2,1,lit2', 'USER#3,1,lit3'];
  const others = ['bob,1,b1', 'USER#4,1,out-of-range'];

  it.each([
    ['literal keys first, input order', [...literal, ...sharded, ...others], 'input'],
    ['sharded key first, input order', [...sharded, ...others, ...literal], 'input'],
    ['interleaved, round-robin', [sharded[0]!, literal[3]!, sharded[1]!, literal[0]!, ...others, ...sharded.slice(2), literal[1]!, literal[2]!], 'round-robin'],
  ] as const)('%s: the literal rows are rejected with file, line and key; the table holds exactly the rows written', async (_label, lines, order) => {
    const table = await newTable();
    const input = await inputFile('users.csv', `pk,sk,v\n${lines.join('\n')}\n`);
    const manifest = path('users.shards.json');
    const result = await run({ input, table, shard: ['hash:4'], shardKeys: ['USER'], shardManifestPath: manifest, order });
    balanced(result);
    expect(result).toMatchObject({ rowsRead: 12, written: 8, superseded: 0, rejected: 4, rejectedByReason: { SHARD_KEY_COLLISION: 4 } });
    const rejects = await readRejects(result.rejectsPath!);
    expect(rejects.map((r) => r.key?.['pk']).sort()).toEqual(['USER#0', 'USER#1', 'USER#2', 'USER#3']);
    for (const reject of rejects) {
      expect(reject).toMatchObject({ file: input, code: 'SHARD_KEY_COLLISION', field: 'pk' });
      expect(reject.line).toBe(lines.indexOf(reject.raw) + 2);
      expect(reject.message).toContain('--shard-separator');
    }
    // The table: USER's six items under the hash of their sort keys, bob and the out-of-range literal.
    const want = [
      ...sharded.map((l) => l.split(',')).map(([, sk, v]) => JSON.stringify({ pk: S(`USER#${hashShard(sk!, 4)}`), sk: S(sk!), v: S(v!) })),
      JSON.stringify({ pk: S('bob'), sk: S('1'), v: S('b1') }),
      JSON.stringify({ pk: S('USER#4'), sk: S('1'), v: S('out-of-range') }),
    ];
    expect(await rawScan(aws.endpoint, table)).toEqual(expectedScan(...want));
    // Read back: USER's items only, in sort key order; each one by get.
    expect((await queryAll(table, 'USER', manifest)).map((i) => i['v'])).toEqual(['s1', 's2', 's3', 's4', 's5', 's6']);
    for (let sk = 1; sk <= 6; sk++) expect((await getSharded({ ...reader(table, manifest), key: 'USER', sort: String(sk) }))?.['v']).toBe(`s${sk}`);
    // A literal key that reads as USER's value is not a key of its own: its items would be USER's.
    const refused = await queryAll(table, 'USER#3', manifest).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(refused?.code).toBe('INVALID_OPTION');
    expect(refused?.message).toContain('--key USER');
    expect((await queryAll(table, 'USER#4', manifest)).map((i) => i['v'])).toEqual(['out-of-range']);
  });

  it('time buckets too: a literal USER#2024-01-15 beside USER sharded by day is rejected', async () => {
    const table = await newTable();
    const text = 'pk,sk,at,v\nUSER,a,2024-01-15T10:00:00Z,x\nUSER#2024-01-15,a,2024-01-15T11:00:00Z,lit\nUSER#2024-02-30,a,2024-01-15T11:00:00Z,not-a-day\n';
    const result = await run({ input: await inputFile('days.csv', text), table, shard: ['time:day:at'], shardKeys: ['USER'] });
    balanced(result);
    expect(result).toMatchObject({ written: 2, rejected: 1, rejectedByReason: { SHARD_KEY_COLLISION: 1 } });
    expect((await rawScan(aws.endpoint, table)).map((t) => (JSON.parse(t) as { v: { S: string } }).v.S).sort()).toEqual(['not-a-day', 'x']);
  });

  it('a separator ending in a digit is refused before anything is written (k1+1+0 and k+1+10 meet)', async () => {
    const table = await newTable();
    const error = await runFailing({ input: await inputFile('k.csv', 'pk,sk\nk,1\n'), table, shard: ['hash:20'], shardSeparator: '1' });
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('ends with a digit');
    expect(await rawScan(aws.endpoint, table)).toEqual([]);
  });

  it('with --keep-original-key, query and get skip items of another key under the same values (a table written before this check)', async () => {
    const table = await newTable();
    // Another load (or an older ddb-spread) left literal items where USER's items with sort keys 1..4 go.
    const at = (sk: number) => `USER#${hashShard(String(sk), 4)}`;
    const literals = [1, 2, 3, 4].map((sk) => `${at(sk)},${sk},lit${sk}`).join('\n');
    await run({ input: await inputFile('old.csv', `pk,sk,v\n${literals}\n`), table });
    const manifest = path('keep.shards.json');
    const input = await inputFile('users.csv', 'pk,sk,v\nUSER,7,s7\nUSER,8,s8\n');
    const result = await run({ input, table, shard: ['hash:4'], shardKeys: ['USER'], keepOriginalKey: 'orig', shardManifestPath: manifest });
    expect(result).toMatchObject({ written: 2, rejected: 0 });
    expect(await rawScan(aws.endpoint, table)).toHaveLength(6);
    expect((await queryAll(table, 'USER', manifest)).map((i) => i['v'])).toEqual(['s7', 's8']);
    // The literal items are the literal keys' own.
    const under = [1, 2, 3, 4].filter((sk) => at(sk) === at(1)).map((sk) => `lit${sk}`);
    expect((await queryAll(table, at(1), manifest)).map((i) => i['v'])).toEqual(under);
    // get of USER/1 lands on a literal item: not USER's.
    expect(await getSharded({ ...reader(table, manifest), key: 'USER', sort: '1' })).toBeUndefined();
    expect((await getSharded({ ...reader(table, manifest), key: 'USER', sort: '7' }))?.['v']).toBe('s7');
  });
});

describe('item 13: sharded deletes', () => {
  const keysOf = async (table: string) => (await rawScan(aws.endpoint, table)).map((t) => JSON.parse(t) as Record<string, { S: string }>);

  it('--keep-original-key: an --operation-column delete sends only the key and removes the item', async () => {
    const table = await newTable();
    const options = { table, shard: ['hash:4'], shardKeys: ['USER'], keepOriginalKey: 'orig', operationColumn: 'op' };
    await run({ input: await inputFile('p.csv', 'pk,sk,v,op\nUSER,1,a,put\nUSER,2,b,put\nbob,1,c,put\n'), ...options });
    const result = await run({ input: await inputFile('d.csv', 'pk,sk,op\nUSER,1,delete\nbob,1,delete\n'), ...options });
    expect(result).toMatchObject({ rowsRead: 2, written: 2, deleted: 2, rejected: 0 });
    expect(await rawScan(aws.endpoint, table)).toEqual(
      expectedScan(JSON.stringify({ pk: S(`USER#${hashShard('2', 4)}`), sk: S('2'), v: S('b'), orig: S('USER') })),
    );
  });

  it('hash:N on a non-key attribute: a delete row carrying it deletes; one without it is rejected, naming the attribute', async () => {
    const table = await newTable();
    const options = { table, shard: ['hash:8:grp'], operationColumn: 'op' };
    const puts = Array.from({ length: 20 }, (_, i) => `u${i % 3},${i},g${i % 5},put`).join('\n');
    await run({ input: await inputFile('p.csv', `pk,sk,grp,op\n${puts}\n`), ...options });
    const input = await inputFile('d.csv', 'pk,sk,grp,op\nu0,0,g0,delete\nu1,1,g1,delete\nu2,2,,delete\n');
    const result = await run({ input, ...options });
    balanced(result);
    expect(result).toMatchObject({ rowsRead: 3, deleted: 2, rejected: 1, rejectedByReason: { SHARD_ATTRIBUTE: 1 } });
    const [reject] = await readRejects(result.rejectsPath!);
    expect(reject).toMatchObject({ file: input, line: 4, field: 'grp' });
    expect(reject!.message).toContain('a delete needs it too');
    const left = (await keysOf(table)).map((i) => i['sk']!.S).sort((a, b) => Number(a) - Number(b));
    expect(left).toEqual(Array.from({ length: 20 }, (_, i) => String(i)).filter((sk) => sk !== '0' && sk !== '1'));
  });

  it('random:N: a delete computes the suffix from the seed and the key; without --shard-seed deletes are refused', async () => {
    const table = await newTable();
    const options = { table, shard: ['random:6'], shardSeed: 99, operationColumn: 'op' };
    const puts = Array.from({ length: 30 }, (_, i) => `hot,${i},v${i},put`).join('\n');
    await run({ input: await inputFile('p.csv', `pk,sk,v,op\n${puts}\n`), ...options });
    const doomed = [3, 7, 11, 20, 29];
    const result = await run({ input: await inputFile('d.csv', `pk,sk,op\n${doomed.map((i) => `hot,${i},delete`).join('\n')}\n`), ...options });
    expect(result).toMatchObject({ deleted: 5, rejected: 0 });
    const left = await keysOf(table);
    expect(left).toHaveLength(25);
    for (const item of left) expect(item['pk']!.S).toBe(`hot#${randomShard(99, 'hot', item['sk']!.S, 6)}`);
    expect(left.some((i) => doomed.includes(Number(i['sk']!.S)))).toBe(false);
    const error = await runFailing({ input: await inputFile('d2.csv', 'pk,sk,op\nhot,1,delete\n'), table, shard: ['random:6'], operationColumn: 'op' });
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('--shard-seed');
    expect(await keysOf(table)).toHaveLength(25);
  });

  it("an export's delete record: hash:N:grp takes grp from its OldImage; a record without one is rejected", async () => {
    const item = (i: number) => ({ pk: S(`k${i % 3}`), sk: S(String(i)), grp: S(`g${i % 7}`) });
    const full = buildExport('t', 'FULL_EXPORT', [Array.from({ length: 40 }, (_, i) => ({ Item: item(i) }))]);
    const del = (i: number, old: boolean) => ({
      Metadata: { WriteTimestampMicros: { N: String(1000 + i) } },
      Keys: { pk: item(i).pk, sk: item(i).sk },
      ...(old ? { OldImage: item(i) } : {}),
    });
    const incremental = buildExport('t', 'INCREMENTAL_EXPORT', [[...Array.from({ length: 10 }, (_, i) => del(i, true)), del(30, false)]]);
    const table = await newTable();
    const shard = { table, shard: ['hash:5:grp'] };
    await run({ input: await writeExport(join(dir(), 'full'), full), ...shard });
    const result = await run({ input: await writeExport(join(dir(), 'inc'), incremental), ...shard });
    expect(result).toMatchObject({ rowsRead: 11, deleted: 10, rejected: 1, rejectedByReason: { SHARD_ATTRIBUTE: 1 } });
    const left = (await keysOf(table)).map((i) => Number(i['sk']!.S)).sort((a, b) => a - b);
    expect(left).toEqual(Array.from({ length: 30 }, (_, i) => 10 + i));
  });
});
