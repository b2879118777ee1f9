import type { LoadCounters, LoadResult } from './result.js';
import type { OrderMode } from '../ordering/order.js';
import type { RateChange, RateSnapshot } from '../pacing/rateControl.js';
import type { KeySchema, RejectedRow } from '../shared/types.js';
import type { OutageEvent } from '../writing/endpointWatch.js';

export type { LoadCounters, LoadResult } from './result.js';

/** What load() reports while it runs; the CLI draws these, a library caller may log them. */
export type LoadEvent =
  /** `snapshot` gives the counters so far as a result, for a summary when the load cannot finish (--stop-timeout). */
  | { type: 'started'; table: string; input: string; keySchema: KeySchema; totalBytes: number | undefined; snapshot: () => LoadResult }
  | { type: 'progress'; counters: Readonly<LoadCounters>; totalBytes: number | undefined; elapsedMs: number; rate?: RateSnapshot }
  /** The target rate (undefined: none) and why; sent once, after DescribeTable. */
  | { type: 'rateChosen'; targetWcu: number | undefined; keyWcu: number | undefined; reason: string }
  /**
   * --checkpoint reads the whole input once to hash it (SHA-256, about 20 s per 10 GB) before the first row:
   * `hashing` when it begins (the local bytes to read), `hashed` when it is done.
   */
  | { type: 'hashing'; checkpoint: string; bytes: number }
  | { type: 'hashed'; checkpoint: string; bytes: number; ms: number }
  /** A checkpoint was found: the load goes on after the batches it records as done. */
  /** rowsSkipped: rows before the restart point the read starts at, not read again (0: the input is read from its start). */
  | { type: 'resumed'; checkpoint: string; batchesDone: number; written: number; rowsSkipped: number }
  /** --listing: this worker wrote the load's listing (made), or loads the one another worker wrote. */
  | { type: 'listing'; where: string; made: boolean; parts: number; listedAt: string }
  /** Rate control cut the rate of the load or of one partition key after a throttle. */
  | { type: 'rateChanged'; change: RateChange }
  | { type: 'rowRejected'; row: RejectedRow }
  | { type: 'retrying'; reason: string; items: number; attempt: number; delayMs: number }
  | { type: 'warning'; message: string }
  /** --prewarm: what is raised, each wait for DynamoDB, and when the table is warm (or, in a dry run, what would be done). */
  | { type: 'prewarm'; stage: 'plan' | 'waiting' | 'done'; message: string }
  /** Reading starts, in the write order in effect: --order, or round-robin where the input cannot be read in stripes. */
  | {
      type: 'reading';
      order: OrderMode;
      /** The rows are read, typed and planned on a second thread (an estimate's: load/planningThread.ts). */
      planningThread?: true;
    }
  /** Every row of the input is read (`rows` of them, final): the load knows how many there are to write. */
  | { type: 'inputRead'; rows: number }
  /** All rows are read; a global order (round-robin, spread) starts handing them out. */
  | { type: 'ordering'; mode: OrderMode; rows: number; spilled: boolean }
  /** The endpoint cannot be reached: sends wait for it (up to --outage-timeout); then it answers again. */
  | OutageEvent;
