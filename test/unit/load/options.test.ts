import { describe, expect, it } from 'vitest';
import { type LoaderError } from '../../../src/shared/errors.js';
import {
  checkTypesAgainstKeys,
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  normalizeOptions,
  parseTypeList,
  type LoadOptions,
} from '../../../src/load/options.js';
import { delimiterOf, formatFromName } from '../../../src/reading/inputFormat.js';
import type { KeySchema } from '../../../src/shared/types.js';
import { loaderErrorOf } from '../../support/thrown.js';

const base: LoadOptions = { input: 'data/items.csv', table: 'Items' };

describe('normalizeOptions: defaults', () => {
  it('applies every default', () => {
    expect(normalizeOptions(base)).toEqual({
      input: 'data/items.csv',
      inputs: ['data/items.csv'],
      table: 'Items',
      inputFormat: 'csv',
      // Not given: each part's own name decides (delimiterOf).
      delimiter: undefined,
      columns: undefined,
      types: {},
      infer: false,
      empty: 'omit',
      timestamps: 'iso',
      concurrency: 8,
      maxAttempts: 15,
      requestTimeoutMs: 30_000,
      outageTimeoutMs: 300_000,
      rejectsPath: 'data/items.csv.rejects.jsonl',
      maxRejects: Infinity,
      order: 'auto',
      windowRows: 50_000,
      memoryBytes: 128 * 1024 * 1024,
      tempDir: undefined,
      shard: undefined,
      wcu: undefined,
      keyWcu: 1000,
      pacing: true,
      prewarm: false,
      region: undefined,
      profile: undefined,
      endpoint: undefined,
      s3PathStyle: false,
      allowBrokenExportChain: false,
      partsDisjoint: false,
    });
    expect([DEFAULT_CONCURRENCY, DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT_MS]).toEqual([8, 15, 30_000]);
  });

  it('keeps given values', () => {
    const columns = ['pk', 'n'];
    const result = normalizeOptions({
      ...base,
      inputFormat: 'csv',
      delimiter: ';',
      columns,
      types: { n: 'N' },
      infer: true,
      empty: 'null',
      concurrency: 1,
      maxAttempts: 100,
      requestTimeoutMs: 100,
      rejectsPath: '/tmp/r.jsonl',
      maxRejects: 1,
      region: 'eu-west-1',
      profile: 'dev',
      endpoint: 'http://127.0.0.1:8000',
    });
    expect(result).toMatchObject({
      delimiter: ';',
      columns: ['pk', 'n'],
      types: { n: 'N' },
      infer: true,
      empty: 'null',
      concurrency: 1,
      maxAttempts: 100,
      requestTimeoutMs: 100,
      rejectsPath: '/tmp/r.jsonl',
      maxRejects: 1,
      region: 'eu-west-1',
      profile: 'dev',
      endpoint: 'http://127.0.0.1:8000',
    });
    expect(result.columns).not.toBe(columns);
  });

  it.each([
    ['concurrency', 256],
    ['maxAttempts', 1],
    ['requestTimeoutMs', 600_000],
    ['maxRejects', Number.MAX_SAFE_INTEGER],
  ] as const)('%s accepts its bound %d', (name, value) => {
    expect(normalizeOptions({ ...base, [name]: value })[name]).toBe(value);
  });
});

