import { open } from 'node:fs/promises';
import pLimit from 'p-limit';
import { compareGroups, groupOf, type RowPlace } from './grouping.js';
import { StripeSchedule } from './stripeSchedule.js';
import type { FilePin } from '../../reading/filePin.js';
import { mayBeCut } from '../../reading/magic.js';
import { eachRecord } from '../../reading/readCsv.js';
import { cutFile, readRange, recordStartAtLine, type ByteRange, type RangeBytes, type RangeReader, type RangeSyntax } from './ranges.js';
import { isRejected, type RowPlanner, type SourceRecord } from '../../typing/planRow.js';
import { keyCellRows, UNCLEAR, type ProbedRow } from './keyCellRows.js';
import { isolateRunningKeys } from './stripeKeys.js';
import type { Piece, Stripe } from './stripeLayout.js';
import { stripeStart, type SetPlace, type StripeCursor } from './stripeResume.js';
import { LoaderError } from '../../shared/errors.js';

/**
 * The default write order's reading (`--order stripes`): one file read at up to MAX_STRIPES points at once,
 * each stripe a run of whole partition keys, the next row always from the stripe furthest behind
 * (StripeSchedule). On a file sorted by key (as exports are), consecutive writes then hit keys from evenly
 * spaced points of the file, every key gets its share of the writes from the first row to the last, and
 * writing starts as soon as the file is cut, with nothing held and nothing spilled: reading overlaps
 * writing. GroupingCheck (src/ordering/stripes/grouping.ts) proves, write by write, that the file is grouped as
 * the cut assumed; load() reads it again in round-robin order if it is not.
 *
 * The cut: ranges of equal bytes starting where records start (cutFile); the rows at the head of a
 * range that share the partition key the range starts in belong to the stripe before it (the probe reads
 * them with its own planner), so no key is in two stripes.
 */

/** Stripes of one file at most: a reader each (64 KB read-ahead, a parser). */
export const MAX_STRIPES = 64;
/** Bytes per stripe at least: smaller files are not worth cutting, and round-robin holds them in memory. */
export const MIN_STRIPE_BYTES = 64 * 1024;
/** Record starts the cut marks per range, in the same pass: where stripeKeys.ts's searches start reading. */
const MARKS_PER_RANGE = 16;
/** Rows the probe reads at the head of a range for the key it starts in; beyond, the range joins the stripe before it whole. */
const MAX_HEAD_ROWS = 1_000;

export interface StripedRead {
  /** The rows one by one; or `chunks`, the same in arrays (read one or the other). */
  records: AsyncGenerator<SourceRecord>;
  chunks: AsyncGenerator<SourceRecord[]>;
  /** Stripes (the `part` of each row's origin is one of 0 … parts-1). */
  parts: number;
  bytesRead(): number;
  close(): void;
  /**
   * With restart points (StripeRestart): the point before the array `entry` of `chunks`, if one is there,
   * with each stripe's cursor; `grouping` says where each stripe's grouping check stands (GroupingCheck.places).
   */
  pointAt?(entry: SourceRecord[], grouping: readonly { first: RowPlace | undefined; last: RowPlace | undefined }[]): StripesPoint | undefined;
}

/** A restart point of a striped read: the rows handed on before it, and where each stripe stood. */
export interface StripesPoint {
  row: number;
  cursors: StripeCursor[];
}

/** Restart points of a striped read: made every `every` rows; `from`, the one a resume starts at, with its stripes reopened (resumeStripes). */
export interface StripeRestart {
  every: number;
  from?: StripesPoint & { pieces: Piece[][] };
}

/** The bytes of the rows a resumed read handed on before its point (the schedule's count of them): read, for progress. */
export function bytesBefore(restart: StripeRestart | undefined): number {
  return restart?.from?.cursors.reduce((sum, c) => sum + c.read, 0) ?? 0;
}

/**
 * The merge's record of restart points, and the stripes' chunks read from a resumed point's pieces. `partOf`
 * names the part of the set a file is (0 for one file).
 */
