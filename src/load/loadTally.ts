import type { BatchOutcome } from '../writing/writeBatch.js';
import type { LoadOutcome } from '../checkpointing/checkpointState.js';
import { createHotKeySketch } from '../shared/heavyHitters.js';
import { writesToAccount, type LoadCounters } from '../reporting/result.js';
import type { PlannedWrite } from '../shared/types.js';
import { ownRecord, ownValue, setOwn } from '../shared/ownRecord.js';

/** What an earlier run of the checkpoint did, as it saved it. */
export interface ResumedCounts {
  written: number;
  plannedWcu: number;
  consumedWcu: number;
  revived?: number | undefined;
  deleted?: number | undefined;
  conditionFailed?: number | undefined;
}

/**
 * The counters of one load: every row read ends in exactly one of written, superseded, rejected,
 * another segment's or skipped as expired (or not written, when the load stops). Pure: the load's I/O shell calls it at each
 * event and asks it at the end whether the rows add up. Nothing else changes the counters.
 */
export class LoadTally {
  readonly counters: LoadCounters = {
    rowsRead: 0,
    written: 0,
    deleted: 0,
    superseded: 0,
    revived: 0,
    rejected: 0,
    rejectedByReason: {},
    consumedWcu: 0,
    plannedWcu: 0,
    batches: 0,
    retries: 0,
    throttledItems: 0,
    throttlesByReason: ownRecord<number>(),
    bytesRead: 0,
    otherSegments: 0,
    skippedExpired: 0,
    writtenBeforeResume: 0,
  };
  /** Write units per partition key written, heaviest tracked in bounded memory. */
  readonly keyUnits = createHotKeySketch();
  /** Write units an earlier run of the checkpoint wrote (not this run's pace). */
  plannedWcuBeforeResume = 0;
  /** Told each written row's partition key and units as they are booked (the load's timeline), when set. */
  onKeyUnits: ((partitionId: string, units: number) => void) | undefined;
  /**
   * The input was read to its end and every batch settled, with no stop on the way (set by load(); a
   * finished checkpoint's outcome restores it). Without it nothing is complete, whatever the counts
   * (a load stopped at 27% whose rows read so far were all written said "complete").
   */
  inputEnded = false;
  /** Superseded rows an earlier run wrote or rejected in place of a refused successor: reading again supersedes them again. */
  #revivedBeforeResume = 0;

  rowRead(): void {
    this.counters.rowsRead++;
  }

  /** A row of a partition key (or, unkeyed, a line) that another --segment worker loads. */
  otherSegment(): void {
    this.counters.otherSegments++;
  }

  /** A row --skip-expired leaves out: its TTL was past at the load time. */
  skippedExpired(): void {
    this.counters.skippedExpired = (this.counters.skippedExpired ?? 0) + 1;
  }

