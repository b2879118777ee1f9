/**
 * The conditionFailed outcome in every sum of a load's rows: writes to account for, the summary's line and its
 * "not written", the progress gauge, the tally's verdict, a finished checkpoint's outcome, a checkpoint's
 * totals, and ddb-spread status over several workers.
 */
import { describe, expect, it } from 'vitest';
import { BatchProgress } from '../../../src/checkpointing/checkpointState.js';
import { statusText } from '../../../src/cli/statusCommand.js';
import { loadStatus } from '../../../src/load/loadStatus.js';
import { LoadTally } from '../../../src/load/loadTally.js';
import { WORKER_FORMAT, type WorkerDoc } from '../../../src/load/workerBoard.js';
import { nextGauge } from '../../../src/reporting/progressGauge.js';
import type { LoadResult } from '../../../src/reporting/result.js';
import { writesToAccount } from '../../../src/reporting/result.js';
import { formatSummary } from '../../../src/reporting/summary.js';
import type { PlannedWrite } from '../../../src/shared/types.js';

/** 10 rows: 6 written, 3 whose condition failed, 1 rejected. */
const result = {
  table: 'T',
  rowsRead: 10,
  written: 6,
  superseded: 0,
  rejected: 1,
  rejectedByReason: { IF_NEWER_VALUE: 1 },
  conditionFailed: 3,
  otherSegments: 0,
  consumedWcu: 9,
  plannedWcu: 9,
  batches: 1,
  retries: 0,
  throttledItems: 0,
  elapsedMs: 1000,
  itemsPerSecond: 6,
  rate: { reason: 'x', keyWcu: 1000, peakWcu: 0, averageWcu: 0, costRatio: 1, tableThrottles: 0, keyThrottles: 0, decreases: 0, errors: 0, restores: 0 },
  hotKeys: [],
  order: 'input',
  orderTempBytes: 0,
  skipped: [],
  complete: false,
} as unknown as LoadResult;

const write = (n: number): PlannedWrite => ({ origin: { file: 'f', line: n, raw: '' }, item: {}, keyId: `k${n}`, partitionId: `k${n}`, size: 1, wcu: 1 });

describe('conditionFailed in the sums', () => {
  it('is a settled row: not a write left to account for', () => {
    expect(writesToAccount(result)).toBe(7);
    expect(writesToAccount({ rowsRead: 10, conditionFailed: 3, skippedExpired: 1 })).toBe(6);
  });

  it('the summary says it, and a stopped load counts only the rest as not written', () => {
    expect(formatSummary(result)).toMatch(/\n {2}condition failed 3 {2}\(--if-not-exists\/--if-newer: the table kept its item/);
    expect(formatSummary(result, 'asked to stop')).not.toMatch(/\n {2}not written /);
    expect(formatSummary({ ...result, written: 5 }, 'asked to stop')).toMatch(/\n {2}not written {3}1 /);
    expect(formatSummary({ ...result, conditionFailed: undefined, written: 9 })).not.toMatch(/condition failed/);
  });

  it('the progress gauge counts them done', () => {
    const counters = {
      rowsRead: 10,
      written: 6,
      superseded: 0,
      rejected: 1,
      otherSegments: 0,
      writtenBeforeResume: 0,
      batches: 1,
      bytesRead: 100,
      conditionFailed: 3,
    };
    const gauge = nextGauge(undefined, { counters, totalBytes: 100, elapsedMs: 1000 }, { globalOrder: false, inputRead: true, resumeBatches: 0 });
    expect(gauge.done).toBe(10);
  });

  it('the tally adds up with them, a finished outcome keeps them, a resume restores them from the checkpoint', () => {
    const tally = new LoadTally();
    for (let i = 0; i < 4; i++) tally.rowRead();
    tally.batchWritten(
      { written: [write(1), write(2)], rejected: [], conditionFailed: [write(3), write(4)], consumedWcu: 4, throttledItems: 0, retries: 0, revived: 0 },
      () => 1,
      false,
    );
    expect(tally.counters.conditionFailed).toBe(2);
    expect(tally.accounted).toBe(true);
    expect(tally.outcome()).toMatchObject({ written: 2, conditionFailed: 2 });
    const progress = new BatchProgress();
    progress.complete(0, { written: 2, plannedWcu: 2, consumedWcu: 4, writeRejects: 0, conditionFailed: 2 });
    progress.complete(1, { written: 1, plannedWcu: 1, consumedWcu: 1, writeRejects: 0 });
    expect(progress.totals).toMatchObject({ written: 3, conditionFailed: 2 });
    const resumed = new LoadTally();
    resumed.resume(progress.totals);
    expect(resumed.counters).toMatchObject({ written: 3, conditionFailed: 2 });
  });

  it('ddb-spread status sums the workers', () => {
    const doc = (segment: string, conditionFailed?: number): WorkerDoc => ({
      format: WORKER_FORMAT,
      version: 1,
      segment,
      listedAt: 'L',
      state: 'finished',
      table: 'T',
      host: 'h',
      pid: 1,
      startedAt: 'L',
      updatedAt: new Date(1000).toISOString(),
      rowsRead: 10,
      written: 10 - (conditionFailed ?? 0),
      superseded: 0,
      rejected: 0,
      otherSegments: 0,
      notWritten: 0,
      rejectedByReason: {},
      complete: true,
      wcu: 1,
      ...(conditionFailed === undefined ? {} : { conditionFailed }),
    });
    const status = loadStatus(2, [doc('0/2', 4), doc('1/2', 1)], 2000, 'L');
    expect(status).toMatchObject({ written: 15, conditionFailed: 5, complete: true });
    expect(statusText({ ...status, listing: 'l.json', listedAt: 'L', parts: 1, bytes: 1 } as Parameters<typeof statusText>[0])).toMatch(/condition failed 5/);
    expect(loadStatus(2, [doc('0/2'), doc('1/2')], 2000, 'L').conditionFailed).toBe(0);
  });
});
