import type { Batch, Batcher } from '../batching/batch.js';
import { isGlobalOrder, type OrderMode } from '../ordering/order.js';
import type { WriteOrderer } from '../ordering/writeOrderer.js';
import type { LoadEvent } from '../reporting/events.js';
import type { Item, PlannedWrite, RejectedRow, RowOrigin } from '../shared/types.js';
import { bug, RowError } from '../shared/errors.js';
import { isRejected, type RowPlanner, type SourceRecord, type TypedRow } from '../typing/planRow.js';
import { transformFailure, transformOutputs, type TransformFunction } from '../typing/transform.js';
import type { LoadStop } from './loadStop.js';
import type { LoadTally } from './loadTally.js';
import type { Restarts } from './restartPoints.js';
import { segmentOfLine, segmentOfWrite, type Segment } from './segment.js';
import { expiryOf, looksNumeric } from '../typing/expiry.js';
import { ifNewerProblem } from '../writing/condition.js';

/*
 * The stages of a row's journey: records → planned writes → the write order → batches. The planner, the
 * order and the batcher are push/flush state machines (csv-parse's shape); this module chains them into
 * one async generator of batches. The consumer (the dispatcher) pulls a batch only when it has a slot for
 * it, so reading waits on writing through ordinary backpressure (lib-storage's bounded workers over one
 * generator). One generator, not one per stage: a generator layer per row costs ~5% CPU and ~30 MB of
 * peak RSS on 200k rows (measured by the bench), and rows far outnumber batches.
 */

/** What the stages report to: the tally, the reject file, progress and warnings. */
export interface StageReport {
  stop: LoadStop;
  tally: LoadTally;
  rejections: { reject(row: RejectedRow): Promise<void> };
  progress: () => void;
  emit: (event: LoadEvent) => void;
}

/** The parts a load's rows go through, built by prepareLoad (or a bench). */
export interface Stages {
  /** The input's name, for messages. */
  file: string;
  planner: RowPlanner;
  /** --transform: between typing and sharding, each row's item becomes the items it returns. */
  transform?: TransformFunction | undefined;
  /** Load only this segment's rows (--segment). */
  segment: Segment | undefined;
  /** What goes on to the order for each planned write (a dry run's slimmer copy). */
  onPlanned: (write: PlannedWrite) => PlannedWrite;
  /** --skip-expired: the TTL attribute and the load time (epoch seconds) a put's TTL is judged against. */
  expiry?: { attribute: string; at: number } | undefined;
  /** --if-newer: the version attribute every write must carry as a Number or a String (else rejected, IF_NEWER_VALUE). */
  ifNewer?: string | undefined;
  /**
   * --if-newer's attribute is typed by neither --types nor --infer: in a CSV row it is text, and a number as
   * text compares as text ("9" after "10"), so such a row is rejected (IF_NEWER_VALUE) rather than sent.
   */
  ifNewerUntyped?: boolean | undefined;
  /** Told of each row read and not written: rejected, of another segment or expired (a dry run's estimate). */
  onSkipped?: ((origin: RowOrigin) => void) | undefined;
  orderer: WriteOrderer;
  order: OrderMode;
  batcher: Batcher;
  /** Asked once every write is batched: whether the last, partial batch goes out. */
  sendLast: () => boolean;
  /** Closes the input; called however reading ends. */
  close: () => void;
  /** Restart points (a streaming order with a checkpoint): made on the way, and the one a resume starts at. */
  restarts?: Restarts | undefined;
  /** An export chain divided by part between workers (shares.ts): the barrier before each later export. */
  exports?: ExportBoundaries | undefined;
}

