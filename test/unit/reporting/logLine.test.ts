import { describe, expect, it } from 'vitest';
import type { RateSnapshot } from '../../../src/pacing/rateControl.js';
import type { LoadCounters } from '../../../src/reporting/result.js';
import { formatProgressLine, progressFields, type ProgressFields } from '../../../src/reporting/logLine.js';

const counters = (over: Partial<LoadCounters> = {}): LoadCounters => ({
  rowsRead: 0,
  written: 0,
  superseded: 0,
  rejected: 0,
  rejectedByReason: {},
  consumedWcu: 0,
  plannedWcu: 0,
  batches: 0,
  retries: 0,
  throttledItems: 0,
  bytesRead: 0,
  otherSegments: 0,
  writtenBeforeResume: 0,
  ...over,
});

const rate = (over: Partial<RateSnapshot> = {}): RateSnapshot => ({
  targetWcu: 1000,
  currentWcu: 800,
  achievedWcu: 750,
  peakWcu: 900,
  costRatio: 1,
  tableThrottles: 0,
  keyThrottles: 0,
  decreases: 0,
  errors: 0,
  restores: 0,
  noiseShare: 0,
  slowedKeys: 0,
  ...over,
});

describe('progressFields: percent', () => {
  it.each<[label: string, bytesRead: number, totalBytes: number | undefined, percent: number | undefined]>([
    ['a quarter', 250, 1000, 25],
    ['nothing read yet', 0, 1000, 0],
    ['all', 1000, 1000, 100],
    ['a third, to one decimal', 1, 3, 33.3],
    ['two thirds, rounded up', 2, 3, 66.7],
    ['0.04% rounds to 0', 4, 10_000, 0],
    ['0.06% rounds to 0.1', 6, 10_000, 0.1],
    ['more than the total (gzip, a file that grew) caps at 100', 1500, 1000, 100],
    ['stdin: no total', 5000, undefined, undefined],
    ['an empty file: no total to share', 0, 0, undefined],
  ])('%s: %d of %s bytes is %s%%', (_label, bytesRead, totalBytes, percent) => {
    expect(progressFields(counters({ bytesRead, rowsRead: 10 }), totalBytes, 1000, undefined).percent).toBe(percent);
  });
});

describe('progressFields: ETA', () => {
  it.each<[label: string, over: Partial<LoadCounters>, totalBytes: number | undefined, elapsedMs: number, etaS: number | undefined]>([
    // 1,000 rows in a quarter of the bytes: 4,000 rows; 1,000 done; 3,000 left at 100/s.
    ['rows projected from the bytes, the rest at the pace so far', { rowsRead: 1000, bytesRead: 250, written: 1000 }, 1000, 10_000, 30],
    // 4,000 rows; written 800 + superseded 100 + rejected 50 + other segments 50 = 1,000 done; 3,000 left at 80/s = 37.5 s.
    [
      'superseded, rejected and other segments count as done; 37.5 s rounds to 38',
      { rowsRead: 1000, bytesRead: 250, written: 800, superseded: 100, rejected: 50, otherSegments: 50 },
      1000,
      10_000,
      38,
    ],
    ['pace from written rows only', { rowsRead: 1000, bytesRead: 500, written: 100, rejected: 900 }, 1000, 10_000, 100],
    ['everything read and written: 0', { rowsRead: 1000, bytesRead: 1000, written: 1000 }, 1000, 10_000, 0],
    ['more done than projected: 0, never negative', { rowsRead: 1000, bytesRead: 1000, written: 1200 }, 1000, 10_000, 0],
    ['nothing written yet: unknown', { rowsRead: 1000, bytesRead: 250, rejected: 10 }, 1000, 10_000, undefined],
    ['no total (stdin): unknown', { rowsRead: 1000, bytesRead: 250, written: 1000 }, undefined, 10_000, undefined],
    ['nothing read yet: unknown', { rowsRead: 0, bytesRead: 0, written: 0 }, 1000, 10_000, undefined],
    ['no time passed: unknown', { rowsRead: 1000, bytesRead: 250, written: 1000 }, 1000, 0, undefined],
  ])('%s', (_label, over, totalBytes, elapsedMs, etaS) => {
    expect(progressFields(counters(over), totalBytes, elapsedMs, undefined).etaS).toBe(etaS);
  });

  it('the ETA uses the unrounded share read, not the rounded percent', () => {
    // 1,000 rows in 1/3 of the bytes: 3,000 rows (33.3% would give 3,003); 2,000 left at 100/s.
    const f = progressFields(counters({ rowsRead: 1000, bytesRead: 1, written: 1000 }), 3, 10_000, undefined);
    expect([f.percent, f.etaS]).toEqual([33.3, 20]);
  });
});

