/**
 * The summary and the progress gauge with --transform's counters: a skipped row is accounted for, the extra
 * items of a split row are writes to account for; "not written" of a stopped load counts what is left.
 */
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../../src/reporting/result.js';
import { writesToAccount } from '../../../src/reporting/result.js';
import { formatSummary } from '../../../src/reporting/summary.js';
import { nextGauge } from '../../../src/reporting/progressGauge.js';

/** 10 rows: 2 split into 2 items, 1 skipped, 1 rejected; 8 written when the load stopped, 2 items not written. */
const result = {
  table: 'T',
  rowsRead: 10,
  written: 8,
  superseded: 0,
  rejected: 1,
  rejectedByReason: { TRANSFORM_FAILED: 1 },
  skippedByTransform: 1,
  transformOutputs: 12,
  splitWrites: 2,
  otherSegments: 0,
  consumedWcu: 8,
  plannedWcu: 8,
  batches: 1,
  retries: 0,
  throttledItems: 0,
  elapsedMs: 1000,
  itemsPerSecond: 8,
  rate: { reason: 'x', keyWcu: 1000, peakWcu: 0, averageWcu: 0, costRatio: 1, tableThrottles: 0, keyThrottles: 0, decreases: 0, errors: 0, restores: 0 },
  hotKeys: [],
  order: 'input',
  orderTempBytes: 0,
  skipped: [],
  complete: false,
} as unknown as LoadResult;

describe('transform counters', () => {
  it('writes to account for: rows read + extra items of split rows - rows skipped', () => {
    expect(writesToAccount(result)).toBe(11);
    expect(writesToAccount({ rowsRead: 10 })).toBe(10);
  });

  it('the summary has a transform line, and a stopped load counts the items left as not written', () => {
    const summary = formatSummary(result, 'asked to stop');
    expect(summary).toMatch(/\n {2}transform {5}12 items out, 1 rows skipped \(neither written nor rejected\), 2 extra items of split rows\n/);
    expect(summary).toMatch(/\n {2}not written {3}2 /);
    expect(formatSummary({ ...result, skippedByTransform: undefined, transformOutputs: undefined, splitWrites: undefined })).not.toMatch(/transform/);
  });

  it('the progress gauge counts rows: a skipped row is done, a split row is one row', () => {
    const counters = {
      rowsRead: 10,
      written: 10,
      superseded: 0,
      rejected: 1,
      otherSegments: 0,
      writtenBeforeResume: 0,
      batches: 1,
      bytesRead: 100,
      skippedByTransform: 1,
      splitWrites: 2,
    };
    const gauge = nextGauge(undefined, { counters, totalBytes: 100, elapsedMs: 1000 }, { globalOrder: false, inputRead: true, resumeBatches: 0 });
    expect(gauge.done).toBe(10);
    expect(gauge.percent).toBe(100);
  });
});
