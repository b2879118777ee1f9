import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import pLimit from 'p-limit';
import { bug, LoaderError } from '../../shared/errors.js';
import type { SourceRecord } from '../../typing/planRow.js';
import type { GroupedRow } from './grouping.js';
import type { ByteRange, RangeBytes, RangeSyntax } from './ranges.js';
import { RecordStartScanner } from './recordStarts.js';
import type { Piece, Stripe } from './stripeLayout.js';

/**
 * Restart points of a striped read (src/ordering/stripes/stripedRecords.ts): where each stripe stood when
 * the merge had handed on a given number of rows, so that a resume reads every stripe on from there
 * instead of the input from its start. The merge's order is a function of the file and of each stripe's
 * bytes given so far (StripeSchedule), so a read reopened with those counts, each stripe at the row after
 * its last one given, hands on exactly the rows the first run would have handed on after the point.
 *
 * A place in a set is [part, line]: the part's index in the set and the line a record starts on in it.
 * Stripes lie end to end in that order (each starts past the head of its first range), so a row's stripe
 * is the last one starting at or before it: what a resume needs to know which rejects were the points'.
 * Only numbers are kept, no row's contents: the keys the grouping check needs are read again from the
 * input at the places recorded. A place also keeps the byte its row starts at, so that a resume opens each
 * stripe there at once instead of following the quoting through the piece's bytes up to it (half the input,
 * read again, for a load stopped half way); checkpoints that have no offsets are still found by that scan.
 */

/** A row's place: the part, its line and, where the reader said it (RowOrigin.offset), the byte its line starts at. */
export type SetPlace = [part: number, line: number, offset?: number];

/** Where one stripe stood at a restart point. */
export interface StripeCursor {
  /** Its first row's place (line 0 for the first stripe: the start of the input). */
  start: SetPlace;
  /** The piece its last row handed on came from, and how many of that piece's rows were handed on; -1 and 0: none yet. */
  piece: number;
  taken: number;
  /** The last row handed on; absent when none. */
  at?: SetPlace;
  /** Bytes the schedule counted for it. */
  read: number;
  /** The first and the latest rows the grouping check passed (it compares their partition keys); absent before the first. */
  first?: SetPlace;
  last?: SetPlace;
}

/** Stripe `k`'s first row's place. */
export function stripeStart(stripe: Stripe): SetPlace {
  return [stripe.pieces[0]?.part ?? 0, stripe.firstLine];
}

function compare(a: SetPlace, b: SetPlace): number {
  return a[0] - b[0] || a[1] - b[1];
}

/**
 * Whether the row at `place` was handed on before the point: it lies in the stripe that starts last at or
 * before it, at or before that stripe's last row handed on.
 */
export function handedOnBefore(place: SetPlace, cursors: readonly StripeCursor[]): boolean {
  let stripe: StripeCursor | undefined;
  for (const cursor of cursors) {
    if (compare(cursor.start, place) <= 0) stripe = cursor;
    else break;
  }
  return stripe?.at !== undefined && compare(place, stripe.at) <= 0;
}

/**
 * The pieces a resumed stripe reads: from the row after its last one handed on (the piece read from that
 * row's start, `offset`, the row itself skipped), then the pieces after; all of them when none was handed on.
 * An offset the checkpoint recorded (rather than one found by scanning) is opened a byte early, a line
 * early, and the piece's reader checks that its first record is that row (Piece.expect, placedRecord's proof).
 */
export function piecesAfter(pieces: readonly Piece[], cursor: StripeCursor, offset: number): Piece[] {
  if (cursor.piece < 0) return [...pieces];
  const piece = pieces[cursor.piece];
  if (piece === undefined || cursor.at === undefined) throw new Error(`a stripe's cursor names piece ${cursor.piece} of ${pieces.length}`);
  const line = cursor.at[1];
  const early = cursor.at[2] !== undefined && line > 1 && offset > piece.range.start;
  const range: ByteRange = early ? { start: offset - 1, end: piece.range.end, line: line - 1 } : { start: offset, end: piece.range.end, line };
  const rest: Piece = {
    ...piece,
    range,
    skip: 1,
    take: piece.take === Infinity ? Infinity : piece.take - cursor.taken,
    ...(early ? { expect: { line, offset } } : {}),
  };
  return [rest, ...pieces.slice(cursor.piece + 1)];
}

/** The piece of `stripe` a row at `place` is in: the last one starting at or before it. */
export function pieceAt(stripe: Stripe, place: SetPlace): number {
  let found = -1;
  stripe.pieces.forEach((piece, j) => {
    if (compare([piece.part ?? 0, piece.range.line], place) <= 0) found = j;
  });
  if (found < 0) throw new Error(`no piece of the stripe starting at line ${stripe.firstLine} holds line ${place[1]} of part ${place[0]}`);
  return found;
}

/** How a resume reads a part's bytes: its pinned bytes (a FilePin, an S3 object's), or a local path. */
export type PartBytes = RangeBytes | string;

