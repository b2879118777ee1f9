/**
 * Deterministic bench data: a CSV of orders shaped like a database export, sorted by pk then sk, with
 * skewed partition keys (2,000 customers, one holding ~10% of the rows, the rest Zipf-like) and ~200-byte
 * text payloads, some of them quoted. Same (rows, seed) => same bytes.
 *
 *   tsx bench/data.ts out.csv 200000 [seed]
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { mulberry32 as prng } from '../tools/mulberry32.js';

export const CUSTOMERS = 2_000;
export const HOT_SHARE = 0.1;

/**
 * Rows per customer: one hot customer with HOT_SHARE of the rows, the rest Zipf-like (s = 0.8) over the
 * other customers; rounded by largest remainder so the counts add up to `rows` exactly. Ranks are mapped
 * to customer ids by a seeded shuffle, so the hot key sits somewhere in the middle of the sorted file.
 */
function rowsPerCustomer(rows: number, random: () => number): number[] {
  const weights = [HOT_SHARE];
  let zipfSum = 0;
  for (let rank = 1; rank < CUSTOMERS; rank++) zipfSum += rank ** -0.8;
  for (let rank = 1; rank < CUSTOMERS; rank++) weights.push(((1 - HOT_SHARE) * rank ** -0.8) / zipfSum);
  const exact = weights.map((w) => w * rows);
  const counts = exact.map(Math.floor);
  let missing = rows - counts.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of byRemainder) {
    if (missing-- <= 0) break;
    counts[i]!++;
  }
  return byShuffledId(counts, random);
}

/**
 * Rows per key id from rows per rank, ranks mapped to ids by a seeded shuffle: the file is sorted by key
 * id, so the heavy keys land anywhere in it.
 */
export function byShuffledId(byRank: number[], random: () => number): number[] {
  const ids = Array.from({ length: byRank.length }, (_, i) => i);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const perId = new Array<number>(byRank.length).fill(0);
  byRank.forEach((n, rank) => (perId[ids[rank]!] = n));
  return perId;
}

const WORDS = (
  'order parcel shipped warehouse express standard gift wrap fragile return label customer note leave ' +
  'at door signature required handle with care priority economy pallet carton invoice attached tracking ' +
  'updated courier depot delayed weather holiday backorder partial refund exchange size colour blue red ' +
  'large small medium bundle promo discount loyalty points voucher applied'
).split(' ');
const STATUSES = ['DELIVERED', 'DELIVERED', 'DELIVERED', 'SHIPPED', 'SHIPPED', 'PAID', 'PENDING', 'CANCELLED', 'REFUNDED'];

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** ~200 bytes of text; about 1 in 8 holds a comma and 1 in 40 a double quote, so some cells are quoted. */
function payload(random: () => number): string {
  const target = 180 + Math.floor(random() * 41);
  let text = '';
  while (text.length < target) {
    const word = WORDS[Math.floor(random() * WORDS.length)]!;
    text += text === '' ? word : ` ${word}`;
  }
  if (random() < 0.125) text += ', see notes';
  if (random() < 0.025) text += ' "urgent"';
  return text;
}

/**
 * Writes the CSV: perId[id] rows for each key id in turn, sk ascending, so the file is sorted by pk then
 * sk; the row contents come from `random`. Resolves with the key holding the most rows.
 */
async function writeSortedCsv(
  path: string,
  perId: number[],
  keyOf: (id: number) => string,
  random: () => number,
): Promise<{ hotKey: string; hotRows: number }> {
  const out = createWriteStream(path);
  const write = (text: string) => (out.write(text) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r())));
  await write('pk,sk,status,amount,qty,payload\n');
  let lines: string[] = [];
  let hotRows = 0;
  let hotKey = '';
  for (let id = 0; id < perId.length; id++) {
    const n = perId[id]!;
    const pk = keyOf(id);
    if (n > hotRows) [hotRows, hotKey] = [n, pk];
    for (let seq = 1; seq <= n; seq++) {
      const sk = `ORDER#${String(seq).padStart(7, '0')}`;
      const status = STATUSES[Math.floor(random() * STATUSES.length)]!;
      const amount = (random() * 1000).toFixed(2);
      const qty = 1 + Math.floor(random() * 20);
      lines.push(`${pk},${sk},${status},${amount},${qty},${csvCell(payload(random))}\n`);
      if (lines.length === 2_000) {
        await write(lines.join(''));
        lines = [];
      }
    }
  }
  await write(lines.join(''));
  await new Promise<void>((resolveEnd, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolveEnd())));
  return { hotKey, hotRows };
}