/** Where a chain's exports begin in the records, and what is done there (exportBarrier.ts). */
export interface ExportBoundaries {
  /** The export (index in the chain) of a record; undefined: not a part of the chain (a bug). */
  of: (record: SourceRecord) => number | undefined;
  /** The export reading starts in: the ones before it are settled. */
  from: number;
  /**
   * Divided between workers: the order must empty before each later export (it cannot be a global one).
   * Read by one process: a global order (round-robin, an auto window gone over to it) holds every write
   * to the end and keeps each key's writes in chain order; only a window empties.
   */
  mustEmpty: boolean;
  /**
   * Called before the first row of export `next`, once every row read before it has been handed on as a
   * batch: waits until those batches have settled and every worker has settled the exports before `next`.
   */
  cross: (next: number) => Promise<void>;
}

/**
 * The batches of a load, in the order they are sent. Reading stops once the load is stopping; rows the
 * order still holds then are never sent, and are reported as not written (so are the rest of an array of
 * records read but not yet planned: they were never counted as read).
 */
export async function* batchesOf(records: AsyncGenerator<SourceRecord | SourceRecord[]>, stages: Stages, report: StageReport): AsyncGenerator<Batch> {
  const { orderer, batcher } = stages;
  const { stop } = report;
  const plan = planning(stages, report);
  const { restarts } = stages;
  // What a restart point records: the batches made and the rows the batcher superseded before it.
  let batches = restarts?.from?.batch ?? 0;
  let superseded = restarts?.from?.superseded ?? 0;
  const { exports } = stages;
  let exportNow = exports?.from ?? 0;
  const batch = (write: PlannedWrite): Batch | undefined => {
    const { full, superseded: replaced } = batcher.push(write);
    if (replaced) {
      report.tally.superseded();
      superseded++;
    }
    if (full) batches++;
    return full;
  };
  try {
    // Records come one by one or in arrays (a striped read's): one await per array, not per row.
    reading: for await (const entry of records) {
      const many = Array.isArray(entry);
      const count = many ? entry.length : 1;
      for (let index = 0; index < count; index++) {
        const record = many ? entry[index]! : entry;
        if (stop.stopping) break reading;
        // Before a restart point is looked for: a point at a later export's first row is then recorded only
        // once past the barrier, and a resume there does not wait again.
        const next = exports?.of(record);
        if (exports && next !== exportNow) {
          if (next === undefined || next < exportNow)
            throw bug(`a row of ${record.origin.file} came after a row of export ${exportNow + 1} of the chain, but is not of a later export`);
          // Nothing of the exports before it is held: the order empties, the batcher sends its partial batch.
          const held = orderer.restart();
          if (!held && exports.mustEmpty) throw bug(`the ${orderer.mode} order cannot empty itself between the exports of a chain`);
          if (held) {
            for (const write of held) {
              const full = batch(write);
              if (full) yield full;
            }
            const last = batcher.flush();
            if (last) {
              batches++;
              yield last;
            }
          }
          await exports.cross(next);
          if (stop.stopping) break reading;
          exportNow = next;
        }
        const place = restarts?.pointBefore(entry, index);
        if (place) {
          // Nothing held crosses the point: the order empties, then the batcher sends its partial batch.
          const held = orderer.restart();
          if (held) {
            for (const write of held) {
              const full = batch(write);
              if (full) yield full;
            }
            const last = batcher.flush();
            if (last) {
              batches++;
              yield last;
            }
            const { rowsRead, otherSegments, skippedExpired = 0, rejected } = report.tally.counters;
            restarts!.reached({
              ...place,
              batch: batches,
              rowsRead,
              otherSegments,
              ...(skippedExpired > 0 ? { skippedExpired } : {}),
              superseded,
              rejected,
              ...report.tally.transformCounts(),
            });
          }
        }
        const planning = plan(record);
        // Awaited only when the row went to the reject file (or an async transform): an await per row costs a turn of the event loop.
        const planned = planning instanceof Promise ? await planning : planning;
        if (!planned) continue;
        // A row a transform split: its writes go on in the order it returned them, so a key's writes keep it.
        // (Not an array made for a row's one write: that was the stage's largest allocation per row.)
        const split = Array.isArray(planned);
        const writeCount = split ? planned.length : 1;
        for (let w = 0; w < writeCount; w++) {
          const write = split ? planned[w]! : planned;
          const now = orderer.passThrough(write);
          if (now) {
            const full = batch(now);
            if (full) yield full;
          } else {
            // The window hands writes on without a promise too, but at the rows where it looks at its keys.
            for (const held of orderer.pushNow(write) ?? (await orderer.push(write))) {
              const full = batch(held);
              if (full) yield full;
            }
          }
        }
        report.progress();
      }
    }
  } finally {
    await records.return(undefined);
    stages.close();
  }
  if (!stop.stopping) {
    report.emit({ type: 'inputRead', rows: report.tally.counters.rowsRead });
    // The orderer's own mode: an auto order's window may have gone over to round-robin while reading.
    if (isGlobalOrder(orderer.mode)) report.emit({ type: 'ordering', mode: orderer.mode, rows: orderer.held, spilled: orderer.stats.spilled });
    for await (const write of orderer.drain()) {
      if (stop.stopping) break;
      const full = batch(write);
      if (full) yield full;
      report.progress();
    }
  }
  const last = batcher.flush();
  if (last && stages.sendLast()) yield last;
}

