import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { keyIdsOf, MAX_PARTITION_KEY_BYTES } from '../../../src/typing/key.js';
import { createRowPlanner, isRejected, type SourceRecord } from '../../../src/typing/planRow.js';
import {
  applyShard,
  DEFAULT_SHARD_SEPARATOR,
  hashShard,
  parseTime,
  randomShard,
  resolveShardOptions,
  timeBucket,
  type ResolvedShardOptions,
  type ShardOptions,
} from '../../../src/sharding/shard.js';
import { formatShardRule, MAX_SHARDS, parseShardRule, TIME_UNITS, type ShardRule, type TimeUnit } from '../../../src/sharding/shardRule.js';
import type { Item, KeySchema, PlannedWrite, RejectedRow } from '../../../src/shared/types.js';
import { mulberry32 } from '../../../tools/mulberry32.js';
import { loaderErrorOf, rowErrorOf } from '../../support/thrown.js';
import { sized } from '../../support/testSize.js';

const S_S: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const S_N: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const S_ONLY: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };
const N_S: KeySchema = { partitionKey: { name: 'pk', type: 'N' }, sortKey: { name: 'sk', type: 'S' } };
const B_ONLY: KeySchema = { partitionKey: { name: 'pk', type: 'B' } };
const S_B: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'B' } };

const n = (text: string) => new NumberValue(text);

function resolve(rules: ShardRule[], over: Partial<ShardOptions> = {}, schema: KeySchema = S_S): ResolvedShardOptions {
  return resolveShardOptions({ rules, seed: 7, ...over }, schema, 'Events');
}

describe('parseShardRule', () => {
  it.each<[string, ShardRule]>([
    ['random:2', { kind: 'random', shards: 2 }],
    ['random:10000', { kind: 'random', shards: 10_000 }],
    ['hash:4', { kind: 'hash', shards: 4 }],
    ['hash:16:orderId', { kind: 'hash', shards: 16, attribute: 'orderId' }],
    ['hash:007:a', { kind: 'hash', shards: 7, attribute: 'a' }],
    ['time:hour', { kind: 'time', unit: 'hour' }],
    ['time:day:createdAt', { kind: 'time', unit: 'day', attribute: 'createdAt' }],
    ['time:month:ts', { kind: 'time', unit: 'month', attribute: 'ts' }],
    ['hash:4: spaced name', { kind: 'hash', shards: 4, attribute: ' spaced name' }],
  ])('%s', (text, expected) => {
    const rule = parseShardRule(text);
    expect(rule).toEqual(expected);
    // No `attribute: undefined` key when none was given (the manifest and messages rely on it).
    expect('attribute' in rule).toBe('attribute' in expected);
  });

  it.each([
    ['random:1', 'N must be an integer from 2 to 10000'],
    ['random:0', 'N must be an integer from 2 to 10000'],
    ['random:10001', 'N must be an integer from 2 to 10000'],
    ['random:-4', 'N must be an integer from 2 to 10000'],
    ['random:2.0', 'N must be an integer from 2 to 10000'],
    ['random:1e3', 'N must be an integer from 2 to 10000'],
    ['random:0x10', 'N must be an integer from 2 to 10000'],
    ['random:+4', 'N must be an integer from 2 to 10000'],
    ['random: 4', 'N must be an integer from 2 to 10000'],
    ['random:', 'N must be an integer from 2 to 10000'],
    ['random', 'N must be an integer from 2 to 10000'],
    ['hash:four', 'N must be an integer from 2 to 10000'],
    ['hash', 'N must be an integer from 2 to 10000'],
    ['random:4:attr', 'random takes no attribute'],
    ['hash:4:', 'the attribute name is empty'],
    ['time:day:', 'the attribute name is empty'],
    ['random:4:', 'the attribute name is empty'],
    ['hash:4:a:b', 'too many parts'],
    ['time:day:a:', 'too many parts'],
    ['time:week', 'the bucket must be one of hour, day, month'],
    ['time:Day', 'the bucket must be one of hour, day, month'],
    ['time', 'the bucket must be one of hour, day, month'],
    ['time:', 'the bucket must be one of hour, day, month'],
    ['murmur:4', 'unknown scheme "murmur"'],
    ['HASH:4', 'unknown scheme "HASH"'],
    ['', 'unknown scheme ""'],
  ])('%j is INVALID_OPTION: %s', (text, why) => {
    const error = loaderErrorOf(() => parseShardRule(text));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe(`--shard "${text}": ${why}; expected random:N, hash:N[:attribute] or time:hour|day|month[:attribute]`);
  });

  it('formatShardRule is the inverse of parseShardRule', () => {
    const texts = ['random:2', 'random:9999', 'hash:4', 'hash:10000:orderId', 'time:hour', 'time:day:createdAt', 'time:month:ts'];
    for (const text of texts) {
      expect(formatShardRule(parseShardRule(text))).toBe(text);
      expect(parseShardRule(formatShardRule(parseShardRule(text)))).toEqual(parseShardRule(text));
    }
    const random = mulberry32(11);
    for (let i = 0; i < 200; i++) {
      const shards = 2 + Math.floor(random() * (MAX_SHARDS - 1));
      const attribute = random() < 0.5 ? undefined : `attr${Math.floor(random() * 100)}`;
      const unit = TIME_UNITS[Math.floor(random() * 3)]!;
      const rules: ShardRule[] = [
        { kind: 'random', shards },
        attribute === undefined ? { kind: 'hash', shards } : { kind: 'hash', shards, attribute },
        attribute === undefined ? { kind: 'time', unit } : { kind: 'time', unit, attribute },
      ];
      for (const rule of rules) expect(parseShardRule(formatShardRule(rule))).toEqual(rule);
    }
  });
});