export interface DataFile {
  path: string;
  rows: number;
  bytes: number;
  hotKey: string;
  hotRows: number;
  customersWithRows: number;
}

/** Writes a CSV sorted by pk, then sk, as a database export would be. Deterministic for a given (rows, seed). */
export async function generateCsv(path: string, rows: number, seed: number): Promise<DataFile> {
  const random = prng(seed);
  const perId = rowsPerCustomer(rows, random);
  const { hotKey, hotRows } = await writeSortedCsv(path, perId, (id) => `CUST#${String(id).padStart(5, '0')}`, random);
  return { path, rows, bytes: (await stat(path)).size, hotKey, hotRows, customersWithRows: perId.filter((n) => n > 0).length };
}

/**
 * The write-order bench's input (bench/order.ts): a CSV with the same columns and row shape as
 * generateCsv, sorted by pk then sk, whose partition keys are skewed on purpose. A few heavy keys hold
 * SKEWED_HEAVY_SHARES of the rows (10%, 5%, 3%, 2%, 1%: 21% in all); the other 79% form a long tail over
 * rows / SKEWED_ROWS_PER_TAIL_KEY keys with Zipf-Mandelbrot weights (rank + 10)^-1, so at 1M rows the
 * tail runs from ~9,500 rows (0.95%) down to ~5 rows a key. The key count grows with the row count, as
 * it would for a bigger export of the same table. Key ids are shuffled, so the heavy keys sit at random
 * places in the sorted file. Deterministic for a given (rows, seed).
 */
export const SKEWED_HEAVY_SHARES = [0.1, 0.05, 0.03, 0.02, 0.01] as const;
export const SKEWED_ROWS_PER_TAIL_KEY = 50;

export interface SkewedDataFile extends DataFile {
  /** Distinct partition keys with at least one row. */
  keys: number;
  /** Rows of each heavy key, largest first. */
  heavyRows: number[];
}

/** Integer counts proportional to `weights` that add up to `total` exactly (largest remainder). */
export function apportion(weights: number[], total: number): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (w / sum) * total);
  const counts = exact.map(Math.floor);
  let missing = total - counts.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of byRemainder) {
    if (missing-- <= 0) break;
    counts[i]!++;
  }
  return counts;
}

export async function generateSkewedCsv(path: string, rows: number, seed: number): Promise<SkewedDataFile> {
  const random = prng(seed);
  const tailKeys = Math.max(1, Math.round(rows / SKEWED_ROWS_PER_TAIL_KEY));
  const heavyShare = SKEWED_HEAVY_SHARES.reduce((a, b) => a + b, 0);
  const tailWeights = Array.from({ length: tailKeys }, (_, i) => (i + 1 + 10) ** -1);
  const tailSum = tailWeights.reduce((a, b) => a + b, 0);
  const weights = [...SKEWED_HEAVY_SHARES, ...tailWeights.map((w) => ((1 - heavyShare) * w) / tailSum)];
  const byRank = apportion(weights, rows);
  const perId = byShuffledId(byRank, random);

  const { hotKey, hotRows } = await writeSortedCsv(path, perId, (id) => `ACCT#${String(id).padStart(7, '0')}`, random);
  const withRows = perId.filter((n) => n > 0).length;
  return {
    path,
    rows,
    bytes: (await stat(path)).size,
    hotKey,
    hotRows,
    customersWithRows: withRows,
    keys: withRows,
    heavyRows: byRank.slice(0, SKEWED_HEAVY_SHARES.length),
  };
}

/** Partition keys of the flights-like input: 200k real flights rows, measured, had 228 origins. */
export const FLIGHTS_KEYS = 228;
/**
 * Zipf exponent of the flights-like input: rank^-0.5 puts ~3.5% of the rows on the biggest key (the real
 * flights file's biggest origin held 5.6%).
 */
export const FLIGHTS_SKEW = 0.5;
/**
 * Zipf exponent of the instant-sink bench's input: rank^-0.35 puts ~1.9% of the rows on the biggest key.
 * The sink target (at least the hand loop's speed) holds "on key-sorted data whose keys fit under --key-wcu in a proportional schedule".
 * At rank^-0.5 the biggest key (3.5%) needs 1,000 WCU/s once a load runs at ~28,600 items/s, and the hand
 * loop now runs at 28,000-30,000 into the instant sink: that file no longer meets the condition (its key
 * alone takes 6,951 rows / 1,000 WCU/s = 7.0 s of writing, the loop's whole load). At 1.9% every key
 * fits up to ~52,000 items/s.
 */
export const FLIGHTS_FIT_SKEW = 0.35;

/**
 * The bench's flights-like input: the same columns and row shape as generateCsv, sorted by pk
 * then sk, over FLIGHTS_KEYS keys with Zipf weights rank^-skew, shuffled over the key ids.
 */
