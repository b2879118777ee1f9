/**
 * Parquet, Ion, zstd and bzip2 inputs, read as load() reads them (openInput -> readRecords ->
 * the planner). Parquet and zstd inputs are made here; bzip2 fixtures come from scripts/makeFormatFixtures.sh.
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { LoaderError } from '../../../src/shared/errors.js';
import { fileByteSource, type ByteSource } from '../../../src/reading/byteSource.js';
import { fzstdTransform } from '../../../src/reading/decompress.js';
import { detectFormat } from '../../../src/reading/detectFormat.js';
import { compressionOf, signedFormatOf } from '../../../src/reading/magic.js';
import { openInput } from '../../../src/reading/openInput.js';
import { EXACT_PARSERS, readParquet } from '../../../src/reading/readParquet.js';
import { InvalidJson, itemFromTypedValues } from '../../../src/typing/typedValues.js';
import { readRecords } from '../../../src/reading/readRecords.js';
import type { InputFormat } from '../../../src/reading/inputFormat.js';
import { createRowPlanner, isRejected, type RowPlannerOptions, type SourceRecord } from '../../../src/typing/planRow.js';
import type { PlannedWrite, RejectedRow } from '../../../src/shared/types.js';
import { WAREHOUSE_COLUMNS, WAREHOUSE_SCHEMA, writeParquet, zstd } from '../../support/formatFixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'ddb-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content?: string | Buffer) => {
  const path = join(dir, name);
  if (content !== undefined) writeFileSync(path, content);
  return path;
};
const FIXTURES = join(import.meta.dirname, '../../fixtures/formats');
const n = (text: string) => new NumberValue(text);

const plannerOptions: RowPlannerOptions = {
  keySchema: { partitionKey: { name: 'pk', type: 'S' } },
  types: {},
  infer: false,
  empty: 'omit',
  jsonFlavor: 'json',
};

async function records(path: string, format?: InputFormat): Promise<SourceRecord[]> {
  const input = await openInput(path);
  const chosen = format ?? (await detectFormat(input));
  const out: SourceRecord[] = [];
  for await (const record of readRecords(input, chosen, { delimiter: ',', columns: undefined })) out.push(record);
  return out;
}

async function planned(path: string, format?: InputFormat, options: Partial<RowPlannerOptions> = {}): Promise<Array<PlannedWrite | RejectedRow>> {
  const planner = createRowPlanner({ ...plannerOptions, ...options });
  return (await records(path, format)).map((r) => planner.plan(r));
}

const items = (results: Array<PlannedWrite | RejectedRow>) => results.filter((r): r is PlannedWrite => !isRejected(r)).map((w) => w.item);

async function failure(promise: Promise<unknown>): Promise<LoaderError> {
  const error = await promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LoaderError);
  return error as LoaderError;
}

describe('magic bytes', () => {
  it.each([
    [[0x1f, 0x8b, 8], 'gzip'],
    [[0x28, 0xb5, 0x2f, 0xfd], 'zstd'],
    [[0x42, 0x5a, 0x68, 0x39], 'bzip2'],
    [[0x42, 0x5a, 0x68, 0x30], undefined],
    [[0x70, 0x6b], undefined],
  ] as const)('%j is %s', (bytes, kind) => {
    expect(compressionOf(new Uint8Array(bytes))).toBe(kind);
  });

  it('Parquet, binary Ion and text Ion have signatures; CSV and JSON do not', () => {
    expect(signedFormatOf(Buffer.from('PAR1xxxx'))).toBe('parquet');
    expect(signedFormatOf(new Uint8Array([0xe0, 1, 0, 0xea]))).toBe('ion-binary');
    expect(signedFormatOf(Buffer.from('\ufeff\n $ion_1_0 {Item:{}}'))).toBe('ion');
    expect(signedFormatOf(Buffer.from('pk,qty\n'))).toBeUndefined();
    expect(signedFormatOf(Buffer.from('{"pk":1}'))).toBeUndefined();
  });
});

describe('zstd and bzip2 inputs', () => {
  const csv = 'pk,qty\n' + Array.from({ length: 5000 }, (_, i) => `r${i},${i}`).join('\n') + '\n';

  it('a zstd CSV reads like the plain file, found by its magic bytes whatever its name', async () => {
    const plain = await records(file('plain.csv', csv), 'csv');
    const zst = await records(file('data.csv.zst', zstd(csv)), 'csv');
    const unnamed = await records(file('data.bin', zstd(csv)), 'csv');
    expect(zst).toHaveLength(5000);
    expect(zst.map((r) => r.origin.raw)).toEqual(plain.map((r) => r.origin.raw));
    expect(unnamed.map((r) => r.origin.line)).toEqual(plain.map((r) => r.origin.line));
  });

  it('concatenated zstd frames are all read', async () => {
    const rows = await records(file('frames.csv.zst', Buffer.concat([zstd('pk,qty\na,1\n'), zstd('b,2\n')])), 'csv');
    expect(rows.map((r) => r.origin.raw)).toEqual(['a,1', 'b,2']);
  });

  it('the pure-JavaScript zstd fallback (runtimes before Node 22.15) decodes the same bytes, frames included', async () => {
    const input = Buffer.concat([zstd(csv), zstd('tail,1\n')]);
    const chunks: Buffer[] = [];
    for await (const chunk of Readable.from([input.subarray(0, 7), input.subarray(7, 5000), input.subarray(5000)]).pipe(fzstdTransform()))
      chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(csv + 'tail,1\n');
  });

  it('a bzip2 CSV reads every row, over several output chunks', async () => {
    const rows = await records(join(FIXTURES, 'rows.csv.bz2'), 'csv');
    expect(rows).toHaveLength(3000);
    expect(rows[2999]!.origin).toMatchObject({ line: 3001, raw: 'r3000,3000,row number 3000 of the bzip2 fixture' });
  });

  it('two bzip2 streams one after the other are both read', async () => {
    const rows = await records(join(FIXTURES, 'two-streams.csv.bz2'), 'csv');
    expect(rows.map((r) => r.origin.raw)).toEqual(['first,1', 'second,2']);
  });

  it.each([
    ['truncated zstd', () => file('cut.csv.zst', zstd(csv).subarray(0, 300))],
    ['truncated bzip2', () => join(FIXTURES, 'truncated.csv.bz2')],
  ])('a %s file fails naming the file, never ends early as if complete', async (_name, make) => {
    const path = make();
    const error = await failure(records(path, 'csv'));
    expect(error.code).toBe('INPUT_UNREADABLE');
    expect(error.message).toContain(path);
  });
});

describe('Parquet', () => {
  const warehouse = file('warehouse.parquet');
  writeParquet(warehouse, WAREHOUSE_COLUMNS, WAREHOUSE_SCHEMA, { rowGroupSize: 2 });

  it('maps each Parquet type exactly: integers, decimals and floats to N with every digit, UTF8 to S, bytes to B', async () => {
    const results = await planned(warehouse);
    expect(results.filter(isRejected)).toEqual([]);
    expect(items(results)).toEqual([
      {
        pk: 'a',
        i32: n('-2147483648'),
        i64: n('9007199254740993'),
        price: n('1234567890123456789012345678901234.5678'),
        cents: n('1234567890123456.78'),
        f32: n('0.1'),
        f64: n('0.1'),
        active: true,
        blob: new Uint8Array([0, 1, 255]),
        at: '2024-01-15T13:45:00.123456Z',
        day: '2024-01-15',
        tags: ['x', 'y'],
        dims: { w: n('12.5'), unit: 'cm' },
        note: 'héllo ✓',
      },
      {
        pk: 'b',
        i32: n('7'),
        i64: n('-9223372036854775808'),
        price: n('-0.0005'),
        cents: n('1'),
        f32: n('1.5'),
        f64: n('9007199254740994'),
        active: false,
        blob: new Uint8Array([]),
        at: '1970-01-01T00:00:00Z',
        day: '1970-01-01',
        tags: [],
        dims: { unit: 'in' },
        note: '',
      },
      { pk: 'c' },
    ]);
  });

  it('nulls follow --empty; timestamps are epoch numbers with --timestamps', async () => {
    const [, , third] = items(await planned(warehouse, 'parquet', { empty: 'null' }));
    expect(Object.keys(third!).sort()).toEqual(WAREHOUSE_COLUMNS.map((c) => c.name).sort());
    expect(third!.price).toBeNull();
    const [first] = items(await planned(warehouse, 'parquet', { timestamps: 'epoch-ms' }));
    expect([first!.at, first!.day]).toEqual([n('1705326300123.456'), n('1705276800000')]);
  });

  it('--types overrides a column: a number column as S, a text column as N', async () => {
    const path = file('types.parquet');
    writeParquet(
      path,
      [
        { name: 'pk', data: ['a'] },
        { name: 'zip', data: [2134] },
        { name: 'qty', data: ['0012.50'] },
      ],
      [
        { name: 'schema', num_children: 3 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'zip', type: 'INT32', repetition_type: 'REQUIRED' },
        { name: 'qty', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      ],
    );
    expect(items(await planned(path, 'parquet', { types: { zip: 'S', qty: 'N' } }))).toEqual([{ pk: 'a', zip: '2134', qty: n('12.5') }]);
  });

  it('a JSON column maps naturally; --types B keeps a binary column binary', async () => {
    const path = file('json.parquet');
    writeParquet(
      path,
      [
        { name: 'pk', data: ['a'] },
        { name: 'doc', data: [{ id: 7, x: [1.5, 'y'] }] },
        { name: 'raw', data: [new Uint8Array([7])] },
      ],
      [
        { name: 'schema', num_children: 3 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'doc', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'REQUIRED' },
        { name: 'raw', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED' },
      ],
    );
    expect(items(await planned(path, 'parquet', { types: { raw: 'B' } }))).toEqual([
      { pk: 'a', doc: { id: n('7'), x: [n('1.5'), 'y'] }, raw: new Uint8Array([7]) },
    ]);
  });

  it("JSON text keeps every digit (hyparquet's own JSON.parse would round); text that does not parse rejects the row", () => {
    const parse = EXACT_PARSERS.jsonFromBytes!;
    expect(itemFromTypedValues({ doc: parse(Buffer.from('{"id":12345678901234567890}')) }, { empty: 'omit', timestamps: 'iso' })).toEqual({
      doc: { id: n('12345678901234567890') },
    });
    const bad = parse(Buffer.from('{"id":')) as unknown;
    expect(bad).toBeInstanceOf(InvalidJson);
    expect(() => itemFromTypedValues({ doc: bad }, { empty: 'omit', timestamps: 'iso' })).toThrow(/does not parse/);
  });

  it('a bad row is a reject at its row number, saying which row group and row, with the row as JSON', async () => {
    const path = file('bad.parquet');
    writeParquet(
      path,
      [
        { name: 'pk', data: ['a', 'b', null, 'd', 'e'] },
        { name: 'x', data: [1, Number.NaN, 3, 4, 1e300] },
      ],
      [
        { name: 'schema', num_children: 2 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'x', type: 'DOUBLE', repetition_type: 'REQUIRED' },
      ],
      { rowGroupSize: 2 },
    );
    const rejects = (await planned(path)).filter(isRejected);
    expect(rejects.map((r) => [r.origin.line, r.code, r.message.split(':')[0]])).toEqual([
      [2, 'TYPE_ERROR', 'row group 0 row 1'],
      [3, 'MISSING_KEY', 'row group 1 row 0'],
      [5, 'TYPE_ERROR', 'row group 2 row 0'],
    ]);
    expect(JSON.parse(rejects[0]!.origin.raw)).toEqual({ pk: 'b', x: null });
    expect(rejects[0]!.origin.file).toBe(path);
  });

  it('text that is not UTF-8 rejects its row (INVALID_UTF8) instead of storing U+FFFD', async () => {
    const path = file('latin1.parquet');
    writeParquet(
      path,
      [
        { name: 'pk', data: ['a', 'b'] },
        { name: 'name', data: [new Uint8Array([0x63, 0x61, 0x66, 0xe9]), new Uint8Array([0x6f, 0x6b])] },
      ],
      [
        { name: 'schema', num_children: 2 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'name', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      ],
    );
    const results = await planned(path);
    expect(results.map((r) => (isRejected(r) ? r.code : r.item.name))).toEqual(['INVALID_UTF8', 'ok']);
  });

  it('reads row group by row group: no read is larger than a row group, however large the file', async () => {
    const path = file('groups.parquet');
    const rows = 20_000;
    writeParquet(
      path,
      [
        { name: 'pk', data: Array.from({ length: rows }, (_, i) => `key-${i}-${'x'.repeat(40)}`) },
        { name: 'v', data: Array.from({ length: rows }, (_, i) => BigInt(i) * 7919n) },
      ],
      [
        { name: 'schema', num_children: 2 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'v', type: 'INT64', repetition_type: 'REQUIRED' },
      ],
      { rowGroupSize: 1000, codec: 'UNCOMPRESSED' },
    );
    const source = await fileByteSource(path);
    let largest = 0;
    const counting: ByteSource = {
      byteLength: source.byteLength,
      read: (start, end) => {
        largest = Math.max(largest, end - start);
        return source.read(start, end);
      },
      bytesRead: () => source.bytesRead(),
      close: () => source.close(),
    };
    let count = 0;
    let last: SourceRecord | undefined;
    for await (const record of readParquet(counting, path)) {
      count++;
      last = record;
    }
    expect(count).toBe(rows);
    expect(last!.origin.line).toBe(rows);
    expect(source.byteLength).toBeGreaterThan(1_000_000);
    // One row group's column chunks here are ~60 KB; the footer read is at most 512 KB (hyparquet's first fetch).
    expect(largest).toBeLessThan(source.byteLength / 2);
    expect(source.bytesRead()).toBeGreaterThanOrEqual(source.byteLength * 0.9);
  });

  it('snappy, gzip, zstd and brotli pages decode (hyparquet-compressors)', async () => {
    for (const codec of ['SNAPPY', 'GZIP', 'ZSTD', 'BROTLI']) {
      const path = file(`codec-${codec}.parquet`);
      writeParquet(
        path,
        [{ name: 'pk', data: ['a', 'b', 'c'] }],
        [
          { name: 'schema', num_children: 1 },
          { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        ],
        { codec },
      );
      expect(items(await planned(path)), codec).toEqual([{ pk: 'a' }, { pk: 'b' }, { pk: 'c' }]);
    }
  });

  it('is found by its magic bytes under any name; a damaged file fails naming it', async () => {
    const copy = file('export.data', readFileSync(warehouse));
    expect(items(await planned(copy))).toHaveLength(3);
    const cut = file('cut.parquet', readFileSync(warehouse).subarray(0, 200));
    const error = await failure(records(cut, 'parquet'));
    expect([error.code, error.message.includes(cut)]).toEqual(['INPUT_UNREADABLE', true]);
  });

  it('gzipped Parquet and Parquet on stdin are refused with the fix', async () => {
    const gz = file('w.parquet.gz');
    await new Promise<void>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const zip = createGzip();
      zip.on('data', (c: Buffer) => chunks.push(c));
      zip.on('end', () => {
        writeFileSync(gz, Buffer.concat(chunks));
        resolve();
      });
      zip.on('error', reject);
      zip.end(readFileSync(warehouse));
    });
    expect((await failure(records(gz, 'parquet'))).message).toContain('decompress the file first');
    const input = await openInput('-', Readable.from([readFileSync(warehouse)]));
    const stdin = readRecords(input, 'parquet', { delimiter: ',', columns: undefined });
    expect((await failure(stdin.next())).message).toContain('stdin');
  });
});

describe('Ion (DynamoDB ION exports)', () => {
  const exportText = [
    '$ion_1_0 {Item:{"pk":"a","Id":103.,"Price":20.50,"Tags":$dynamodb_SS::["x","y"],"Raw":{{AQI=}}}}',
    '$ion_1_0 {Item:{"pk":"b","Nums":$dynamodb_NS::[1.0,12345678901234567890123456789.5]}}',
    '$ion_1_0 {Item:{"pk":"c", oops}}',
    '',
    '$ion_1_0 {Item:{"pk":"d","Deep":{"l":[null,true]}}}',
  ].join('\n');

  it('a gzipped ION export reads item by item, a bad line is a reject at its line', async () => {
    const path = file('data.ion.gz');
    await new Promise<void>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const zip = createGzip();
      zip.on('data', (c: Buffer) => chunks.push(c));
      zip.on('end', () => {
        writeFileSync(path, Buffer.concat(chunks));
        resolve();
      });
      zip.on('error', reject);
      zip.end(exportText);
    });
    const results = await planned(path);
    expect(items(results)).toEqual([
      { pk: 'a', Id: n('103'), Price: n('20.5'), Tags: new Set(['x', 'y']), Raw: new Uint8Array([1, 2]) },
      { pk: 'b', Nums: new Set([n('1'), n('12345678901234567890123456789.5')]) },
      { pk: 'd', Deep: { l: [null, true] } },
    ]);
    const rejects = results.filter(isRejected);
    expect(rejects.map((r) => [r.origin.line, r.code, r.origin.raw])).toEqual([[3, 'ION_SYNTAX', '$ion_1_0 {Item:{"pk":"c", oops}}']]);
  });

  it('is found by "$ion_1_0" under any name, zstd-compressed too', async () => {
    expect(items(await planned(file('part-0000', zstd(exportText))))).toHaveLength(3);
  });

  it('binary Ion is refused with a message, not read as text', async () => {
    const path = file('bin.data', Buffer.from([0xe0, 0x01, 0x00, 0xea, 0x0f]));
    expect((await failure(records(path))).message).toContain('binary Amazon Ion');
  });
});

describe('format from the first bytes', () => {
  it('DynamoDB JSON lines and plain JSON lines are told apart; CSV needs its extension or the flag', async () => {
    const input1 = await openInput(file('a.dat', '{"Item":{"pk":{"S":"a"}}}\n'));
    expect(await detectFormat(input1)).toBe('ddb-json');
    input1.stream.destroy();
    const input2 = await openInput(file('b.dat', '{"pk":"a"}\n'));
    expect(await detectFormat(input2)).toBe('jsonl');
    input2.stream.destroy();
    const input3 = await openInput(file('c.dat', 'pk,qty\n'));
    const error = await failure(detectFormat(input3));
    expect([error.code, error.message.includes('--input-format')]).toEqual(['INVALID_OPTION', true]);
  });

  it('the bytes peeked to decide stay in the input: the first row is read', async () => {
    const rows = await records(file('d.dat', '{"pk":"first"}\n{"pk":"second"}\n'));
    expect(rows.map((r) => r.origin.raw)).toEqual(['{"pk":"first"}', '{"pk":"second"}']);
  });
});
