/**
 * The rate controller on synthetic traces, on a simulated clock. Noise (throttles at a fixed
 * probability per call whatever the rate, errors without an answer) must not drag the rate down; a real
 * capacity limit must still be found, alone or under noise. Assertions are on where the rate settles.
 */
import { describe, expect, it } from 'vitest';
import { RateController, type RateChange, type RateControlOptions, type SendResult } from '../../../src/pacing/rateControl.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

const BATCH_UNITS = 25;
/** The controller's storm share: no noise share is learned at or above it. */
const STORM_SHARE_FOR_TEST = 0.5;

interface Trace {
  controller: RateController;
  writers: number;
  /** From send to answer: a constant, or per call (writers slowed by the machine, replies held). */
  latencyMs: number | ((sentAt: number) => number);
  endMs: number;
  /** What the service answers to a call sent at `at` with `units`. */
  answer: (at: number, units: number) => SendResult;
}

interface Run {
  /** Units stored per whole second. */
  storedPerSecond: number[];
  /** The rate in force, sampled each second (Infinity when unlimited). */
  ratePerSecond: number[];
  changes: RateChange[];
}

/** Writers in a loop: reserve the table, wait, send, record the answer `latencyMs` later. */
function run(trace: Trace): Run {
  const { controller } = trace;
  const events: Array<{ at: number; seq: number; go: (now: number) => void }> = [];
  let seq = 0;
  const at = (t: number, go: (now: number) => void) => events.push({ at: t, seq: seq++, go });
  const seconds = Math.ceil(trace.endMs / 1000);
  const storedPerSecond = new Array<number>(seconds).fill(0);
  const ratePerSecond: number[] = [];
  const changes: RateChange[] = [];
  const start = (now: number) => {
    if (now >= trace.endMs) return;
    const wait = controller.reserveTable(now, BATCH_UNITS);
    at(now + wait, (sent) => {
      const result = trace.answer(sent, BATCH_UNITS);
      const latency = typeof trace.latencyMs === 'number' ? trace.latencyMs : trace.latencyMs(sent);
      at(sent + latency, (back) => {
        changes.push(...controller.record(back, result));
        const s = Math.floor(back / 1000);
        if (s < seconds) storedPerSecond[s] = storedPerSecond[s]! + result.plannedUnits;
        start(back);
      });
    });
  };
  for (let w = 0; w < trace.writers; w++) at(0, start);
  for (let s = 0; s < seconds; s++) at(s * 1000 + 999, (now) => ratePerSecond.push(controller.snapshot(now).currentWcu ?? Infinity));
  let now = 0;
  while (events.length > 0) {
    let best = 0;
    for (let i = 1; i < events.length; i++)
      if (events[i]!.at < events[best]!.at || (events[i]!.at === events[best]!.at && events[i]!.seq < events[best]!.seq)) best = i;
    const event = events.splice(best, 1)[0]!;
    now = Math.max(now, event.at);
    event.go(now);
  }
  return { storedPerSecond, ratePerSecond, changes };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Each call: throttled whole with probability `throttle`, failed without an answer with `error`. */
function noisy(seed: number, throttle: number, error: number, inner: (at: number, units: number) => SendResult = (_at, units) => ({ plannedUnits: units })) {
  const random = mulberry32(seed);
  return (at: number, units: number): SendResult => {
    const u = random();
    if (u < throttle) return { plannedUnits: 0, throttledUnits: units, throttle: { scope: 'table' } };
    if (u < throttle + error) return { plannedUnits: 0, error: true };
    return inner(at, units);
  };
}

/** A table that takes `capacity(at)` WCU/s with half a second of burst; a batch it cannot take is refused whole. */
function capacityLimit(capacity: (at: number) => number) {
  let tokens = 0;
  let last = 0;
  return (at: number, units: number): SendResult => {
    const cap = capacity(at);
    tokens = Math.min(cap / 2, tokens + ((at - last) * cap) / 1000);
    last = at;
    if (tokens < units) return { plannedUnits: 0, throttledUnits: units, throttle: { scope: 'table' } };
    tokens -= units;
    return { plannedUnits: units, consumedUnits: units };
  };
}

/** The service's answers, counting the calls, throttled calls and units offered from `fromMs` on. */
function counted(answer: (at: number, units: number) => SendResult, fromMs: number) {
  const counts = { calls: 0, throttled: 0, offered: 0 };
  return {
    counts,
    answer: (at: number, units: number): SendResult => {
      const result = answer(at, units);
      if (at >= fromMs) {
        counts.calls++;
        counts.offered += units;
        if (result.throttle) counts.throttled++;
      }
      return result;
    },
  };
}

function controller(options: Partial<RateControlOptions> = {}): RateController {
  return new RateController({ targetWcu: 1000, ...options }, 0);
}

describe('RateController under noise', () => {
  // Throttles at a fixed probability, no capacity limit: the rate stays near the target.
  it.each([1, 2, 3])('a tenth of the calls throttled and 15 in 100 failed at random, seed %i: the rate stays near the target, never near the floor', (seed) => {
    const c = controller();
    const result = run({ controller: c, writers: 8, latencyMs: 20, endMs: 300_000, answer: noisy(seed, 0.1, 0.15) });
    const rates = result.ratePerSecond.slice(60);
    // At the target 1,000 WCU/s, 75% of the calls store: 750 WCU/s is all the noise leaves.
    expect(mean(rates)).toBeGreaterThan(0.85 * 1000);
    expect(Math.min(...rates)).toBeGreaterThan(0.3 * 1000);
    expect(mean(result.storedPerSecond.slice(60))).toBeGreaterThan(0.85 * 750);
    const snapshot = c.snapshot(300_000);
    expect(snapshot.restores).toBeGreaterThan(0);
    expect(snapshot.errors).toBeGreaterThan(1000);
    expect(snapshot.noiseShare).toBeGreaterThan(0.05);
    expect(snapshot.noiseShare).toBeLessThan(0.2);
    expect(result.changes.some((change) => change.kind === 'restored' && change.reason === 'noise')).toBe(true);
  });

  // The default (no --wcu): noise must not cut the load to a fraction of its clean speed.
  it('without a target, noise keeps at least 0.7x the clean rate (as fast as the writers go)', () => {
    const clean = run({
      controller: controller({ targetWcu: Infinity }),
      writers: 8,
      latencyMs: 20,
      endMs: 120_000,
      answer: (_at, units) => ({ plannedUnits: units }),
    });
    const cleanRate = mean(clean.storedPerSecond.slice(10));
    const c = controller({ targetWcu: Infinity });
    const noise = run({ controller: c, writers: 8, latencyMs: 20, endMs: 120_000, answer: noisy(7, 0.1, 0.2) });
    // 30% of the calls store nothing whatever the rate; of the rest the load must keep most.
    expect(mean(noise.storedPerSecond.slice(10))).toBeGreaterThan(0.7 * 0.7 * cleanRate);
  });

  // A real capacity limit is still found, and followed when it steps down and up.
  it('a capacity step down and up: the stored rate follows the capacity, at most it and not far below', () => {
    const capacity = (at: number) => (at < 60_000 ? 800 : at < 150_000 ? 400 : 800);
    const c = controller();
    const result = run({ controller: c, writers: 8, latencyMs: 20, endMs: 240_000, answer: capacityLimit(capacity) });
    for (const [from, to, cap] of [
      [30, 60, 800],
      [110, 150, 400],
      [200, 240, 800],
    ] as const) {
      const stored = mean(result.storedPerSecond.slice(from, to));
      expect(stored, `${from}-${to} s`).toBeLessThanOrEqual(cap * 1.02);
      expect(stored, `${from}-${to} s`).toBeGreaterThan(0.7 * cap);
    }
    expect(result.changes.some((change) => change.kind === 'decreased' && change.scope === 'table' && change.reason === 'capacity')).toBe(true);
  });

  // Both at once: the rate converges to the capacity, not to the floor.
  it.each([11, 12])('noise on top of a capacity of 500 WCU/s, seed %i: converges to the capacity, not to the floor', (seed) => {
    const c = controller();
    const result = run({
      controller: c,
      writers: 8,
      latencyMs: 20,
      endMs: 240_000,
      answer: noisy(
        seed,
        0.06,
        0.15,
        capacityLimit(() => 500),
      ),
    });
    const rates = result.ratePerSecond.slice(60);
    // The floor is 5% of the target (50); the capacity is 500.
    expect(mean(rates)).toBeGreaterThan(0.6 * 500);
    expect(mean(rates)).toBeLessThan(1.3 * 500);
    // Of what is offered, 21% of the calls fail whatever the rate.
    expect(mean(result.storedPerSecond.slice(60))).toBeGreaterThan(0.6 * 0.79 * 500);
    expect(mean(result.storedPerSecond.slice(60))).toBeLessThanOrEqual(500 * 1.02);
  });

  it('errors without an answer never move the rate', () => {
    const c = controller();
    const result = run({ controller: c, writers: 8, latencyMs: 20, endMs: 30_000, answer: noisy(5, 0, 0.6) });
    expect(result.changes).toEqual([]);
    expect(c.snapshot(30_000)).toMatchObject({ currentWcu: 1000, decreases: 0, errors: expect.any(Number) });
    expect(c.snapshot(30_000).errors).toBeGreaterThan(500);
  });
});

/**
 * Writers the machine slows (each call 20 ms, or 60 ms every other 3 s) and 2% of replies held 2.5 s, as
 * the partition proxy holds them: what the writers can send swings with the machine, not with the rate.
 */
function busyMachine(seed: number): (sentAt: number) => number {
  const random = mulberry32(seed + 100);
  return (sentAt) => (random() < 0.02 ? 2500 : Math.floor(sentAt / 3000) % 2 ? 60 : 20);
}

describe('RateController when the writers are the limit', () => {
  // Before: a probe took a delivery rate that did not rise for capacity even when the writers had not
  // sent faster, and the plain cuts that followed ran down to the floor on noise alone: over seeds 1-40,
  // half the loads kept under 0.6x (the worst 0.22x, 19 cuts standing at the end; mean 0.68x).
  it('a share 0.15 of calls throttled at random and 0.2 failed, no target, seeds 1-40: the speed is kept', () => {
    const kept: number[] = [];
    for (let seed = 1; seed <= 40; seed++) {
      const clean = run({
        controller: controller({ targetWcu: Infinity }),
        writers: 8,
        latencyMs: busyMachine(seed),
        endMs: 60_000,
        answer: (_at, units) => ({ plannedUnits: units }),
      });
      const noise = run({
        controller: controller({ targetWcu: Infinity }),
        writers: 8,
        latencyMs: busyMachine(seed),
        endMs: 60_000,
        answer: noisy(seed, 0.15, 0.2),
      });
      // 35% of the calls store nothing whatever the rate: the share of the rest the load keeps.
      const cleanRate = mean(clean.storedPerSecond.slice(5));
      kept.push(mean(noise.storedPerSecond.slice(5)) / (0.65 * cleanRate));
      // No ten seconds in a row down near the floor.
      for (let s = 5; s + 10 <= 60; s += 5)
        expect(mean(noise.storedPerSecond.slice(s, s + 10)), `seed ${seed}, ${s}-${s + 10} s`).toBeGreaterThan(0.3 * 0.65 * cleanRate);
    }
    // Measured: 0.71 at worst, 0.96 on average.
    expect(Math.min(...kept)).toBeGreaterThan(0.6);
    expect(mean(kept)).toBeGreaterThan(0.9);
  });

  // A capacity between a probe's two rates, with writers that can send far more and no target: a noise
  // verdict used to set the rate unlimited whatever rate the probe had tested, and the load sent bursts at
  // 10x the capacity (0.65 of the calls throttled at 500 WCU/s; review finding). And a probe whose higher
  // stage sent no more than its lower one learned capacity throttles as noise (0.39 throttled at 1,200).
  it.each([
    [300, 8, 20],
    [500, 8, 20],
    [500, 4, 50],
    [1200, 8, 'busy'],
  ] as const)('no target, a table that takes %i WCU/s, %i writers, latency %s: the load sends little more than it takes', (capacity, writers, latency) => {
    const { answer, counts } = counted(
      capacityLimit(() => capacity),
      60_000,
    );
    const result = run({
      controller: controller({ targetWcu: Infinity }),
      writers,
      latencyMs: latency === 'busy' ? busyMachine(3) : latency,
      endMs: 180_000,
      answer,
    });
    // Over the last two minutes (measured: at most 0.10 throttled, 1.11x the capacity offered).
    expect(counts.throttled / counts.calls).toBeLessThanOrEqual(0.15);
    expect(counts.offered / 120).toBeLessThan(1.2 * capacity);
    expect(mean(result.storedPerSecond.slice(60))).toBeGreaterThan(0.8 * capacity);
  });

  it('a cut that does not hold the writers back (they send less than the lower rate) starts the test again from what they send', () => {
    const c = controller();
    const changes: RateChange[] = [];
    // 1,000 WCU/s stored for 2 s, then a burst of throttles: a cut to 700, a probe.
    for (let t = 0; t < 2000; t += 10) {
      c.reserveTable(t, 10);
      changes.push(...c.record(t + 5, { plannedUnits: 10 }));
    }
    for (let t = 2000; t < 2060; t += 2) changes.push(...c.record(t, { plannedUnits: 0, throttledUnits: 10, throttle: { scope: 'table' } }));
    expect(changes).toEqual([{ kind: 'decreased', scope: 'table', fromWcu: 1000, toWcu: 700, reason: 'probe' }]);
    // After the burst has left the 2 s window, the writers send 200 WCU/s, far below the 700 allowed, and
    // one call in 8 is still throttled: the low stage tests nothing.
    for (let t = 4100, i = 0; t < 8000; t += 50, i++) {
      c.reserveTable(t, 10);
      changes.push(...c.record(t + 5, i % 8 === 7 ? { plannedUnits: 0, throttledUnits: 10, throttle: { scope: 'table' } } : { plannedUnits: 10 }));
    }
    const rebase = changes[1];
    if (rebase?.kind !== 'decreased' || rebase.scope !== 'table') throw new Error(`expected a cut of the table, got ${JSON.stringify(rebase)}`);
    expect(rebase.reason).toBe('probe');
    // From the lower rate, grown a little in the quiet seconds after the burst (5% of the target a second).
    expect(rebase.fromWcu).toBeGreaterThanOrEqual(700);
    expect(rebase.fromWcu).toBeLessThan(900);
    // 0.7 x what the writers sent over the stage: 200 WCU/s for the last 2 of its 3.6 s (it began at the
    // cut, 500 ms of settling aside, and was judged at its 40th answer), so 0.7 x 111; above the floor.
    expect(rebase.toWcu).toBeCloseTo(0.7 * 200 * (2000 / 3600), -1);
    expect(rebase.toWcu).toBeGreaterThan(50);
  });

  it('writers that stall with no throttle in the lower stage are not a reason to test again (nor to drop to the floor)', () => {
    const c = controller({ targetWcu: Infinity });
    const changes: RateChange[] = [];
    for (let t = 0; t < 3000; t += 10) {
      c.reserveTable(t, 20);
      changes.push(...c.record(t + 5, { plannedUnits: 20 }));
    }
    for (let t = 3000; t < 3060; t += 2) changes.push(...c.record(t, { plannedUnits: 0, throttledUnits: 20, throttle: { scope: 'table' } }));
    expect(changes).toHaveLength(1);
    // A stall: one batch every 700 ms, all stored, long enough for the lower stage to be judged (at 10 s,
    // on its quarter of the answers) and the higher one after it.
    for (let t = 3100; t < 30_000; t += 700) {
      c.reserveTable(t, 20);
      changes.push(...c.record(t + 5, { plannedUnits: 20 }));
      // Never near the floor (5% of the 2,000 WCU/s offered): a rebase from the stall went to 100.
      expect(c.snapshot(t + 5).currentWcu ?? Infinity, `at ${t + 5} ms`).toBeGreaterThan(900);
    }
    expect(changes.filter((change) => change.kind === 'decreased')).toHaveLength(1);
    expect(changes.at(-1)).toMatchObject({ kind: 'restored', reason: 'noise' });
  });

  // Both stages of a probe above capacity, about half the calls throttled at each: the noise verdict it
  // got learned a noise share of 0.53, the threshold went to 0.9, and nothing cut the rate again, at 4x
  // the capacity with 0.61 of the calls throttled to the end of the load (review finding).
  it('--wcu 5000 on a table that takes 1,000 WCU/s, busy writers and noise: the load does not stay far above the capacity', () => {
    const { answer, counts } = counted(
      noisy(
        2,
        0.1,
        0.15,
        capacityLimit(() => 1000),
      ),
      60_000,
    );
    const c = controller({ targetWcu: 5000 });
    run({ controller: c, writers: 16, latencyMs: busyMachine(2), endMs: 150_000, answer });
    // The noise alone throttles 0.1 of the calls and fails 0.15 whatever the rate.
    expect(counts.throttled / counts.calls).toBeLessThan(0.35);
    expect(counts.offered / 90).toBeLessThan(2 * 1000);
    expect(c.snapshot(150_000).noiseShare).toBeLessThan(STORM_SHARE_FOR_TEST);
  });

  // The same writers against a real limit well below what they can send: the capacity is still found.
  it('the same writers against a table that takes 2,000 WCU/s: the stored rate settles at the capacity', () => {
    const c = controller({ targetWcu: Infinity });
    const result = run({ controller: c, writers: 8, latencyMs: busyMachine(3), endMs: 120_000, answer: capacityLimit(() => 2000) });
    const stored = mean(result.storedPerSecond.slice(30));
    expect(stored).toBeLessThanOrEqual(2000 * 1.02);
    expect(stored).toBeGreaterThan(0.7 * 2000);
    expect(result.changes.some((change) => change.kind === 'decreased' && change.scope === 'table' && change.reason === 'capacity')).toBe(true);
  });
});