  /** A row replaced by a later row of its primary key before it was sent. */
  superseded(): void {
    // Rows an earlier run revived are superseded again as they are read again: counted there already.
    if (this.#revivedBeforeResume > 0) this.#revivedBeforeResume--;
    else this.counters.superseded++;
  }

  rejected(code: string): void {
    this.counters.rejected++;
    this.counters.rejectedByReason[code] = (this.counters.rejectedByReason[code] ?? 0) + 1;
  }

  /** The number of the next batch of the load's sequence, counted as dispatched. */
  nextBatch(): number {
    return this.counters.batches++;
  }

  /**
   * A batch's outcome. `costOf` gives a written write's planned units; `countKeys` false when the caller
   * keeps its own tally of keys (a dry run). Returns the batch's planned units.
   */
  batchWritten(outcome: BatchOutcome, costOf: (write: PlannedWrite) => number, countKeys: boolean): number {
    const c = this.counters;
    c.written += outcome.written.length;
    for (const w of outcome.written) if (w.op === 'delete') c.deleted = (c.deleted ?? 0) + 1;
    if (outcome.conditionFailed?.length) c.conditionFailed = (c.conditionFailed ?? 0) + outcome.conditionFailed.length;
    // Superseded rows written (or rejected) in place of a refused successor are superseded no more.
    c.superseded -= outcome.revived;
    c.revived = (c.revived ?? 0) + outcome.revived;
    let batchWcu = 0;
    for (const w of outcome.written) {
      const cost = costOf(w);
      batchWcu += cost;
      c.plannedWcu += cost;
      // A key's own units: GSI units land on the index's keys, not on the table's.
      if (countKeys) {
        this.keyUnits.add(w.partitionId, w.wcu);
        this.onKeyUnits?.(w.partitionId, w.wcu);
      }
    }
    c.consumedWcu += outcome.consumedWcu;
    c.retries += outcome.retries;
    c.throttledItems += outcome.throttledItems;
    if (outcome.throttles) {
      // Kinds are the endpoint's words: counted on a record without a prototype (shared/ownRecord.ts).
      const byReason = (c.throttlesByReason ??= ownRecord<number>());
      for (const [kind, n] of Object.entries(outcome.throttles)) setOwn(byReason, kind, (ownValue(byReason, kind) ?? 0) + n);
    }
    return batchWcu;
  }

  /** Goes on from what an earlier run of the checkpoint saved. */
  resume(saved: ResumedCounts): void {
    const c = this.counters;
    c.written = saved.written;
    c.writtenBeforeResume = saved.written;
    c.plannedWcu = saved.plannedWcu;
    this.plannedWcuBeforeResume = saved.plannedWcu;
    c.consumedWcu = saved.consumedWcu;
    c.deleted = saved.deleted ?? 0;
    if (saved.conditionFailed) c.conditionFailed = saved.conditionFailed;
    this.#revivedBeforeResume = saved.revived ?? 0;
    c.revived = this.#revivedBeforeResume;
  }

  /**
   * Goes on from a restart point (after resume()): the rows before it are not read again, so their counts
   * come from the point. Superseded rows an earlier run revived are taken off as reading them again would.
   */
  resumeAt(point: {
    rowsRead: number;
    otherSegments: number;
    superseded: number;
    batch: number;
    skippedExpired?: number | undefined;
    skippedByTransform?: number | undefined;
    transformOutputs?: number | undefined;
    splitWrites?: number | undefined;
  }): void {
    const c = this.counters;
    c.rowsRead = point.rowsRead;
    c.otherSegments = point.otherSegments;
    c.skippedExpired = point.skippedExpired ?? 0;
    if (c.transformOutputs !== undefined) {
      c.skippedByTransform = point.skippedByTransform ?? 0;
      c.transformOutputs = point.transformOutputs ?? 0;
      c.splitWrites = point.splitWrites ?? 0;
    }
    c.batches = point.batch;
    const taken = Math.min(point.superseded, this.#revivedBeforeResume);
    this.#revivedBeforeResume -= taken;
    c.superseded = point.superseded - taken;
  }

  /** The counters of a checkpoint that says its load finished: its outcome, reported again. */
  restoreFinished(outcome: LoadOutcome, plannedWcu: number, consumedWcu: number): void {
    const { rejectedByReason, ...counts } = outcome;
    Object.assign(this.counters, counts, { rejectedByReason: { ...rejectedByReason }, plannedWcu, consumedWcu, writtenBeforeResume: counts.written });
    // Every unit was sent by the earlier run: this one sends none, so its average rate is 0 (the finished
    // load's units over this rerun's milliseconds read "average 161,266 WCU/s").
    this.plannedWcuBeforeResume = plannedWcu;
    this.inputEnded = true;
  }

  /** Every row read is written, superseded, rejected or another segment's (or skipped by the transform, or as expired). */
  get accounted(): boolean {
    const { written, superseded, rejected, otherSegments } = this.counters;
    return written + superseded + rejected + otherSegments === writesToAccount(this.counters);
  }

  /** What a finished checkpoint keeps of the load. */
  outcome(): LoadOutcome {
    const { rowsRead, written, superseded, rejected, rejectedByReason, otherSegments, skippedExpired = 0, conditionFailed = 0, batches } = this.counters;
    // Only when some: a finished checkpoint of a load without --skip-expired looks as before.
    return {
      rowsRead,
      written,
      superseded,
      rejected,
      rejectedByReason,
      otherSegments,
      ...(skippedExpired > 0 ? { skippedExpired } : {}),
      ...(conditionFailed > 0 ? { conditionFailed } : {}),
      batches,
      ...this.transformCounts(),
    };
  }

  /** Counts a transform's counters from 0: a load with --transform reports them, one without does not. */
  countTransform(): void {
    const c = this.counters;
    c.skippedByTransform ??= 0;
    c.transformOutputs ??= 0;
    c.splitWrites ??= 0;
  }

  /**
   * A row the transform returned `outputs` items for (0: skipped, by this worker when `own`; a row another
   * segment's worker counts as skipped is another segment's here). Each item is then a write like a row's.
   */
  transformed(outputs: number, own = true): void {
    const c = this.counters;
    c.transformOutputs = (c.transformOutputs ?? 0) + outputs;
    if (outputs > 1) c.splitWrites = (c.splitWrites ?? 0) + outputs - 1;
    if (outputs === 0) {
      if (own) c.skippedByTransform = (c.skippedByTransform ?? 0) + 1;
      else c.otherSegments++;
    }
  }

  /** The transform's counters, when the load has a transform (for checkpoints and restart points). */
  transformCounts(): { skippedByTransform?: number; transformOutputs?: number; splitWrites?: number } {
    const { skippedByTransform, transformOutputs, splitWrites } = this.counters;
    return transformOutputs === undefined ? {} : { skippedByTransform: skippedByTransform ?? 0, transformOutputs, splitWrites: splitWrites ?? 0 };
  }
}