describe('normalizeOptions: format from the file name', () => {
  it.each([
    ['items.csv', 'csv', ','],
    ['items.CSV', 'csv', ','],
    ['items.csv.gz', 'csv', ','],
    ['items.tsv', 'csv', '\t'],
    ['items.TSV', 'csv', '\t'],
    ['items.tsv.gz', 'csv', '\t'],
    // Every compression suffix, not only .gz, before the format's extension.
    ['items.tsv.zst', 'csv', '\t'],
    ['items.tsv.zstd', 'csv', '\t'],
    ['items.tsv.bz2', 'csv', '\t'],
    ['items.tsv.bzip2', 'csv', '\t'],
    ['items.TSV.GZIP', 'csv', '\t'],
    ['items.csv.zst', 'csv', ','],
    ['items.csv.gzip', 'csv', ','],
    ['items.jsonl', 'jsonl', ','],
    ['items.jsonl.gz', 'jsonl', ','],
    ['items.jsonl.zst', 'jsonl', ','],
    ['items.ndjson.bz2', 'jsonl', ','],
    ['items.ndjson', 'jsonl', ','],
    ['items.json', 'jsonl', ','],
    ['items.ion.bz2', 'ion', ','],
    ['items.ion.gzip', 'ion', ','],
    ['items.parquet', 'parquet', ','],
    ['dir.with.dots/items.csv', 'csv', ','],
    ['dir.tsv/items.csv', 'csv', ','],
  ])('%s -> %s, delimiter %j', (input, format, delimiter) => {
    const options = normalizeOptions({ ...base, input });
    expect(options.inputFormat).toBe(format);
    expect(formatFromName(input)).toBe(format);
    // Not given: undefined, and each part's own name decides as it is read.
    expect(options.delimiter).toBeUndefined();
    expect(delimiterOf(input, options.delimiter)).toBe(delimiter);
  });

  it('a name that does not tell (or a compression alone) leaves the format to the bytes', () => {
    for (const name of ['items', 'items.gz', 'items.tsv.xz', 'items.txt.zst', 'tsv']) expect(formatFromName(name), name).toBeUndefined();
  });

  it('an explicit format wins over the extension', () => {
    expect(normalizeOptions({ ...base, input: 'export.json', inputFormat: 'ddb-json' }).inputFormat).toBe('ddb-json');
  });

  it('an explicit delimiter is kept for every part, whatever its name', () => {
    const options = normalizeOptions({ ...base, input: ['a.tsv', 'b.csv', 'c.tsv.zst'], delimiter: ';' });
    expect(options.delimiter).toBe(';');
    for (const name of options.inputs) expect(delimiterOf(name, options.delimiter)).toBe(';');
  });

  it('each part of a set takes its delimiter from its own name, in either order', () => {
    for (const inputs of [
      ['a.csv', 'b.tsv'],
      ['b.tsv', 'a.csv'],
    ]) {
      const options = normalizeOptions({ ...base, input: inputs });
      expect(options.inputFormat).toBeUndefined();
      expect(options.inputs.map((name) => delimiterOf(name, options.delimiter))).toEqual(inputs.map((name) => (name.endsWith('.tsv') ? '\t' : ',')));
    }
  });

  it('stdin needs inputFormat', () => {
    expect(loaderErrorOf(() => normalizeOptions({ ...base, input: '-' })).code).toBe('INVALID_OPTION');
    expect(normalizeOptions({ ...base, input: '-', inputFormat: 'jsonl' })).toMatchObject({ inputFormat: 'jsonl', rejectsPath: 'stdin.rejects.jsonl' });
  });

  it('an unknown extension leaves the format to the first bytes (reading/detectFormat.ts), or to inputFormat', () => {
    expect(normalizeOptions({ ...base, input: 'items.txt' }).inputFormat).toBeUndefined();
    expect(normalizeOptions({ ...base, input: 'items.txt', inputFormat: 'csv' }).inputFormat).toBe('csv');
  });

  it.each([
    ['t.parquet', 'parquet'],
    ['t.PQ', 'parquet'],
    ['export.ion.gz', 'ion'],
    ['export.ion.zst', 'ion'],
    ['data.csv.zst', 'csv'],
    ['data.csv.bz2', 'csv'],
    ['data.jsonl.zstd', 'jsonl'],
  ] as const)('%s is %s by its extension (after a compression suffix)', (input, format) => {
    expect(normalizeOptions({ ...base, input }).inputFormat).toBe(format);
  });

  it('timestamps is iso, epoch-s or epoch-ms', () => {
    expect(normalizeOptions({ ...base, timestamps: 'epoch-ms' }).timestamps).toBe('epoch-ms');
    expect(loaderErrorOf(() => normalizeOptions({ ...base, timestamps: 'unix' as never })).code).toBe('INVALID_OPTION');
  });

  // The default reject file is next to the input and keeps its whole name (x.csv and x.jsonl
  // never share one), as docs/REFERENCE.md says; before, it was <basename>.rejects.jsonl in the working folder.
  it.each([
    ['data/items.csv', 'data/items.csv.rejects.jsonl'],
    ['data/items.jsonl', 'data/items.jsonl.rejects.jsonl'],
    ['data/items.csv.gz', 'data/items.csv.gz.rejects.jsonl'],
    ['/abs/path/orders.jsonl', '/abs/path/orders.jsonl.rejects.jsonl'],
    ['C:\\data\\orders.ndjson', 'C:\\data\\orders.ndjson.rejects.jsonl'],
    ['my.orders.tsv', 'my.orders.tsv.rejects.jsonl'],
  ])('default rejects path for %s is %s, next to the input', (input, rejectsPath) => {
    expect(normalizeOptions({ ...base, input }).rejectsPath).toBe(rejectsPath);
  });

  it('each segment and a dry run get their own default reject file; each segment its own manifest', () => {
    const segments = [0, 1, 2, 3].map((i) => normalizeOptions({ ...base, segment: `${i}/4`, shard: ['hash:2'] }));
    expect(segments.map((o) => o.rejectsPath)).toEqual([0, 1, 2, 3].map((i) => `data/items.csv.seg-${i}-of-4.rejects.jsonl`));
    expect(segments.map((o) => o.shard?.manifestPath)).toEqual([0, 1, 2, 3].map((i) => `data/items.csv.Items.seg-${i}-of-4.shards.json`));
    expect(normalizeOptions({ ...base, shard: ['hash:2'] }).shard?.manifestPath).toBe('data/items.csv.Items.shards.json');
    expect(normalizeOptions(base, { dryRun: true }).rejectsPath).toBe('data/items.csv.dry-run.rejects.jsonl');
    expect(normalizeOptions({ ...base, segment: '1/2' }, { dryRun: true }).rejectsPath).toBe('data/items.csv.seg-1-of-2.dry-run.rejects.jsonl');
    expect(normalizeOptions({ ...base, rejectsPath: 'mine.jsonl' }, { dryRun: true }).rejectsPath).toBe('mine.jsonl');
  });
});

