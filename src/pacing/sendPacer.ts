import type { PlannedWrite } from '../shared/types.js';

/**
 * What the write path asks of rate control around each BatchWriteItem call (writing/writeBatch.ts): wait
 * before a send, learn from its answer. RatePacer implements it; the write path only knows this shape.
 */

/** What one BatchWriteItem call did, for rate control. */
export interface SendReport {
  sent: readonly PlannedWrite[];
  /** Writes DynamoDB stored. */
  stored: readonly PlannedWrite[];
  /** Writes refused by throttling (UnprocessedItems, or the whole call on a throttling error). */
  throttled: readonly PlannedWrite[];
  /** Write units DynamoDB reported for the call (table and indexes), when it did. */
  consumedUnits: number | undefined;
  /** ThrottlingReasons[].reason of a throttling error, e.g. TableWriteKeyRangeThroughputExceeded. */
  throttleReasons: string[];
}

export interface SendPacer {
  /** Reserves the send's units; a promise to wait for, or undefined when the send may go at once (no await: a microtask per send costs time on every batch). */
  beforeSend(writes: readonly PlannedWrite[]): Promise<void> | undefined;
  afterSend(report: SendReport): void;
}
