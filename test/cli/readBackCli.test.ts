/**
 * `ddb-spread query` and `ddb-spread get` of the built CLI against DynamoDB Local: a sharded
 * load read back as JSON lines in sort key order (plain JSON and --ddb-json), from the manifest the load
 * wrote next to its input or from the load's rules; one item by its computed suffix; an old (format 1)
 * manifest still queried; and a clear message and exit code for what cannot be answered.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import type { TableKeys } from '../support/ddb.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'readback-cli', keys: KEYS });
const { dir, newTable } = aws;
const cli = localCli(aws, { stdin: '' });

/** 90 rows: HOT holds 60, with a number (v), a big number and an ISO time; sorted by sort key only within the input's order. */
const rows = Array.from({ length: 90 }, (_, i) => ({
  pk: i % 3 === 0 ? 'cold' : 'HOT',
  sk: `s-${String(89 - i).padStart(3, '0')}`,
  v: i,
  big: `1234567890123456789012345678901234567${i % 10}`,
}));
const csv = `pk,sk,v,big\n${rows.map((r) => `${r.pk},${r.sk},${r.v},${r.big}`).join('\n')}\n`;
const hotSorted = rows.filter((r) => r.pk === 'HOT').sort((a, b) => (a.sk < b.sk ? -1 : 1));
const lines = (stdout: string) => stdout.split('\n').filter((l) => l !== '');

async function loaded(shard: string[], extra: string[] = []): Promise<{ table: string; manifest: string }> {
  const table = await newTable();
  const input = join(dir(), `${table}.csv`);
  await writeFile(input, csv);
  const run = await cli(['load', input, '--table', table, '--types', 'v:N,big:N', ...shard.flatMap((s) => ['--shard', s]), '--shard-seed', '5', ...extra]);
  expect(run.code, run.stderr).toBe(0);
  return { table, manifest: `${input}.${table}.shards.json` };
}