function open(bytes: PartBytes, range: ByteRange, chunk: number): Readable {
  return typeof bytes === 'string'
    ? createReadStream(bytes, { start: range.start, end: range.end - 1, highWaterMark: chunk })
    : bytes.open(range.start, range.end, chunk);
}

const SCAN_CHUNK = 256 * 1024;

/**
 * Where each of `lines` starts in `range` (each the line a record starts on, at or after the range's
 * start, which is a record start): RecordStartScanner follows the quoting from the range's start, as the
 * cut of the range did, over the bytes up to the last line; no row is parsed. A line where no record starts
 * means the input is not the one the checkpoint read: an error, never a guess.
 */
export async function offsetsOfLines(
  bytes: PartBytes,
  file: string,
  range: ByteRange,
  lines: readonly number[],
  how: Pick<RangeSyntax, 'syntax' | 'delimiter'>,
): Promise<Map<number, number>> {
  const found = new Map<number, number>();
  const targets = [...new Set(lines)].sort((a, b) => a - b);
  for (const line of targets) if (line <= range.line) found.set(line, range.start);
  const after = targets.filter((line) => line > range.line).map((line) => line - range.line + 1);
  if (after.length > 0) {
    const scanner = new RecordStartScanner(how.syntax, after, Buffer.from(how.delimiter, 'utf8')[0], { byLine: true, atFileStart: range.start === 0 });
    const stream = open(bytes, range, SCAN_CHUNK);
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        scanner.feed(chunk);
        if (scanner.done) break;
      }
    } finally {
      stream.destroy();
    }
    scanner.end();
    // One start a target, in order: the first record start on or after its line, which must be on the line itself.
    scanner.starts.forEach((start, i) => {
      if (start.line === after[i] && start.offset < range.end - range.start) found.set(start.line + range.line - 1, range.start + start.offset);
    });
  }
  const missing = targets.find((line) => !found.has(line));
  if (missing !== undefined) {
    throw new LoaderError('INPUT_CHANGED', `cannot resume inside ${file}: no record starts at line ${missing}, where the checkpoint says one did`, { file });
  }
  return found;
}

/**
 * The parts a resume reads from a byte past their start (each place a cursor names: its last row, its
 * grouping check's first and latest rows), whose CSV columns it needs (partStripes.ts withColumns). A
 * grouping row can lie in another part than the last row: a key running across parts.
 */
export function placedParts(cursors: readonly StripeCursor[]): number[] {
  return cursors.flatMap((c) => [c.at, c.first, c.last].flatMap((place) => (place ? [place[0]] : [])));
}

/** Bytes a resume reads first for the record at a place (most records are far shorter). */
const PLACED_BYTES = 64 * 1024;

/** How a resume reads the parts of a striped read. */
export interface ResumeReading {
  /** A part's bytes (pinned where the load pins them) and name. */
  bytes(part: number): PartBytes;
  file(part: number): string;
  /** How a part's records are told apart (its syntax and delimiter). */
  syntax(part: number): Pick<RangeSyntax, 'syntax' | 'delimiter'>;
  /** The first record of a range of a part (read as the striped read reads it: a header row at byte 0). */
  firstRecord(part: number, range: ByteRange): Promise<SourceRecord | undefined>;
  /** The partition key GroupingCheck compares for a record (groupOf of its write), or undefined when it has none. */
  keyOf(record: SourceRecord): string | undefined;
  /** Bytes read first for the record at a place (tests shrink it). @default PLACED_BYTES */
  placedBytes?: number;
}

/** A stripe reopened at a restart point: its pieces from the row after its last, and its grouping check's rows. */
export interface ResumedStripe {
  pieces: Piece[];
  grouping: { first: GroupedRow; last: GroupedRow } | undefined;
}

/** Stripes read a few at a time while a resume finds where they stood: each mostly waits on its bytes. */
const RESUME_AT_ONCE = 8;

/**
 * Reopens planned stripes at a restart point: for each, where its last row handed on starts (its pieces
 * then read on from the row after), and the partition keys of the first and latest rows its grouping check
 * passed, read again at their places. The plan is the one the point was recorded with (the cut is a function
 * of the input, which the checkpoint's identity pins): a plan that differs is refused.
 */
export async function resumeStripes(stripes: readonly Stripe[], cursors: readonly StripeCursor[], reading: ResumeReading): Promise<ResumedStripe[]> {
  const differs = stripes.length !== cursors.length || stripes.some((stripe, k) => compare(stripeStart(stripe), cursors[k]!.start) !== 0);
  if (differs)
    throw bug(`the input was cut into other stripes than those the checkpoint's restart point recorded (${stripes.length} against ${cursors.length})`);
  const limit = pLimit(RESUME_AT_ONCE);
  return Promise.all(stripes.map((stripe, k) => limit(() => resumeStripe(stripe, cursors[k]!, reading))));
}

