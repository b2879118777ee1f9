/**
 * The first-write bench's key-mixed inputs: rows in time order, as an event log or a table dumped by
 * date is, so consecutive rows hit different partition keys. FLIGHTS_KEYS keys with Zipf weights
 * rank^-FLIGHTS_SKEW (the flights-like data of data.ts), each row's key drawn at random from them, and
 * each key's sort keys ascending. The same columns as data.ts (pk,sk,status,amount,qty,payload), with a
 * short payload: ~75 bytes a row, near the real flights file's 48, since how soon writing starts and what
 * it holds depend on bytes read. From those rows: one CSV, the same rows cut into CSV parts (each a
 * stretch of time), one gzip file, and a DynamoDB export of the same keys. Deterministic for (rows, seed).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { gzipSync, constants as zlib, createGzip } from 'node:zlib';
import { mulberry32 as prng } from '../tools/mulberry32.js';
import { apportion, byShuffledId, FLIGHTS_KEYS, FLIGHTS_SKEW, type DataFile } from './data.js';

const HEADER = 'pk,sk,status,amount,qty,payload\n';
const WORDS = 'parcel shipped warehouse express gift fragile return label note door signature priority economy pallet invoice courier'.split(' ');
const STATUSES = ['DELIVERED', 'DELIVERED', 'SHIPPED', 'PAID', 'PENDING', 'CANCELLED'];

interface MixedRow {
  pk: string;
  sk: string;
  status: string;
  amount: string;
  qty: number;
  payload: string;
}

const keyName = (id: number) => `ORIGIN#${String(id).padStart(3, '0')}`;

function row(pk: string, seq: number, random: () => number): MixedRow {
  let payload = WORDS[Math.floor(random() * WORDS.length)]!;
  for (let n = 2 + Math.floor(random() * 3); n > 0; n--) payload += ` ${WORDS[Math.floor(random() * WORDS.length)]!}`;
  return {
    pk,
    sk: `ORDER#${String(seq).padStart(7, '0')}`,
    status: STATUSES[Math.floor(random() * STATUSES.length)]!,
    amount: (random() * 1000).toFixed(2),
    qty: 1 + Math.floor(random() * 20),
    payload,
  };
}

const csvLine = (r: MixedRow) => `${r.pk},${r.sk},${r.status},${r.amount},${r.qty},${r.payload}\n`;

/** Zipf weights rank^-FLIGHTS_SKEW, with ranks mapped to key ids by a seeded shuffle (as data.ts). */
function keyWeights(random: () => number): number[] {
  return byShuffledId(
    Array.from({ length: FLIGHTS_KEYS }, (_, i) => (i + 1) ** -FLIGHTS_SKEW),
    random,
  );
}

/** `rows` rows in time order: each one's key drawn from the weights, so runs of one key are rare and short. */
function* timeOrderedRows(rows: number, seed: number): Generator<MixedRow> {
  const random = prng(seed);
  const weights = keyWeights(random);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) cumulative.push((sum += w / total));
  const seq = new Array<number>(weights.length).fill(0);
  for (let i = 0; i < rows; i++) {
    const u = random();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    yield row(keyName(lo), ++seq[lo]!, random);
  }
}

async function writeLines(out: Writable, lines: Iterable<string>): Promise<void> {
  let buffer: string[] = [];
  const flush = async () => {
    if (!out.write(buffer.join(''))) await new Promise<void>((r) => out.once('drain', () => r()));
    buffer = [];
  };
  for (const line of lines) {
    buffer.push(line);
    if (buffer.length === 2_000) await flush();
  }
  await flush();
}

const ended = (out: WriteStream) => new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));

function* csvOf(rows: Iterable<MixedRow>): Generator<string> {
  yield HEADER;
  for (const r of rows) yield csvLine(r);
}

export interface MixedInput {
  path: string;
  rows: number;
  bytes: number;
}

/** One CSV of `rows` time-ordered rows, with its keys' figures as data.ts gives them (for the instant-sink bench). */
export async function generateTimeOrderedCsv(path: string, rows: number, seed: number): Promise<DataFile> {
  const out = createWriteStream(path);
  const perKey = new Map<string, number>();
  const counted = function* () {
    for (const r of timeOrderedRows(rows, seed)) {
      perKey.set(r.pk, (perKey.get(r.pk) ?? 0) + 1);
      yield r;
    }
  };
  await writeLines(out, csvOf(counted()));
  await ended(out);
  const [hotKey, hotRows] = [...perKey].reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0]);
  return { path, rows, bytes: (await stat(path)).size, hotKey, hotRows, customersWithRows: perKey.size };
}

