import type { ByteRange } from './ranges.js';

/**
 * The layout of the default order's striped read: stripes of pieces of byte ranges. stripedRecords.ts
 * builds and reads it; stripeKeys.ts gives a key running across whole ranges a stripe of its own.
 */

/** One range's part of a stripe: its records from `skip` on, `take` of them at most. */
export interface Piece {
  /** The part of an input set the range is in (partStripes.ts); undefined: the one file. */
  part?: number;
  range: ByteRange;
  skip: number;
  take: number;
  /** A piece after a stripe's first: the partition key its range starts in, which runs on from the piece before (when the probe saw one). */
  running?: string;
  /** The whole range: its head ran past MAX_HEAD_ROWS rows of `running`, or to its end. */
  whole?: true;
  /**
   * A resumed piece opened a byte before a recorded offset (stripeResume.ts piecesAfter): its first record
   * must be the one on `line` at `offset`, or the offset is not this input's and the read stops.
   */
  expect?: { line: number; offset: number };
}

/**
 * A stripe: its pieces in file order, its bytes, and the line and text of its first row (0 and undefined
 * for the file's first stripe).
 */
export interface Stripe {
  pieces: Piece[];
  size: number;
  firstLine: number;
  firstRaw: string | undefined;
}

/**
 * A striped read's plan as a checkpoint keeps it: the stripes' pieces as numbers only (no key, no row's
 * text), enough to read them again. A resume reads its stripes by the plan it was started with instead of
 * cutting the input again: the cut reads the whole input before the first write (a local file's bytes
 * once, an S3 object's by ranged GETs), and the plan, not a new cut, is what the checkpoint's batches and
 * restart points were made by. The checkpoint's identity of the input pins the bytes the plan cuts.
 */
export interface StripePlanRecord {
  stripes: {
    firstLine: number;
    size: number;
    /** `take` null: no bound (Infinity). */
    pieces: { part?: number; start: number; end: number; line: number; skip: number; take: number | null; whole?: true }[];
  }[];
}

/** The record of planned stripes. */
export function planRecord(stripes: readonly Stripe[]): StripePlanRecord {
  return {
    stripes: stripes.map((stripe) => ({
      firstLine: stripe.firstLine,
      size: stripe.size,
      pieces: stripe.pieces.map((piece) => ({
        ...(piece.part === undefined ? {} : { part: piece.part }),
        start: piece.range.start,
        end: piece.range.end,
        line: piece.range.line,
        skip: piece.skip,
        take: piece.take === Infinity ? null : piece.take,
        ...(piece.whole ? { whole: true as const } : {}),
      })),
    })),
  };
}

/**
 * The stripes a record describes, for reading (what only the cut used is left out: the keys a piece's head
 * runs in, the text of a stripe's first row). Undefined when a piece lies outside its part (`sizes`, by
 * the part's index; one size for one file): a record that is not of this input.
 */
export function stripesOfRecord(record: StripePlanRecord, sizes: readonly number[]): Stripe[] | undefined {
  const fits = record.stripes.every((stripe) => stripe.pieces.every((p) => p.start <= p.end && p.end <= (sizes[p.part ?? 0] ?? -1)));
  if (!fits) return undefined;
  return record.stripes.map((stripe) => ({
    firstLine: stripe.firstLine,
    size: stripe.size,
    firstRaw: undefined,
    pieces: stripe.pieces.map((p): Piece => ({
      ...(p.part === undefined ? {} : { part: p.part }),
      range: { start: p.start, end: p.end, line: p.line },
      skip: p.skip,
      take: p.take ?? Infinity,
      ...(p.whole ? { whole: true as const } : {}),
    })),
  }));
}
