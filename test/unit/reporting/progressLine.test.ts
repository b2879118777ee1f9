/**
 * The progress line's figures and layout: percent from rows settled (not bytes pulled), an ETA that is
 * finite and smooth, each phase named, and a line that fits the terminal without losing throttles,
 * errors or rejects.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextGauge, type Gauge, type GaugeReading, type PhaseFacts } from '../../../src/reporting/progressGauge.js';
import { progressLine, type LineFields } from '../../../src/reporting/progressLine.js';

const STREAMED: PhaseFacts = { globalOrder: false, inputRead: false, resumeBatches: 0 };
const MB = 1024 * 1024;

function reading(at: number, c: Partial<GaugeReading['counters']>, totalBytes: number | 'stdin' = 100 * MB): GaugeReading {
  const counters = { rowsRead: 0, written: 0, superseded: 0, rejected: 0, otherSegments: 0, writtenBeforeResume: 0, batches: 0, bytesRead: 0, ...c };
  return { counters, totalBytes: totalBytes === 'stdin' ? undefined : totalBytes, elapsedMs: at * 1000 };
}

function fields(gauge: Gauge, more: Partial<LineFields> = {}): LineFields {
  return {
    gauge,
    globalOrder: false,
    rowsRead: 0,
    written: gauge.done,
    elapsedS: 10,
    wcu: '812 / 1,000 WCU/s',
    throttled: 0,
    errors: 0,
    rejected: 0,
    retries: 0,
    ...more,
  };
}

/** Feeds readings one by one, as the progress events come. */
function run(readings: GaugeReading[], facts: (i: number) => PhaseFacts = () => STREAMED): Gauge[] {
  const gauges: Gauge[] = [];
  for (const [i, r] of readings.entries()) gauges.push(nextGauge(gauges.at(-1), r, facts(i)));
  return gauges;
}

