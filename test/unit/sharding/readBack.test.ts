import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { parseShardManifest, type ShardPlan } from '../../../src/sharding/readManifest.js';
import { applyShard, resolveShardOptions } from '../../../src/sharding/shard.js';
import { type ShardRule } from '../../../src/sharding/shardRule.js';
import { shardedKeyOf, writtenKeysOf } from '../../../src/sharding/shardKeys.js';
import { ShardManifest } from '../../../src/sharding/shardManifest.js';
import type { Item, KeySchema } from '../../../src/shared/types.js';
import { mulberry32 } from '../../../tools/mulberry32.js';
import { loaderErrorOf } from '../../support/thrown.js';

const S_S: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const S_N: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

/** Shards `items` as a load would, and returns the plan a reader gets from the manifest it wrote. */
function loadAndRead(rules: ShardRule[], items: Item[], schema = S_S, over: { suffixBase?: 0 | 1; keys?: Set<string> } = {}) {
  const options = resolveShardOptions({ rules, seed: 77, ...over }, schema, 'Events');
  const manifest = new ShardManifest('Events', '1.2.3', options);
  const written = items.map((item) => {
    const copy = { ...item };
    const sharded = applyShard(copy, options);
    if (sharded) manifest.add(sharded.original, sharded.written);
    return copy['pk'] as string;
  });
  return { written, plan: parseShardManifest(JSON.stringify(manifest.toJSON()), 'm.json') };
}

describe('a manifest read back gives the suffixes the load wrote', () => {
  const random = mulberry32(5);
  const items: Item[] = Array.from({ length: 500 }, (_, i) => ({
    pk: `k${Math.floor(random() * 5)}`,
    sk: `s${i}`,
    at: new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 90 * 86_400_000)).toISOString(),
    other: `o${Math.floor(random() * 1000)}`,
  }));
  it.each<[string, ShardRule[], 0 | 1]>([
    ['random', [{ kind: 'random', shards: 7 }], 0],
    ['random 1-based', [{ kind: 'random', shards: 200 }], 1],
    ['hash on the sort key', [{ kind: 'hash', shards: 5 }], 0],
    ['hash on another attribute', [{ kind: 'hash', shards: 5, attribute: 'other' }], 1],
    [
      'time then hash then random',
      [
        { kind: 'time', unit: 'month', attribute: 'at' },
        { kind: 'hash', shards: 3 },
        { kind: 'random', shards: 2 },
      ],
      0,
    ],
  ])("%s: shardedKeyOf computes each item's value; writtenKeysOf lists it", (_name, rules, suffixBase) => {
    const { written, plan } = loadAndRead(rules, items, S_S, { suffixBase });
    items.forEach((item, i) => {
      expect(shardedKeyOf(plan, item['pk'] as string, item['sk'], { other: item['other'], at: item['at'] })).toBe(written[i]);
      expect(writtenKeysOf(plan, item['pk'] as string)).toContain(written[i]);
    });
  });

  it('a number sort key is hashed as its canonical text whatever spelling the reader gives', () => {
    const { written, plan } = loadAndRead([{ kind: 'random', shards: 50 }], [{ pk: 'k', sk: new NumberValue('1.5') }], S_N);
    expect(shardedKeyOf(plan, 'k', new NumberValue('1.5'))).toBe(written[0]);
  });

  it('random and hash enumerate every suffix (N1 × N2), base included; unsharded keys are themselves', () => {
    const { plan } = loadAndRead(
      [
        { kind: 'random', shards: 3 },
        { kind: 'hash', shards: 2 },
      ],
      [],
      S_S,
      { suffixBase: 1, keys: new Set(['hot']) },
    );
    expect(writtenKeysOf(plan, 'hot').sort()).toEqual(['hot#1#1', 'hot#1#2', 'hot#2#1', 'hot#2#2', 'hot#3#1', 'hot#3#2']);
    expect(writtenKeysOf(plan, 'cold')).toEqual(['cold']);
    expect(shardedKeyOf(plan, 'cold', 'x')).toBe('cold');
  });

  it('time rules list only what the manifest lists; a key it does not list has no values', () => {
    const { plan } = loadAndRead([{ kind: 'time', unit: 'day', attribute: 'at' }], [{ pk: 'k', sk: 'a', at: '2024-01-15T10:00:00Z' }]);
    expect(writtenKeysOf(plan, 'k')).toEqual(['k#2024-01-15']);
    expect(writtenKeysOf(plan, 'other')).toEqual([]);
    const partial: ShardPlan = { ...plan, complete: false };
    expect(loaderErrorOf(() => writtenKeysOf(partial, 'other')).message).toContain('time buckets cannot be enumerated');
  });

  it('get needs the value of a rule attribute that is not the sort key, and says which', () => {
    const { plan } = loadAndRead([{ kind: 'hash', shards: 4, attribute: 'other' }], []);
    const error = loaderErrorOf(() => shardedKeyOf(plan, 'k', 's1'));
    expect(error.message).toContain('give its value (--value other=…)');
  });
});

describe('parseShardManifest', () => {
  const V1 = {
    manifestVersion: 1,
    table: 'Events',
    partitionKey: 'pk',
    separator: '#',
    rules: ['random:4'],
    shardCounts: [4],
    seed: 9,
    keepOriginalKey: null,
    shardedKeys: 'all',
    keys: { k: ['k#0', 'k#3'] },
    complete: true,
    valuesWritten: 2,
  };

  it('reads format 1: base 0, the sort key unknown (the table tells), random suffixes not computable', () => {
    const plan = parseShardManifest(JSON.stringify(V1), 'old.json');
    expect(plan).toMatchObject({ manifestVersion: 1, suffixBase: 0, sortKey: undefined, randomFromKey: false, seed: 9 });
    expect(writtenKeysOf(plan, 'k').sort()).toEqual(['k#0', 'k#1', 'k#2', 'k#3']);
    expect(loaderErrorOf(() => shardedKeyOf(plan, 'k', 's')).message).toContain('cannot be computed; use ddb-spread query');
  });

  it.each<[string, unknown, string]>([
    ['not JSON', '{', 'not JSON'],
    ['a future format', { ...V1, manifestVersion: 3 }, 'has format 3; this ddb-spread reads formats 1 and 2'],
    ['no rules', { ...V1, rules: [] }, 'field rules should be a list of rules'],
    ['a bad rule', { ...V1, rules: ['random:1'] }, 'rule "random:1"'],
    ['a bad seed', { ...V1, seed: -1 }, 'field seed'],
    ['keys not lists', { ...V1, keys: { k: 'k#0' } }, 'field keys["k"]'],
    ['a format 2 without suffixBase', { ...V1, manifestVersion: 2, sortKey: 'sk' }, 'field suffixBase should be 0 or 1'],
  ])('refuses %s with the file and the field', (_label, value, message) => {
    const error = loaderErrorOf(() => parseShardManifest(typeof value === 'string' ? value : JSON.stringify(value), 'm.json'));
    expect(error.code).toBe('MANIFEST_INVALID');
    expect(error.message).toContain('m.json');
    expect(error.message).toContain(message);
  });
});
