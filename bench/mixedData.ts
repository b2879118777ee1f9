/**
 * The first-write bench's key-mixed inputs: rows in time order, as an event log or a table dumped by
 * date is, so consecutive rows hit different partition keys. FLIGHTS_KEYS keys with Zipf weights
 * rank^-FLIGHTS_SKEW (the flights-like data of data.ts), each row's key drawn at random from them, and
 * each key's sort keys ascending. The same columns as data.ts (pk,sk,status,amount,qty,payload), with a
 * short payload: ~75 bytes a row, near the real flights file's 48, since how soon writing starts and what
 * it holds depend on bytes read. From those rows: one CSV, the same rows cut into CSV parts (each a
 * stretch of time), one gzip file, a DynamoDB export of the same keys, and that export followed by
 * incremental exports (an export chain). The rows are deterministic for (rows, seed); the files' names are not.
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
  return (await writeFullExport(dir, rows, files, seed)).input;
}

/** generateExport's export, and its items per key id (key k holds sort keys 1..perKey[k]). */
async function writeFullExport(dir: string, rows: number, files: number, seed: number): Promise<{ input: MixedInput; perKey: number[] }> {
  const random = prng(seed);
  const perKey = apportion(keyWeights(random), rows);
  const id = exportId(random);
  // One file's lines at a time: the whole export's would be several times the heap at 3M rows.
  const fileLines = function* () {
    for (let f = 0; f < files; f++) {
      const lines: string[] = [];
      for (let key = f; key < perKey.length; key += files) {
        for (let seq = 1; seq <= perKey[key]!; seq++) lines.push(`${JSON.stringify({ Item: itemOf(row(keyName(key), seq, random)) })}\n`);
      }
      yield lines;
    }
  };
  const bytes = await writeExportFolder(dir, id, fileLines(), { exportTime: CHAIN_START.toISOString(), exportType: 'FULL_EXPORT' });
  return { input: { path: join(dir, 'AWSDynamoDB', id), rows, bytes }, perKey };
}

/** The chain's full export is the table at this instant; incremental i (from 1) covers the hour i-1 to i after it. */
const CHAIN_START = new Date('2026-11-01T00:00:00.000Z');
const hourAfterStart = (h: number) => new Date(CHAIN_START.getTime() + h * 3_600_000);

/** ExportIds start with 14 digits then 8 hex; random here so that the folders' name order says nothing of the chain's. */
const exportId = (random: () => number) => `${String(10_000_000_000_000 + Math.floor(random() * 89_999_999_999_999))}-${randomBytes(4).toString('hex')}`;

/**
 * `<dir>/AWSDynamoDB/<id>/`: each of `fileLines` as one data/*.json.gz (level 1), manifest-files.json
 * with each file's itemCount, MD5 and key, and manifest-summary.json with the common fields plus
 * `summary` (the type and the export's time or window). Resolves with the data files' bytes.
 */
async function writeExportFolder(dir: string, id: string, fileLines: Iterable<string[]>, summary: Record<string, string>): Promise<number> {
  const folder = join(dir, 'AWSDynamoDB', id);
  await mkdir(join(folder, 'data'), { recursive: true });
  const manifestLines: string[] = [];
  let bytes = 0;
  let items = 0;
  let f = 0;
  for (const lines of fileLines) {
    const body = gzipSync(Buffer.from(lines.join('')), { level: 1 });
    const name = `${randomBytes(8).toString('hex')}${f++}.json.gz`;
    const key = `bench/AWSDynamoDB/${id}/data/${name}`;
    await writeFile(join(folder, 'data', name), body);
    bytes += body.length;
    items += lines.length;
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
      ...summary,
      s3Bucket: 'source-bucket',
      s3Prefix: 'bench',
      manifestFilesS3Key: `bench/AWSDynamoDB/${id}/manifest-files.json`,
      itemCount: items,
      outputFormat: 'DYNAMODB_JSON',
    }),
  );
  return bytes;
}

export interface ExportChain extends MixedInput {
  /** The export folders in chain order: the full export, then each incremental. */
  exports: string[];
  /** Each incremental's change records, and how many of them are deletes. */
  incrementals: { records: number; deletes: number }[];
}

/** The benches' export chain: two incrementals of 15% and 12% of the full export's items (150k and 120k change records on 1M). */
export const chainChanges = (rows: number): number[] => [0.15, 0.12].map((share) => Math.round(rows * share));

/** Of an incremental's change records: new items (a sort key past the key's last), deletes of items there, the rest updates. */
const INSERT_SHARE = 0.15;
const DELETE_SHARE = 0.15;

