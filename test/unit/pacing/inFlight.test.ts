/**
 * The work in flight adapts to latency, so a few slow calls do not idle the load.
 */
import { describe, expect, it } from 'vitest';
import { InFlightLimit, defaultCeiling } from '../../../src/pacing/inFlight.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

/**
 * Calls of `fastMs`, a share `slowShare` of them held `slowMs`; the writer starts calls while fewer than
 * `limit(now)` are in flight, checking again every millisecond. Returns calls finished per second.
 */
function throughput(
  limitOf: (inFlight: InFlightLimit, now: number) => number,
  slowShare: number,
  seed = 1,
): { perSecond: number; peak: number; maxInFlight: number } {
  const random = mulberry32(seed);
  const control = new InFlightLimit({ start: 8 });
  const running: Array<{ id: number; end: number }> = [];
  const endMs = 60_000;
  let done = 0;
  let maxInFlight = 0;
  for (let now = 0; now < endMs; now++) {
    for (let i = running.length - 1; i >= 0; i--) {
      if (running[i]!.end <= now) {
        control.finished(running[i]!.id, now);
        running.splice(i, 1);
        done++;
      }
    }
    while (running.length < limitOf(control, now)) {
      const latency = random() < slowShare ? 2500 : 20;
      running.push({ id: control.started(now), end: now + latency });
    }
    maxInFlight = Math.max(maxInFlight, running.length);
  }
  return { perSecond: done / (endMs / 1000), peak: control.peak, maxInFlight };
}

describe('InFlightLimit', () => {
  it('2% of calls held 2.5 s: a fixed 8 in flight loses most of the clean throughput; the adaptive limit keeps most of it', () => {
    const clean = throughput(() => 8, 0);
    const fixed = throughput(() => 8, 0.02);
    const adaptive = throughput((c, now) => c.limit(now), 0.02);
    // The contrast is real: with 8 fixed slots the slow calls hold most of them.
    expect(fixed.perSecond).toBeLessThan(0.5 * clean.perSecond);
    expect(adaptive.perSecond).toBeGreaterThan(0.8 * clean.perSecond);
    // Slots grew, within the ceiling.
    expect(adaptive.peak).toBeGreaterThan(8);
    expect(adaptive.maxInFlight).toBeLessThanOrEqual(defaultCeiling(8));
  });

  it('without slow calls the limit stays at the start', () => {
    const run = throughput((c, now) => c.limit(now), 0);
    expect(run.peak).toBe(8);
    expect(run.maxInFlight).toBe(8);
  });

  it('the ceiling bounds the limit however many calls are slow; the start is the floor', () => {
    const control = new InFlightLimit({ start: 4, ceiling: 6 });
    expect(control.limit(0)).toBe(4);
    // A usual duration of 10 ms, then 10 calls that never come back.
    for (let i = 0; i < 10; i++) control.finished(control.started(0), 10);
    for (let i = 0; i < 10; i++) control.started(100);
    expect(control.limit(200)).toBe(4);
    expect(control.slow(400)).toBe(10);
    expect(control.limit(400)).toBe(6);
    expect(defaultCeiling(8)).toBe(64);
    expect(defaultCeiling(100)).toBe(256);
    expect(defaultCeiling(256)).toBe(256);
  });
});

describe('InFlightLimit: waiting for the pacer', () => {
  // A paced load is bound by its rate; batches waiting for the buckets are not slow calls.
  it('time paused (waiting for the pacer) is neither slow nor part of the usual duration', () => {
    const control = new InFlightLimit({ start: 2 });
    for (let i = 0; i < 10; i++) control.finished(control.started(0), 10);
    const waiting = control.started(100);
    control.pause(waiting, 100);
    expect(control.slow(5000)).toBe(0);
    expect(control.limit(5000)).toBe(2);
    control.resume(waiting, 5000);
    expect(control.slow(5100)).toBe(0);
    expect(control.slow(5400)).toBe(1);
    control.finished(waiting, 5400);
    expect(control.typicalMs()).toBe(10);
  });
});

describe('InFlightLimit: backoff after a call with no answer', () => {
  it('a batch idle in an error backoff lends its slot at once, also before any batch finished; resume takes it back', () => {
    const limit = new InFlightLimit({ start: 2 });
    const a = limit.started(0);
    limit.started(0);
    expect(limit.limit(1)).toBe(2);
    limit.idle(a, 5);
    expect(limit.limit(6)).toBe(3);
    limit.resume(a, 60);
    expect(limit.limit(61)).toBe(2);
  });

  it('a batch paused for the pacer or a throttle backoff keeps its slot', () => {
    const limit = new InFlightLimit({ start: 2 });
    const a = limit.started(0);
    limit.pause(a, 5);
    expect(limit.limit(10_000)).toBe(2);
  });
});
