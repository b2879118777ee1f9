import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { columnMeans, sparkline } from '../../../src/reporting/charts.js';
import { htmlReport } from '../../../src/reporting/htmlReport.js';
import { formatSummary, reportTimeline } from '../../../src/reporting/summary.js';
import { TimelineRecorder, bucketWcu, type TimelineCounts } from '../../../src/reporting/timeline.js';
import type { LoadResult } from '../../../src/reporting/result.js';

const ZERO: TimelineCounts = { written: 0, rejected: 0, plannedWcu: 0, consumedWcu: 0, throttledItems: 0, tableThrottles: 0, keyThrottles: 0, errors: 0 };
const NAMES = Object.keys(ZERO) as Array<keyof TimelineCounts>;

/** A step of a load: time passes, counters grow, some keys are written. */
const step = fc.record({
  dt: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 40_000 })),
  grow: fc.record(Object.fromEntries(NAMES.map((n) => [n, fc.integer({ min: 0, max: 50 })])) as Record<keyof TimelineCounts, fc.Arbitrary<number>>),
  keys: fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e'), fc.integer({ min: 1, max: 9 })), { maxLength: 4 }),
  rate: fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
});

describe('TimelineRecorder', () => {
  it('buckets add up to the counters since begin, stay within the bound, and tile the time without gaps', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), fc.constantFrom(2, 4, 8), fc.integer({ min: 0, max: 30 }), (steps, maxBuckets, before) => {
        const recorder = new TimelineRecorder({ bucketMs: 1000, maxBuckets });
        const counts: TimelineCounts = { ...ZERO, written: before, plannedWcu: before };
        let t = 5;
        recorder.begin(t, counts);
        let keyUnits = 0;
        for (const s of steps) {
          t += s.dt;
          for (const n of NAMES) counts[n] += s.grow[n];
          for (const [key, units] of s.keys) {
            recorder.key(key, units);
            keyUnits += units;
          }
          recorder.sample(t, counts, s.rate);
        }
        const { buckets, before: kept, bucketMs } = recorder.timeline();
        expect(kept.written).toBe(before);
        expect(buckets.length).toBeLessThanOrEqual(maxBuckets);
        for (const n of NAMES) expect(buckets.reduce((sum, b) => sum + b[n], 0)).toBe(counts[n] - (n === 'written' || n === 'plannedWcu' ? before : 0));
        // Contiguous from 0 to the last sample.
        let at = 0;
        for (const b of buckets) {
          expect(b.startMs).toBe(at);
          at += b.ms;
        }
        expect(at).toBe(t - 5);
        for (const b of buckets.slice(0, -1)) expect(b.ms).toBe(bucketMs);
        // Top keys never claim more than was written under keys.
        expect(buckets.flatMap((b) => b.keys).reduce((sum, k) => sum + k.units, 0)).toBeLessThanOrEqual(keyUnits);
      }),
      { numRuns: 100 },
    );
  });

  it('puts each sample in its own bucket, with the rate in force, the keys booked before it and gaps as empty buckets', () => {
    const recorder = new TimelineRecorder({ bucketMs: 5000 });
    recorder.begin(1000, ZERO);
    recorder.key('hot', 40);
    recorder.key('cold', 2);
    recorder.sample(3000, { ...ZERO, written: 42, plannedWcu: 42, tableThrottles: 1 }, 300);
    recorder.key('cold', 8);
    // 14 s after begin: bucket 2; bucket 1 (5-10 s) had nothing and keeps the rate in force.
    recorder.sample(15_000, { ...ZERO, written: 50, plannedWcu: 50, tableThrottles: 1, errors: 2 }, 210);
    const { buckets } = recorder.timeline();
    expect(buckets.map((b) => [b.startMs, b.ms, b.written, b.tableThrottles, b.errors, b.rateWcu])).toEqual([
      [0, 5000, 42, 1, 0, 300],
      [5000, 5000, 0, 0, 0, 300],
      [10_000, 4000, 8, 0, 2, 210],
    ]);
    expect(buckets[0]!.keys).toEqual([
      { key: 'hot', units: 40 },
      { key: 'cold', units: 2 },
    ]);
    expect(buckets[2]!.keys).toEqual([{ key: 'cold', units: 8 }]);
    expect(bucketWcu(buckets[0]!)).toBeCloseTo(8.4);
  });

  it('a ten-hour load fits: buckets merge pairwise and the interval doubles', () => {
    const recorder = new TimelineRecorder();
    recorder.begin(0, ZERO);
    const counts = { ...ZERO };
    for (let t = 200; t <= 36_000_000; t += 5000) {
      counts.written += 10;
      counts.plannedWcu += 10;
      recorder.sample(t, counts, 10);
    }
    const { buckets, bucketMs } = recorder.timeline();
    expect(buckets.length).toBeLessThanOrEqual(240);
    expect(bucketMs).toBe(256_000);
    expect(buckets.reduce((sum, b) => sum + b.written, 0)).toBe(counts.written);
    expect(buckets[0]!.rateWcu).toBe(10);
  });

  it('a last bucket shorter than a quarter of the interval joins the one before (its rate would be noise)', () => {
    const recorder = new TimelineRecorder({ bucketMs: 5000 });
    recorder.begin(0, ZERO);
    recorder.sample(4000, { ...ZERO, written: 400, plannedWcu: 400 }, undefined);
    recorder.sample(5200, { ...ZERO, written: 420, plannedWcu: 420 }, undefined);
    const { buckets } = recorder.timeline();
    expect(buckets).toHaveLength(1);
    expect(buckets[0]).toMatchObject({ startMs: 0, ms: 5200, written: 420, rateWcu: null });
  });
});