/** The same rows gzip-compressed (level 1: decompression costs the same at any level, and it is quicker to make). */
export async function generateTimeOrderedGzip(path: string, rows: number, seed: number): Promise<MixedInput> {
  const out = createWriteStream(path);
  const gzip = createGzip({ level: 1, chunkSize: 64 * zlib.Z_DEFAULT_CHUNK });
  gzip.pipe(out);
  const closed = new Promise<void>((resolve, reject) => {
    out.once('close', resolve);
    out.once('error', reject);
  });
  await writeLines(gzip, csvOf(timeOrderedRows(rows, seed)));
  gzip.end();
  await closed;
  return { path, rows, bytes: (await stat(path)).size };
}

/** The same rows cut into `parts` CSV files in a folder, each a stretch of time (so each part has the keys mixed). */
export async function generateTimeOrderedParts(dir: string, rows: number, parts: number, seed: number): Promise<MixedInput> {
  await mkdir(dir, { recursive: true });
  const all = timeOrderedRows(rows, seed);
  let bytes = 0;
  for (let p = 0; p < parts; p++) {
    const take = Math.floor(((p + 1) * rows) / parts) - Math.floor((p * rows) / parts);
    const path = join(dir, `part-${String(p).padStart(5, '0')}.csv`);
    const out = createWriteStream(path);
    await writeLines(out, csvOf(taken(all, take)));
    await ended(out);
    bytes += (await stat(path)).size;
  }
  return { path: dir, rows, bytes };
}

function* taken<T>(from: Iterator<T>, n: number): Generator<T> {
  for (let i = 0; i < n; i++) {
    const next = from.next();
    if (next.done) return;
    yield next.value;
  }
}

/**
 * A full DynamoDB export (AWS Developer Guide, "DynamoDB table export output format"; the layout of
 * test/support/exportFixture.ts): `<dir>/AWSDynamoDB/<ExportId>/` with manifest-summary.json,
 * manifest-files.json and `files` data/*.json.gz of {"Item":...} lines. The export scans the table, so a
 * data file holds whole partition keys, each key's items together in sort key order: the keys are
 * spread over the files (by key id), not mixed within one. `rows` items over the same weighted keys.
 * Resolves with the export folder.
 */
export async function generateExport(dir: string, rows: number, files: number, seed: number): Promise<MixedInput> {
  const random = prng(seed);
  const perKey = apportion(keyWeights(random), rows);
  const id = `${String(10_000_000_000_000 + Math.floor(random() * 89_999_999_999_999))}-${randomBytes(4).toString('hex')}`;
  const folder = join(dir, 'AWSDynamoDB', id);
  await mkdir(join(folder, 'data'), { recursive: true });
  const manifestLines: string[] = [];
  let bytes = 0;
  for (let f = 0; f < files; f++) {
    const lines: string[] = [];
    for (let key = f; key < perKey.length; key += files) {
      for (let seq = 1; seq <= perKey[key]!; seq++) lines.push(exportLine(row(keyName(key), seq, random)));
    }
    const body = gzipSync(Buffer.from(lines.join('')), { level: 1 });
    const name = `${randomBytes(8).toString('hex')}${f}.json.gz`;
    const key = `bench/AWSDynamoDB/${id}/data/${name}`;
    await writeFile(join(folder, 'data', name), body);
    bytes += body.length;
    const md5 = createHash('md5').update(body);
    manifestLines.push(JSON.stringify({ itemCount: lines.length, md5Checksum: md5.copy().digest('base64'), etag: md5.digest('hex'), dataFileS3Key: key }));
  }
  await writeFile(join(folder, 'manifest-files.json'), `${manifestLines.join('\n')}\n`);
  await writeFile(
    join(folder, 'manifest-summary.json'),
    JSON.stringify({
      version: '2023-08-01',
      exportArn: `arn:aws:dynamodb:us-east-1:123456789012:table/Source/export/${id}`,
      tableArn: 'arn:aws:dynamodb:us-east-1:123456789012:table/Source',
      exportTime: '2026-11-01T00:00:00.000Z',
      s3Bucket: 'source-bucket',
      s3Prefix: 'bench',
      manifestFilesS3Key: `bench/AWSDynamoDB/${id}/manifest-files.json`,
      itemCount: rows,
      outputFormat: 'DYNAMODB_JSON',
      exportType: 'FULL_EXPORT',
    }),
  );
  return { path: folder, rows, bytes };
}

function exportLine(r: MixedRow): string {
  const item = { pk: { S: r.pk }, sk: { S: r.sk }, status: { S: r.status }, amount: { N: r.amount }, qty: { N: String(r.qty) }, payload: { S: r.payload } };
  return `${JSON.stringify({ Item: item })}\n`;
}