describe('resolveShardOptions', () => {
  it('applies the defaults: "#", every key, hash and time take the sort key', () => {
    const resolved = resolve([
      { kind: 'time', unit: 'day' },
      { kind: 'hash', shards: 4 },
      { kind: 'random', shards: 3 },
    ]);
    expect(resolved).toEqual({
      rules: [
        { kind: 'time', unit: 'day', attribute: 'sk' },
        { kind: 'hash', shards: 4, attribute: 'sk' },
        { kind: 'random', shards: 3 },
      ],
      separator: DEFAULT_SHARD_SEPARATOR,
      keys: undefined,
      keepOriginalKey: undefined,
      seed: 7,
      suffixBase: 0,
      partitionKey: 'pk',
      sortKey: 'sk',
    });
    expect(DEFAULT_SHARD_SEPARATOR).toBe('#');
  });

  it('keeps given values; random needs no sort key; seeds 0 and 2^32 - 1 are valid', () => {
    const keys = new Set(['hot']);
    const resolved = resolveShardOptions(
      {
        rules: [
          { kind: 'hash', shards: 4, attribute: 'orderId' },
          { kind: 'random', shards: 2 },
        ],
        separator: '|',
        keys,
        keepOriginalKey: 'origPk',
        seed: 0xffffffff,
      },
      S_ONLY,
      'Events',
    );
    expect(resolved).toEqual({
      rules: [
        { kind: 'hash', shards: 4, attribute: 'orderId' },
        { kind: 'random', shards: 2 },
      ],
      separator: '|',
      keys,
      keepOriginalKey: 'origPk',
      seed: 0xffffffff,
      suffixBase: 0,
      partitionKey: 'pk',
      sortKey: undefined,
    });
    expect(resolveShardOptions({ rules: [{ kind: 'random', shards: 2 }], seed: 0 }, S_ONLY, 'Events').seed).toBe(0);
  });

  it.each<[string, ShardOptions, KeySchema, string, string | undefined]>([
    ['no rules', { rules: [], seed: 1 }, S_S, 'sharding needs at least one --shard rule', undefined],
    [
      'a number partition key',
      { rules: [{ kind: 'random', shards: 2 }], seed: 1 },
      N_S,
      '--shard needs a string partition key, but "pk" of table "Events" is a number; a suffix like "#3" cannot be added to it',
      'pk',
    ],
    [
      'a binary partition key',
      { rules: [{ kind: 'random', shards: 2 }], seed: 1 },
      B_ONLY,
      '--shard needs a string partition key, but "pk" of table "Events" is binary; a suffix like "#3" cannot be added to it',
      'pk',
    ],
    [
      'hash without attribute or sort key',
      { rules: [{ kind: 'hash', shards: 4 }], seed: 1 },
      S_ONLY,
      '--shard hash:… needs an attribute (table "Events" has no sort key to default to), e.g. --shard hash:4:orderId',
      undefined,
    ],
    [
      'time without attribute or sort key',
      { rules: [{ kind: 'time', unit: 'day' }], seed: 1 },
      S_ONLY,
      '--shard time:… needs an attribute (table "Events" has no sort key to default to), e.g. --shard time:day:createdAt',
      undefined,
    ],
    [
      'hash of the partition key itself',
      { rules: [{ kind: 'hash', shards: 4, attribute: 'pk' }], seed: 1 },
      S_S,
      '--shard hash: cannot take its value from the partition key "pk" itself; name another attribute',
      'pk',
    ],
    [
      'time of the partition key itself',
      { rules: [{ kind: 'time', unit: 'hour', attribute: 'pk' }], seed: 1 },
      S_ONLY,
      '--shard time: cannot take its value from the partition key "pk" itself; name another attribute',
      'pk',
    ],
    [
      'keepOriginalKey empty',
      { rules: [{ kind: 'random', shards: 2 }], keepOriginalKey: '', seed: 1 },
      S_S,
      '--keep-original-key must name a new attribute, not "" (a key attribute of table "Events")',
      '',
    ],
    [
      'keepOriginalKey = partition key',
      { rules: [{ kind: 'random', shards: 2 }], keepOriginalKey: 'pk', seed: 1 },
      S_S,
      '--keep-original-key must name a new attribute, not "pk" (a key attribute of table "Events")',
      'pk',
    ],
    [
      'keepOriginalKey = sort key',
      { rules: [{ kind: 'random', shards: 2 }], keepOriginalKey: 'sk', seed: 1 },
      S_S,
      '--keep-original-key must name a new attribute, not "sk" (a key attribute of table "Events")',
      'sk',
    ],
    ['empty separator', { rules: [{ kind: 'random', shards: 2 }], separator: '', seed: 1 }, S_S, '--shard-separator must be a non-empty string', undefined],
    ['negative seed', { rules: [{ kind: 'random', shards: 2 }], seed: -1 }, S_S, '--shard-seed must be an integer from 0 to 4294967295, got -1', undefined],
    ['fractional seed', { rules: [{ kind: 'random', shards: 2 }], seed: 1.5 }, S_S, '--shard-seed must be an integer from 0 to 4294967295, got 1.5', undefined],
    [
      'seed 2^32',
      { rules: [{ kind: 'random', shards: 2 }], seed: 2 ** 32 },
      S_S,
      '--shard-seed must be an integer from 0 to 4294967295, got 4294967296',
      undefined,
    ],
    ['NaN seed', { rules: [{ kind: 'random', shards: 2 }], seed: NaN }, S_S, '--shard-seed must be an integer from 0 to 4294967295, got NaN', undefined],
  ])('%s is INVALID_OPTION', (_label, options, schema, message, field) => {
    const error = loaderErrorOf(() => resolveShardOptions(options, schema, 'Events'));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe(message);
    expect(error.field).toBe(field);
  });
});