describe('normalizeOptions: rate options', () => {
  it.each<[LoadOptions['wcu'], unknown]>([
    [500, { kind: 'fixed', wcu: 500 }],
    ['750', { kind: 'fixed', wcu: 750 }],
    ['auto', { kind: 'auto', percent: 80 }],
    ['auto:60%', { kind: 'auto', percent: 60 }],
    ['AUTO:25', { kind: 'auto', percent: 25 }],
    [
      { kind: 'auto', percent: 100 },
      { kind: 'auto', percent: 100 },
    ],
  ])('wcu %j -> %j', (wcu, expected) => {
    expect(normalizeOptions({ ...base, wcu }).wcu).toEqual(expected);
  });

  it('--total-wcu is the budget of all the workers, a number or auto; --wcu auto given to one of several workers means the same', () => {
    expect(normalizeOptions({ ...base, segment: '1/4', totalWcu: 8000 })).toMatchObject({ wcu: undefined, totalWcu: { kind: 'fixed', wcu: 8000 } });
    expect(normalizeOptions({ ...base, segment: '1/4', totalWcu: 'auto:60%' })).toMatchObject({ wcu: undefined, totalWcu: { kind: 'auto', percent: 60 } });
    expect(normalizeOptions({ ...base, segment: '1/4', wcu: 'auto' })).toMatchObject({ wcu: undefined, totalWcu: { kind: 'auto', percent: 80 } });
    // One worker, or a fixed --wcu: this worker's own.
    expect(normalizeOptions({ ...base, segment: '0/1', wcu: 'auto' })).toMatchObject({ wcu: { kind: 'auto', percent: 80 }, totalWcu: undefined });
    expect(normalizeOptions({ ...base, segment: '1/4', wcu: 300 })).toMatchObject({ wcu: { kind: 'fixed', wcu: 300 }, totalWcu: undefined });
  });

  it('keyWcu and pacing are kept', () => {
    expect(normalizeOptions({ ...base, keyWcu: 250.5 })).toMatchObject({ keyWcu: 250.5, pacing: true });
    expect(normalizeOptions({ ...base, pacing: false })).toMatchObject({ pacing: false, wcu: undefined });
  });
});

