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

describe('InFlightLimit: a batch parked in a backoff', () => {
  it('lends its slot at once, also before any batch finished; sending again takes it back', () => {
    const limit = new InFlightLimit({ start: 2 });
    const a = limit.started(0);
    limit.started(0);
    expect(limit.limit(1)).toBe(2);
    limit.park(a, 5);
    expect(limit.parked).toBe(1);
    expect(limit.limit(6)).toBe(3);
    limit.resume(a, 60);
    expect(limit.parked).toBe(0);
    expect(limit.limit(61)).toBe(2);
  });

  it('takes its slot back when its backoff is over and it waits for the pacer', () => {
    const limit = new InFlightLimit({ start: 2 });
    const a = limit.started(0);
    limit.park(a, 5);
    expect(limit.limit(6)).toBe(3);
    // The resend waits for the pacer like any send: it holds a slot, and more batches would only queue.
    limit.pause(a, 50);
    expect(limit.parked).toBe(0);
    expect(limit.limit(10_000)).toBe(2);
  });

  it('a batch paused for the pacer keeps its slot', () => {
    const limit = new InFlightLimit({ start: 2 });
    const a = limit.started(0);
    limit.pause(a, 5);
    expect(limit.limit(10_000)).toBe(2);
  });

  it('parking twice counts once; finishing while parked gives the lent slot back', () => {
    const limit = new InFlightLimit({ start: 2 });
    const a = limit.started(0);
    limit.park(a, 1);
    limit.park(a, 2);
    expect(limit.parked).toBe(1);
    expect(limit.limit(3)).toBe(3);
    limit.finished(a, 4);
    expect(limit.parked).toBe(0);
    expect(limit.limit(5)).toBe(2);
    // An unknown or finished batch changes nothing.
    limit.park(a, 6);
    limit.park(99, 6);
    expect(limit.parked).toBe(0);
  });

  it('at most parkedCap parked batches lend their slot (4 × start by default), and never past the ceiling', () => {
    const limit = new InFlightLimit({ start: 2 });
    const ids = Array.from({ length: 20 }, () => limit.started(0));
    for (const id of ids) limit.park(id, 1);
    expect(limit.parked).toBe(20);
    // An outage parks every batch: the rows held stay bounded by 2 + 4 × 2 batches.
    expect(limit.limit(2)).toBe(10);
    const capped = new InFlightLimit({ start: 2, parkedCap: 3 });
    for (let i = 0; i < 5; i++) capped.park(capped.started(0), 1);
    expect(capped.limit(2)).toBe(5);
    const low = new InFlightLimit({ start: 2, ceiling: 4 });
    for (let i = 0; i < 5; i++) low.park(low.started(0), 1);
    expect(low.limit(2)).toBe(4);
  });
});

/**
 * Batches of 20 ms calls; a share `failShare` of the calls are throttled or fail, each followed by a
 * backoff of `backoffMs` before the batch sends again. The writer starts batches while fewer than
 * `limit(now)` are under way. Returns batches finished per second and the most under way at once.
 */
function backoffThroughput(parkBackoffs: boolean, failShare: number, backoffMs: number, seed = 1): { perSecond: number; maxInFlight: number } {
  const random = mulberry32(seed);
  const control = new InFlightLimit({ start: 8 });
  const running: Array<{ id: number; end: number; sending: boolean }> = [];
  const endMs = 30_000;
  let done = 0;
  let maxInFlight = 0;
  for (let now = 0; now < endMs; now++) {
    for (let i = running.length - 1; i >= 0; i--) {
      const batch = running[i]!;
      if (batch.end > now) continue;
      if (!batch.sending) {
        // The backoff is over: send again.
        control.resume(batch.id, now);
        batch.sending = true;
        batch.end = now + 20;
      } else if (random() < failShare) {
        if (parkBackoffs) control.park(batch.id, now);
        else control.pause(batch.id, now);
        batch.sending = false;
        batch.end = now + backoffMs;
      } else {
        control.finished(batch.id, now);
        running.splice(i, 1);
        done++;
      }
    }
    while (running.length < control.limit(now)) running.push({ id: control.started(now), end: now + 20, sending: true });
    maxInFlight = Math.max(maxInFlight, running.length);
  }
  return { perSecond: done / (endMs / 1000), maxInFlight };
}

describe('InFlightLimit: backoffs do not hold slots', () => {
  it('with 40% of calls failing and 200 ms backoffs, parked batches keep over half the clean throughput within the ceiling', () => {
    const clean = backoffThroughput(true, 0, 200);
    const holding = backoffThroughput(false, 0.4, 200);
    const parking = backoffThroughput(true, 0.4, 200);
    // The contrast is real: backoffs holding their slots cost most of the throughput (measured 0.12x).
    expect(holding.perSecond).toBeLessThan(0.2 * clean.perSecond);
    // The resends take sending slots too: 0.6x is the most 8 sending slots can give (measured 0.56x).
    expect(parking.perSecond).toBeGreaterThan(0.5 * clean.perSecond);
    expect(parking.maxInFlight).toBeGreaterThan(8 + 8);
    expect(parking.maxInFlight).toBeLessThanOrEqual(defaultCeiling(8));
  });
});