describe('hashShard: int(md5(value), 16) mod N, as Python computes it', () => {
  // Expected values computed with python3:
  //   int(hashlib.md5(v.encode()).hexdigest(), 16) % n
  // e.g. python3 -c "import hashlib; print(int(hashlib.md5('evt-1'.encode()).hexdigest(), 16) % 10)"  -> 0
  it.each<[string, number, number]>([
    ['evt-0', 10, 3],
    ['evt-1', 10, 0],
    ['evt-2', 10, 1],
    ['evt-3', 10, 7],
    ['evt-4', 10, 6],
    ['evt-5', 10, 0],
    ['evt-6', 10, 2],
    ['evt-7', 10, 8],
    ['evt-8', 10, 2],
    ['evt-9', 10, 2],
    ['evt-0', 9973, 814],
    ['evt-1', 9973, 7383],
    ['evt-2', 9973, 9886],
    ['evt-3', 9973, 452],
    ['evt-4', 9973, 2918],
    ['evt-0', 2, 1],
    ['evt-1', 2, 0],
    ['order-42', 4, 0],
    ['ORD-7', 4, 3],
    ['ORD-7', 8, 7],
    ['ord-2', 4, 3],
    ['o-5', 4, 2],
    ['', 7, 1],
    ['héllo', 16, 0],
    ['☃', 10000, 5058],
    ['12345678901234567890123456789012345678', 1000, 598],
    ['1', 4, 3],
    ['1.5', 4, 2],
    ['100', 4, 1],
    ['AQID', 4, 2],
  ])('hashShard(%j, %d) = %d', (value, shards, expected) => {
    expect(hashShard(value, shards)).toBe(expected);
  });

  it('is always an integer in [0, N) and stable', () => {
    const random = mulberry32(3);
    for (let i = 0; i < 2000; i++) {
      const value = `v-${Math.floor(random() * 1e9)}`;
      const shards = 2 + Math.floor(random() * (MAX_SHARDS - 1));
      const shard = hashShard(value, shards);
      expect(Number.isInteger(shard) && shard >= 0 && shard < shards).toBe(true);
      expect(hashShard(value, shards)).toBe(shard);
    }
  });
});

/** Pearson's chi-square statistic of observed counts against a uniform expectation. */
function chiSquare(counts: number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const expected = total / counts.length;
  return counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
}

describe('randomShard: int(md5(seed NUL pk NUL sk), 16) mod N, from the seed and the primary key only', () => {
  it.each<[number, string, string | undefined, number, number]>([
    // Computed with Python: int(hashlib.md5(f"{seed}\0{pk}\0{sk}".encode()).hexdigest(), 16) % n
    [0, 'user-1', 'e1', 1000, 587],
    [1, 'user-1', 'e1', 1000, 107],
    [42, 'hot', undefined, 8, 6],
    [4294967295, 'é', '🙂', 2 ** 31, 195688606],
    [7, 'k', '1.5', 200, 171],
    [12345, 'a\0b', 'c', 10, 2],
  ])('randomShard(%d, %j, %j, %d) = %d, as the Python in docs/SHARDING.md computes it', (seed, pk, sk, shards, expected) => {
    expect(randomShard(seed, pk, sk, shards)).toBe(expected);
  });

  it('another seed gives other shards (agreement close to 1/N)', () => {
    let same = 0;
    const keys = 10_000;
    for (let i = 0; i < keys; i++) if (randomShard(1, 'hot', `e${i}`, 10) === randomShard(2, 'hot', `e${i}`, 10)) same++;
    // Independent shards agree 1/10 of the time; the bounds are more than 5 standard deviations wide.
    expect(same / keys).toBeGreaterThan(0.085);
    expect(same / keys).toBeLessThan(0.115);
  });

  it('the partition key and the sort key both count, and are not confused with each other', () => {
    const at = (pk: string, sk: string) => Array.from({ length: 64 }, (_, i) => randomShard(3, `${pk}${i}`, sk, 1000)).join();
    expect(new Set([at('a', 'x'), at('b', 'x'), at('a', 'y')]).size).toBe(3);
    expect(randomShard(3, 'ab', 'c', 2 ** 31)).not.toBe(randomShard(3, 'a', 'bc', 2 ** 31));
  });

  // 25,000 sort keys in the unit pass, 100,000 at full size (test/support/testSize.ts).
  const sortKeys = sized(25_000, 100_000);
  // Critical values of chi-square at p = 0.001: df 1: 10.83, 6: 22.46, 9: 27.88, 15: 37.70, 99: 148.23.
  it.each([
    [2, 17, 10.83],
    [7, 18, 22.46],
    [10, 19, 27.88],
    [16, 20, 37.7],
    [100, 21, 148.23],
  ])(`${sortKeys} sort keys of one hot key over %d shards (seed %d) are uniform by chi-square (< %d)`, (shards, seed, critical) => {
    const counts = new Array<number>(shards).fill(0);
    for (let i = 1; i <= sortKeys; i++) counts[randomShard(seed, 'hot', `order-${i}`, shards)]!++;
    expect(chiSquare(counts)).toBeLessThan(critical);
  });
});

