/**
 * Shard suffixes that collide with literal keys, pure: a sharded key's value read back
 * into its logical key; a literal (unsharded) key that reads as one a --shard-keys key is written under is
 * rejected SHARD_KEY_COLLISION by its value alone; a separator that would make number suffixes ambiguous
 * is refused; and, on generated keys, rules and separators, no two rows land on one primary key unless
 * their logical primary keys are equal.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ShardPlan } from '../../../src/sharding/readManifest.js';
import { literalCollision, parseShardedValue } from '../../../src/sharding/logicalKey.js';
import { applyShard, resolveShardOptions, timeBucket, type ResolvedShardOptions } from '../../../src/sharding/shard.js';
import { type ShardRule } from '../../../src/sharding/shardRule.js';
import { ownerCheck } from '../../../src/sharding/shardKeys.js';
import { RowError } from '../../../src/shared/errors.js';
import type { Item, KeySchema } from '../../../src/shared/types.js';
import { loaderErrorOf, rowErrorOf } from '../../support/thrown.js';
import { sized } from '../../support/testSize.js';

const S_S: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };

const resolve = (rules: ShardRule[], over: { separator?: string; keys?: string[]; suffixBase?: 0 | 1; keepOriginalKey?: string } = {}) =>
  resolveShardOptions(
    {
      rules,
      seed: 11,
      ...(over.separator !== undefined ? { separator: over.separator } : {}),
      ...(over.keys ? { keys: new Set(over.keys) } : {}),
      ...(over.suffixBase !== undefined ? { suffixBase: over.suffixBase } : {}),
      ...(over.keepOriginalKey !== undefined ? { keepOriginalKey: over.keepOriginalKey } : {}),
    },
    S_S,
    'Events',
  );

const HASH4: ShardRule = { kind: 'hash', shards: 4 };

describe('literal keys that read as a sharded key', () => {
  it('the issue: --shard hash:4 --shard-keys USER with USER#0..USER#3 in the input: each literal is rejected, USER is sharded', () => {
    const options = resolve([HASH4], { keys: ['USER'] });
    for (const value of ['USER#0', 'USER#1', 'USER#2', 'USER#3']) {
      const error = rowErrorOf(() => applyShard({ pk: value, sk: '1' }, options));
      expect(error.code).toBe('SHARD_KEY_COLLISION');
      expect(error.field).toBe('pk');
      expect(error.message).toContain(`"${value}"`);
      expect(error.message).toContain('"USER"');
      expect(error.message).toContain('--shard-separator');
    }
    const item: Item = { pk: 'USER', sk: '1' };
    expect(applyShard(item, options)).toEqual({ original: 'USER', written: item['pk'] });
    expect(item['pk']).toMatch(/^USER#[0-3]$/);
  });

  it.each<[string, string, ShardRule[], { separator?: string; suffixBase?: 0 | 1 }]>([
    ['out of range for hash:4', 'USER#4', [HASH4], {}],
    ['a leading zero (never written)', 'USER#01', [HASH4], {}],
    ['base 1 has no 0', 'USER#0', [HASH4], { suffixBase: 1 }],
    ['another separator', 'USER|1', [HASH4], {}],
    ['a suffix of another logical key', 'USERX#1', [HASH4], {}],
    ['two suffixes where one rule', 'USER#1#1', [HASH4], {}],
    ['one suffix where two rules', 'USER#1', [HASH4, { kind: 'random', shards: 3 }], {}],
    ['a day that does not exist', 'USER#2024-02-30', [{ kind: 'time', unit: 'day' }], {}],
    ['an hour past 23', 'USER#2024-02-03T24', [{ kind: 'time', unit: 'hour' }], {}],
    ['a day where a month is written', 'USER#2024-02-03', [{ kind: 'time', unit: 'month' }], {}],
    ['the key itself is not a literal', 'USER', [HASH4], {}],
  ])('not a collision: %s (%s)', (_label, value, rules, over) => {
    const options = resolve(rules, { keys: ['USER'], ...over });
    expect(literalCollision(value, options, options.keys)).toBeUndefined();
  });

  it.each<[string, string, ShardRule[], { separator?: string; suffixBase?: 0 | 1 }, string[]]>([
    ['hash with base 1', 'USER#4', [HASH4], { suffixBase: 1 }, ['4']],
    ['a time bucket (month)', 'USER#2024-02', [{ kind: 'time', unit: 'month' }], {}, ['2024-02']],
    ['a time bucket (hour), year 0001', 'USER#0001-12-31T23', [{ kind: 'time', unit: 'hour' }], {}, ['0001-12-31T23']],
    [
      'time then hash then random, separator "-"',
      'USER-2024-02-29-3-0',
      [{ kind: 'time', unit: 'day' }, HASH4, { kind: 'random', shards: 2 }],
      { separator: '-' },
      ['2024-02-29', '3', '0'],
    ],
    ['a separator of two characters', 'USER::3', [HASH4], { separator: '::' }, ['3']],
    ['a separator that ends with T before a time', 'USERT2024-01', [{ kind: 'time', unit: 'month' }], { separator: 'T' }, ['2024-01']],
    ['a time rule after a separator ending in a digit', 'USER02024-01', [{ kind: 'time', unit: 'month' }], { separator: '0' }, ['2024-01']],
  ])('a collision: %s (%s)', (_label, value, rules, over, suffixes) => {
    const options = resolve(rules, { keys: ['USER'], ...over });
    expect(literalCollision(value, options, options.keys)).toEqual({ logical: 'USER', suffixes });
    expect(rowErrorOf(() => applyShard({ pk: value, sk: 'a' }, options)).code).toBe('SHARD_KEY_COLLISION');
  });

  it('every key sharded: nothing is literal, nothing collides (USER#3 is itself sharded to USER#3#k)', () => {
    const options = resolve([HASH4]);
    const item: Item = { pk: 'USER#3', sk: '1' };
    expect(applyShard(item, options)?.written).toMatch(/^USER#3#[0-3]$/);
  });

  it('a key both in --shard-keys and shaped like another one is sharded, not refused', () => {
    const options = resolve([HASH4], { keys: ['USER', 'USER#3'] });
    const item: Item = { pk: 'USER#3', sk: '1' };
    expect(applyShard(item, options)?.written).toMatch(/^USER#3#[0-3]$/);
  });
});

describe('separators', () => {
  it.each(['1', 'x0', '#9'])('refuses %j with a random or hash rule: number suffixes could be read two ways', (separator) => {
    for (const rule of [HASH4, { kind: 'random', shards: 20 } as ShardRule]) {
      const error = loaderErrorOf(() => resolve([rule], { separator }));
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toContain('ends with a digit');
    }
  });

  it('takes one ending with a digit when only time rules (their suffixes have a fixed width)', () => {
    expect(resolve([{ kind: 'time', unit: 'day' }], { separator: '0' }).separator).toBe('0');
  });

  it('with "1" two logical keys would have met: k1 + 1 + 0 and k + 1 + 10 (why "1" is refused)', () => {
    expect(`k1${'1'}0`).toBe(`k${'1'}10`);
  });
});

describe('ownerCheck (query and get)', () => {
  const plan = (over: Partial<ShardPlan>): ShardPlan => ({
    manifestVersion: 2,
    table: 'Events',
    partitionKey: 'pk',
    sortKey: 'sk',
    separator: '#',
    rules: [{ kind: 'hash', shards: 4, attribute: 'sk' }],
    suffixBase: 0,
    seed: 1,
    randomFromKey: true,
    shardedKeys: new Set(['USER']),
    keys: new Map(),
    complete: true,
    toolVersion: undefined,
    ...over,
  });

  it("with --keep-original-key: a sharded key keeps only items that name it; a literal key drops only its sharded twin's", () => {
    const p = plan({ keepOriginalKey: 'orig' });
    const ofUser = ownerCheck(p, 'USER');
    expect(ofUser({ pk: 'USER#3', orig: 'USER' })).toBe(true);
    expect(ofUser({ pk: 'USER#3' })).toBe(false);
    expect(ofUser({ pk: 'USER#3', orig: 'OTHER' })).toBe(false);
    const ofLiteral = ownerCheck(p, 'USER#3');
    expect(ofLiteral({ pk: 'USER#3' })).toBe(true);
    expect(ofLiteral({ pk: 'USER#3', orig: 'USER#3' })).toBe(true);
    expect(ofLiteral({ pk: 'USER#3', orig: 'someone' })).toBe(true);
    expect(ofLiteral({ pk: 'USER#3', orig: 'USER' })).toBe(false);
    // A key nothing sharded is written under keeps every item, whatever its input put in that attribute.
    const ofBob = ownerCheck(p, 'bob');
    expect(ofBob({ pk: 'bob', orig: 'alice' })).toBe(true);
    expect(ofBob({ pk: 'bob', orig: 7 })).toBe(true);
  });

  it("without it: a literal key that reads as a sharded key's value is refused, naming the sharded key", () => {
    const error = loaderErrorOf(() => ownerCheck(plan({}), 'USER#3'));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('--key USER');
    expect(ownerCheck(plan({}), 'USER#4')({ pk: 'USER#4' })).toBe(true);
    expect(ownerCheck(plan({ shardedKeys: 'all' }), 'USER#3')({ pk: 'USER#3#1' })).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------
// The invariant on generated loads
// ---------------------------------------------------------------------------------------------------

/** Characters keys and separators are made of: the separators' own, digits and the time suffixes' - and T. */
const keyText = fc.string({ unit: fc.constantFrom('U', 'a', '#', '|', '-', 'T', ':', '0', '1', '2', '3'), minLength: 1, maxLength: 6 });
const separatorArb = fc.constantFrom('#', '|', '::', '-', 'T', '#-', 'a', 'T#', '0', '#0');
const ruleArb: fc.Arbitrary<ShardRule> = fc.oneof(
  fc.record({ kind: fc.constant('random' as const), shards: fc.integer({ min: 2, max: 12 }) }),
  fc.record({ kind: fc.constant('hash' as const), shards: fc.integer({ min: 2, max: 12 }), attribute: fc.constant('v') }),
  fc.record({ kind: fc.constant('time' as const), unit: fc.constantFrom('hour' as const, 'day' as const, 'month' as const), attribute: fc.constant('at') }),
);
/** Times in a few months (buckets repeat) and at the ends of the range. */
const timeArb = fc.oneof(
  fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2024, 2, 1) }),
  fc.constantFrom(Date.parse('0000-01-01T00:00:00Z'), Date.UTC(9999, 11, 31, 23)),
);

