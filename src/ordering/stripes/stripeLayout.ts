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