describe('normalizeOptions: errors', () => {
  const cases: [string, Partial<Record<keyof LoadOptions, unknown>>, string][] = [
    ['empty input', { input: '' }, 'input'],
    ['input not a string', { input: 42 }, 'input'],
    ['table too short', { table: 'ab' }, 'table'],
    ['table with a space', { table: 'my table' }, 'table'],
    ['table with a slash', { table: 'a/b/c' }, 'table'],
    ['table too long', { table: 'x'.repeat(256) }, 'table'],
    ['unknown inputFormat', { inputFormat: 'xml' }, 'inputFormat'],
    ['empty delimiter', { delimiter: '' }, 'delimiter'],
    ['quote as delimiter', { delimiter: '"' }, 'delimiter'],
    ['newline as delimiter', { delimiter: '\n' }, 'delimiter'],
    ['CR as delimiter', { delimiter: '\r' }, 'delimiter'],
    ['delimiter not a string', { delimiter: 9 }, 'delimiter'],
    ['empty columns', { columns: [] }, 'columns'],
    ['empty column name', { columns: ['pk', ''] }, 'columns'],
    ['duplicate column', { columns: ['pk', 'n', 'pk'] }, 'columns'],
    ['column not a string', { columns: ['pk', 1] }, 'columns'],
    ['unknown type', { types: { price: 'NUMBER' } }, 'price'],
    ['lower-case type', { types: { price: 'n' } }, 'price'],
    ['unknown empty policy', { empty: 'zero' }, 'empty'],
    ['concurrency 0', { concurrency: 0 }, 'concurrency'],
    ['concurrency 257', { concurrency: 257 }, 'concurrency'],
    ['concurrency 1.5', { concurrency: 1.5 }, 'concurrency'],
    ['concurrency as text', { concurrency: '8' }, 'concurrency'],
    ['concurrency NaN', { concurrency: NaN }, 'concurrency'],
    ['maxAttempts 0', { maxAttempts: 0 }, 'maxAttempts'],
    ['maxAttempts 101', { maxAttempts: 101 }, 'maxAttempts'],
    ['requestTimeoutMs 99', { requestTimeoutMs: 99 }, 'requestTimeoutMs'],
    ['requestTimeoutMs 600001', { requestTimeoutMs: 600_001 }, 'requestTimeoutMs'],
    ['maxRejects 0', { maxRejects: 0 }, 'maxRejects'],
    ['maxRejects -1', { maxRejects: -1 }, 'maxRejects'],
    ['maxRejects 1.5', { maxRejects: 1.5 }, 'maxRejects'],
    ['maxRejects -Infinity', { maxRejects: -Infinity }, 'maxRejects'],
    ['wcu 0', { wcu: 0 }, 'wcu'],
    ['wcu NaN', { wcu: NaN }, 'wcu'],
    ['wcu as a word', { wcu: 'fast' }, '--wcu'],
    ['wcu auto:150%', { wcu: 'auto:150%' }, '--wcu'],
    ['wcu auto 0% as an object', { wcu: { kind: 'auto', percent: 0 } }, 'wcu'],
    ['keyWcu 0', { keyWcu: 0 }, 'keyWcu'],
    ['keyWcu Infinity', { keyWcu: Infinity }, 'keyWcu'],
    ['pacing as text', { pacing: 'no' }, 'pacing'],
    ['wcu with pacing off', { pacing: false, wcu: 100 }, 'wcu'],
    ['keyWcu with pacing off', { pacing: false, keyWcu: 100 }, 'keyWcu'],
  ];

  it.each(cases)('%s -> INVALID_OPTION naming the option', (_label, over, name) => {
    const error = loaderErrorOf(() => normalizeOptions({ ...base, ...over } as LoadOptions));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain(name);
  });
});