describe('progress gauge', () => {
  it('the percent is rows settled of the rows the input holds, not the share of its bytes pulled', () => {
    // The issue's load: 62% of the bytes pulled at 2 s, a tenth of the rows written.
    const [g] = run([reading(2, { rowsRead: 62_000, bytesRead: 62 * MB, written: 10_000, batches: 400 })]);
    expect(g!.totalExact).toBe(false);
    expect(g!.total).toBeCloseTo(100_000);
    expect(g!.totalExact).toBe(false);
    expect(g!.percent).toBeCloseTo(10);
    expect(progressLine(fields(g!), 200)).toContain('written 10,000 of ~100,000 rows');
  });

  it('the ETA is the rows left at the recent rate: "--" until there is one, then finite, and one slow second does not make it jump', () => {
    const readings = [0, 1, 2, 3, 4, 5].map((s) => reading(s, { rowsRead: 50_000, bytesRead: 50 * MB, written: s * 1_000, batches: 1 + s * 40 }));
    const gauges = run(readings);
    expect(gauges[0]!.etaS).toBeUndefined();
    expect(gauges[0]!.total).toBe(100_000);
    expect(progressLine(fields(gauges[0]!), 200)).toContain('ETA --');
    // Half the bytes pulled: 100,000 rows; 95,000 left at 1,000 rows/s.
    expect(gauges[5]!.etaS).toBeCloseTo(95, 0);
    // A second with no write: the rate over the last 5 s falls by a fifth, the ETA stays finite and near.
    const stalled = nextGauge(gauges[5], reading(6, { rowsRead: 50_000, bytesRead: 50 * MB, written: 5_000, batches: 201 }), STREAMED);
    expect(stalled.etaS).toBeDefined();
    expect(Number.isFinite(stalled.etaS)).toBe(true);
    expect(stalled.etaS!).toBeLessThan(95 * 1.5);
  });

  it('names each phase: a global order reads, then plans, then writes; a resume skips what is done', () => {
    const global = (inputRead: boolean): PhaseFacts => ({ globalOrder: true, inputRead, resumeBatches: 0 });
    const read = nextGauge(undefined, reading(1, { rowsRead: 50_000, bytesRead: 50 * MB }), global(false));
    expect(read.phase).toBe('reading');
    expect(progressLine(fields(read, { globalOrder: true, rowsRead: 50_000 }), 200)).toMatch(
      /^reading \(50,000 rows, 50\.0% of the input's bytes\) \[░+\] 0% \| written 0 of ~100,000 rows/,
    );
    const planned = nextGauge(read, reading(2, { rowsRead: 100_000, bytesRead: 100 * MB }), global(true));
    expect(planned.phase).toBe('planning');
    expect(progressLine(fields(planned, { globalOrder: true }), 200)).toMatch(/^planning the write order .* written 0 of 100,000 rows/);
    const writing = nextGauge(planned, reading(3, { rowsRead: 100_000, bytesRead: 100 * MB, written: 5_000, batches: 200 }), global(true));
    expect(writing.phase).toBe('writing');
    expect(writing.percent).toBeCloseTo(5);

    const resume: PhaseFacts = { globalOrder: false, inputRead: false, resumeBatches: 400 };
    const skipping = nextGauge(undefined, reading(1, { rowsRead: 8_000, bytesRead: 8 * MB, written: 8_000, writtenBeforeResume: 8_000, batches: 320 }), resume);
    expect(skipping.phase).toBe('resuming');
    expect(progressLine(fields(skipping), 200)).toMatch(/^resuming: skipping rows already written \[█+░+\] 8%/);
    // Rows skipped cost no time: the rate (and so the ETA) counts this run's writes only.
    const after = run(
      [1, 2, 3].map((s) => reading(s, { rowsRead: 12_000, bytesRead: 12 * MB, written: 10_000 + s * 100, writtenBeforeResume: 10_000, batches: 401 + s * 4 })),
      () => resume,
    );
    expect(after[2]!.rowsPerSecond).toBeCloseTo(100);
  });

  it('stdin (size unknown): no percent until every row is read, then exact', () => {
    const streaming = nextGauge(undefined, reading(1, { rowsRead: 5_000, written: 2_000, batches: 80 }, 'stdin'), STREAMED);
    expect(streaming.percent).toBeUndefined();
    expect(progressLine(fields(streaming), 200)).toMatch(/^writing \| written 2,000 rows \| ETA --/);
    const ended = nextGauge(streaming, reading(2, { rowsRead: 5_000, written: 5_000, batches: 200 }, 'stdin'), { ...STREAMED, inputRead: true });
    expect(ended.percent).toBe(100);
  });

  it('bytes handed over a chunk at a time: the projection keeps its highest, so the percent does not run ahead of the rows', () => {
    // 10 chunks of 1 MB, 1,000 rows each; a chunk's bytes are counted before its rows are read.
    const readings = Array.from({ length: 36 }, (_, i) => {
      const rowsRead = i * 250;
      return reading(
        i * 0.2,
        { rowsRead, bytesRead: Math.min(10, Math.floor(rowsRead / 1000) + 1) * MB, written: Math.max(0, rowsRead - 500), batches: i },
        10 * MB,
      );
    });
    const gauges = run(readings);
    for (const [i, g] of gauges.entries()) {
      if (i > 0 && gauges[i - 1]!.total !== undefined) expect(g.total).toBeGreaterThanOrEqual(gauges[i - 1]!.total!);
      // Past the third chunk the projection is within a tenth of the truth, and the percent within 10 points of it.
      if (i >= 12) expect(g.total).toBeGreaterThanOrEqual(9_000);
      if (i >= 12) expect(g.percent! - (g.done / 10_000) * 100).toBeLessThan(10);
    }
  });

  it('a file pulled whole at once: no projection while its rows still come out of the buffers, then exact', () => {
    const pulled = nextGauge(undefined, reading(0.2, { rowsRead: 900, bytesRead: MB, written: 500, batches: 20 }, MB), STREAMED);
    expect(pulled.total).toBeUndefined();
    expect(pulled.percent).toBeUndefined();
    const read = nextGauge(pulled, reading(0.4, { rowsRead: 3_000, bytesRead: MB, written: 1_500, batches: 60 }, MB), { ...STREAMED, inputRead: true });
    expect(read).toMatchObject({ total: 3_000, totalExact: true, percent: 50 });
  });

  it('over any run of readings: percent in 0..100, never lower, 100 only once every row of the whole input is settled; ETA finite', () => {
    // Steps of a load: rows read, settled, bytes pulled (a striped read pulls ahead of its rows), seconds.
    const step = fc.record({ read: fc.nat(5_000), settle: fc.nat(5_000), bytes: fc.nat(8 * MB), seconds: fc.double({ min: 0.05, max: 3, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 400 }), fc.boolean(), (steps, endAt, knownSize) => {
        const totalRows = 1 + steps.reduce((n, s) => n + s.read, 0);
        const totalBytes = 200 * MB;
        let rowsRead = 0;
        let done = 0;
        let bytes = 0;
        let at = 0;
        let previous: Gauge | undefined;
        for (const [i, s] of steps.entries()) {
          const inputRead = i >= endAt;
          rowsRead = inputRead ? totalRows : Math.min(totalRows - 1, rowsRead + s.read);
          done = Math.min(rowsRead, done + s.settle);
          bytes = inputRead ? totalBytes : Math.min(totalBytes, bytes + s.bytes);
          at += s.seconds;
          const c = { rowsRead, written: done, bytesRead: bytes, batches: Math.ceil(done / 25) };
          const g = nextGauge(previous, reading(at, c, knownSize ? totalBytes : 'stdin'), { ...STREAMED, inputRead });
          if (g.percent !== undefined) {
            expect(g.percent).toBeGreaterThanOrEqual(0);
            expect(g.percent).toBeLessThanOrEqual(100);
            if (previous?.percent !== undefined) expect(g.percent).toBeGreaterThanOrEqual(previous.percent);
            if (g.percent === 100) expect(inputRead && done === rowsRead).toBe(true);
          }
          if (g.etaS !== undefined) expect(Number.isFinite(g.etaS) && g.etaS >= 0).toBe(true);
          previous = g;
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('progress line', () => {
  const gauge = nextGauge(undefined, reading(2, { rowsRead: 62_000, bytesRead: 62 * MB, written: 10_000, batches: 400 }), STREAMED);

  it('fits the width, dropping the least important fields first; throttles, errors and rejects stay when not zero', () => {
    const busy = fields(gauge, { throttled: 1_234, errors: 5, rejected: 17, retries: 40 });
    const wide = progressLine(busy, 200);
    expect(wide).toMatch(
      /^writing \[█+░+\] 10% \| written 10,000 of ~100,000 rows \| ETA -- \| 812 \/ 1,000 WCU\/s \| throttled 1,234 \| errors 5 \| rejected 17/,
    );
    // At 80 columns the issue's line lost its throttles: here the elapsed time, retries and rate go first.
    const narrow = progressLine(busy, 80);
    expect(narrow.length).toBeLessThanOrEqual(80);
    expect(narrow).toContain('throttled 1,234');
    expect(narrow).toContain('errors 5');
    expect(narrow).toContain('rejected 17');
    expect(narrow).not.toContain('elapsed');
    // With nothing to report, zero counters go before the rate and the ETA.
    const quiet = progressLine(fields(gauge), 80);
    expect(quiet).toContain('ETA --');
    expect(quiet).not.toContain('throttled 0');
  });

  it('is never wider than the width, whatever the figures', () => {
    const count = fc.nat(2_000_000_000);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 240 }), count, count, count, count, (width, throttled, errors, rejected, retries) => {
        const line = progressLine(fields(gauge, { throttled, errors, rejected, retries }), width);
        expect(line.length).toBeLessThanOrEqual(width);
        if (width >= 130)
          for (const [what, n] of [
            ['throttled', throttled],
            ['errors', errors],
            ['rejected', rejected],
          ] as const)
            if (n > 0) expect(line).toContain(what);
      }),
      { numRuns: 100 },
    );
  });
});