export function stripedChunks(
  stripes: readonly Stripe[],
  openRange: (range: ByteRange, piece: Piece) => RangeReader,
  restart: StripeRestart | undefined,
  partOf: (file: string) => number,
): Pick<StripedRead, 'chunks' | 'pointAt'> {
  const sizes = stripes.map((s) => s.size);
  if (!restart)
    return {
      chunks: merged(
        stripes.map((s) => stripeChunks(s.pieces, openRange)),
        sizes,
      ),
    };
  const reading = stripes.map(() => ({ piece: 0 }));
  const pieces = restart.from?.pieces ?? stripes.map((s) => s.pieces);
  const from = restart.from;
  const track: MergeTrack = {
    every: restart.every,
    stripes,
    reading,
    ...(from ? { from: { row: from.row, cursors: from.cursors } } : {}),
    points: new WeakMap(),
  };
  const place = (row: RowPlace | undefined): SetPlace | undefined =>
    row ? (row.offset === undefined ? [partOf(row.file), row.line] : [partOf(row.file), row.line, row.offset]) : undefined;
  return {
    chunks: merged(
      pieces.map((p, k) => stripeChunks(p, openRange, reading[k])),
      sizes,
      track,
    ),
    pointAt: (entry, grouping) => {
      const point = track.points.get(entry);
      if (!point) return undefined;
      const cursors = point.cursors.map((cursor, k) => {
        const first = place(grouping[k]?.first);
        const last = place(grouping[k]?.last);
        return { ...cursor, ...(first && last ? { first, last } : {}) };
      });
      return { row: point.row, cursors };
    },
  };
}

/**
 * The probe's key of a record: a CSV cell as it is for a string partition key (what typing and an unsharded
 * key make of it), else the planner's write. Cheaper than planning the whole row, and exact where it is used:
 * a probe that disagreed with the planner would make GroupingCheck stop the load, never misorder it.
 */
export function recordGroup(planner: RowPlanner, partitionKey: { name: string; type: string }): (record: SourceRecord) => string | undefined {
  return (record) => {
    if (record.kind === 'csv' && partitionKey.type === 'S') {
      const cell = record.cells[partitionKey.name];
      return cell === undefined || cell === '' ? undefined : `S${cell}`;
    }
    const planned = planner.plan(record);
    return isRejected(planned) ? undefined : groupOf(planned);
  };
}

/** How many stripes a file can be read in (0: it cannot, and is read whole). */
export async function stripeCount(path: string, size: number | undefined, syntax: RangeSyntax, minBytes = MIN_STRIPE_BYTES): Promise<number> {
  if (path === '-' || size === undefined || size < 2 * minBytes) return 0;
  if (syntax.syntax === 'csv' && Buffer.byteLength(syntax.delimiter, 'utf8') !== 1) return 0;
  if (!(await isPlainText(path))) return 0;
  return Math.min(MAX_STRIPES, Math.floor(size / minBytes));
}

