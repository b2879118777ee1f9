import { describe, expect, it } from 'vitest';
import { DEFAULT_WINDOW_ROWS } from '../../../src/ordering/order.js';
import { DEFAULT_MEMORY_BYTES, MIN_MEMORY_BYTES, normalizeOptions, parseByteSize, type LoadOptions } from '../../../src/load/options.js';
import type { ShardRule } from '../../../src/sharding/shardRule.js';
import { loaderErrorOf } from '../../support/thrown.js';

const base: LoadOptions = { input: 'data/items.csv', table: 'Items' };
const stdin: LoadOptions = { input: '-', table: 'Items', inputFormat: 'jsonl' };
const KiB = 1024;
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

describe('parseByteSize', () => {
  it.each<[string, number]>([
    ['100', 100],
    ['0', 0],
    ['1.5', 2],
    ['512k', 512 * KiB],
    ['512K', 512 * KiB],
    ['512kb', 512 * KiB],
    ['512KB', 512 * KiB],
    ['1KiB', KiB],
    ['1kib', KiB],
    ['256MB', 256 * MiB],
    ['256m', 256 * MiB],
    ['256 MiB', 256 * MiB],
    ['1.5GB', 1.5 * GiB],
    ['2g', 2 * GiB],
    ['1T', 1024 ** 4],
    ['1TB', 1024 ** 4],
    ['0.5k', 512],
    ['1.0001k', 1024],
    ['  64 MB  ', 64 * MiB],
    ['10B', 10],
    ['10b', 10],
  ])('%j = %d bytes', (text, expected) => {
    expect(parseByteSize(text)).toBe(expected);
  });

  it.each([
    '',
    ' ',
    'KiB',
    'MB',
    'k',
    '-1',
    '-1MB',
    '1e3',
    '0x10',
    '.5GB',
    '1.GB',
    '1,5GB',
    '1 P',
    '1PB',
    '1KK',
    '1 M B',
    'ten',
    '1MBs',
    '1mb!',
    'NaN',
    'Infinity',
  ])('%j is INVALID_OPTION', (text) => {
    const error = loaderErrorOf(() => parseByteSize(text));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe(`expected a size such as 256MB, 2GB or 512KB, got "${text}"`);
  });
});