describe('parseTime', () => {
  const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const HOUR = 3_600_000;
  // Date.UTC reads years 0-99 as 1900-1999, so year 0000 is spelled out.
  const FIRST_MS_OF_YEAR_0 = -62_167_219_200_000;
  const LAST_MS_OF_YEAR_9999 = utc(9999, 12, 31, 23, 59, 59, 999);

  it.each<[string, unknown, number]>([
    ['a date', '2024-01-15', utc(2024, 1, 15)],
    ['a leap day', '2024-02-29', utc(2024, 2, 29)],
    ['date and time in UTC', '2024-01-15T13:45:00Z', utc(2024, 1, 15, 13, 45)],
    ['without an offset: UTC', '2024-01-15T13:45:00', utc(2024, 1, 15, 13, 45)],
    ['a space instead of T', '2024-01-15 13:45:00', utc(2024, 1, 15, 13, 45)],
    ['hours and minutes', '2024-01-15T13:45', utc(2024, 1, 15, 13, 45)],
    ['hours only', '2024-01-15T13', utc(2024, 1, 15, 13)],
    ['milliseconds', '2024-01-15T13:45:00.123Z', utc(2024, 1, 15, 13, 45, 0, 123)],
    ['one fractional digit', '2024-01-15T13:45:00.5Z', utc(2024, 1, 15, 13, 45, 0, 500)],
    ['a comma before the fraction', '2024-01-15T13:45:00,25Z', utc(2024, 1, 15, 13, 45, 0, 250)],
    ['nanoseconds are cut to milliseconds', '2024-01-15T13:45:00.123999999Z', utc(2024, 1, 15, 13, 45, 0, 123)],
    ['offset +02:00', '2024-01-15T13:45:00+02:00', utc(2024, 1, 15, 13, 45) - 2 * HOUR],
    ['offset -0530', '2024-01-15T13:45:00-0530', utc(2024, 1, 15, 13, 45) + 5.5 * HOUR],
    ['offset +00:00', '2024-01-15T13:45:00+00:00', utc(2024, 1, 15, 13, 45)],
    ['an offset that crosses midnight', '2024-01-15T23:30:00-05:00', utc(2024, 1, 16, 4, 30)],
    ['surrounding blanks', '  2024-01-15T13:45:00Z\t', utc(2024, 1, 15, 13, 45)],
    ['epoch seconds (number)', 1_705_326_300, utc(2024, 1, 15, 13, 45)],
    ['epoch milliseconds (number)', 1_705_326_300_123, utc(2024, 1, 15, 13, 45, 0, 123)],
    ['epoch seconds (text)', '1705326300', utc(2024, 1, 15, 13, 45)],
    ['epoch seconds with a fraction (text)', '1705326300.25', utc(2024, 1, 15, 13, 45, 0, 250)],
    ['epoch milliseconds (text)', '1705326300123', utc(2024, 1, 15, 13, 45, 0, 123)],
    ['epoch seconds (NumberValue)', n('1705326300'), utc(2024, 1, 15, 13, 45)],
    ['epoch milliseconds (NumberValue)', n('1705326300123'), utc(2024, 1, 15, 13, 45, 0, 123)],
    ['the epoch', 0, 0],
    ['before the epoch (text)', '-1', -1000],
    ['the last value read as seconds: 10^11 - 1', 99_999_999_999, 99_999_999_999_000],
    ['the first value read as milliseconds: 10^11', 100_000_000_000, 100_000_000_000],
    ['10^11 as NumberValue', n('100000000000'), 100_000_000_000],
    ['negative seconds: the first second of year 0000', -62_167_219_200, FIRST_MS_OF_YEAR_0],
    ['the first millisecond of year 0000 (epoch ms)', -62_167_219_200_000, FIRST_MS_OF_YEAR_0],
    ['the last millisecond of year 9999 (epoch ms)', 253_402_300_799_999, LAST_MS_OF_YEAR_9999],
    ['the last millisecond of year 9999 (epoch ms, text)', '253402300799999', LAST_MS_OF_YEAR_9999],
    ['the first instant of year 0000 (text)', '0000-01-01', FIRST_MS_OF_YEAR_0],
    ['the last millisecond of year 9999 (text)', '9999-12-31T23:59:59.999Z', LAST_MS_OF_YEAR_9999],
    ['an offset that keeps year 0000', '0000-01-01T01:00:00+01:00', FIRST_MS_OF_YEAR_0],
    ['an offset that keeps year 9999', '9999-12-31T23:59:59.999+00:01', LAST_MS_OF_YEAR_9999 - 60_000],
  ])('%s: %o', (_label, value, expected) => {
    expect(parseTime(value)).toBe(expected);
  });

  it.each<[string, unknown]>([
    ['February 30', '2024-02-30'],
    ['February 29 of a common year', '2023-02-29T00:00:00Z'],
    ['April 31', '2024-04-31T10:00'],
    ['month 13', '2024-13-01'],
    ['month 00', '2024-00-10'],
    ['day 32', '2024-01-32'],
    ['hour 25', '2024-01-15T25:00Z'],
    ['minute 60', '2024-01-15T13:60Z'],
    ['one-digit month and day', '2024-1-5'],
    ['a European date', '15/01/2024'],
    ['words', 'yesterday'],
    ['empty text', ''],
    ['blanks', '   '],
    ['an offset of hours only', '2024-01-15T13:45:00+05'],
    ['a blank before Z', '2024-01-15T13:45:00 Z'],
    ['exponent notation', '1.5e9'],
    ['hex', '0x10'],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['NumberValue beyond a Date', n('1e20')],
    ['a millisecond beyond the largest Date', 8.64e15 + 1],
    ['the largest Date (year 275760)', 8.64e15],
    ['-(10^11 - 1) seconds (year -1199)', -99_999_999_999],
    ['a second before year 0000', -62_167_219_201],
    ['a millisecond before year 0000 (epoch ms)', -62_167_219_200_001],
    ['the first millisecond of year 10000 (epoch ms)', 253_402_300_800_000],
    ['the first millisecond of year 10000 (epoch ms, text)', '253402300800000'],
    ['an offset that moves year 0000 back into year -1', '0000-01-01T00:30:00+01:00'],
    ['an offset that moves year 9999 on into year 10000', '9999-12-31T23:30:00-01:00'],
    ['true', true],
    ['null', null],
    ['undefined', undefined],
    ['a map', { t: 1 }],
    ['a list', [1]],
    ['binary', new Uint8Array([1])],
  ])('%s is unreadable', (_label, value) => {
    expect(parseTime(value)).toBeUndefined();
  });

  // Date.parse rolls a date that does not exist over (2024-02-30 -> 2024-03-01); parseTime checks the
  // calendar date as written, before the offset is applied, so the offset makes no difference.
  it.each([
    ['2024-02-30T10:00:00+01:00'],
    ['2023-02-29T00:00:00+00:00'],
    ['2024-04-31T10:00-0500'],
    ['2024-02-30T23:30:00-05:00'],
    ['2100-02-29T00:00:00+14:00'],
  ])('a date that does not exist is unreadable with an offset too: %s', (text) => {
    expect(parseTime(text)).toBeUndefined();
  });

  it.each([
    ['2024-02-29T23:30:00-05:00', Date.UTC(2024, 2, 1, 4, 30)],
    ['2000-02-29T00:00:00+14:00', Date.UTC(2000, 1, 28, 10)],
    ['2024-03-01T00:30:00+01:00', Date.UTC(2024, 1, 29, 23, 30)],
  ])('a date that exists is readable whatever the offset, even one that moves it to another day: %s', (text, expected) => {
    expect(parseTime(text)).toBe(expected);
  });
});

