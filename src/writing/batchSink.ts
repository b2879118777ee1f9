import type { InFlightLimit } from '../pacing/inFlight.js';
import type { PlannedWrite } from '../shared/types.js';
import type { SendPacer } from '../pacing/sendPacer.js';
import { writeBatch, type BatchOutcome, type WriterContext } from './writeBatch.js';
import { writeConditional } from './conditionalWrite.js';

/**
 * Where a load's batches go: DynamoDB, or, for a dry run, a recorder. The dispatcher hands each batch to
 * its sink and books the outcome the same way for both, so a dry run takes the very path a load takes.
 */
export interface BatchSink {
  write(writes: PlannedWrite[]): Promise<BatchOutcome>;
}

/**
 * BatchWriteItem through writeBatch (retries, backoff, pacing). Each call holds an in-flight slot from
 * `inFlight`, so slow calls can lend their slot to more batches (src/pacing/inFlight.ts).
 */
export function dynamoSink(context: WriterContext, inFlight: InFlightLimit, now: () => number): BatchSink {
  return {
    async write(writes) {
      const slot = inFlight.started(now());
      const ctx = context.pacer ? { ...context, pacer: outstandingOnly(context.pacer, inFlight, slot, now) } : context;
      const condition = ctx.condition;
      return (condition ? writeConditional(writes, ctx, condition) : writeBatch(writes, ctx)).finally(() => inFlight.finished(slot, now()));
    },
  };
}

/**
 * A dry run's sink: every batch goes to `record`, in the order a load would send it, and counts as written.
 * A `record` that returns a promise holds the batch's slot until it settles (backpressure on the reading).
 */
export function recordingSink(record: (writes: readonly PlannedWrite[]) => unknown): BatchSink {
  return {
    async write(writes) {
      await record(writes);
      return { written: writes, rejected: [], consumedWcu: 0, throttledItems: 0, retries: 0, revived: 0 };
    },
  };
}

/**
 * The pacer, with the batch's slot paused except while a call is outstanding: waiting for the rate or
 * in backoff is not a slow call, and more batches waiting on the same buckets would only queue deeper.
 * A backoff parks the batch, lending its slot (src/pacing/inFlight.ts).
 */
function outstandingOnly(pacer: SendPacer, inFlight: InFlightLimit, slot: number, now: () => number): SendPacer {
  return {
    beforeSend: (writes) => {
      inFlight.pause(slot, now());
      let paced: Promise<void> | undefined;
      try {
        paced = pacer.beforeSend(writes);
      } finally {
        // Resumed at once when the pacer lets the send go now (a resend after a backoff ends its pause here).
        if (!paced) inFlight.resume(slot, now());
      }
      return paced?.finally(() => inFlight.resume(slot, now()));
    },
    afterSend: (report) => {
      // Writes left to send again after a backoff (no answer, a throttle, UnprocessedItems): the backoff
      // lends the slot, and the pacer, told of any throttle below, paces the resend like any send.
      if (report.stored.length < report.sent.length) inFlight.park(slot, now());
      else inFlight.pause(slot, now());
      pacer.afterSend(report);
    },
  };
}