/** What planning makes of one record: a write, a transform's several, or nothing (accounted for already). */
export type Planned = PlannedWrite | PlannedWrite[] | undefined;

/**
 * Typing and keys: each record becomes the write that goes on (with --transform, the writes of the items it
 * returned), or is accounted for here (rejected, skipped by the transform, or a row of another segment) and
 * comes back undefined.
 */
export function planning(
  stages: Pick<Stages, 'file' | 'planner' | 'transform' | 'segment' | 'onPlanned' | 'onSkipped' | 'expiry' | 'ifNewer' | 'ifNewerUntyped'>,
  report: Omit<StageReport, 'stop' | 'progress'>,
): (record: SourceRecord) => Planned | Promise<Planned> {
  const { planner, segment, transform, expiry, ifNewer } = stages;
  let warnedDynamoJson = false;
  let warnedTtlText = false;
  const warnDynamoJson = () => {
    if (!warnedDynamoJson && planner.suspectedDynamoJsonLine !== undefined) {
      warnedDynamoJson = true;
      report.emit({
        type: 'warning',
        message: `line ${planner.suspectedDynamoJsonLine} of ${stages.file} looks like DynamoDB JSON ({"attr":{"S":"..."}}) but is read as plain JSON; pass --input-format ddb-json if it is DynamoDB JSON`,
      });
    }
  };
  /** A row (or a transform's item) that cannot be written: this worker's reject, or another segment's (by its line). */
  const rejected = (row: RejectedRow): Promise<undefined> | undefined => {
    stages.onSkipped?.(row.origin);
    if (segment && segmentOfLine(row.origin.line, segment.count) !== segment.index) report.tally.otherSegment();
    else return report.rejections.reject(row).then(() => undefined);
    return undefined;
  };
  /** A write of this worker's segment, or undefined when it is another's (counted so) or rejected here (a promise then). */
  const own = (write: PlannedWrite, csv = false): PlannedWrite | undefined | Promise<undefined> => {
    if (segment && segmentOfWrite(write, segment.count) !== segment.index) {
      stages.onSkipped?.(write.origin);
      report.tally.otherSegment();
      return undefined;
    }
    // After the segment: a row is another worker's before it is anyone's expired row, so the workers' counts add up.
    // A delete is a delete whatever its TTL: only puts are judged (a transform's items each as a row's).
    if (expiry && write.op !== 'delete') {
      const verdict = expiryOf(write.item, expiry.attribute, expiry.at);
      if (verdict === 'expired') {
        stages.onSkipped?.(write.origin);
        report.tally.skippedExpired();
        return undefined;
      }
      if (!warnedTtlText && verdict === 'not-a-number' && looksNumeric(write.item, expiry.attribute)) {
        warnedTtlText = true;
        report.emit({
          type: 'warning',
          message: `line ${write.origin.line} of ${write.origin.file}: the --skip-expired attribute ${expiry.attribute} is a string, which DynamoDB's TTL ignores (it expires only Numbers), so such rows are written; pass --types ${expiry.attribute}:N if it holds epoch seconds`,
        });
      }
    }
    // After the segment, as a rejected row of this worker's: before any write of it, with its file, line and field.
    if (ifNewer !== undefined) {
      const problem =
        ifNewerProblem(write.item, ifNewer) ??
        (csv && stages.ifNewerUntyped && looksNumeric(write.item, ifNewer)
          ? `${ifNewer} is a number read as text (a CSV column is text unless typed), which --if-newer would compare as text, "9" after "10", and so overwrite newer items; pass --types ${ifNewer}:N to compare numbers (or --types ${ifNewer}:S to compare text on purpose)`
          : undefined);
      if (problem !== undefined) {
        stages.onSkipped?.(write.origin);
        return report.rejections
          .reject({ origin: write.origin, code: 'IF_NEWER_VALUE', message: `line ${write.origin.line} of ${write.origin.file}: ${problem}`, field: ifNewer })
          .then(() => undefined);
      }
    }
    return stages.onPlanned(write);
  };
  if (!transform)
    return (record) => {
      report.tally.rowRead();
      const planned = planner.plan(record);
      warnDynamoJson();
      return isRejected(planned) ? rejected(planned) : own(planned, record.kind === 'csv');
    };
  /** The items a transform returned for a typed row (or its throw), planned: each checked as any row's item. */
  const outputs = (typed: TypedRow, result: unknown): Planned | Promise<Planned> => {
    let items: Item[];
    try {
      items = transformOutputs(result);
    } catch (error) {
      // Invalid: the row is rejected whole (no item of it written), as one reject of its line.
      if (!(error instanceof RowError)) throw error;
      return rejected(planner.rejection(typed, error));
    }
    const { origin } = typed.record;
    // A skipped row has no key: it is the worker's of its line, as a rejected row is.
    report.tally.transformed(items.length, !segment || segmentOfLine(origin.line, segment.count) === segment.index);
    if (items.length === 0) {
      stages.onSkipped?.(origin);
      return undefined;
    }
    const writes: PlannedWrite[] = [];
    let waits: Array<Promise<undefined>> | undefined;
    for (const item of items) {
      const planned = planner.finish(typed, item, true);
      if (isRejected(planned)) {
        const wait = rejected(planned);
        if (wait) (waits ??= []).push(wait);
      } else {
        const write = own(planned);
        if (write instanceof Promise) (waits ??= []).push(write);
        else if (write) writes.push(write);
      }
    }
    const planned: Planned = writes.length === 0 ? undefined : writes.length === 1 ? writes[0] : writes;
    return waits ? Promise.all(waits).then(() => planned) : planned;
  };
  return (record) => {
    report.tally.rowRead();
    const typed = planner.typed(record);
    warnDynamoJson();
    if (isRejected(typed)) return rejected(typed);
    const { origin } = record;
    let result: unknown;
    try {
      result = transform(typed.item, {
        file: origin.file,
        line: origin.line,
        ...(origin.part !== undefined ? { part: origin.part } : {}),
        op: typed.isDelete ? 'delete' : 'put',
      });
    } catch (error) {
      return failed(typed, error);
    }
    // Awaited only for an async transform: a synchronous one costs no turn of the event loop.
    if (isThenable(result))
      return Promise.resolve(result).then(
        (value) => outputs(typed, value),
        (error: unknown) => failed(typed, error),
      );
    return outputs(typed, result);
  };

  /** A transform that threw (or whose promise rejected): the row's reject, TRANSFORM_FAILED with its message; the load goes on. */
  function failed(typed: TypedRow, error: unknown): Promise<undefined> | undefined {
    return rejected(planner.rejection(typed, transformFailure(error)));
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