describe('sparkline', () => {
  it('draws eight heights of the highest column, zero as a gap, fitted to the width', () => {
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7, 8], 20)).toBe(' ▁▂▃▄▅▆▇█');
    expect(sparkline([5, 5, 0, 5], 10)).toBe('██ █');
    const long = Array.from({ length: 1000 }, (_, i) => i % 100);
    expect([...sparkline(long, 37)].length).toBeLessThanOrEqual(37);
    expect(sparkline([], 10)).toBe('');
  });

  it('columns are means of whole groups, so the area stays the load', () => {
    expect(columnMeans([2, 4, 6, 8, 10], 2)).toEqual([4, 9]);
  });

  it("the summary's course line fits the terminal's width", () => {
    const buckets = Array.from({ length: 200 }, (_, i) => ({
      startMs: i * 5000,
      ms: 5000,
      written: 100,
      rejected: 0,
      plannedWcu: i < 100 ? 5000 : 2500,
      consumedWcu: 0,
      throttledItems: 0,
      tableThrottles: 0,
      keyThrottles: 0,
      errors: 0,
      rateWcu: null,
      keys: [],
    }));
    const result = { timeline: { bucketMs: 5000, before: { written: 0, plannedWcu: 0, consumedWcu: 0 }, buckets } };
    for (const width of [60, 80, 132]) {
      const line = formatSummaryCourse(result, width);
      expect([...line].length).toBeLessThanOrEqual(width);
      expect(line).toMatch(/^ {2}course {8}█+.?▄+ {2}\(top 1,000 WCU\/s; [^)]+ each\)$/);
    }
  });
});

/** The course line of a summary (the rest of the summary needs a whole result; only the line is tested here). */
function formatSummaryCourse(partial: Pick<LoadResult, 'timeline'>, width: number): string {
  const result = {
    table: 'T',
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
    elapsedMs: 1000,
    itemsPerSecond: 0,
    rate: { reason: 'x', keyWcu: 1000, peakWcu: 0, averageWcu: 0, costRatio: 1, tableThrottles: 0, keyThrottles: 0, decreases: 0, errors: 0, restores: 0 },
    hotKeys: [],
    order: 'input',
    orderTempBytes: 0,
    skipped: [],
    complete: true,
    ...partial,
  } as unknown as LoadResult;
  return formatSummary(result, undefined, true, width)
    .split('\n')
    .find((l) => l.startsWith('  course'))!;
}

describe('the timeline in the report files', () => {
  const timeline = {
    bucketMs: 2000,
    before: { written: 0, plannedWcu: 0, consumedWcu: 0 },
    buckets: [
      {
        startMs: 0,
        ms: 2000.4,
        written: 3,
        rejected: 0,
        plannedWcu: 3,
        consumedWcu: 2.96,
        throttledItems: 0,
        tableThrottles: 0,
        keyThrottles: 0,
        errors: 0,
        rateWcu: 299.99,
        keys: [{ key: '</script><script>alert(1)</script>', units: 3 }],
      },
    ],
  };

  it('--no-excerpts hides the key values of every bucket; units are rounded as the summary rounds them', () => {
    const hidden = reportTimeline(timeline, false);
    expect(hidden.buckets[0]).toMatchObject({ ms: 2000, consumedWcu: 3, rateWcu: 300, keys: [{ key: '(hidden)', units: 3 }] });
    expect(JSON.stringify(hidden)).not.toContain('script');
  });

  it('the HTML page embeds the report as data no value can end: a key holding </script> stays inside it', () => {
    const report = { table: 'T', timeline: reportTimeline(timeline) };
    const page = htmlReport(report);
    expect(page).not.toContain('</script><script>alert');
    const data = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(page)![1]!;
    expect(JSON.parse(data)).toEqual(report);
    // Only the page's own script may run, by its hash; nothing may be fetched.
    expect(page).toMatch(/default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+=*'/);
  });
});