describe('timeBucket', () => {
  it.each<[string, TimeUnit, string]>([
    ['2024-01-15T13:45:59.999Z', 'hour', '2024-01-15T13'],
    ['2024-01-15T13:45:59.999Z', 'day', '2024-01-15'],
    ['2024-01-15T13:45:59.999Z', 'month', '2024-01'],
    ['2024-01-15T23:30:00-05:00', 'day', '2024-01-16'],
    ['2024-01-15T23:30:00-05:00', 'hour', '2024-01-16T04'],
    ['2024-12-31T23:59:59.999Z', 'month', '2024-12'],
    ['2025-01-01T00:00:00Z', 'month', '2025-01'],
    ['2024-02-29T12:00:00Z', 'day', '2024-02-29'],
    ['1969-12-31T23:59:59Z', 'hour', '1969-12-31T23'],
  ])('%s by %s: %s (UTC, whatever the machine zone)', (text, unit, expected) => {
    expect(timeBucket(parseTime(text)!, unit)).toBe(expected);
  });

  it('buckets nest and contain their time, for random times of years 0000-9999', () => {
    const random = mulberry32(8);
    const min = Date.parse('0000-01-01T00:00:00Z');
    const max = Date.parse('9999-12-31T23:59:59.999Z');
    for (let i = 0; i < 3000; i++) {
      const ms = Math.floor(min + random() * (max - min));
      const [hour, day, month] = (['hour', 'day', 'month'] as const).map((unit) => timeBucket(ms, unit));
      expect(hour!.slice(0, 10)).toBe(day);
      expect(day!.slice(0, 7)).toBe(month);
      const start = Date.parse(`${hour}:00:00Z`);
      expect(ms >= start && ms < start + 3_600_000, `${ms} in ${hour}`).toBe(true);
    }
  });

  // timeBucket slices toISOString() at fixed places, which breaks for years outside 0000-9999
  // ("+010000-01-01T..." -> day bucket "+010000-01", month bucket "+010000"); parseTime reads no such time.
  it.each<[string, unknown]>([
    ['year 10000 (epoch ms)', 253_402_300_800_000],
    ['year -882 (epoch seconds)', -90_000_000_000],
    ['year 10000 (expanded ISO 8601 text)', '+010000-01-01T00:00:00Z'],
  ])('a time outside years 0000-9999 is unreadable, so it never gets a malformed bucket: %s', (_label, value) => {
    expect(parseTime(value)).toBeUndefined();
  });

  it('parseTime reads exactly the epoch values of years 0000-9999, and each gets a fixed-width bucket', () => {
    const first = -62_167_219_200_000;
    const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const shapes: Record<TimeUnit, RegExp> = { hour: /^\d{4}-\d\d-\d\dT\d\d$/, day: /^\d{4}-\d\d-\d\d$/, month: /^\d{4}-\d\d$/ };
    const random = mulberry32(21);
    const values: number[] = [
      first - 1,
      first,
      first + 1,
      last - 1,
      last,
      last + 1,
      -62_167_219_201,
      -62_167_219_200,
      -1e11 + 1,
      1e11 - 1,
      1e11,
      8.64e15,
      -8.64e15,
    ];
    for (let i = 0; i < 3000; i++) {
      // Epoch seconds (|n| < 10^11) and milliseconds, on a log scale up to the largest Date, either sign.
      const magnitude = 10 ** (random() * 15.9365);
      values.push(Math.round((random() < 0.5 ? -1 : 1) * magnitude));
    }
    let problem: string | undefined;
    let read = 0;
    for (const value of values) {
      const expectedMs = Math.abs(value) < 1e11 ? value * 1000 : value;
      const inRange = expectedMs >= first && expectedMs <= last;
      if (inRange) read++;
      for (const given of [value, String(value)]) {
        const ms = parseTime(given);
        if (ms !== (inRange ? expectedMs : undefined))
          problem ??= `parseTime(${JSON.stringify(given)}) = ${ms}, expected ${inRange ? expectedMs : 'undefined'}`;
        if (ms === undefined) continue;
        for (const unit of TIME_UNITS) if (!shapes[unit].test(timeBucket(ms, unit))) problem ??= `${given}: ${unit} bucket ${timeBucket(ms, unit)}`;
      }
    }
    expect(problem).toBeUndefined();
    // Readable and unreadable values are both well represented (2,628 and 385 here).
    expect(read).toBeGreaterThan(values.length / 10);
    expect(values.length - read).toBeGreaterThan(values.length / 10);
  });
});