async function resumeStripe(stripe: Stripe, cursor: StripeCursor, reading: ResumeReading): Promise<ResumedStripe> {
  if (cursor.at === undefined) return { pieces: [...stripe.pieces], grouping: undefined };
  const places = [cursor.at, ...(cursor.first && cursor.last ? [cursor.first, cursor.last] : [])];
  const pieceOf = places.map((place) => pieceAt(stripe, place));
  // The lines whose offsets the checkpoint does not hold, piece by piece: one pass over each piece's bytes finds all of its.
  const wanted = new Map<number, number[]>();
  places.forEach((place, i) => {
    if (place[2] === undefined) wanted.set(pieceOf[i]!, [...(wanted.get(pieceOf[i]!) ?? []), place[1]]);
  });
  const offsets = new Map<number, Map<number, number>>();
  for (const [j, lines] of wanted) {
    const piece = stripe.pieces[j]!;
    const part = piece.part ?? 0;
    offsets.set(j, await offsetsOfLines(reading.bytes(part), reading.file(part), piece.range, lines, reading.syntax(part)));
  }
  const offsetOf = (i: number) => places[i]![2] ?? offsets.get(pieceOf[i]!)!.get(places[i]![1])!;
  if (pieceOf[0] !== cursor.piece) throw bug(`a stripe's last row (line ${cursor.at[1]}) is not in the piece its cursor names`);
  // The record at each place, read once however many places name it: the grouping check's keys, and the
  // proof that a recorded offset is where its line starts. Keyed by part and byte: a stripe spans parts,
  // and the first rows of two parts start at the same byte (past the same header).
  const records = new Map<string, Promise<SourceRecord | undefined>>();
  const recordAt = (i: number) => {
    const offset = offsetOf(i);
    const at = `${places[i]![0]}:${offset}`;
    if (!records.has(at)) records.set(at, placedRecord(stripe.pieces[pieceOf[i]!]!, places[i]!, offset, reading));
    return records.get(at)!;
  };
  // (The last row handed on is proved by its stripe's own read: piecesAfter.)
  const pieces = piecesAfter(stripe.pieces, cursor, offsetOf(0));
  const rowAt = async (i: number): Promise<GroupedRow> => {
    const part = stripe.pieces[pieceOf[i]!]!.part ?? 0;
    const line = places[i]![1];
    const record = await recordAt(i);
    const key = record ? reading.keyOf(record) : undefined;
    if (key === undefined) {
      throw new LoaderError(
        'INPUT_CHANGED',
        `cannot resume inside ${reading.file(part)}: the row at line ${line} has no partition key now, where the checkpoint says it had one`,
        {
          file: reading.file(part),
          line,
        },
      );
    }
    return { key, at: { file: reading.file(part), line, offset: offsetOf(i) } };
  };
  const grouping = cursor.first && cursor.last ? { first: await rowAt(1), last: await rowAt(2) } : undefined;
  return { pieces, grouping };
}

/**
 * The record on line `place[1]` of a piece, starting at `offset`. A recorded offset past the piece's start
 * is read from the byte before it, one line earlier: a line break there is an empty line, and the record
 * comes out on its own line; any other byte makes the first record start a line early, and the offset is
 * refused as not this input's (never read from). A record on a part's first line starts past its byte 0
 * only after a BOM (a file without a header row): the byte before is the BOM's, so it is read from the
 * part's start, as the first stripe reads it. Either way the record must come out at the offset recorded.
 * Undefined when the range holds no record.
 */
async function placedRecord(piece: Piece, place: SetPlace, offset: number, reading: ResumeReading): Promise<SourceRecord | undefined> {
  const [part, line] = place;
  const recorded = place[2] !== undefined;
  const fromStart = recorded && line === 1;
  const early = recorded && !fromStart && offset > piece.range.start ? 1 : 0;
  const range = fromStart ? { start: piece.range.start, end: piece.range.end, line: 1 } : { start: offset - early, end: piece.range.end, line: line - early };
  // The first bytes only, most often: a GET read to its end keeps its connection, one cut short does not.
  // A record is whole in them when its line break and a byte after it are in them: a record cut just after
  // a CR (a CRLF's, or one inside quotes) reads as one ending there, its CR trimmed, so the byte after the
  // break is what tells. Any other record is read again from the whole range.
  const bounded = { ...range, end: Math.min(range.end, range.start + (reading.placedBytes ?? PLACED_BYTES)) };
  let record = await reading.firstRecord(part, bounded);
  const whole = record?.origin.offset !== undefined && record.origin.offset + Buffer.byteLength(record.origin.raw, 'utf8') + 1 < bounded.end;
  if (bounded.end < range.end && !whole) record = await reading.firstRecord(part, range);
  const at = record?.origin.offset;
  if (record !== undefined && record.origin.line === line && (!recorded || at === undefined || at === offset)) return record;
  throw new LoaderError(
    'INPUT_CHANGED',
    `cannot resume inside ${reading.file(part)}: no record starts at line ${line} (byte ${offset}), where the checkpoint says one does`,
    { file: reading.file(part), line },
  );
}