describe('parseTypeList', () => {
  it.each([
    ['price:N', { price: 'N' }],
    ['price:N,active:BOOL', { price: 'N', active: 'BOOL' }],
    ['price:n,active:bool,tags:ss', { price: 'N', active: 'BOOL', tags: 'SS' }],
    [' price:N , tags:SS ', { price: 'N', tags: 'SS' }],
    ['a:N,,b:S,', { a: 'N', b: 'S' }],
    ['ns:a:b:N', { 'ns:a:b': 'N' }],
    ['meta:JSON,m:M,l:L,b:B,bs:BS,ns:NS', { meta: 'JSON', m: 'M', l: 'L', b: 'B', bs: 'BS', ns: 'NS' }],
    ['', {}],
  ])('%j -> %j', (text, expected) => {
    expect(parseTypeList(text)).toEqual(expected);
  });

  it.each(['price', ':N', 'price:', 'price:NUMBER', 'price:N,active'])('%j -> INVALID_OPTION', (text) => {
    expect(loaderErrorOf(() => parseTypeList(text)).code).toBe('INVALID_OPTION');
  });

  it('spaces around ":" do not end up in the attribute name', () => {
    // "price :N" must not silently declare a type for an attribute named "price " that no column has.
    let types: Record<string, string>;
    try {
      types = parseTypeList('price :N');
    } catch (error) {
      expect((error as LoaderError).code).toBe('INVALID_OPTION');
      return;
    }
    expect(Object.keys(types)).toEqual(['price']);
  });
});

describe('checkTypesAgainstKeys', () => {
  const schema: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

  it.each([
    ['no types', {}],
    ['types for other attributes', { price: 'N', tags: 'SS' }],
    ['key types that agree', { pk: 'S', sk: 'N' }],
  ] as const)('%s: ok', (_label, types) => {
    expect(() => checkTypesAgainstKeys({ ...types }, schema, 'Items')).not.toThrow();
  });

  it.each([
    ['partition key', { pk: 'N' }, 'pk'],
    ['sort key', { sk: 'S' }, 'sk'],
    ['sort key as JSON', { sk: 'JSON' }, 'sk'],
  ] as const)('a %s declared with another type -> INVALID_OPTION', (_label, types, field) => {
    const error = loaderErrorOf(() => checkTypesAgainstKeys({ ...types }, schema, 'Items'));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.field).toBe(field);
    expect(error.table).toBe('Items');
  });

  it('a table without a sort key checks only the partition key', () => {
    expect(() => checkTypesAgainstKeys({ sk: 'S' }, { partitionKey: { name: 'pk', type: 'B' } }, 'T1x')).not.toThrow();
  });
});

describe('sharded deletes', () => {
  it.each<[string, Partial<LoadOptions>]>([
    ['--delete', { delete: true }],
    ['--operation-column', { operationColumn: 'op' }],
  ])('%s with random:N needs --shard-seed (a new seed would delete nothing, counted deleted)', (_label, deletes) => {
    const error = loaderErrorOf(() => normalizeOptions({ ...base, ...deletes, shard: ['hash:2', 'random:4'] }));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('--shard-seed');
    expect(normalizeOptions({ ...base, ...deletes, shard: ['random:4'], shardSeed: 9 }).shard?.seed).toBe(9);
    // hash and time suffixes do not depend on the seed.
    expect(normalizeOptions({ ...base, ...deletes, shard: ['hash:4'] }).shard?.seed).toBeUndefined();
  });
});

describe('normalizeOptions: transform', () => {
  it("takes a module's path or a function; refuses anything else, and --order stripes (cut by the input's own keys)", () => {
    const base = { input: 'in.csv', table: 'Items' };
    const fn = (item: Record<string, unknown>) => item;
    expect(normalizeOptions({ ...base, transform: './t.mjs' }).transform).toBe('./t.mjs');
    expect(normalizeOptions({ ...base, transform: fn }).transform).toBe(fn);
    expect(normalizeOptions(base).transform).toBeUndefined();
    for (const bad of ['', 7, {}])
      expect(() => normalizeOptions({ ...base, transform: bad as never })).toThrow(/Expected `transform` to be a module's path or a function/);
    expect(() => normalizeOptions({ ...base, transform: './t.mjs', order: 'stripes' })).toThrow(/--order stripes cuts the input by its own partition keys/);
    expect(normalizeOptions({ ...base, transform: './t.mjs', order: 'auto' }).order).toBe('auto');
  });
});