describe('applyShard', () => {
  const TIME_THEN_HASH: ShardRule[] = [
    { kind: 'time', unit: 'day', attribute: 'createdAt' },
    { kind: 'hash', shards: 4, attribute: 'orderId' },
  ];

  it('applies the rules in order: time:day then hash:4 gives "user-1#2024-01-15#3"', () => {
    // md5("ORD-7") % 4 = 3 (python3: int(hashlib.md5(b"ORD-7").hexdigest(), 16) % 4)
    const item: Item = { pk: 'user-1', sk: 'a', createdAt: '2024-01-15T13:45:00Z', orderId: 'ORD-7' };
    expect(applyShard(item, resolve(TIME_THEN_HASH))).toEqual({ original: 'user-1', written: 'user-1#2024-01-15#3' });
    expect(item).toEqual({ pk: 'user-1#2024-01-15#3', sk: 'a', createdAt: '2024-01-15T13:45:00Z', orderId: 'ORD-7' });
  });

  it('the other order of rules gives the other order of suffixes; the separator is configurable', () => {
    const item: Item = { pk: 'user-1', sk: 'a', createdAt: '2024-01-15T13:45:00Z', orderId: 'ORD-7' };
    const rules = [...TIME_THEN_HASH].reverse();
    expect(applyShard(item, resolve(rules, { separator: '::' }))?.written).toBe('user-1::3::2024-01-15');
  });

  it.each<[string, unknown, string]>([
    // python3: int(hashlib.md5(b"1").hexdigest(), 16) % 4 = 3; b"1.5" -> 2; b"AQID" -> 2
    ['a number hashes as its canonical text', n('1'), 'k#3'],
    ['1.5', n('1.5'), 'k#2'],
    ['binary hashes as its base64 text', new Uint8Array([1, 2, 3]), 'k#2'],
    ['a string', 'ORD-7', 'k#3'],
  ])('hash: %s', (_label, value, expected) => {
    const item: Item = { pk: 'k', sk: 'x', v: value };
    expect(applyShard(item, resolve([{ kind: 'hash', shards: 4, attribute: 'v' }]))?.written).toBe(expected);
  });

  it('hash defaults to the sort key: one primary key always gets one shard', () => {
    const options = resolve([{ kind: 'hash', shards: 8 }]);
    for (let line = 1; line < 50; line++) {
      const item: Item = { pk: 'k', sk: 'ORD-7' };
      expect(applyShard(item, options)?.written).toBe('k#7');
    }
  });

  it('random:N uses randomShard(seed, pk, sk, N): the same primary key always gets one shard, wherever the row is', () => {
    const options = resolve([{ kind: 'random', shards: 8 }], { seed: 1234 });
    const seen = new Set<string>();
    for (let i = 1; i <= 200; i++) {
      const item: Item = { pk: 'hot', sk: `x${i}` };
      const written = applyShard(item, options)!.written;
      expect(written).toBe(`hot#${randomShard(1234, 'hot', `x${i}`, 8)}`);
      expect(applyShard({ pk: 'hot', sk: `x${i}`, other: 'row' }, options)!.written).toBe(written);
      seen.add(written);
    }
    expect(seen.size).toBe(8);
  });

  it('a number sort key is hashed as its canonical text, binary as base64', () => {
    const options = resolve([{ kind: 'random', shards: 1000 }], { seed: 5 }, S_N);
    expect(applyShard({ pk: 'k', sk: new NumberValue('1.5') }, options)!.written).toBe(`k#${randomShard(5, 'k', '1.5', 1000)}`);
    const binary = resolve([{ kind: 'random', shards: 1000 }], { seed: 5 }, S_B);
    expect(applyShard({ pk: 'k', sk: new Uint8Array([1, 2, 3]) }, binary)!.written).toBe(`k#${randomShard(5, 'k', 'AQID', 1000)}`);
  });

  it('--shard-base 1 numbers random and hash suffixes 1 … N (as AWS numbers them in "Randomizing Across Multiple Partition Key Values")', () => {
    const options = resolve(
      [
        { kind: 'random', shards: 200 },
        { kind: 'hash', shards: 4 },
      ],
      { seed: 9, suffixBase: 1 },
    );
    for (let i = 0; i < 300; i++) {
      const [, random, hash] = applyShard({ pk: 'k', sk: `s${i}` }, options)!
        .written.split('#')
        .map(Number);
      expect(random).toBe(randomShard(9, 'k', `s${i}`, 200) + 1);
      expect(hash).toBe(hashShard(`s${i}`, 4) + 1);
    }
  });

  it('keys: only the listed keys are sharded; others are untouched', () => {
    const options = resolve([{ kind: 'random', shards: 4 }], { keys: new Set(['hot']), keepOriginalKey: 'origPk' });
    const cold: Item = { pk: 'cold', sk: 'x' };
    expect(applyShard(cold, options)).toBeUndefined();
    expect(cold).toEqual({ pk: 'cold', sk: 'x' });
    const hot: Item = { pk: 'hot', sk: 'x' };
    expect(applyShard(hot, options)?.original).toBe('hot');
    expect(hot.origPk).toBe('hot');
  });

  it('keepOriginalKey stores the unsharded value; an existing equal value is fine', () => {
    const options = resolve([{ kind: 'hash', shards: 4 }], { keepOriginalKey: 'origPk' });
    const item: Item = { pk: 'user-1', sk: 'ORD-7' };
    applyShard(item, options);
    expect(item).toEqual({ pk: 'user-1#3', sk: 'ORD-7', origPk: 'user-1' });
    const again: Item = { pk: 'user-1', sk: 'ORD-7', origPk: 'user-1' };
    expect(applyShard(again, options)?.written).toBe('user-1#3');
    expect(again.origPk).toBe('user-1');
  });

  it('keepOriginalKey holding another value: SHARD_ATTRIBUTE, and the item is unchanged', () => {
    const options = resolve([{ kind: 'hash', shards: 4 }], { keepOriginalKey: 'origPk' });
    const item: Item = { pk: 'user-1', sk: 'ORD-7', origPk: 'someone-else' };
    const error = rowErrorOf(() => applyShard(item, options));
    expect(error.code).toBe('SHARD_ATTRIBUTE');
    expect(error.field).toBe('origPk');
    expect(error.message).toBe('--keep-original-key attribute "origPk" already holds another value in this row; choose an attribute the input does not use');
    expect(item).toEqual({ pk: 'user-1', sk: 'ORD-7', origPk: 'someone-else' });
  });

  it.each<[string, ShardRule, Item, string]>([
    [
      'hash, attribute missing',
      { kind: 'hash', shards: 4, attribute: 'orderId' },
      { pk: 'a', sk: 'x' },
      '--shard hash:4:orderId needs attribute "orderId" as a string, number or binary, but the row has none',
    ],
    [
      'hash, attribute empty',
      { kind: 'hash', shards: 4, attribute: 'orderId' },
      { pk: 'a', sk: 'x', orderId: '' },
      '--shard hash:4:orderId needs attribute "orderId" as a string, number or binary, but the row has none',
    ],
    [
      'hash, attribute a boolean',
      { kind: 'hash', shards: 4, attribute: 'orderId' },
      { pk: 'a', sk: 'x', orderId: true },
      '--shard hash:4:orderId needs attribute "orderId" as a string, number or binary, but the row has another type',
    ],
    [
      'hash, attribute a map',
      { kind: 'hash', shards: 4, attribute: 'orderId' },
      { pk: 'a', sk: 'x', orderId: { id: 1 } },
      '--shard hash:4:orderId needs attribute "orderId" as a string, number or binary, but the row has another type',
    ],
    [
      'hash, attribute null',
      { kind: 'hash', shards: 4, attribute: 'orderId' },
      { pk: 'a', sk: 'x', orderId: null },
      '--shard hash:4:orderId needs attribute "orderId" as a string, number or binary, but the row has another type',
    ],
    [
      'time, attribute missing',
      { kind: 'time', unit: 'day', attribute: 'createdAt' },
      { pk: 'a', sk: 'x' },
      '--shard time:day:createdAt needs attribute "createdAt", but the row has none',
    ],
    [
      'time, unreadable text',
      { kind: 'time', unit: 'hour', attribute: 'createdAt' },
      { pk: 'a', sk: 'x', createdAt: 'soon' },
      '--shard time:hour:createdAt: "createdAt" is not a readable time (ISO 8601 such as 2024-01-15T13:45:00Z, or epoch seconds or milliseconds); no column of this row looks like a time',
    ],
    [
      'time, a date that does not exist',
      { kind: 'time', unit: 'day', attribute: 'createdAt' },
      { pk: 'a', sk: 'x', createdAt: '2024-02-30' },
      '--shard time:day:createdAt: "createdAt" is not a readable time (ISO 8601 such as 2024-01-15T13:45:00Z, or epoch seconds or milliseconds); no column of this row looks like a time',
    ],
    [
      'time, a boolean',
      { kind: 'time', unit: 'month', attribute: 'createdAt' },
      { pk: 'a', sk: 'x', createdAt: false },
      '--shard time:month:createdAt: "createdAt" is not a readable time (ISO 8601 such as 2024-01-15T13:45:00Z, or epoch seconds or milliseconds); no column of this row looks like a time',
    ],
    [
      // The default attribute (the sort key) is an id, not a time; the message names the columns that are.
      'time on the sort key, which is no time',
      { kind: 'time', unit: 'day', attribute: 'sk' },
      { pk: 'a', sk: 'order-17', createdAt: '2024-01-15T13:45:00Z', updated: new NumberValue('1705326300'), count: new NumberValue('42'), day: '2024-01-15' },
      '--shard time:day:sk: "sk" is not a readable time (ISO 8601 such as 2024-01-15T13:45:00Z, or epoch seconds or milliseconds); columns that look like a time: "createdAt", "updated", "day"; name one, e.g. --shard time:day:createdAt',
    ],
  ])('%s: SHARD_ATTRIBUTE with the attribute as field; the item is unchanged', (_label, rule, item, message) => {
    const before = { ...item };
    const error = rowErrorOf(() => applyShard(item, resolve([{ kind: 'random', shards: 2 }, rule], { keepOriginalKey: 'origPk' })));
    expect(error.code).toBe('SHARD_ATTRIBUTE');
    expect(error.field).toBe((rule as { attribute: string }).attribute);
    expect(error.message).toBe(message);
    expect(item).toEqual(before);
  });

  it.each<[string, Item]>([
    ['no partition key', { sk: 'x' }],
    ['an empty partition key', { pk: '', sk: 'x' }],
    ['a number partition key', { pk: n('5'), sk: 'x' }],
  ])('%s: not sharded (the key checks report it)', (_label, item) => {
    const before = { ...item };
    expect(applyShard(item, resolve([{ kind: 'random', shards: 4 }], { keepOriginalKey: 'origPk' }))).toBeUndefined();
    expect(item).toEqual(before);
  });
});

