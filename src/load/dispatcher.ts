import type { Batch } from '../batching/batch.js';
import type { CheckpointStore } from '../checkpointing/checkpoint.js';
import { logEntriesOf, rejectedRowOf, rejectLogKey } from '../checkpointing/writeRejectLog.js';
import type { InFlightLimit } from '../pacing/inFlight.js';
import type { KeySchema, PlannedWrite } from '../shared/types.js';
import type { ShardManifest } from '../sharding/shardManifest.js';
import type { BatchSink } from '../writing/batchSink.js';
import type { BatchOutcome } from '../writing/writeBatch.js';
import type { LoadStop } from './loadStop.js';
import type { LoadTally } from './loadTally.js';
import type { Rejections } from './rejections.js';
import type { CostGuard } from './costGuard.js';
import type { ConditionFailureSink } from '../reporting/conditionFailureSink.js';

export interface DispatcherOptions {
  /** Batches in flight to start with (--concurrency); `inFlight` may lend more while calls are slow. */
  concurrency: number;
  /** The load reads several files or objects: a row is known by its file and line. */
  namedParts?: boolean;
  inFlight: InFlightLimit;
  now: () => number;
  sink: BatchSink;
  keySchema: KeySchema;
  costOf: (write: PlannedWrite) => number;
  countKeys: boolean;
  tally: LoadTally;
  rejections: Rejections;
  stop: LoadStop;
  progress: () => void;
  /** The checkpoint of this run, and the batch an earlier run of it got to (batches before are done). */
  checkpoint: CheckpointStore | undefined;
  resumeFrom: number;
  manifest: ShardManifest | undefined;
  /** --max-cost: asked before each batch is sent (a load's, never a dry run's). */
  costGuard?: CostGuard | undefined;
  /** --condition-failures: each batch's rows whose condition was false (a load's, never a dry run's). */
  conditionFailures?: ConditionFailureSink | undefined;
}

/**
 * Sends the load's batches, in the order they come, with a bounded number in flight. It owns what
 * concurrency needs for correctness: two batches holding one primary key are never in flight together
 * (the later waits, so it always lands last); batches an earlier run of the checkpoint did are skipped,
 * with their rejects put back; a batch is recorded done in the checkpoint only once every write in it
 * is stored or rejected. Every way out of the load waits for the batches under way (lib-storage: never
 * strand a write).
 */
export class Dispatcher {
  readonly #o: DispatcherOptions;
  /** Batches under way. */
  readonly #running = new Set<Promise<void>>();
  /** Wakes the reader waiting for a slot, when a batch finishes or parks in a backoff. */
  #wake: (() => void) | undefined;
  /** Keys of batches not yet settled, each with the promise of the last batch holding it. */
  readonly #unsettledKeys = new Map<string, Promise<void>>();