describe('ddb-spread query', () => {
  it('prints every item of the logical key once, in sort key order, as plain JSON with every digit', async () => {
    const { table, manifest } = await loaded(['random:4', 'hash:3']);
    const run = await cli(['query', '--table', table, '--key', 'HOT', '--manifest', manifest, '--page-size', '3']);
    expect(run.code, run.stderr).toBe(0);
    const items = lines(run.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(items.map((i) => i['sk'])).toEqual(hotSorted.map((r) => r.sk));
    expect(items.every((i) => /^HOT#[0-3]#[0-2]$/.test(i['pk'] as string))).toBe(true);
    // 38 digits survive: the number is printed as written, not through a double.
    expect(lines(run.stdout)[0]).toContain(`"big":${hotSorted[0]!.big}`);
    expect(new Set(items.map((i) => i['pk'])).size).toBeGreaterThan(6);
  });

  it("--ddb-json prints DynamoDB JSON; without --manifest the load's --shard rules and seed find the same items", async () => {
    const { table } = await loaded(['random:4']);
    const run = await cli(['query', '--table', table, '--key', 'cold', '--shard', 'random:4', '--shard-seed', '5', '--ddb-json']);
    expect(run.code, run.stderr).toBe(0);
    const items = lines(run.stdout).map((l) => JSON.parse(l) as Record<string, { S?: string; N?: string }>);
    expect(items).toHaveLength(30);
    expect(items[0]!['v']!.N).toBe(String(rows.filter((r) => r.pk === 'cold').sort((a, b) => (a.sk < b.sk ? -1 : 1))[0]!.v));
  });

  it('reads a format 1 manifest (older versions): every suffix of its rules is queried', async () => {
    const { table } = await loaded(['random:4']);
    const old = join(dir(), 'old.shards.json');
    const v1 = { manifestVersion: 1, table, partitionKey: 'pk', separator: '#', rules: ['random:4'], shardCounts: [4], seed: 99, keepOriginalKey: null };
    await writeFile(old, JSON.stringify({ ...v1, shardedKeys: 'all', keys: { HOT: ['HOT#0', 'HOT#1'] }, complete: true, valuesWritten: 2 }));
    const run = await cli(['query', '--table', table, '--key', 'HOT', '--manifest', old]);
    expect(run.code, run.stderr).toBe(0);
    expect(lines(run.stdout)).toHaveLength(60);
    // Its random suffixes came from the input's path and line: get cannot compute them, and says so.
    const get = await cli(['get', '--table', table, '--key', 'HOT', '--sort', 's-001', '--manifest', old]);
    expect(get.code).toBe(78);
    expect(get.stderr).toContain('cannot be computed; use ddb-spread query');
  });

  it('refuses what it cannot answer: no manifest nor rules (64), a missing manifest (66), a time rule without the manifest (78)', async () => {
    const { table } = await loaded(['hash:2']);
    const none = await cli(['query', '--table', table, '--key', 'HOT']);
    expect([none.code, none.stderr]).toEqual([64, expect.stringContaining('give --manifest')]);
    const missing = await cli(['query', '--table', table, '--key', 'HOT', '--manifest', 'nope.json']);
    expect([missing.code, missing.stderr]).toEqual([66, expect.stringContaining('cannot read the shard manifest nope.json')]);
    const time = await cli(['query', '--table', table, '--key', 'HOT', '--shard', 'time:day']);
    expect([time.code, time.stderr]).toEqual([78, expect.stringContaining('time buckets cannot be enumerated')]);
  });
});

describe('shard suffixes that collide with literal keys', () => {
  it('the load rejects USER#0..USER#3 beside --shard-keys USER (exit 2); query USER prints only USER; query USER#3 is refused (64)', async () => {
    const table = await newTable();
    const input = join(dir(), `${table}.collide.csv`);
    const literal = [0, 1, 2, 3].map((i) => `USER#${i},1,lit${i}`);
    await writeFile(input, `pk,sk,v\nUSER,1,a\n${literal.join('\n')}\nUSER,2,b\n`);
    const load = await cli(['load', input, '--table', table, '--shard', 'hash:4', '--shard-keys', 'USER']);
    expect(load.code, load.stderr).toBe(2);
    expect(load.stdout + load.stderr).toContain('SHARD_KEY_COLLISION');
    const manifest = `${input}.${table}.shards.json`;
    const query = await cli(['query', '--table', table, '--key', 'USER', '--manifest', manifest]);
    expect(query.code, query.stderr).toBe(0);
    expect(lines(query.stdout).map((l) => (JSON.parse(l) as { v: string }).v)).toEqual(['a', 'b']);
    const refused = await cli(['query', '--table', table, '--key', 'USER#3', '--shard', 'hash:4', '--shard-keys', 'USER']);
    expect([refused.code, refused.stdout]).toEqual([64, '']);
    expect(refused.stderr).toContain('--key USER');
  });

  it("without the manifest, --keep-original-key makes query skip another key's items under the same values", async () => {
    const table = await newTable();
    const old = join(dir(), `${table}.old.csv`);
    // Literal items left by another writer on every value USER is written under.
    await writeFile(old, `pk,sk,v\n${[0, 1, 2, 3].map((i) => `USER#${i},x${i},lit${i}`).join('\n')}\n`);
    expect((await cli(['load', old, '--table', table])).code).toBe(0);
    const input = join(dir(), `${table}.users.csv`);
    await writeFile(input, 'pk,sk,v\nUSER,1,a\nUSER,2,b\n');
    const shard = ['--shard', 'hash:4', '--shard-keys', 'USER', '--keep-original-key', 'orig'];
    expect((await cli(['load', input, '--table', table, ...shard])).code).toBe(0);
    const query = await cli(['query', '--table', table, '--key', 'USER', ...shard]);
    expect(query.code, query.stderr).toBe(0);
    expect(lines(query.stdout).map((l) => (JSON.parse(l) as { v: string }).v)).toEqual(['a', 'b']);
  });
});

describe('ddb-spread get', () => {
  it('reads one item by computing its suffix; an absent item is exit 1 with nothing on stdout', async () => {
    const { table, manifest } = await loaded(['hash:4', 'random:3']);
    const target = hotSorted[7]!;
    const run = await cli(['get', '--table', table, '--key', 'HOT', '--sort', target.sk, '--manifest', manifest]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sk: target.sk, v: target.v });
    const absent = await cli(['get', '--table', table, '--key', 'HOT', '--sort', 'no-such', '--manifest', manifest]);
    expect([absent.code, absent.stdout]).toEqual([1, '']);
    expect(absent.stderr).toContain('no item with key "HOT"');
  });

  it("1-based suffixes (--shard-base 1, AWS's .1 … .200) are read back the same way", async () => {
    const { table, manifest } = await loaded(['random:200'], ['--shard-base', '1']);
    const query = await cli(['query', '--table', table, '--key', 'HOT', '--manifest', manifest]);
    const suffixes = lines(query.stdout).map((l) => Number((JSON.parse(l) as { pk: string }).pk.split('#')[1]));
    expect(suffixes).toHaveLength(60);
    expect(Math.min(...suffixes)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...suffixes)).toBeLessThanOrEqual(200);
    const get = await cli(['get', '--table', table, '--key', 'HOT', '--sort', hotSorted[0]!.sk, '--manifest', manifest]);
    expect(JSON.parse(get.stdout)).toMatchObject({ sk: hotSorted[0]!.sk });
  });
});