describe('progressFields: the other fields', () => {
  it('copies the counters, rounds elapsed to 0.1 s and rates to whole numbers', () => {
    const f = progressFields(
      counters({
        rowsRead: 12_345,
        bytesRead: 500,
        written: 10_000,
        superseded: 7,
        rejected: 5,
        retries: 4,
        throttledItems: 3,
        throttlesByReason: { TableWriteKeyRangeThroughputExceeded: 1, UnprocessedItems: 1 },
      }),
      2000,
      8_140,
      rate({ achievedWcu: 123.6, currentWcu: 399.5, targetWcu: 400, errors: 6 }),
    );
    expect(f).toEqual<ProgressFields>({
      type: 'progress',
      elapsedS: 8.1,
      rowsRead: 12_345,
      percent: 25,
      written: 10_000,
      superseded: 7,
      rejected: 5,
      retries: 4,
      throttledItems: 3,
      throttlesByReason: { TableWriteKeyRangeThroughputExceeded: 1, UnprocessedItems: 1 },
      // Errors (retried, not about the rate) apart from throttles
      errors: 6,
      itemsPerSecond: 1229, // 10,000 / 8.14 = 1228.5
      wcuPerSecond: 124,
      rateWcu: 400,
      targetWcu: 400,
      etaS: 32, // 49,380 rows projected, 10,012 done: 39,368 / 1228.5 = 32.05 s
    });
  });

  it.each([
    [12_340, 12.3],
    [12_360, 12.4],
    [999, 1],
    [49, 0],
    [3_600_000, 3600],
  ])('%d ms elapsed is %d s', (elapsedMs, elapsedS) => {
    expect(progressFields(counters(), undefined, elapsedMs, undefined).elapsedS).toBe(elapsedS);
  });

  it('without rate control: 0 WCU/s, no rate, no target', () => {
    const f = progressFields(counters({ written: 10 }), undefined, 1000, undefined);
    expect([f.wcuPerSecond, f.rateWcu, f.targetWcu]).toEqual([0, undefined, undefined]);
  });

  it('unlimited (no target, no rate in force): the rate and target stay undefined, the achieved rate shows', () => {
    const f = progressFields(counters(), undefined, 1000, rate({ targetWcu: undefined, currentWcu: undefined, achievedWcu: 2500.4 }));
    expect([f.wcuPerSecond, f.rateWcu, f.targetWcu]).toEqual([2500, undefined, undefined]);
  });

  it('no time passed: 0 items/s, not Infinity or NaN', () => {
    expect(progressFields(counters({ written: 10 }), undefined, 0, undefined).itemsPerSecond).toBe(0);
  });
});

const FIELDS: ProgressFields = {
  type: 'progress',
  elapsedS: 65,
  rowsRead: 1_234_567,
  percent: 25,
  written: 1_000_000,
  superseded: 12,
  rejected: 5,
  retries: 4,
  throttledItems: 3,
  throttlesByReason: {},
  errors: 6,
  itemsPerSecond: 15_385,
  wcuPerSecond: 1500,
  rateWcu: 2000,
  targetWcu: 2500,
  etaS: 7380,
};

