/**
 * Parquet inputs are made by the tests themselves (hyparquet-writer), so no binary fixture has to be
 * trusted there. zstd and bzip2 files are committed with their script (scripts/makeFormatFixtures.sh):
 * Node has no bzip2 encoder, and no zstd encoder before 22.15.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as zlib from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { SchemaElement } from 'hyparquet';

export interface ParquetColumn {
  name: string;
  data: unknown[];
}

/** Writes a Parquet file with an explicit schema (root first), `rowGroupSize` rows per group. */
export function writeParquet(path: string, columns: ParquetColumn[], schema: SchemaElement[], options: { rowGroupSize?: number; codec?: string } = {}): void {
  const buffer = parquetWriteBuffer({
    columnData: columns as never,
    schema: schema as never,
    rowGroupSize: options.rowGroupSize ?? 1000,
    ...(options.codec ? { codec: options.codec as never, compressors: WRITE_COMPRESSORS as never } : {}),
  });
  writeFileSync(path, new Uint8Array(buffer));
}

/** Page compressors for hyparquet-writer (it has only snappy of its own), from Node's zlib. */
const WRITE_COMPRESSORS = {
  GZIP: (input: Uint8Array) => new Uint8Array(zlib.gzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(zlib.brotliCompressSync(input)),
  ZSTD: (input: Uint8Array) => new Uint8Array(zstd(Buffer.from(input))),
};

/**
 * `data` compressed with zstd, read from a committed file named by the SHA-256 of `data`
 * (test/fixtures/zstd/), so every Node reads the same bytes and Node 20 (no zstd encoder before 22.15)
 * needs no zstd command either. An input with no file yet fails saying how to make it:
 * DDB_SPREAD_WRITE_FIXTURES=1 writes the missing files with Node's encoder or the zstd command, with the
 * content checksum on, as the zstd command writes by default (libzstd alone leaves it out).
 */
export function zstd(data: string | Buffer): Buffer {
  const input = Buffer.from(data);
  const path = fileURLToPath(new URL(`${ZSTD_FIXTURES}/${zstdFixtureName(input)}`, import.meta.url));
  if (existsSync(path)) return readFileSync(path);
  if (process.env['DDB_SPREAD_WRITE_FIXTURES'] !== '1')
    throw new Error(
      `no zstd fixture ${path} for this ${input.length}-byte input: run the test once with DDB_SPREAD_WRITE_FIXTURES=1 ` +
        '(Node 22.15+ or the zstd command) and commit the new file (scripts/makeFormatFixtures.sh remakes them all)',
    );
  const made = zstdEncode(input);
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, made);
  renameSync(temporary, path);
  return made;
}

/** Where the committed zstd files are, from this file. */
const ZSTD_FIXTURES = '../fixtures/zstd';

/** The name of the committed zstd file of `input`: the first 16 hex digits of its SHA-256. */
export function zstdFixtureName(input: Buffer): string {
  return `${createHash('sha256').update(input).digest('hex').slice(0, 16)}.zst`;
}

/** The folder of the committed zstd files. */
export const zstdFixturesDir = (): string => fileURLToPath(new URL(ZSTD_FIXTURES, import.meta.url));

/** zstd with Node's own encoder (Node 22.15+), else the zstd command; both with the content checksum. */
function zstdEncode(input: Buffer): Buffer {
  const compress = (zlib as unknown as { zstdCompressSync?: (b: Buffer, o: object) => Buffer }).zstdCompressSync;
  if (compress) return compress(input, { params: { [ZSTD_C_CHECKSUM_FLAG]: 1 } });
  return execFileSync('zstd', ['-q', '-c'], { input, maxBuffer: 1024 * 1024 * 1024 });
}

/** libzstd's ZSTD_c_checksumFlag (zlib.constants has it from Node 22.15 only, as the encoder). */
const ZSTD_C_CHECKSUM_FLAG = 201;

/** The schema elements of the kinds of column a warehouse writes, for one file that holds them all. */
export const WAREHOUSE_SCHEMA: SchemaElement[] = [
  { name: 'schema', num_children: 14 },
  { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'i32', type: 'INT32', repetition_type: 'OPTIONAL' },
  { name: 'i64', type: 'INT64', repetition_type: 'OPTIONAL' },
  { name: 'price', type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, converted_type: 'DECIMAL', scale: 4, precision: 38, repetition_type: 'OPTIONAL' },
  { name: 'cents', type: 'INT64', converted_type: 'DECIMAL', scale: 2, precision: 18, repetition_type: 'OPTIONAL' },
  { name: 'f32', type: 'FLOAT', repetition_type: 'OPTIONAL' },
  { name: 'f64', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
  { name: 'active', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
  { name: 'blob', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
  { name: 'at', type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' }, repetition_type: 'OPTIONAL' },
  { name: 'day', type: 'INT32', converted_type: 'DATE', repetition_type: 'OPTIONAL' },
  { name: 'tags', converted_type: 'LIST', num_children: 1, repetition_type: 'OPTIONAL' },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'dims', num_children: 2, repetition_type: 'OPTIONAL' },
  { name: 'w', type: 'INT32', converted_type: 'DECIMAL', scale: 1, precision: 9, repetition_type: 'OPTIONAL' },
  { name: 'unit', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'note', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
];

/** Three rows over every column of WAREHOUSE_SCHEMA, the third mostly null. */
export const WAREHOUSE_COLUMNS: ParquetColumn[] = [
  { name: 'pk', data: ['a', 'b', 'c'] },
  { name: 'i32', data: [-2147483648, 7, null] },
  { name: 'i64', data: [9007199254740993n, -9223372036854775808n, null] },
  { name: 'price', data: [12345678901234567890123456789012345678n, -5n, null] },
  { name: 'cents', data: [123456789012345678n, 100n, null] },
  { name: 'f32', data: [0.1, 1.5, null] },
  { name: 'f64', data: [0.1, 2 ** 53 + 2, null] },
  { name: 'active', data: [true, false, null] },
  { name: 'blob', data: [new Uint8Array([0, 1, 255]), new Uint8Array([]), null] },
  { name: 'at', data: [1_705_326_300_123_456n, 0n, null] },
  { name: 'day', data: [19737, 0, null] },
  { name: 'tags', data: [['x', 'y'], [], null] },
  { name: 'dims', data: [{ w: 125n, unit: 'cm' }, { w: null, unit: 'in' }, null] },
  { name: 'note', data: ['héllo ✓', '', null] },
];

/**
 * A small Parquet file (2,000 rows of a string key, an optional INT32 and a BOOLEAN, two
 * row groups) and the same file with one bit flipped in the first data page's header (byte 18, 0x80),
 * which sends hyparquet 1.31.5's decoder into a loop that never ends (found by flipping every byte of the
 * header region in a child process with a time limit).
 */
export function hangingParquet(): { good: Buffer; corrupt: Buffer; rows: number } {
  const rows = 2000;
  const good = Buffer.from(
    parquetWriteBuffer({
      columnData: [
        { name: 'pk', data: Array.from({ length: rows }, (_, i) => `k${i}`), type: 'STRING' },
        { name: 'n', data: Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : i)), type: 'INT32' },
        { name: 'b', data: Array.from({ length: rows }, (_, i) => i % 3 === 0), type: 'BOOLEAN' },
      ] as never,
      rowGroupSize: 1000,
    }),
  );
  const corrupt = Buffer.from(good);
  corrupt[18]! ^= 0x80;
  return { good, corrupt, rows };
}
