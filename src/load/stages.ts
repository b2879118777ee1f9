import type { Batch, Batcher } from '../batching/batch.js';
import { isGlobalOrder, type OrderMode } from '../ordering/order.js';
import type { WriteOrderer } from '../ordering/writeOrderer.js';
import type { LoadEvent } from '../reporting/events.js';
import type { PlannedWrite } from '../shared/types.js';
import { isRejected, type RowPlanner, type SourceRecord } from '../typing/planRow.js';
import type { LoadStop } from './loadStop.js';
import type { LoadTally } from './loadTally.js';
import type { Rejections } from './rejections.js';
import { segmentOfLine, segmentOfWrite, type Segment } from './segment.js';

/*
 * The stages of a row's journey as async generators, each pulling from the one before: records →
 * planned writes → the write order → batches. The consumer (the dispatcher) pulls a batch only when it
 * has a slot for it, so reading waits on writing through ordinary backpressure (lib-storage's bounded
 * workers over one generator). Each stage stops pulling once the load is stopping.
 */

/** What the stages report to: the tally, the reject file, progress and warnings. */
export interface StageReport {
  stop: LoadStop;
  tally: LoadTally;
  rejections: Rejections;
  progress: () => void;
  emit: (event: LoadEvent) => void;
}

/**
 * Records typed and keyed into planned writes; rows that cannot be planned are rejected, rows of other
 * segments counted and dropped. `onPlanned` maps each write before it goes on (a dry run's slim copy).
 * The records are closed (and the input with them, by `close`) however the stage ends.
 */
export async function* plannedWrites(
  records: AsyncGenerator<SourceRecord>,
  from: { file: string; planner: RowPlanner; segment: Segment | undefined; onPlanned: (write: PlannedWrite) => PlannedWrite; close: () => void },
  report: StageReport,
): AsyncGenerator<PlannedWrite> {
  const { planner, segment } = from;
  let warnedDynamoJson = false;
  try {
    for await (const record of records) {
      if (report.stop.stopping) break;
      report.tally.rowRead();
      const planned = planner.plan(record);
      if (!warnedDynamoJson && planner.suspectedDynamoJsonLine !== undefined) {
        warnedDynamoJson = true;
        report.emit({ type: 'warning', message: `line ${planner.suspectedDynamoJsonLine} of ${from.file} looks like DynamoDB JSON ({"attr":{"S":"..."}}) but is read as plain JSON; pass --input-format ddb-json if it is DynamoDB JSON` });
      }
      if (isRejected(planned)) {
        if (segment && segmentOfLine(planned.origin.line, segment.count) !== segment.index) report.tally.otherSegment();
        else await report.rejections.reject(planned);
        continue;
      }
      if (segment && segmentOfWrite(planned, segment.count) !== segment.index) {
        report.tally.otherSegment();
        continue;
      }
      yield from.onPlanned(planned);
      report.progress();
    }
  } finally {
    await records.return(undefined);
    from.close();
  }
}

/**
 * Planned writes in the write order: what the order hands out while reading, then, once every row is
 * read, what it still holds. Rows still held when the load stops are never sent, and are reported as
 * not written.
 */
export async function* orderedWrites(writes: AsyncIterable<PlannedWrite>, orderer: WriteOrderer, mode: OrderMode, report: StageReport): AsyncGenerator<PlannedWrite> {
  for await (const write of writes) yield* await orderer.push(write);
  if (report.stop.stopping) return;
  if (isGlobalOrder(mode)) report.emit({ type: 'ordering', mode, rows: orderer.held, spilled: orderer.stats.spilled });
  for await (const write of orderer.drain()) {
    if (report.stop.stopping) break;
    yield write;
    report.progress();
  }
}

/**
 * Writes grouped into BatchWriteItem batches (≤ 25 requests, ≤ 16 MB, one request per primary key: a
 * later write of a key supersedes the earlier one in the same batch). The last, partial batch goes out
 * only when `sendLast()` says so once every write is batched.
 */
export async function* batches(writes: AsyncIterable<PlannedWrite>, batcher: Batcher, tally: LoadTally, sendLast: () => boolean): AsyncGenerator<Batch> {
  for await (const write of writes) {
    const { full, superseded } = batcher.push(write);
    if (superseded) tally.superseded();
    if (full) yield full;
  }
  const last = batcher.flush();
  if (last && sendLast()) yield last;
}