interface GenRow {
  pk: string;
  sk: string;
  v: string;
  at: number;
}

/**
 * A load: rules, separator, base, the sharded keys (or all), and rows whose keys are plain keys, sharded
 * keys, and look-alikes: a sharded key's value as some row of it is written, or as any suffix would write it.
 */
const loadArb = fc
  .record({
    rules: fc.array(ruleArb, { minLength: 1, maxLength: 3 }),
    separator: separatorArb,
    suffixBase: fc.constantFrom(0 as const, 1 as const),
    logical: fc.uniqueArray(keyText, { minLength: 1, maxLength: 5 }),
    allSharded: fc.boolean(),
    seed: fc.nat(),
  })
  .chain((setup) =>
    fc.record({
      setup: fc.constant(setup),
      shardedCount: fc.integer({ min: 1, max: setup.logical.length }),
      rows: fc.array(
        fc.record({
          source: fc.constantFrom('logical', 'twin', 'forged', 'noise'),
          pick: fc.nat(),
          sk: fc.constantFrom('1', '2', '3'),
          v: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
          at: timeArb,
          noise: keyText,
          suffixes: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
          forgedAt: timeArb,
        }),
        { minLength: 1, maxLength: 40 },
      ),
    }),
  );

describe('no two rows land on one primary key unless their logical primary keys are equal', () => {
  it('on generated keys, rules, separators and look-alike literal keys, in any order', () => {
    fc.assert(
      fc.property(loadArb, ({ setup, shardedCount, rows }) => {
        const sharded = setup.logical.slice(0, shardedCount);
        let options: ResolvedShardOptions;
        try {
          options = resolveShardOptions(
            {
              rules: setup.rules,
              separator: setup.separator,
              seed: setup.seed,
              suffixBase: setup.suffixBase,
              ...(setup.allSharded ? {} : { keys: new Set(sharded) }),
            },
            S_S,
            'Events',
          );
        } catch {
          // Only a separator ending with a digit is refused, and only with number rules.
          expect(/\d$/.test(setup.separator) && setup.rules.some((r) => r.kind !== 'time')).toBe(true);
          return;
        }
        const writtenOf = (row: GenRow): string => {
          const item: Item = { ...row };
          applyShard(item, options);
          return item['pk'] as string;
        };
        const generated: GenRow[] = rows.map((r) => {
          const of = (pk: string): GenRow => ({ pk, sk: r.sk, v: r.v, at: r.at });
          const key = sharded[r.pick % sharded.length]!;
          switch (r.source) {
            case 'logical':
              return of(setup.logical[r.pick % setup.logical.length]!);
            case 'twin':
              // The value a row of a sharded key is written under, as a literal key of another row.
              return of(writtenOf(of(key)));
            case 'forged': {
              // Any value a rule could write for that key, whether or not a row of it is in the load.
              const suffixes = setup.rules.map((rule, i) =>
                rule.kind === 'time' ? timeBucket(r.forgedAt, rule.unit) : String((r.suffixes[i]! % rule.shards) + setup.suffixBase),
              );
              return of([key, ...suffixes].join(setup.separator));
            }
            default:
              return of(r.noise);
          }
        });
        const owner = new Map<string, string>();
        for (const row of generated) {
          const item: Item = { ...row };
          let written: string;
          try {
            const result = applyShard(item, options);
            written = item['pk'] as string;
            if (result) {
              // A sharded value reads back as its logical key and its suffixes.
              expect(parseShardedValue(written, options)?.logical).toBe(row.pk);
            }
          } catch (error) {
            expect(error).toBeInstanceOf(RowError);
            expect((error as RowError).code).toBe('SHARD_KEY_COLLISION');
            // Only a literal key is refused, and only one a sharded key's rules could write.
            expect(setup.allSharded).toBe(false);
            expect(sharded).not.toContain(row.pk);
            const twin = literalCollision(row.pk, options, options.keys);
            expect(twin && [twin.logical, ...twin.suffixes].join(options.separator)).toBe(row.pk);
            expect(sharded).toContain(twin!.logical);
            continue;
          }
          const primary = `${written}\u0000${row.sk}`;
          const before = owner.get(primary);
          if (before !== undefined) expect(before).toBe(row.pk);
          owner.set(primary, row.pk);
        }
        // A forged value of a listed key is never written as a literal (the twin need not be in the load).
        for (const row of generated) {
          if (setup.allSharded || sharded.includes(row.pk)) continue;
          const parsed = parseShardedValue(row.pk, options);
          if (parsed && sharded.includes(parsed.logical)) expect(() => applyShard({ ...row }, options)).toThrow(RowError);
        }
      }),
      { numRuns: sized(250, 1000) },
    );
  });
});