describe('normalizeOptions: write order', () => {
  it('defaults: auto for files and stdin (decided from the data once the input is open), window of 50000 rows, 128 MiB, no temp folder, no sharding', () => {
    expect(normalizeOptions(base)).toMatchObject({
      order: 'auto',
      windowRows: DEFAULT_WINDOW_ROWS,
      memoryBytes: DEFAULT_MEMORY_BYTES,
      tempDir: undefined,
      shard: undefined,
    });
    expect(normalizeOptions(stdin)).toMatchObject({ order: 'auto', windowRows: 50_000, memoryBytes: 128 * MiB });
    // Whether a file can be cut, and how its keys run, is known once it is opened (prepareLoad).
    expect(normalizeOptions({ ...base, input: 'x.jsonl.gz' }).order).toBe('auto');
    expect(normalizeOptions({ ...base, window: 1000 })).toMatchObject({ order: 'auto', windowRows: 1000 });
    expect([DEFAULT_WINDOW_ROWS, DEFAULT_MEMORY_BYTES, MIN_MEMORY_BYTES]).toEqual([50_000, 128 * MiB, 64 * KiB]);
  });

  it.each(['round-robin', 'spread', 'window', 'input'] as const)('order %s is kept, for a file and for stdin', (order) => {
    expect(normalizeOptions({ ...base, order }).order).toBe(order);
    expect(normalizeOptions({ ...stdin, order }).order).toBe(order);
  });

  it('window is kept with order window (given or the stdin default); bounds 2 to 100000000', () => {
    expect(normalizeOptions({ ...base, order: 'window', window: 2 }).windowRows).toBe(2);
    expect(normalizeOptions({ ...stdin, window: 100_000_000 }).windowRows).toBe(100_000_000);
  });

  it('memoryBytes and tempDir are kept', () => {
    expect(normalizeOptions({ ...base, memoryBytes: MIN_MEMORY_BYTES, tempDir: '/var/tmp/ddb' })).toMatchObject({
      memoryBytes: 64 * KiB,
      tempDir: '/var/tmp/ddb',
    });
    expect(normalizeOptions({ ...base, memoryBytes: Number.MAX_SAFE_INTEGER }).memoryBytes).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each<[string, Partial<LoadOptions>, string]>([
    [
      'an unknown order',
      { order: 'random' as never },
      'Expected `order` to be one of auto, stripes, round-robin, spread, window, input, got `random` (string)',
    ],
    ['window with order stripes', { order: 'stripes', window: 100 }, 'Expected `window` to be given only with order "window" or "auto", got `100` (number)'],
    ['window with order spread', { order: 'spread', window: 100 }, 'Expected `window` to be given only with order "window" or "auto", got `100` (number)'],
    ['window of 1 row', { order: 'window', window: 1 }, 'Expected `window` to be an integer from 2 to 100000000, got `1` (number)'],
    ['window above the bound', { order: 'window', window: 100_000_001 }, 'Expected `window` to be an integer from 2 to 100000000, got `100000001` (number)'],
    ['fractional window', { order: 'window', window: 2.5 }, 'Expected `window` to be an integer from 2 to 100000000, got `2.5` (number)'],
    ['window as text', { order: 'window', window: '10' as never }, 'Expected `window` to be an integer from 2 to 100000000, got `10` (string)'],
    [
      'memoryBytes below 64 KiB',
      { memoryBytes: MIN_MEMORY_BYTES - 1 },
      'Expected `memoryBytes` to be an integer from 65536 to 9007199254740991, got `65535` (number)',
    ],
    ['fractional memoryBytes', { memoryBytes: 100_000.5 }, 'Expected `memoryBytes` to be an integer from 65536 to 9007199254740991, got `100000.5` (number)'],
    ['memoryBytes as text', { memoryBytes: '256MB' as never }, 'Expected `memoryBytes` to be an integer from 65536 to 9007199254740991, got `256MB` (string)'],
    ['memoryBytes Infinity', { memoryBytes: Infinity }, 'Expected `memoryBytes` to be an integer from 65536 to 9007199254740991, got `Infinity` (number)'],
    ['an empty tempDir', { tempDir: '' }, 'Expected `tempDir` to be a folder path, got `` (string)'],
    ['a tempDir that is not text', { tempDir: 5 as never }, 'Expected `tempDir` to be a folder path, got `5` (number)'],
  ])('%s is INVALID_OPTION', (_label, over, message) => {
    const error = loaderErrorOf(() => normalizeOptions({ ...base, ...over }));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe(message);
  });

  it("window with stdin's default order window is fine, with stdin and order input it is not", () => {
    expect(normalizeOptions({ ...stdin, window: 10 }).windowRows).toBe(10);
    expect(loaderErrorOf(() => normalizeOptions({ ...stdin, order: 'input', window: 10 })).code).toBe('INVALID_OPTION');
  });
});

describe('normalizeOptions: sharding', () => {
  it('rules given as text are parsed; defaults: "#", every key, no original-key attribute, no seed, 0-based suffixes, <input>.<table>.shards.json', () => {
    expect(normalizeOptions({ ...base, shard: ['time:day:createdAt', 'hash:4'] }).shard).toEqual({
      rules: [
        { kind: 'time', unit: 'day', attribute: 'createdAt' },
        { kind: 'hash', shards: 4 },
      ],
      separator: '#',
      keys: undefined,
      keepOriginalKey: undefined,
      seed: undefined,
      suffixBase: 0,
      manifestPath: 'data/items.csv.Items.shards.json',
    });
  });

  it('rule objects and text mix; given values are kept', () => {
    const rule: ShardRule = { kind: 'random', shards: 8 };
    const shard = normalizeOptions({
      ...base,
      shard: [rule, 'hash:16:orderId'],
      shardSeparator: '|',
      shardKeys: ['hot', 'hotter', 'hot'],
      keepOriginalKey: 'origPk',
      shardSeed: 0xffffffff,
      shardManifestPath: '/tmp/m.json',
    }).shard!;
    expect(shard.rules).toEqual([rule, { kind: 'hash', shards: 16, attribute: 'orderId' }]);
    expect(shard.separator).toBe('|');
    expect(shard.keys).toEqual(new Set(['hot', 'hotter']));
    expect(shard.keepOriginalKey).toBe('origPk');
    expect(shard.seed).toBe(0xffffffff);
    expect(shard.manifestPath).toBe('/tmp/m.json');
    expect(normalizeOptions({ ...base, shard: ['random:2'], shardSeed: 0 }).shard!.seed).toBe(0);
  });

  it('shardSuffixBase is 0 or 1, and only with shard', () => {
    expect(normalizeOptions({ ...base, shard: ['random:200'], shardSuffixBase: 1 }).shard!.suffixBase).toBe(1);
    expect(() => normalizeOptions({ ...base, shard: ['random:2'], shardSuffixBase: 2 as never })).toThrow(/shardSuffixBase/);
    expect(() => normalizeOptions({ ...base, shardSuffixBase: 1 })).toThrow(/shardSuffixBase/);
  });

  it('the default manifest differs per table: one input loaded into two tables keeps both', () => {
    const of = (table: string) => normalizeOptions({ ...base, table, shard: ['hash:2'] }).shard!.manifestPath;
    expect(of('Orders')).toBe('data/items.csv.Orders.shards.json');
    expect(of('Orders')).not.toBe(of('OrdersCopy'));
  });

  it.each([
    ['data/items.csv', 'data/items.csv.Items.shards.json'],
    ['/abs/path/orders.jsonl.gz', '/abs/path/orders.jsonl.gz.Items.shards.json'],
    ['my.orders.tsv', 'my.orders.tsv.Items.shards.json'],
    ['-', 'stdin.Items.shards.json'],
  ])('the manifest of %s defaults to %s, next to the input, with the table in it', (input, expected) => {
    const options: LoadOptions = input === '-' ? { ...stdin, shard: ['random:2'] } : { input, table: 'Items', inputFormat: 'csv', shard: ['random:2'] };
    expect(normalizeOptions(options).shard!.manifestPath).toBe(expected);
  });

  it.each<[string, Partial<LoadOptions>]>([
    ['shardSeparator', { shardSeparator: '#' }],
    ['shardKeys', { shardKeys: ['hot'] }],
    ['keepOriginalKey', { keepOriginalKey: 'orig' }],
    ['shardSeed', { shardSeed: 1 }],
    ['shardManifestPath', { shardManifestPath: 'm.json' }],
  ])('%s without shard is INVALID_OPTION (also with shard: [])', (name, over) => {
    for (const shard of [undefined, []]) {
      const error = loaderErrorOf(() => normalizeOptions({ ...base, ...over, ...(shard ? { shard } : {}) }));
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toMatch(new RegExp(`^Expected \`${name}\` to be given only together with \`shard\` \\(--shard\\), got `));
    }
  });

  it.each<[string, Partial<LoadOptions>, string]>([
    [
      'an invalid rule text',
      { shard: ['hash:1'] },
      '--shard "hash:1": N must be an integer from 2 to 10000; expected random:N, hash:N[:attribute] or time:hour|day|month[:attribute]',
    ],
    ['an empty separator', { shard: ['random:2'], shardSeparator: '' }, 'Expected `shardSeparator` to be a non-empty string, got `` (string)'],
    ['an empty shardKeys list', { shard: ['random:2'], shardKeys: [] }, 'Expected `shardKeys` to be a non-empty list of partition key values, got `` (object)'],
    [
      'an empty key in shardKeys',
      { shard: ['random:2'], shardKeys: ['a', ''] },
      'Expected `shardKeys` to be a non-empty list of partition key values, got `a,` (object)',
    ],
    [
      'shardKeys as text',
      { shard: ['random:2'], shardKeys: 'hot' as never },
      'Expected `shardKeys` to be a non-empty list of partition key values, got `hot` (string)',
    ],
    ['an empty keepOriginalKey', { shard: ['random:2'], keepOriginalKey: '' }, 'Expected `keepOriginalKey` to be an attribute name, got `` (string)'],
    ['a negative seed', { shard: ['random:2'], shardSeed: -1 }, 'Expected `shardSeed` to be an integer from 0 to 4294967295, got `-1` (number)'],
    ['a seed of 2^32', { shard: ['random:2'], shardSeed: 2 ** 32 }, 'Expected `shardSeed` to be an integer from 0 to 4294967295, got `4294967296` (number)'],
    ['a fractional seed', { shard: ['random:2'], shardSeed: 0.5 }, 'Expected `shardSeed` to be an integer from 0 to 4294967295, got `0.5` (number)'],
  ])('%s is INVALID_OPTION', (_label, over, message) => {
    const error = loaderErrorOf(() => normalizeOptions({ ...base, ...over }));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toBe(message);
  });
});
