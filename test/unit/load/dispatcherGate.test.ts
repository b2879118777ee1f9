/**
 * The dispatcher's gate with batches parked in a backoff: a parked batch lends its slot at once (the
 * reader does not wait for its next recheck), at most `parkedCap` slots are lent, and a batch holding a
 * primary key still waits for the batch before it that holds the key, parked or not.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Batch } from '../../../src/batching/batch.js';
import { Dispatcher } from '../../../src/load/dispatcher.js';
import { LoadStop } from '../../../src/load/loadStop.js';
import { LoadTally } from '../../../src/load/loadTally.js';
import { Rejections } from '../../../src/load/rejections.js';
import { InFlightLimit } from '../../../src/pacing/inFlight.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import type { BatchSink } from '../../../src/writing/batchSink.js';
import type { BatchOutcome } from '../../../src/writing/writeBatch.js';

/**
 * A sink whose calls are under way until the test throttles them (the batch parks for its backoff) and
 * end when the test releases them.
 */
class ParkingSink implements BatchSink {
  readonly calls: Array<{ keys: string[]; throttle: () => void; release: () => void }> = [];
  /** Keys of calls under way now, and any key seen in two calls under way together. */
  readonly underWay = new Set<string>();
  readonly overlaps: string[] = [];

  constructor(private readonly inFlight: InFlightLimit) {}

  async write(writes: PlannedWrite[]): Promise<BatchOutcome> {
    const keys = writes.map((w) => w.keyId);
    for (const key of keys) if (this.underWay.has(key)) this.overlaps.push(key);
    for (const key of keys) this.underWay.add(key);
    const slot = this.inFlight.started(0);
    let throttle!: () => void;
    let release!: () => void;
    const throttled = new Promise<void>((resolve) => (throttle = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.calls.push({ keys, throttle, release });
    await throttled;
    this.inFlight.park(slot, 0);
    await released;
    for (const key of keys) this.underWay.delete(key);
    this.inFlight.finished(slot, 1);
    return { written: writes, rejected: [], consumedWcu: 0, throttledItems: 0, retries: 0, revived: 0 };
  }

  /** Throttles and releases every call so far. */
  releaseAll(): void {
    for (const call of this.calls) {
      call.throttle();
      call.release();
    }
  }
}

function batchOf(...keys: string[]): Batch {
  return { writes: keys.map((keyId) => ({ keyId, op: 'put', partitionId: keyId, wcu: 1 }) as unknown as PlannedWrite), wcu: keys.length, bytes: 0 };
}

function setUp(start: number, parkedCap?: number): { dispatcher: Dispatcher; sink: ParkingSink } {
  const inFlight = new InFlightLimit({ start, ...(parkedCap !== undefined ? { parkedCap } : {}) });
  const sink = new ParkingSink(inFlight);
  const tally = new LoadTally();
  const stop = new LoadStop();
  const rejections = new Rejections(tally, { write: () => Promise.resolve() } as never, () => undefined, stop, { maxRejects: 100, rejectsPath: 'r' });
  const dispatcher = new Dispatcher({
    concurrency: start,
    inFlight,
    now: () => 0,
    sink,
    keySchema: { partitionKey: { name: 'pk', type: 'S' } },
    costOf: () => 1,
    countKeys: false,
    tally,
    rejections,
    stop,
    progress: () => undefined,
    checkpoint: undefined,
    resumeFrom: 0,
    manifest: undefined,
  });
  return { dispatcher, sink };
}

/** Whether `promise` settles once pending microtasks have run (timers frozen). */
async function settlesNow(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 20; i++) await Promise.resolve();
  return done;
}

describe('Dispatcher gate: batches parked in a backoff', () => {
  // Timers frozen: the gate's periodic recheck never fires, so a slot taken is one the park lent.
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a batch that parks lends its slot to the reader waiting at the gate at once, up to parkedCap lent slots', async () => {
    const { dispatcher, sink } = setUp(2, 3);
    await dispatcher.dispatch(batchOf('k0'));
    await dispatcher.dispatch(batchOf('k1'));
    const third = dispatcher.dispatch(batchOf('k2'));
    expect(await settlesNow(third)).toBe(false);
    // The first call is throttled: its backoff lends the slot, and the waiting reader takes it.
    sink.calls[0]!.throttle();
    expect(await settlesNow(third)).toBe(true);
    // Every call parked: 2 slots and 3 lent; the sixth batch waits for one to finish.
    for (const call of sink.calls) call.throttle();
    expect(await settlesNow(dispatcher.dispatch(batchOf('k3')))).toBe(true);
    sink.calls[3]!.throttle();
    expect(await settlesNow(dispatcher.dispatch(batchOf('k4')))).toBe(true);
    sink.calls[4]!.throttle();
    const sixth = dispatcher.dispatch(batchOf('k5'));
    expect(await settlesNow(sixth)).toBe(false);
    sink.calls[0]!.release();
    expect(await settlesNow(sixth)).toBe(true);
    await settlesNow(Promise.resolve());
    expect(sink.calls).toHaveLength(6);
    sink.releaseAll();
    await dispatcher.finish();
    expect(sink.overlaps).toEqual([]);
  });

  it('a batch holding a key waits for the parked batch before it that holds the key', async () => {
    const { dispatcher, sink } = setUp(2);
    await dispatcher.dispatch(batchOf('a', 'b'));
    await dispatcher.dispatch(batchOf('c'));
    sink.calls[0]!.throttle();
    // Past the gate (the first batch lent its slot), but not sent: 'a' is still under way.
    expect(await settlesNow(dispatcher.dispatch(batchOf('d', 'a')))).toBe(true);
    await settlesNow(Promise.resolve());
    expect(sink.calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c']]);
    sink.calls[0]!.release();
    await settlesNow(Promise.resolve());
    expect(sink.calls.map((c) => c.keys)).toEqual([['a', 'b'], ['c'], ['d', 'a']]);
    sink.releaseAll();
    await dispatcher.finish();
    expect(sink.overlaps).toEqual([]);
  });
});
