import { describe, expect, it } from 'vitest';
import { resolveShardOptions, type ResolvedShardOptions, type ShardOptions } from '../../../src/sharding/shard.js';
import { ALGORITHM_TEXT, MAX_MANIFEST_VALUES, ShardManifest, VALUE_TEXT } from '../../../src/sharding/shardManifest.js';
import type { KeySchema } from '../../../src/shared/types.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

const VERSION = '9.8.7';
const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };

function options(over: Partial<ShardOptions> = {}): ResolvedShardOptions {
  return resolveShardOptions({ rules: [{ kind: 'random', shards: 4 }], seed: 99, ...over }, SCHEMA, 'Events');
}

describe('ShardManifest', () => {
  it('an empty manifest describes the options: rules as given, N per rule, seed, "all" keys', () => {
    const manifest = new ShardManifest(
      'Events',
      VERSION,
      options({
        rules: [
          { kind: 'time', unit: 'day', attribute: 'createdAt' },
          { kind: 'hash', shards: 4 },
          { kind: 'random', shards: 8 },
        ],
        separator: '|',
        seed: 5,
      }),
    );
    expect(manifest.toJSON()).toEqual({
      manifestVersion: 2,
      tool: { name: 'ddb-spread', version: '9.8.7' },
      algorithm: { name: 'ddb-spread-shard', version: 2, formulas: ALGORITHM_TEXT },
      valueText: VALUE_TEXT,
      table: 'Events',
      partitionKey: 'pk',
      sortKey: 'sk',
      separator: '|',
      // hash:4 took the sort key, and the manifest says so.
      rules: ['time:day:createdAt', 'hash:4:sk', 'random:8'],
      shardCounts: [null, 4, 8],
      suffixBase: 0,
      seed: 5,
      keepOriginalKey: null,
      shardedKeys: 'all',
      keys: {},
      complete: true,
      valuesWritten: 0,
    });
    expect([manifest.keyCount, manifest.valuesWritten]).toEqual([0, 0]);
  });

  it('shardKeys are listed sorted; keepOriginalKey is named', () => {
    const json = new ShardManifest('Events', VERSION, options({ keys: new Set(['user-9', 'user-10', 'admin']), keepOriginalKey: 'origPk' })).toJSON();
    expect(json.shardedKeys).toEqual(['admin', 'user-10', 'user-9']);
    expect(json.keepOriginalKey).toBe('origPk');
  });

  it('counts each written value once per key', () => {
    const manifest = new ShardManifest('Events', VERSION, options());
    manifest.add('a', 'a#1');
    manifest.add('a', 'a#1');
    manifest.add('a', 'a#0');
    manifest.add('b', 'b#1');
    manifest.add('b', 'b#1');
    expect([manifest.keyCount, manifest.valuesWritten]).toEqual([2, 3]);
    const json = manifest.toJSON();
    expect(json.keys).toEqual({ a: ['a#0', 'a#1'], b: ['b#1'] });
    expect(json.valuesWritten).toBe(3);
    expect(json.complete).toBe(true);
  });

  it('values sort naturally: k#2 before k#10, dates in order, then the hash suffix', () => {
    const manifest = new ShardManifest('Events', VERSION, options());
    for (const v of ['k#10', 'k#2', 'k#1', 'k#0', 'k#100', 'k#9']) manifest.add('k', v);
    for (const v of ['u#2024-01-15#10', 'u#2024-01-15#3', 'u#2023-12-31#0', 'u#2024-01-02#2']) manifest.add('u', v);
    const json = manifest.toJSON();
    expect(json.keys.k).toEqual(['k#0', 'k#1', 'k#2', 'k#9', 'k#10', 'k#100']);
    expect(json.keys.u).toEqual(['u#2023-12-31#0', 'u#2024-01-02#2', 'u#2024-01-15#3', 'u#2024-01-15#10']);
    expect(Object.keys(json.keys)).toEqual(['k', 'u']);
  });

  it('the manifest does not depend on the order values were added in (random keys and values)', () => {
    const random = mulberry32(17);
    const pairs: [string, string][] = [];
    for (let i = 0; i < 600; i++) {
      const key = ['user-1', 'user-2', 'User-1', 'user-10', 'ä', 'a', 'b-1', 'b1'][Math.floor(random() * 8)]!;
      const suffix = [String(Math.floor(random() * 40)), `2024-0${1 + Math.floor(random() * 9)}-1${Math.floor(random() * 9)}#${Math.floor(random() * 12)}`][
        Math.floor(random() * 2)
      ]!;
      pairs.push([key, `${key}${random() < 0.5 ? '#' : '|'}${suffix}`]);
    }
    const build = (list: [string, string][]) => {
      const manifest = new ShardManifest('Events', VERSION, options());
      for (const [key, value] of list) manifest.add(key, value);
      return JSON.stringify(manifest.toJSON());
    };
    const expected = build(pairs);
    for (let round = 0; round < 5; round++) {
      const shuffled = [...pairs];
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      expect(build(shuffled)).toBe(expected);
    }
    const json = JSON.parse(expected) as { keys: Record<string, string[]>; valuesWritten: number };
    const distinct = new Set(pairs.map(([k, v]) => `${k}\u0000${v}`)).size;
    expect(Object.values(json.keys).reduce((a, list) => a + list.length, 0)).toBe(distinct);
    expect(json.valuesWritten).toBe(distinct);
    for (const [key, values] of Object.entries(json.keys)) {
      expect(new Set(values).size, key).toBe(values.length);
      expect(
        values.every((v) => v.startsWith(key)),
        key,
      ).toBe(true);
    }
  });

  it('a key named "__proto__" stays an own property and survives JSON', () => {
    const manifest = new ShardManifest('Events', VERSION, options());
    manifest.add('__proto__', '__proto__#1');
    manifest.add('constructor', 'constructor#0');
    const json = manifest.toJSON();
    expect(Object.getPrototypeOf(json.keys)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(json.keys, '__proto__')).toBe(true);
    expect(Object.keys(json.keys)).toEqual(['__proto__', 'constructor']);
    expect(json.keys['constructor']).toEqual(['constructor#0']);
    const text = JSON.stringify(json);
    expect(text).toContain('"keys":{"__proto__":["__proto__#1"],"constructor":["constructor#0"]}');
    const back = JSON.parse(text) as { keys: Record<string, unknown> };
    expect(Object.getOwnPropertyDescriptor(back.keys, '__proto__')?.value).toEqual(['__proto__#1']);
  });

  it(`stops listing beyond ${MAX_MANIFEST_VALUES} values and says it is incomplete`, () => {
    expect(MAX_MANIFEST_VALUES).toBe(1_000_000);
    const manifest = new ShardManifest('Events', VERSION, options());
    // Values added in natural order, so the final sort is one pass.
    for (let i = 0; i < MAX_MANIFEST_VALUES; i++) manifest.add('h', `h#${i}`);
    expect([manifest.keyCount, manifest.valuesWritten]).toEqual([1, MAX_MANIFEST_VALUES]);
    // Values already listed are still recognised; new ones are dropped, new keys too.
    manifest.add('h', 'h#0');
    manifest.add('h', 'h#new');
    manifest.add('other', 'other#1');
    expect([manifest.keyCount, manifest.valuesWritten]).toEqual([1, MAX_MANIFEST_VALUES]);
    const json = manifest.toJSON();
    expect(json.complete).toBe(false);
    expect(json.valuesWritten).toBe(MAX_MANIFEST_VALUES);
    expect(Object.keys(json.keys)).toEqual(['h']);
    const listed = json.keys.h!;
    expect(listed.length).toBe(MAX_MANIFEST_VALUES);
    expect([listed[0], listed[1], listed[10], listed[MAX_MANIFEST_VALUES - 1]]).toEqual(['h#0', 'h#1', 'h#10', `h#${MAX_MANIFEST_VALUES - 1}`]);
  });
});