  constructor(options: DispatcherOptions) {
    this.#o = options;
    // A batch parked in a backoff lends its slot: the reader waiting at the gate takes it now, not at its next recheck.
    options.inFlight.onLend(() => this.#wakeReader());
  }

  /** Sends `batch` once a slot is free (or skips it, done before the resume); resolves when it is under way. */
  async dispatch(batch: Batch): Promise<void> {
    const { tally, checkpoint, inFlight, now } = this.#o;
    // Batches are dispatched one at a time, so the next number is this batch's until it is counted.
    const index = tally.counters.batches;
    if (index < this.#o.resumeFrom || checkpoint?.progress.isDone(index)) {
      tally.nextBatch();
      return this.#skipDone(batch);
    }
    // Gate the reader on the batches under way; the limit is asked each time, as slow batches raise it.
    while (this.#running.size >= inFlight.limit(now())) await this.#slotFreed(inFlight.recheckMs());
    // The cost guard, once the batches ahead have settled as far as the slots let them: their units are then counted as consumed.
    const guard = this.#o.costGuard;
    let units = 0;
    if (guard) {
      for (const w of batch.writes) units += this.#o.costOf(w);
      const refusal = guard.beforeSend(units, tally.counters.consumedWcu);
      if (refusal) {
        // Not sent, not counted: its rows are not written, and a resume makes this batch again.
        this.#o.stop.fail(refusal);
        return;
      }
      guard.sent(units);
    }
    // Counted once past the gate: a snapshot taken while the reader waits (--stop-timeout) shows the batches sent.
    tally.nextBatch();
    const writes = batch.writes;
    let waitFor: Promise<void>[] | undefined;
    for (const w of writes) {
      const earlier = this.#unsettledKeys.get(w.keyId);
      if (earlier && !waitFor?.includes(earlier)) (waitFor ??= []).push(earlier);
    }
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    for (const w of writes) this.#unsettledKeys.set(w.keyId, settled);
    const task = this.#send(index, writes, waitFor)
      .catch((error: unknown) => this.#o.stop.fail(error, 'a batch failed unexpectedly'))
      .finally(() => {
        guard?.settled(units);
        settle();
        for (const w of writes) if (this.#unsettledKeys.get(w.keyId) === settled) this.#unsettledKeys.delete(w.keyId);
        this.#running.delete(task);
        this.#wakeReader();
      });
    this.#running.add(task);
  }

  /** Sends one batch once the batches holding its keys have settled, and books its outcome. */
  async #send(index: number, writes: PlannedWrite[], waitFor: Promise<void>[] | undefined): Promise<void> {
    if (waitFor) await Promise.all(waitFor);
    // The load is stopping: these rows were never sent; they are counted as not written.
    if (this.#o.stop.failed) return;
    await this.#record(index, await this.#o.sink.write(writes));
  }

  /** Wakes the reader waiting at the gate, if it is. */
  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Resolves when a batch under way finishes or lends its slot, or after `ms` (a batch in flight may turn slow and raise the limit). */
  #slotFreed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms).unref();
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Waits for every batch under way; the first failure among them is the load's. */
  async finish(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  /** Waits for every batch under way, whatever happens to them: nothing is left writing behind the load's files closing. */
  async settle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled(this.#running);
  }

  /**
   * A batch an earlier run of the checkpoint did: counted from the checkpoint, not sent. Only the
   * manifest needs its keys again, and the reject file the rows DynamoDB refused.
   */
  async #skipDone(batch: Batch): Promise<void> {
    const { checkpoint, manifest, keySchema, rejections } = this.#o;
    if (manifest) addToManifest(manifest, batch.writes, keySchema);
    // A refused write's predecessors (the rows it superseded) are in no batch's writes: their rejects are put back too.
    for (const write of batch.writes) {
      for (let w: PlannedWrite | undefined = write; w; w = w.predecessor) {
        const entry = checkpoint?.restoredRejects.get(rejectLogKey(this.#o.namedParts ? w.origin.file : undefined, w.origin.line));
        if (entry) await rejections.reject(rejectedRowOf(entry, w, keySchema), false);
      }
    }
  }

  /** Books a batch's outcome: tally, manifest, reject file, then the checkpoint. */
  async #record(index: number, outcome: BatchOutcome): Promise<void> {
    const { tally, manifest, keySchema, checkpoint, stop } = this.#o;
    const batchWcu = tally.batchWritten(outcome, this.#o.costOf, this.#o.countKeys);
    if (manifest) addToManifest(manifest, outcome.written, keySchema);
    for (const row of outcome.rejected) await this.#o.rejections.reject(row);
    // The rows whose condition was false, into --condition-failures: with a checkpoint, at the moment the batch
    // is counted done (a save then records both or neither). A batch cut short is not counted done: this run's
    // file ends with its rows, past what the checkpoint records, and the resume cuts them and sends it again.
    // Without a checkpoint, as they are counted.
    const failures = this.#o.conditionFailures;
    const failed = outcome.conditionFailed ?? [];
    let handed: Promise<void> | undefined;
    const handOn = failures && failed.length > 0 ? () => void (handed = failures.handOn(failed, keySchema)) : undefined;
    if (!checkpoint) handOn?.();
    // Done means every write stored or rejected; a batch cut short by a fatal error is not, even when
    // another batch's fatal error came first.
    if (outcome.fatal) {
      stop.fail(outcome.fatal);
      if (checkpoint && failed.length > 0) failures?.uncounted(failed, keySchema);
    } else
      await checkpoint?.complete(
        index,
        {
          written: outcome.written.length,
          plannedWcu: batchWcu,
          consumedWcu: outcome.consumedWcu,
          writeRejects: outcome.rejected.length,
          revived: outcome.revived,
          deleted: outcome.written.reduce((n, w) => (w.op === 'delete' ? n + 1 : n), 0),
          ...(outcome.conditionFailed?.length ? { conditionFailed: outcome.conditionFailed.length } : {}),
        },
        logEntriesOf(index, outcome.rejected, this.#o.namedParts),
        handOn,
      );
    await handed;
    this.#o.progress();
  }
}

/** The original partition key of each sharded write, for the manifest a reader uses to query every shard. */
function addToManifest(manifest: ShardManifest, writes: readonly PlannedWrite[], keySchema: KeySchema): void {
  for (const w of writes) if (w.unshardedKey !== undefined) manifest.add(w.unshardedKey, w.item[keySchema.partitionKey.name] as string);
}