/**
 * An incremental export chain (REFERENCE.md, "Export chains"; the layout of exportFixture.ts's
 * chainExports): generateExport's full export of `rows` items at 2026-11-01T00:00Z, then one
 * incremental export per entry of `changes`, each that many change records over the hour after the
 * previous one (exportFromTime inclusive, exportToTime exclusive, outputView NEW_AND_OLD_IMAGES), all
 * under `<dir>/AWSDynamoDB/`. Compacted as DynamoDB writes them: one record per item changed in the
 * window, {"Metadata":{"WriteTimestampMicros"},"Keys","NewImage"?,"OldImage"?}, a delete without
 * NewImage. The items changed are drawn by key weight (a key with more items has more changes): updates
 * of items there, new items, deletes; an item deleted in one window may come back in the next. A
 * record's OldImage is the item as the previous incremental left it, or a made-up one for an item of
 * the full export (the loader writes NewImage or deletes Keys and never reads OldImage; it is there for
 * its bytes). Each incremental's data files hold whole keys, as the full export's. Resolves with the
 * folder that holds every export (a load of it reads them in chain order) and rows = every line.
 */
export async function generateExportChain(dir: string, rows: number, files: number, changes: number[], seed: number): Promise<ExportChain> {
  const full = await writeFullExport(dir, rows, files, seed);
  const perKey = full.perKey;
  /** The key's highest sort key so far (new items go past it), the items deleted and the last image written of each changed item. */
  const top = [...perKey];
  const deleted = new Set<string>();
  const latest = new Map<string, Record<string, unknown>>();
  const cumulative: number[] = [];
  let sum = 0;
  for (const n of perKey) cumulative.push((sum += n / rows));
  const exports = [full.input.path];
  const incrementals: ExportChain['incrementals'] = [];
  let bytes = full.input.bytes;
  for (const [w, count] of changes.entries()) {
    const random = prng(seed + 1 + w);
    const id = exportId(random);
    const fromMicros = hourAfterStart(w).getTime() * 1000;
    const records: { key: number; seq: number; line: string }[] = [];
    const touched = new Set<string>();
    let deletes = 0;
    while (records.length < count) {
      const key = pick(cumulative, random());
      const u = random();
      const seq = u < INSERT_SHARE ? ++top[key]! : 1 + Math.floor(random() * top[key]!);
      const itemId = `${key}/${seq}`;
      if (touched.has(itemId)) continue;
      touched.add(itemId);
      const there = seq <= perKey[key]! || latest.has(itemId) ? !deleted.has(itemId) : false;
      const r = row(keyName(key), seq, random);
      const keys = { pk: { S: r.pk }, sk: { S: r.sk } };
      const old = there ? (latest.get(itemId) ?? itemOf(row(keyName(key), seq, random))) : undefined;
      const remove = there && u >= INSERT_SHARE && u < INSERT_SHARE + DELETE_SHARE;
      const image = remove ? undefined : itemOf(r);
      if (remove) {
        deleted.add(itemId);
        latest.delete(itemId);
        deletes++;
      } else {
        deleted.delete(itemId);
        latest.set(itemId, image!);
      }
      const record = {
        Metadata: { WriteTimestampMicros: { N: String(fromMicros + Math.floor((records.length * 3_600_000_000) / count)) } },
        Keys: keys,
        ...(image ? { NewImage: image } : {}),
        ...(old ? { OldImage: old } : {}),
      };
      records.push({ key, seq, line: `${JSON.stringify(record)}\n` });
    }
    const fileLines: string[][] = Array.from({ length: files }, () => []);
    for (const r of records.sort((a, b) => a.key - b.key || a.seq - b.seq)) fileLines[r.key % files]!.push(r.line);
    bytes += await writeExportFolder(dir, id, fileLines, {
      exportFromTime: hourAfterStart(w).toISOString(),
      exportToTime: hourAfterStart(w + 1).toISOString(),
      exportType: 'INCREMENTAL_EXPORT',
      outputView: 'NEW_AND_OLD_IMAGES',
    });
    exports.push(join(dir, 'AWSDynamoDB', id));
    incrementals.push({ records: count, deletes });
  }
  return { path: join(dir, 'AWSDynamoDB'), rows: rows + changes.reduce((a, b) => a + b, 0), bytes, exports, incrementals };
}

/** The index whose cumulative share first reaches u. */
function pick(cumulative: number[], u: number): number {
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function itemOf(r: MixedRow): Record<string, Record<string, string>> {
  return { pk: { S: r.pk }, sk: { S: r.sk }, status: { S: r.status }, amount: { N: r.amount }, qty: { N: String(r.qty) }, payload: { S: r.payload } };
}