export async function generateFlightsCsv(path: string, rows: number, seed: number, skew = FLIGHTS_SKEW): Promise<DataFile> {
  const random = prng(seed);
  const byRank = apportion(
    Array.from({ length: FLIGHTS_KEYS }, (_, i) => (i + 1) ** -skew),
    rows,
  );
  const perId = byShuffledId(byRank, random);
  const { hotKey, hotRows } = await writeSortedCsv(path, perId, (id) => `ORIGIN#${String(id).padStart(3, '0')}`, random);
  return { path, rows, bytes: (await stat(path)).size, hotKey, hotRows, customersWithRows: perId.filter((n) => n > 0).length };
}

/**
 * Splits a key-sorted CSV of one line per row (as generateCsv writes it) into `parts` files in `dir`, each
 * with the header, cut at about equal bytes and moved on to the next partition key: Spark's output of a
 * range-partitioned, sorted write (keys ascending from part to part, no key in two parts). Returns the files.
 */
export async function splitSortedCsv(path: string, dir: string, parts: number): Promise<string[]> {
  const size = (await stat(path)).size;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  const files: string[] = [];
  let header: string | undefined;
  let out: WriteStream | undefined;
  let at = 0;
  let lastKey: string | undefined;
  const open = async () => {
    if (out) await new Promise<void>((done) => out!.end(done));
    const file = join(dir, `part-${String(files.length).padStart(5, '0')}.csv`);
    files.push(file);
    out = createWriteStream(file);
    out.write(`${header}\n`);
  };
  for await (const line of lines) {
    if (header === undefined) {
      header = line;
      await open();
      continue;
    }
    const key = line.slice(0, line.indexOf(','));
    if (files.length < parts && at >= (size * files.length) / parts && key !== lastKey) await open();
    if (!out!.write(`${line}\n`)) await new Promise<void>((drained) => out!.once('drain', () => drained()));
    at += Buffer.byteLength(line) + 1;
    lastKey = key;
  }
  await new Promise<void>((done) => out!.end(done));
  return files;
}

/**
 * A key-mixed input shaped like the real flights file (a table dump in date order): columns
 * id,date,delay,distance,origin,destination, rows in time order, each row's origin drawn from FLIGHTS_KEYS
 * keys with Zipf weights rank^-skew (the real file's biggest origin held 5.5%; rank^-0.6 gives ~5%), so
 * every stretch of the file holds most keys. Key: origin (S) + id (N); delay and distance are numbers.
 */
export async function generateMixedFlightsCsv(path: string, rows: number, seed: number, skew = 0.6): Promise<DataFile> {
  const random = prng(seed);
  const weights = Array.from({ length: FLIGHTS_KEYS }, (_, i) => (i + 1) ** -skew);
  const sum = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  weights.reduce((acc, w) => (cumulative.push((acc + w) / sum), acc + w), 0);
  const code = (i: number) => String.fromCharCode(65 + (i % 26), 65 + (Math.floor(i / 26) % 26), 65 + Math.floor(i / 676));
  const out = createWriteStream(path);
  const write = (text: string) => (out.write(text) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r())));
  await write('id,date,delay,distance,origin,destination\n');
  const perKey = new Array<number>(FLIGHTS_KEYS).fill(0);
  const start = Date.UTC(2001, 0, 1);
  let lines: string[] = [];
  for (let id = 0; id < rows; id++) {
    const u = random();
    let k = 0;
    while (cumulative[k]! < u && k < FLIGHTS_KEYS - 1) k++;
    perKey[k]!++;
    const date = new Date(start + Math.floor((id / rows) * 365 * 86_400_000)).toISOString();
    const delay = Math.floor(random() * 120) - 20;
    const distance = 50 + Math.floor(random() * 2500);
    lines.push(`${id},${date},${delay},${distance},${code(k)},${code(Math.floor(random() * FLIGHTS_KEYS))}\n`);
    if (lines.length === 2_000) {
      await write(lines.join(''));
      lines = [];
    }
  }
  await write(lines.join(''));
  await new Promise<void>((resolveEnd, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolveEnd())));
  const hotRows = Math.max(...perKey);
  return { path, rows, bytes: (await stat(path)).size, hotKey: code(perKey.indexOf(hotRows)), hotRows, customersWithRows: perKey.filter((n) => n > 0).length };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [out, rows = '200000', seed = '20240601'] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/data.ts out.csv [rows] [seed]');
  const file = await generateCsv(resolve(out), Number(rows), Number(seed));
  process.stdout.write(`${JSON.stringify(file)}\n`);
}