/** Compressed files cannot be read from the middle: gzip, zstd, bzip2, xz, and Parquet are not cut. */
async function isPlainText(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(6);
    const { bytesRead } = await handle.read(head, 0, 6, 0);
    return mayBeCut(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** The head of a range: its first `rows` rows share the key the range starts in (all of it when `whole`). */
export interface Head {
  rows: number;
  bytes: number;
  whole: boolean;
  /** The head's key, then the keys of the rows sampled after it, each once, in file order. */
  keys: string[];
  /** The line of the first row past the head (when not `whole`), and its text. */
  nextLine?: number;
  nextRaw?: string;
  /** Where the first row past the head starts, when found (recordStartAtLine): the range is cut there, not counted into. */
  cut?: ByteRange;
}
/** Rows read past a head, to see whether the keys ascend. */
const SAMPLE_ROWS = 64;

/** Where a striped read's stripes lie: what the estimate needs to simulate the read without doing it. */
export interface StripeLayout {
  /** Each stripe's bytes, as StripeSchedule weighs them. */
  sizes: number[];
  /** The line of each stripe's first row (0 for the first stripe: it starts the file). Ascending. */
  firstLines: number[];
  /**
   * The text of each stripe's first row (undefined for the first stripe): a stripe is found by it as well as
   * by its line in a read from the start, should the two counts of lines ever disagree (see cutHead).
   */
  firstRaws: (string | undefined)[];
}

/** The cut of a file into stripes, before any is opened. */
export interface StripePlan {
  stripes: Stripe[];
  layout: StripeLayout;
  /** How the records of each range past the first are read (the columns known). */
  how: RangeSyntax;
}

/**
 * Cuts the file into stripes; undefined when the heads of the ranges show that the file is not grouped by
 * partition key, or when it would make one stripe (it is then read whole, in round-robin order).
 */
export async function planStripes(args: {
  path: string;
  file: string;
  size: number;
  how: RangeSyntax;
  parts: number;
  /** The partition key a record is grouped by (groupOf of its write), or undefined when it has none. */
  probe: (record: SourceRecord) => string | undefined;
  /**
   * CSV with a string partition key: its column, whose cell is the probe's key as it is (recordGroup).
   * The heads are then read by KeyCellScanner, readCsv only where a record is not clear to it.
   */
  keyColumn?: string;
}): Promise<StripePlan | undefined> {
  const { path, file, size, probe } = args;
  if (await headIsMixed(readRange(path, file, { start: 0, end: Math.min(size, MIXED_HEAD_BYTES), line: 1 }, args.how), probe)) return undefined;
  const { ranges, marks } = await cutFile(path, size, args.how, args.parts, MARKS_PER_RANGE);
  const how: RangeSyntax = {
    ...args.how,
    columns: args.how.syntax === 'csv' ? (args.how.columns ?? (await headerOf(path, file, ranges[0]!, args.how))) : undefined,
  };
  // Range 0 is read from its first row on: its head is only sampled for the verdict.
  const heads: Head[] = [{ ...(await headByRows(readRange(path, file, ranges[0]!, args.how), probe)), rows: 0, bytes: 0, whole: false }];
  const headOf = async (range: ByteRange): Promise<Head> =>
    (args.keyColumn !== undefined ? await headByKeyCells(path, range, how, args.keyColumn) : undefined) ??
    (await headByRows(readRange(path, file, range, how), probe));
  // A few at a time: each waits on its reads part of the time.
  const limit = pLimit(4);
  heads.push(...(await Promise.all(ranges.slice(1).map((range) => limit(() => headOf(range))))));
  if (!headsAscending(heads)) return undefined;
  await Promise.all(heads.map((head, k) => (k === 0 ? undefined : limit(() => cutHead(path, file, ranges[k]!, head, how)))));
  const stripes = await isolateRunningKeys(stripesOf(ranges, heads), {
    path,
    file,
    first: args.how,
    how,
    probe,
    marks,
    ...(args.keyColumn !== undefined ? { keyColumn: args.keyColumn } : {}),
  });
  // One stripe would be input order held to a proof it does not need (one huge key, or huge records).
  if (stripes.length < 2) return undefined;
  const layout = { sizes: stripes.map((s) => s.size), firstLines: stripes.map((s) => s.firstLine), firstRaws: stripes.map((s) => s.firstRaw) };
  return { stripes, how, layout };
}

/** The file's first bytes read for headIsMixed, and the rows looked at there at most. */
export const MIXED_HEAD_BYTES = 1024 * 1024;
const MIXED_HEAD_ROWS = 2048;

/**
 * Whether the file's first rows show it is not sorted by partition key: a key that sorts below the one
 * before it (as GroupingCheck compares them). Such a file cannot be read in stripes, whose proof needs the
 * keys of every stripe ascending; found here, before the pass that finds where every record starts (it
 * reads the whole file, about a second per 300 MB), the file streams through the window at once. A file
 * in time order, a log or an export, shows it in its first rows. The last row read is left out: the
 * bytes may end inside it.
 */
export async function headIsMixed(reader: RangeReader, probe: (record: SourceRecord) => string | undefined): Promise<boolean> {
  const groups: (string | undefined)[] = [];
  try {
    for await (const record of reader.records) {
      groups.push(probe(record));
      if (groups.length > MIXED_HEAD_ROWS) break;
    }
  } finally {
    await reader.records.return(undefined);
    reader.close();
  }
  groups.pop();
  for (let i = 1; i < groups.length; i++) {
    const [before, key] = [groups[i - 1], groups[i]];
    if (before !== undefined && key !== undefined && compareGroups(key, before) < 0) return true;
  }
  return false;
}

/**
 * Cuts the file into stripes and opens their reading; undefined when planStripes finds it cannot be
 * read so.
 */
export async function openStripedRead(args: Parameters<typeof planStripes>[0]): Promise<StripedRead | undefined> {
  const plan = await planStripes(args);
  return plan ? readStripes(args.path, args.file, args.size, args.how, plan) : undefined;
}

/**
 * Opens the reading of planned stripes. `first` reads range 0 (its header row, unless --columns names the
 * columns). With the file's pin, every range's bytes are checked against the file as listed.
 */
export function readStripes(
  path: string,
  file: string,
  size: number,
  first: RangeSyntax,
  plan: StripePlan,
  pin?: FilePin,
  restart?: StripeRestart,
): StripedRead {
  const { stripes, how } = plan;
  const readers: RangeReader[] = [];
  const openRange = (range: ByteRange) => {
    // Range 0 reads the header row itself (unless --columns names the columns).
    const reader = readRange(path, file, range, range.start === 0 ? first : how, undefined, pin);
    readers.push(reader);
    return reader;
  };
  const { chunks, pointAt } = stripedChunks(stripes, openRange, restart, () => 0);
  const before = bytesBefore(restart);
  return {
    chunks,
    records: eachRecord(chunks),
    parts: stripes.length,
    ...(pointAt ? { pointAt } : {}),
    // A head not cut at its offset is read twice (and each reader reads a little ahead): progress stops at the file's size.
    bytesRead: () =>
      Math.min(
        size,
        readers.reduce((sum, r) => sum + r.bytesRead(), before),
      ),
    close: () => {
      for (const r of readers) r.close();
    },
  };
}

/**
 * Cuts a range at the first row past its head, so that the head is read by the stripe before it and the
 * rest by its own, each from its own bytes; without the cut (the start was not found), both read the head
 * and count its rows (take, skip).
 */
export async function cutHead(path: string, file: string, range: ByteRange, head: Head, how: RangeSyntax): Promise<void> {
  if (head.whole || head.nextLine === undefined) return;
  const offset = await recordStartAtLine(path, range, head.nextLine, how);
  if (offset === undefined) return;
  const cut = { start: offset, end: range.end, line: head.nextLine };
  // The line is readCsv's count and the offset RecordStartScanner's: the cut stands only where the row that
  // starts there is the one the probe saw first past the head, so a count that ever disagreed (readCsv's ran
  // one short after a blank CRLF line then a blank LF line, until 2026-11-24) refuses the cut instead of
  // making it a row early (the head's last row in the next stripe: its key in two stripes).
  if ((await firstRaw(path, file, cut, how)) !== head.nextRaw) return;
  head.cut = cut;
  head.bytes = offset - range.start;
}

/** The text of the first record of a range, or undefined when it has none. */
async function firstRaw(path: string, file: string, range: ByteRange, how: RangeSyntax): Promise<string | undefined> {
  const reader = readRange(path, file, range, how);
  try {
    const first = await reader.records.next();
    return first.done ? undefined : first.value.origin.raw;
  } finally {
    await reader.records.return(undefined);
    reader.close();
  }
}

/**
 * The stripes: each starts past the head of its first range and takes the heads (or whole ranges) after it
 * that share its last key. `partOf` names the part of a set each range is in (partStripes.ts). Exported
 * for its tests.
 */
export function stripesOf(ranges: ByteRange[], heads: Head[], partOf?: readonly number[]): Stripe[] {
  const inPart = (k: number) => (partOf === undefined ? {} : { part: partOf[k]! });
  const stripes: Stripe[] = [];
  let j = 0;
  while (j < ranges.length) {
    const first = ranges[j]!;
    const cut = heads[j]!.cut;
    const pieces: Piece[] = [
      cut ? { ...inPart(j), range: cut, skip: 0, take: Infinity } : { ...inPart(j), range: first, skip: heads[j]!.rows, take: Infinity },
    ];
    let size = first.end - first.start - heads[j]!.bytes;
    let k = j + 1;
    while (k < ranges.length) {
      const head = heads[k]!;
      const range = ranges[k]!;
      const running = head.keys[0] === undefined ? {} : { running: head.keys[0] };
      if (head.cut) pieces.push({ ...inPart(k), range: { start: range.start, end: head.cut.start, line: range.line }, skip: 0, take: Infinity, ...running });
      else pieces.push({ ...inPart(k), range, skip: 0, take: head.whole ? Infinity : head.rows, ...running, ...(head.whole ? { whole: true as const } : {}) });
      size += head.whole ? range.end - range.start : head.bytes;
      if (!head.whole) break;
      k++;
    }
    // The first row past a range's head starts the stripe (stripe 0 starts the file).
    stripes.push({ pieces, size, firstLine: j === 0 ? 0 : heads[j]!.nextLine!, firstRaw: j === 0 ? undefined : heads[j]!.nextRaw });
    // A range whose head ended starts the next stripe past its head.
    j = k;
  }
  return stripes;
}

/** The header row's names, read from the start of the file. */
export async function headerOf(path: string, file: string, range: ByteRange, how: RangeSyntax, pin?: RangeBytes): Promise<string[]> {
  let names: string[] | undefined;
  const reader = readRange(path, file, range, how, (n) => (names = n), pin);
  try {
    await reader.records.next();
  } finally {
    await reader.records.return(undefined);
    reader.close();
  }
  return names ?? [];
}

/**
 * How many rows at the head of a range share the partition key of its first row (rows that cannot be
 * planned go with them), and the keys of up to SAMPLE_ROWS rows after the head, for the probe's verdict.
 */
async function headFrom(rows: AsyncIterable<ProbedRow>): Promise<Head> {
  const head: Head = { rows: 0, bytes: 0, whole: true, keys: [] };
  let sampled = 0;
  for await (const { group, line, raw } of rows) {
    if (group !== undefined) {
      if (head.keys.length === 0) head.keys.push(group);
      else if (head.whole && group !== head.keys[0]) {
        head.whole = false;
        head.nextLine = line;
        head.nextRaw = raw;
      }
      if (!head.whole) {
        if (group !== head.keys[head.keys.length - 1]) head.keys.push(group);
        if (++sampled >= SAMPLE_ROWS) break;
        continue;
      }
    } else if (!head.whole) continue;
    head.rows++;
    head.bytes += raw.length + 1;
    if (head.rows >= MAX_HEAD_ROWS) break;
  }
  return head;
}

/** A range's head read through readCsv, every row planned by the probe. Exported for its tests. */
export async function headByRows(reader: RangeReader, probe: (record: SourceRecord) => string | undefined): Promise<Head> {
  async function* rows(): AsyncGenerator<ProbedRow> {
    for await (const record of reader.records) yield { group: probe(record), line: record.origin.line, raw: record.origin.raw };
  }
  try {
    return await headFrom(rows());
  } finally {
    await reader.records.return(undefined);
    reader.close();
  }
}

/**
 * A range's head read by KeyCellScanner (keyCellRows), without a record object per row. Undefined where the
 * scanner meets a record that is not clear to it, or cannot be used: headByRows reads the range then. The
 * same head as headByRows's wherever it gives one (test/unit/load/headByKeyCells.test.ts). Exported for its
 * tests.
 */
export async function headByKeyCells(path: string, range: ByteRange, how: RangeSyntax, keyColumn: string): Promise<Head | undefined> {
  const rows = keyCellRows(path, range, how, keyColumn);
  if (rows === undefined) return undefined;
  try {
    return await headFrom(rows);
  } catch (error) {
    if (error === UNCLEAR) return undefined;
    throw error;
  } finally {
    await rows.return(undefined);
  }
}

/**
 * Whether the heads of the ranges look grouped: their keys, range after range, ascending as GroupingCheck
 * requires. A file in no key order fails here, before a row is written, and is read in round-robin order;
 * one that passes is still checked write by write.
 */
export function headsAscending(heads: readonly Head[]): boolean {
  let previous: string | undefined;
  for (const head of heads) {
    for (const key of head.keys) {
      if (previous !== undefined && compareGroups(previous, key) >= 0 && previous !== key) return false;
      previous = key;
    }
  }
  return true;
}

/**
 * The rows of one stripe, in arrays: its pieces in file order. `cursor.piece` is set to the index of the piece
 * each array comes from before it is handed on (a restart point's record of where the stripe stands).
 * (Exported for its tests.)
 */
export async function* stripeChunks(
  pieces: Piece[],
  openRange: (range: ByteRange, piece: Piece) => RangeReader,
  cursor?: { piece: number },
): AsyncGenerator<SourceRecord[]> {
  for (const [p, piece] of pieces.entries()) {
    const reader = openRange(piece.range, piece);
    try {
      let index = 0;
      const end = piece.skip + piece.take;
      for await (const records of reader.chunks) {
        if (index === 0 && piece.expect) expectFirst(records[0], piece.expect, reader);
        const from = Math.max(0, piece.skip - index);
        const to = Math.min(records.length, end - index);
        index += records.length;
        if (cursor) cursor.piece = p;
        if (to > from) yield from === 0 && to === records.length ? records : records.slice(from, to);
        if (index >= end) break;
      }
    } finally {
      reader.close();
    }
  }
}

/** A resumed piece's first record: the row its restart point recorded, on its line at its offset (Piece.expect). */
function expectFirst(record: SourceRecord | undefined, expect: NonNullable<Piece['expect']>, reader: RangeReader): void {
  if (record && record.origin.line === expect.line && record.origin.offset === expect.offset) return;
  reader.close();
  const file = record?.origin.file;
  throw new LoaderError(
    'INPUT_CHANGED',
    `cannot resume inside ${file ?? 'the input'}: no record starts at line ${expect.line} (byte ${expect.offset}), where the checkpoint says one does`,
    { ...(file === undefined ? {} : { file }), line: expect.line },
  );
}

/** Rows the merge hands on at a time: one await per this many rows, not per row (small, as DRAINED_CHUNK in readCsv.ts). */
const MERGED_CHUNK = 16;

/**
 * What a merge records for restart points (stripeResume.ts): every `every` rows handed on, where each
 * stripe stands, kept for the array that starts after the point (`points`). A resumed read starts from the
 * cursors of its point (`from`), each stripe's pieces reopened past its last row (piecesAfter).
 */
export interface MergeTrack {
  /** Rows between points (counted from the input's start). */
  every: number;
  /** Each stripe's pieces as planned: the parts and the starts of the cursors. */
  stripes: readonly Stripe[];
  /** Set by each stripe's stripeChunks: the piece (of the pieces it reads) its last array came from. */
  reading: { piece: number }[];
  /** The point the read resumes from: its row count and cursors; undefined for a read from the start. */
  from?: { row: number; cursors: readonly StripeCursor[] };
  /** The cursors at each point, by the array handed on first after it. */
  points: WeakMap<SourceRecord[], { row: number; cursors: StripeCursor[] }>;
}

/**
 * The stripes' rows merged by the schedule, each marked with its stripe, in arrays: a stripe's next array
 * is awaited only when the rows in hand of that stripe are used up, so the row order is the schedule's
 * alone, whatever the sizes of the arrays. (Exported for its tests.)
 */
export async function* merged(stripes: AsyncGenerator<SourceRecord[]>[], sizes: number[], track?: MergeTrack): AsyncGenerator<SourceRecord[]> {
  const from = track?.from;
  const schedule = new StripeSchedule(
    sizes,
    from?.cursors.map((c) => c.read),
  );
  const held: SourceRecord[][] = stripes.map(() => []);
  const taken: number[] = stripes.map(() => 0);
  // Where each stripe stands, in its planned pieces (a resumed stripe reads from its cursor's piece on).
  const base = stripes.map((_, k) => Math.max(0, from?.cursors[k]?.piece ?? 0));
  const piece = stripes.map((_, k) => from?.cursors[k]?.piece ?? -1);
  const inPiece = stripes.map((_, k) => from?.cursors[k]?.taken ?? 0);
  const at: (SetPlace | undefined)[] = stripes.map((_, k) => from?.cursors[k]?.at);
  let row = from?.row ?? 0;
  const cursors = (): StripeCursor[] =>
    track!.stripes.map((stripe, k) => {
      const read = schedule.reads()[k]!;
      const place = at[k];
      return { start: stripeStart(stripe), piece: piece[k]!, taken: inPiece[k]!, read, ...(place ? { at: place } : {}) };
    });
  let out: SourceRecord[] = [];
  try {
    for (let k = schedule.next(); k !== undefined; k = schedule.next()) {
      if (taken[k]! >= held[k]!.length) {
        const next = await stripes[k]!.next();
        if (next.done) {
          schedule.end(k);
          continue;
        }
        held[k] = next.value;
        taken[k] = 0;
        if (track) {
          const p = base[k]! + track.reading[k]!.piece;
          if (p !== piece[k]) {
            piece[k] = p;
            inPiece[k] = 0;
          }
        }
        if (next.value.length === 0) continue;
      }
      const record = held[k]![taken[k]!++]!;
      record.origin.part = k;
      schedule.advance(k, record.origin.raw.length + 1);
      out.push(record);
      if (track) {
        inPiece[k]!++;
        const { line, offset } = record.origin;
        const part = track.stripes[k]!.pieces[piece[k]!]?.part ?? 0;
        at[k] = offset === undefined ? [part, line] : [part, line, offset];
        if (++row % track.every === 0) {
          // A point: the array ends here, and the next one starts after it.
          yield out;
          out = [];
          track.points.set(out, { row, cursors: cursors() });
          continue;
        }
      }
      if (out.length >= MERGED_CHUNK) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  } finally {
    await Promise.all(stripes.map((s) => s.return(undefined)));
  }
}