describe('createRowPlanner with sharding', () => {
  // hash:4 on the N sort key: md5("1") % 4 = 3 (python3: int(hashlib.md5(b"1").hexdigest(), 16) % 4).
  const sharded = (over: Partial<ShardOptions> = {}, rules: ShardRule[] = [{ kind: 'hash', shards: 4 }]) =>
    createRowPlanner({
      keySchema: S_N,
      types: {},
      infer: false,
      empty: 'omit',
      jsonFlavor: 'json',
      shard: resolveShardOptions({ rules, seed: 7, ...over }, S_N, 'Events'),
    });
  const json = (line: number, raw: string): SourceRecord => ({ kind: 'json', origin: { file: 'in.jsonl', line, raw } });
  const csv = (line: number, cells: Record<string, string>): SourceRecord => ({
    kind: 'csv',
    origin: { file: 'in.csv', line, raw: Object.values(cells).join(',') },
    cells,
  });

  function planned(result: PlannedWrite | RejectedRow): PlannedWrite {
    if (isRejected(result)) throw new Error(`expected a planned write, got ${result.code}: ${result.message}`);
    return result;
  }
  function rejected(result: PlannedWrite | RejectedRow): RejectedRow {
    if (!isRejected(result)) throw new Error(`expected a rejection, got a write of ${JSON.stringify(result.keyId)}`);
    return result;
  }

  it('the key identity and partition identity are those of the sharded key; unshardedKey is the original', () => {
    const write = planned(sharded().plan(json(1, '{"pk":"a","sk":1,"x":"y"}')));
    expect(write.item).toEqual({ pk: 'a#3', sk: n('1'), x: 'y' });
    expect({ keyId: write.keyId, partitionId: write.partitionId }).toEqual(keyIdsOf({ pk: 'a#3', sk: n('1') }, S_N));
    expect(write.partitionId).not.toBe(keyIdsOf({ pk: 'a', sk: n('1') }, S_N).partitionId);
    expect(write.unshardedKey).toBe('a');
    // pk "a#3": 2 + 3, sk 1: 2 + 2, x: 1 + 1
    expect(write.size).toBe(11);
  });

  it('a CSV sort key 1.0 and 1 hash alike (canonical number text), so one primary key keeps one shard', () => {
    const p = sharded();
    const a = planned(p.plan(csv(2, { pk: 'a', sk: '1.0' })));
    const b = planned(p.plan(csv(3, { pk: 'a', sk: '1' })));
    expect(a.item.pk).toBe('a#3');
    expect(a.keyId).toBe(b.keyId);
  });

  it('a key outside shardKeys is written as is, without unshardedKey', () => {
    const p = sharded({ keys: new Set(['hot']) });
    const cold = planned(p.plan(json(1, '{"pk":"cold","sk":1}')));
    expect(cold.item.pk).toBe('cold');
    expect('unshardedKey' in cold).toBe(false);
    expect(cold.partitionId).toBe(keyIdsOf({ pk: 'cold', sk: n('1') }, S_N).partitionId);
    expect(planned(p.plan(json(2, '{"pk":"hot","sk":1}'))).unshardedKey).toBe('hot');
  });

  it('an unsharded planner never sets unshardedKey', () => {
    const p = createRowPlanner({ keySchema: S_N, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json' });
    expect('unshardedKey' in planned(p.plan(json(1, '{"pk":"a","sk":1}')))).toBe(false);
  });

  it('the length limit applies to the suffixed key: 2046 bytes + "#3" fit, 2047 bytes + "#3" are KEY_TOO_LONG', () => {
    expect(MAX_PARTITION_KEY_BYTES).toBe(2048);
    const fits = planned(sharded().plan(json(1, `{"pk":"${'x'.repeat(2046)}","sk":1}`)));
    expect(fits.item.pk).toBe(`${'x'.repeat(2046)}#3`);
    const tooLong = rejected(sharded().plan(json(2, `{"pk":"${'x'.repeat(2047)}","sk":1}`)));
    expect(tooLong.code).toBe('KEY_TOO_LONG');
    expect(tooLong.field).toBe('pk');
    expect(tooLong.message).toContain('2049 bytes');
    // Multi-byte: 682 snowmen are 2046 bytes.
    expect(planned(sharded().plan(json(3, `{"pk":"${'☃'.repeat(682)}","sk":1}`))).item.pk).toBe(`${'☃'.repeat(682)}#3`);
    expect(rejected(sharded().plan(json(4, `{"pk":"${'☃'.repeat(682)}x","sk":1}`))).code).toBe('KEY_TOO_LONG');
  });

  it('an unreadable time is rejected with SHARD_ATTRIBUTE, its field and the unsharded key', () => {
    const p = sharded({}, [{ kind: 'time', unit: 'day', attribute: 'createdAt' }]);
    const result = rejected(p.plan(json(5, '{"pk":"a","sk":1,"createdAt":"2024-02-30"}')));
    expect(result.code).toBe('SHARD_ATTRIBUTE');
    expect(result.field).toBe('createdAt');
    expect(result.key).toEqual({ pk: 'a', sk: '1' });
    expect(result.origin.line).toBe(5);
    expect(planned(p.plan(json(6, '{"pk":"a","sk":1,"createdAt":1705326300}'))).item.pk).toBe('a#2024-01-15');
  });

  it('a missing partition key is still MISSING_KEY, not a sharding error', () => {
    const result = rejected(sharded().plan(json(1, '{"sk":1}')));
    expect(result.code).toBe('MISSING_KEY');
    expect(result.field).toBe('pk');
  });
});