describe('formatProgressLine: text', () => {
  it('one line with every count, grouped by thousands, the rate in force and the ETA', () => {
    expect(formatProgressLine(FIELDS, 'text', '2024-06-01T12:00:00.000Z')).toBe(
      'ddb-spread: progress: 1,234,567 rows read (25.0%), 1,000,000 written, 15,385 items/s, 1,500 / 2,000 WCU/s, throttled 3, errors 6, retries 4, rejected 5, elapsed 1 min 05 s, ETA 2 h 03 min\n',
    );
  });

  it('leaves out what is unknown: the percent (stdin), the rate in force (unlimited), the ETA', () => {
    expect(formatProgressLine({ ...FIELDS, percent: undefined, rateWcu: undefined, etaS: undefined }, 'text')).toBe(
      'ddb-spread: progress: 1,234,567 rows read, 1,000,000 written, 15,385 items/s, 1,500 WCU/s, throttled 3, errors 6, retries 4, rejected 5, elapsed 1 min 05 s\n',
    );
  });

  it('the percent always has one decimal', () => {
    expect(formatProgressLine({ ...FIELDS, percent: 33.3 }, 'text')).toContain('rows read (33.3%)');
    expect(formatProgressLine({ ...FIELDS, percent: 0 }, 'text')).toContain('rows read (0.0%)');
    expect(formatProgressLine({ ...FIELDS, percent: 100 }, 'text')).toContain('rows read (100.0%)');
  });

  it.each([
    [0, '0.0 s'],
    [0.4, '0.4 s'],
    [59.4, '59.4 s'],
    [59.6, '59.6 s'],
    [65, '1 min 05 s'],
    [600, '10 min 00 s'],
    [3599, '59 min 59 s'],
    [3599.6, '1 h 00 min'],
    [3600, '1 h 00 min'],
    [7380, '2 h 03 min'],
    [7439, '2 h 04 min'],
    [90_000, '25 h 00 min'],
  ])('%d s is written %s (elapsed and ETA alike)', (seconds, text) => {
    const line = formatProgressLine({ ...FIELDS, elapsedS: seconds, etaS: seconds }, 'text');
    expect(line).toContain(`elapsed ${text}, ETA ${text}\n`);
  });

  it('an ETA of 0 is shown (the input is done, the last batches are in flight)', () => {
    expect(formatProgressLine({ ...FIELDS, etaS: 0 }, 'text')).toMatch(/, ETA 0\.0 s\n$/);
  });

  it('the time is not part of the text line (the logger adds its own)', () => {
    expect(formatProgressLine(FIELDS, 'text', '2024-06-01T12:00:00.000Z')).not.toContain('2024');
  });
});

describe('formatProgressLine: JSON', () => {
  it('one line that parses back to the fields, with time first when given', () => {
    const line = formatProgressLine(FIELDS, 'json', '2024-06-01T12:00:00.000Z');
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed).toEqual({ time: '2024-06-01T12:00:00.000Z', ...FIELDS });
    expect(Object.keys(parsed)[0]).toBe('time');
    expect(Object.keys(parsed).slice(1)).toEqual(Object.keys(FIELDS));
  });

  it('without a time: no time field, type first', () => {
    const parsed = JSON.parse(formatProgressLine(FIELDS, 'json')) as Record<string, unknown>;
    expect(parsed).toEqual(FIELDS);
    expect('time' in parsed).toBe(false);
    expect(Object.keys(parsed)[0]).toBe('type');
  });

  it('unknown fields are left out rather than written as null', () => {
    const parsed = JSON.parse(
      formatProgressLine({ ...FIELDS, percent: undefined, rateWcu: undefined, targetWcu: undefined, etaS: undefined }, 'json', 't'),
    ) as Record<string, unknown>;
    for (const key of ['percent', 'rateWcu', 'targetWcu', 'etaS']) expect(key in parsed, key).toBe(false);
    expect(parsed['written']).toBe(1_000_000);
  });

  it('progressFields -> JSON line -> parse gives the fields back, for a run from start to end', () => {
    const total = 40_000;
    for (let t = 0; t <= 10; t++) {
      const bytesRead = (total * t) / 10;
      const f = progressFields(counters({ rowsRead: 100 * t, bytesRead, written: 90 * t, superseded: 5 * t, rejected: 5 * t }), total, t * 1000, rate());
      const parsed = JSON.parse(formatProgressLine(f, 'json', `2024-06-01T12:00:${String(t).padStart(2, '0')}.000Z`)) as Record<string, unknown>;
      expect(parsed, `t = ${t}`).toEqual(JSON.parse(JSON.stringify({ time: `2024-06-01T12:00:${String(t).padStart(2, '0')}.000Z`, ...f })));
      expect(parsed['etaS'], `t = ${t}`).toBe(t === 0 ? undefined : Math.round((1000 - 100 * t) / 90));
    }
  });
});
