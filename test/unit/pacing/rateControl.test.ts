import { describe, expect, it } from 'vitest';
import {
  classifyThrottle,
  DEFAULT_KEY_WCU,
  findBottleneck,
  RateController,
  type RateControlOptions,
  type SendResult,
  type ThrottleSignal,
} from '../../../src/pacing/rateControl.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

/* ==== A simulated clock and writers ==== */

interface Write {
  key: string;
  units: number;
}

interface Send {
  at: number;
  units: number;
  writes: Write[];
}

interface SimOptions {
  controller: RateController;
  /** Writers, each with one batch at a time (the load's concurrency). */
  writers: number;
  /** From send to response. */
  latencyMs: number;
  endMs: number;
  /** The next batch to send; undefined when a writer should idle until `idleUntil`. */
  nextBatch: (now: number) => Write[] | undefined;
  /** The response to a batch sent at `sentAt`; by default everything stored at its planned cost. */
  respond?: (sentAt: number, writes: Write[]) => SendResult;
  /** Called at every whole second of simulated time. */
  everySecond?: (now: number) => void;
}

/**
 * Drives a RateController the way the I/O shell does, on a simulated clock: a writer takes a batch,
 * reserves its keys, waits, reserves the table, waits, sends, and records the response `latencyMs` later.
 * Events run in time order, so the controller never sees time go back.
 */
function simulate(options: SimOptions): { sends: Send[]; keyAllowed: Array<{ at: number; key: string; units: number }> } {
  const { controller } = options;
  const events: Array<{ at: number; seq: number; run: (now: number) => void }> = [];
  let seq = 0;
  const schedule = (at: number, run: (now: number) => void) => events.push({ at, seq: seq++, run });
  const sends: Send[] = [];
  const keyAllowed: Array<{ at: number; key: string; units: number }> = [];
  const respond = options.respond ?? ((_at: number, writes: Write[]) => ({ plannedUnits: sum(writes) }));

  const start = (now: number): void => {
    if (now >= options.endMs) return;
    const writes = options.nextBatch(now);
    if (!writes) {
      schedule(now + 100, start);
      return;
    }
    const keyWait = controller.reserveKeys(now, writes);
    if (!(keyWait >= 0)) throw new Error(`reserveKeys at ${now} returned ${keyWait}`);
    schedule(now + keyWait, (t1) => {
      for (const w of writes) keyAllowed.push({ at: t1, key: w.key, units: w.units });
      const tableWait = controller.reserveTable(t1, sum(writes));
      if (!(tableWait >= 0)) throw new Error(`reserveTable at ${t1} returned ${tableWait}`);
      schedule(t1 + tableWait, (t2) => {
        sends.push({ at: t2, units: sum(writes), writes });
        schedule(t2 + options.latencyMs, (t3) => {
          controller.record(t3, respond(t2, writes));
          start(t3);
        });
      });
    });
  };
  for (let i = 0; i < options.writers; i++) schedule(0, start);
  if (options.everySecond) for (let s = 0; s * 1000 <= options.endMs; s++) schedule(s * 1000, options.everySecond);

  let now = 0;
  while (events.length > 0) {
    let best = 0;
    for (let i = 1; i < events.length; i++) {
      const e = events[i]!;
      const b = events[best]!;
      if (e.at < b.at || (e.at === b.at && e.seq < b.seq)) best = i;
    }
    const event = events.splice(best, 1)[0]!;
    if (event.at < now) throw new Error(`time went back from ${now} to ${event.at}`);
    now = event.at;
    event.run(now);
  }
  return { sends, keyAllowed };
}

const sum = (writes: readonly Write[]): number => writes.reduce((n, w) => n + w.units, 0);

/** The most units in any window [t, t + windowMs) that starts at a point. */
function maxInWindow(points: ReadonlyArray<{ at: number; units: number }>, windowMs: number): number {
  const sorted = [...points].sort((a, b) => a.at - b.at);
  let best = 0;
  let total = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && sorted[end]!.at < sorted[start]!.at + windowMs) total += sorted[end++]!.units;
    best = Math.max(best, total);
    total -= sorted[start]!.units;
  }
  return best;
}

/** Per partition key: the units of each send, at the send's time. */
function perKeySends(sends: readonly Send[]): Map<string, Array<{ at: number; units: number }>> {
  const map = new Map<string, Array<{ at: number; units: number }>>();
  for (const s of sends) {
    for (const w of s.writes) {
      let list = map.get(w.key);
      if (!list) map.set(w.key, (list = []));
      list.push({ at: s.at, units: w.units });
    }
  }
  return map;
}

/** The most units one batch gave a single key: a batch is sent whole, so a window may hold one more. */
function largestKeyShare(sends: readonly Send[]): number {
  let largest = 0;
  for (const s of sends) {
    const perKey = new Map<string, number>();
    for (const w of s.writes) perKey.set(w.key, (perKey.get(w.key) ?? 0) + w.units);
    largest = Math.max(largest, ...perKey.values());
  }
  return largest;
}

/**
 * Batches of 1 to 25 writes of 1 to `maxUnits` units: a share `hotShare` of the writes goes to the key
 * 'hot', the rest uniformly over `keys` keys (so 'hot' is the only key that can bind).
 */
function batches(seed: number, keys: number, hotShare: number, maxUnits = 4): () => Write[] {
  const random = mulberry32(seed);
  return () => {
    const writes: Write[] = [];
    const n = 1 + Math.floor(random() * 25);
    for (let i = 0; i < n; i++) {
      const key = random() < hotShare ? 'hot' : `k${Math.floor(random() * keys)}`;
      writes.push({ key, units: 1 + Math.floor(random() * maxUnits) });
    }
    return writes;
  };
}

/* ==== Pacing ==== */

describe('RateController: pacing on a simulated clock', () => {
  it.each([
    // seed, target, keyWcu, writers, latency, hot share
    [1, 1000, 1000, 8, 20, 0],
    [2, 1000, 1000, 8, 20, 0.3],
    [3, 5000, 1000, 16, 10, 0.1],
    [4, 300, 200, 4, 50, 0.5],
    [5, 10_000, 1000, 16, 5, 0.02],
  ])(
    'seed %i: target %d, keyWcu %d, %d writers, %d ms latency, hot share %d: the table never exceeds the target by more than 1 s worth',
    (seed, target, keyWcu, writers, latencyMs, hotShare) => {
      const controller = new RateController({ targetWcu: target, keyWcu }, 0);
      const endMs = 60_000;
      const { sends } = simulate({ controller, writers, latencyMs, endMs, nextBatch: batches(seed, 5000, hotShare) });
      const maxBatch = Math.max(...sends.map((s) => s.units));
      for (const windowMs of [100, 1000, 5000, 30_000]) {
        // The bucket starts empty and holds 1 s of the target; a batch is sent whole.
        expect(maxInWindow(sends, windowMs), `window ${windowMs} ms`).toBeLessThanOrEqual((target * windowMs) / 1000 + target + maxBatch + 1e-6);
      }
      const total = sends.reduce((n, s) => n + s.units, 0);
      const last = Math.max(...sends.map((s) => s.at));
      expect(total).toBeLessThanOrEqual((target * last) / 1000 + maxBatch + 1e-6);
      // Pacing is not too timid either: with enough writers the load reaches its target (unless hot keys bind).
      const demandCap = hotShare > 0 ? keyWcu / hotShare : Infinity;
      expect(total / (endMs / 1000)).toBeGreaterThan(0.9 * Math.min(target, demandCap));
    },
  );

  it('after a pause, the table bursts at most 50 ms worth on top of the rate', () => {
    const target = 500;
    const controller = new RateController({ targetWcu: target }, 0);
    const next = batches(7, 100_000, 0, 2);
    // Demand in bursts: 5 s on, 5 s off.
    const { sends } = simulate({
      controller,
      writers: 16,
      latencyMs: 5,
      endMs: 60_000,
      nextBatch: (now) => (Math.floor(now / 5000) % 2 === 0 ? next() : undefined),
    });
    const maxBatch = Math.max(...sends.map((s) => s.units));
    const inFirstSecond = sends.filter((s) => s.at >= 10_000 && s.at < 11_000).reduce((n, s) => n + s.units, 0);
    // Right after a pause the bucket holds 50 ms of the rate: the first second takes the rate, barely more.
    expect(inFirstSecond).toBeGreaterThan(0.9 * target);
    expect(maxInWindow(sends, 1000)).toBeLessThanOrEqual(1.05 * target + maxBatch);
    // The very first second starts from an empty bucket: no burst on top of the target.
    expect(sends.filter((s) => s.at < 1000).reduce((n, s) => n + s.units, 0)).toBeLessThanOrEqual(target + maxBatch);
  });

  it.each([
    // seed, target, keyWcu, hot share, writers
    [11, Infinity, 1000, 0.6, 16],
    [12, 4000, 500, 0.4, 16],
    [13, 2000, 100, 0.2, 8],
    [14, Infinity, 50, 0.05, 8],
  ])('seed %i: target %d, keyWcu %d, hot share %d: a key is allowed at most keyWcu plus its 0.1 s burst', (seed, target, keyWcu, hotShare, writers) => {
    const controller = new RateController({ targetWcu: target, keyWcu }, 0);
    const { sends, keyAllowed } = simulate({ controller, writers, latencyMs: 10, endMs: 30_000, nextBatch: batches(seed, 200, hotShare) });
    const largest = largestKeyShare(sends);
    const byKey = new Map<string, Array<{ at: number; units: number }>>();
    for (const k of keyAllowed) {
      let list = byKey.get(k.key);
      if (!list) byKey.set(k.key, (list = []));
      list.push(k);
    }
    const hot = byKey.get('hot')!;
    expect(hot.reduce((n, w) => n + w.units, 0)).toBeGreaterThan(keyWcu * 20);
    for (const [key, list] of byKey) {
      for (const windowMs of [100, 1000, 10_000]) {
        expect(maxInWindow(list, windowMs), `${key}, window ${windowMs} ms`).toBeLessThanOrEqual((keyWcu * windowMs) / 1000 + 0.1 * keyWcu + largest + 1e-6);
      }
    }
    // The hot key is held to its ceiling (plus one burst and one batch over the run), and uses it.
    const seconds = Math.max(...hot.map((w) => w.at)) / 1000;
    const hotRate = hot.reduce((n, w) => n + w.units, 0) / seconds;
    expect(hotRate).toBeLessThanOrEqual(keyWcu + (0.1 * keyWcu + largest) / seconds);
    expect(hotRate).toBeGreaterThan(keyWcu * 0.9);
  });

  // rateControl.ts: "No partition key is written faster than this [keyWcu]". The shell waits for the key's
  // bucket, then for the table's: the table wait must not bunch a key's sends, so this is checked at send time.
  it.each([
    [21, 2000, 500, 0.4, 16],
    [22, 1000, 1000, 0.5, 8],
    [23, 5000, 300, 0.05, 32],
    [24, 1500, 1000, 0.3, 16],
  ])(
    'seed %i: target %d, keyWcu %d, hot share %d: at send time too, a key is written at most keyWcu plus its 0.1 s burst',
    (seed, target, keyWcu, hotShare, writers) => {
      const controller = new RateController({ targetWcu: target, keyWcu }, 0);
      const { sends } = simulate({ controller, writers, latencyMs: 10, endMs: 30_000, nextBatch: batches(seed, 200, hotShare) });
      const largest = largestKeyShare(sends);
      for (const [key, list] of perKeySends(sends)) {
        for (const windowMs of [100, 200, 1000, 10_000]) {
          expect(maxInWindow(list, windowMs), `${key}, window ${windowMs} ms`).toBeLessThanOrEqual((keyWcu * windowMs) / 1000 + 0.1 * keyWcu + largest + 1e-6);
        }
      }
    },
  );

  it('a batch larger than a key bucket is served after the right wait, not refused', () => {
    const controller = new RateController({ targetWcu: Infinity, keyWcu: 100 }, 0);
    // The bucket holds 0.1 s = 10 units; 25 writes of 4 units to one key are 100 units.
    const big = Array.from({ length: 25 }, () => ({ key: 'k', units: 4 }));
    expect(controller.reserveKeys(0, big)).toBeCloseTo(900, 9);
    // The next batch of that key waits behind it; another key does not.
    expect(controller.reserveKeys(0, [{ key: 'k', units: 1 }])).toBeCloseTo(910, 9);
    expect(controller.reserveKeys(0, [{ key: 'other', units: 10 }])).toBe(0);
    expect(controller.reserveKeys(910, [{ key: 'k', units: 10 }])).toBeCloseTo(100, 9);
  });

  it('reserveKeys sums the units of one key in a batch and waits for the slowest key', () => {
    const controller = new RateController({ targetWcu: Infinity, keyWcu: 1000 }, 0);
    // Burst 100 per key: a's 60 + 60 = 120 is 20 over (20 ms), b's 150 is 50 over (50 ms).
    const wait = controller.reserveKeys(0, [
      { key: 'a', units: 60 },
      { key: 'b', units: 150 },
      { key: 'a', units: 60 },
      { key: 'c', units: 1 },
    ]);
    expect(wait).toBeCloseTo(50, 9);
    expect(controller.reserveKeys(0, [{ key: 'a', units: 0 }])).toBeCloseTo(20, 9);
  });

  it('the table bucket starts empty: the first reservation is paced at the target', () => {
    const controller = new RateController({ targetWcu: 100 }, 5000);
    expect(controller.reserveTable(5000, 25)).toBeCloseTo(250, 9);
    expect(controller.reserveTable(5000, 25)).toBeCloseTo(500, 9);
    expect(new RateController({ targetWcu: Infinity }, 0).reserveTable(0, 1e6)).toBe(0);
  });

  it('the default key ceiling is 1000 WCU', () => {
    expect(DEFAULT_KEY_WCU).toBe(1000);
    const controller = new RateController({ targetWcu: Infinity }, 0);
    expect(controller.keyWcu).toBe(1000);
    expect(controller.targetWcu).toBe(Infinity);
    // 100 units of burst, then 1 unit per ms.
    expect(controller.reserveKeys(0, [{ key: 'k', units: 150 }])).toBeCloseTo(50, 9);
  });
});

/* ==== Throttles: AIMD ==== */

const tableThrottle: SendResult = { plannedUnits: 0, throttle: { scope: 'table' } };
const keyThrottle = (...keys: string[]): SendResult => ({ plannedUnits: 0, throttle: { scope: 'key', keys } });

describe('RateController: table throttles', () => {
  it.each<[string, Partial<RateControlOptions>, number, number]>([
    // label, options, target, expected rate after one throttle
    ['default factor 0.7', {}, 1000, 700],
    ['factor 0.5', { decrease: 0.5 }, 1000, 500],
    ['factor 0.01 stops at the 5% floor', { decrease: 0.01 }, 1000, 50],
    ['a target of 10: the floor is 1 WCU, not 0.5', { decrease: 0.01 }, 10, 1],
  ])('one throttle cuts the rate: %s', (_label, options, target, after) => {
    const controller = new RateController({ targetWcu: target, ...options }, 0);
    const changes = controller.record(100, tableThrottle);
    expect(changes).toEqual([{ kind: 'decreased', scope: 'table', fromWcu: target, toWcu: after, reason: 'probe' }]);
    expect(controller.snapshot(100)).toMatchObject({ targetWcu: target, currentWcu: after, tableThrottles: 1, decreases: 1 });
  });

  it('cuts at most once per cooldown, by the factor each time, never below 5% of the target', () => {
    const target = 1000;
    const controller = new RateController({ targetWcu: target }, 0);
    let expected = target;
    let lastCut = -Infinity;
    let cuts = 0;
    // A throttle every 250 ms for a minute: the rate never gets a quiet period to grow back.
    for (let t = 0; t <= 60_000; t += 250) {
      const changes = controller.record(t, tableThrottle);
      const rate = controller.snapshot(t).currentWcu!;
      if (t - lastCut >= 1000) {
        expected = Math.max(50, expected * 0.7);
        expect(changes, `t=${t}`).toHaveLength(1);
        lastCut = t;
        cuts++;
      } else {
        expect(changes, `t=${t}`).toEqual([]);
      }
      expect(rate).toBeCloseTo(expected, 9);
      expect(rate).toBeGreaterThanOrEqual(0.05 * target);
    }
    expect(controller.snapshot(60_000)).toMatchObject({ tableThrottles: 241, decreases: cuts, currentWcu: 50 });
    expect(cuts).toBe(61);
  });

  it('the cooldown is configurable', () => {
    // A long quiet period, so the rate does not grow back between the throttles.
    const controller = new RateController({ targetWcu: 1000, cooldownMs: 5000, quietMs: 60_000 }, 0);
    expect(controller.record(0, tableThrottle)).toHaveLength(1);
    expect(controller.record(4999, tableThrottle)).toEqual([]);
    expect(controller.record(5000, tableThrottle)).toEqual([
      { kind: 'decreased', scope: 'table', fromWcu: 700, toWcu: expect.closeTo(490, 9), reason: 'probe' },
    ]);
  });

  it('with a target, the rate recovers additively after the quiet period, back to the target and no further', () => {
    const target = 1000;
    const controller = new RateController({ targetWcu: target }, 0);
    controller.record(10_000, tableThrottle);
    controller.record(11_000, tableThrottle);
    // Two cuts: 1000 -> 700 -> 490. The last throttle was at 11,000; quiet for 2 s, then +50 per second.
    const at = (t: number) => controller.snapshot(t).currentWcu!;
    const samples: Array<[number, number]> = [];
    for (let t = 11_000; t <= 40_000; t += 10) samples.push([t, at(t)]);
    for (const [t, rate] of samples) {
      const expected = t < 13_000 ? 490 : Math.min(target, 490 + (50 * (t - 13_000)) / 1000);
      // The first step after the quiet period may count up to one 10 ms sample more.
      expect(rate, `t=${t}`).toBeGreaterThanOrEqual(expected - 1e-6);
      expect(rate, `t=${t}`).toBeLessThanOrEqual(expected + 0.5 + 1e-6);
    }
    expect(at(40_000)).toBe(target);
    expect(samples.every(([, rate]) => rate <= target)).toBe(true);
  });

  // rateControl.ts: "increasePerSecond: Added per quiet second"; "quietMs: Time without a throttle before the
  // rate grows again". #adapt adds increase × (now - lastAdapt), and lastAdapt may lie inside the quiet period.
  it('the increase counts only the seconds after the quiet period, however rarely the controller is called', () => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    controller.record(10_000, tableThrottle);
    // Quiet from 12,000 on: at 13,000 one quiet second has passed, +50.
    expect(controller.snapshot(13_000).currentWcu).toBeCloseTo(750, 6);
  });

  it('a throttle during the recovery restarts the quiet period', () => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    controller.record(0, tableThrottle);
    for (let t = 10; t <= 4000; t += 10) controller.snapshot(t);
    const before = controller.snapshot(4000).currentWcu!;
    expect(before).toBeGreaterThan(790);
    controller.record(4000, tableThrottle);
    const cut = controller.snapshot(4000).currentWcu!;
    expect(cut).toBeCloseTo(before * 0.7, 6);
    for (let t = 4010; t < 6000; t += 10) expect(controller.snapshot(t).currentWcu).toBe(cut);
    expect(controller.snapshot(6500).currentWcu!).toBeGreaterThan(cut);
  });

  it('without a target, a throttle cuts to 0.7 × what was offered lately, and the rate grows back multiplicatively to unlimited', () => {
    const controller = new RateController({ targetWcu: Infinity }, 0);
    // Offer and store 1000 WCU/s for 5 s.
    for (let t = 0; t < 5000; t += 10) {
      expect(controller.reserveTable(t, 10)).toBe(0);
      controller.record(t + 5, { plannedUnits: 10 });
    }
    expect(controller.snapshot(5000).currentWcu).toBeUndefined();
    const [change] = controller.record(5000, { plannedUnits: 0, throttledUnits: 1000, throttle: { scope: 'table' } });
    expect(change).toMatchObject({ kind: 'decreased', scope: 'table', fromWcu: undefined });
    expect(change!.toWcu).toBeGreaterThan(600);
    expect(change!.toWcu).toBeLessThan(800);
    const cut = change!.toWcu;
    // Quiet for 2 s, then about 5% per second compounded (doubling in about 14 s), until twice the
    // highest rate offered; then unlimited.
    let previous = cut;
    let unlimitedAt: number | undefined;
    for (let t = 5010; t <= 60_000; t += 10) {
      const rate = controller.snapshot(t).currentWcu;
      if (rate === undefined) {
        unlimitedAt ??= t;
        continue;
      }
      expect(unlimitedAt, `limited again at ${t}`).toBeUndefined();
      if (t < 7000) expect(rate).toBe(cut);
      expect(rate).toBeGreaterThanOrEqual(previous);
      previous = rate;
      if (t === 17_000) expect(rate / cut).toBeCloseTo(Math.exp(0.05 * 10), 1);
    }
    expect(unlimitedAt).toBeDefined();
    // From ~700 to twice ~1000 at e^(0.05 t): about 21 s after the quiet period.
    expect(unlimitedAt!).toBeGreaterThan(7000 + 18_000);
    expect(unlimitedAt!).toBeLessThan(7000 + 26_000);
    expect(controller.reserveTable(60_000, 1e6)).toBe(0);
  });

  it('without a target and nothing offered yet, a throttle cuts to 1 WCU, the least rate', () => {
    const controller = new RateController({ targetWcu: Infinity }, 0);
    expect(controller.record(0, tableThrottle)).toEqual([{ kind: 'decreased', scope: 'table', fromWcu: undefined, toWcu: 1, reason: 'probe' }]);
  });

  // The offered rate is measured over at least 50 ms from the start, and reservations come at the start
  // of the time they cover: 20 units every 10 ms (2,000/s) reads as 2,400/s at 50 ms. The floor follows.
  it('without a target the floor is 5% of the best rate offered (as measured: up to 20% above at the start)', () => {
    const controller = new RateController({ targetWcu: Infinity, decrease: 0.1 }, 0);
    for (let t = 0; t < 3000; t += 10) controller.reserveTable(t, 20);
    let rate = Infinity;
    for (let t = 3000; t < 20_000; t += 1000) {
      const [change] = controller.record(t, { plannedUnits: 0, throttledUnits: 1e6, throttle: { scope: 'table' } });
      rate = change!.toWcu;
      // Offered: 2000 WCU/s; 5% of it is 100.
      expect(rate).toBeGreaterThanOrEqual(100 - 1e-6);
    }
    expect(rate).toBeGreaterThanOrEqual(100);
    expect(rate).toBeLessThanOrEqual(120 + 1e-6);
  });

  it('a throttle of a few units among many offered does not cut the rate; a storm does', () => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    for (let t = 0; t < 2000; t += 10) controller.reserveTable(t, 10);
    // About 1000 WCU/s offered; 10% of it is the threshold.
    expect(controller.record(2000, { plannedUnits: 10, throttledUnits: 20, throttle: { scope: 'table' } })).toEqual([]);
    expect(controller.snapshot(2000)).toMatchObject({ currentWcu: 1000, tableThrottles: 1, decreases: 0 });
    expect(controller.record(2001, { plannedUnits: 10, throttledUnits: 500, throttle: { scope: 'table' } })).toHaveLength(1);
    expect(controller.snapshot(2001)).toMatchObject({ currentWcu: 700, tableThrottles: 2, decreases: 1 });
  });

  it('a throttle of the key kind never changes the table rate', () => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    for (let t = 0; t < 10_000; t += 100) controller.record(t, keyThrottle(`k${t % 7}`));
    expect(controller.snapshot(10_000)).toMatchObject({ currentWcu: 1000, tableThrottles: 0, decreases: 0 });
  });

  it('closed loop: against a table that takes 600 WCU/s, a 1000 WCU/s target settles around 600 without starving', () => {
    const capacity = 600;
    const controller = new RateController({ targetWcu: 1000 }, 0);
    // The table: a bucket of 600/s holding 0.5 s; a batch it cannot take is refused whole.
    let tokens = 300;
    let last = 0;
    let stored = 0;
    const storedAfter20s: number[] = [];
    simulate({
      controller,
      writers: 8,
      latencyMs: 10,
      endMs: 120_000,
      nextBatch: batches(31, 100_000, 0),
      respond: (at, writes) => {
        tokens = Math.min(300, tokens + ((at - last) * capacity) / 1000);
        last = at;
        const units = sum(writes);
        if (tokens < units) return { plannedUnits: 0, throttledUnits: units, throttle: { scope: 'table' } };
        tokens -= units;
        stored += units;
        if (at >= 20_000) storedAfter20s.push(units);
        return { plannedUnits: units, consumedUnits: units };
      },
    });
    const rate = storedAfter20s.reduce((a, b) => a + b, 0) / 100;
    expect(rate).toBeLessThanOrEqual(capacity * 1.01);
    expect(rate).toBeGreaterThan(capacity * 0.6);
    const snapshot = controller.snapshot(120_000);
    expect(snapshot.currentWcu!).toBeLessThan(1000);
    expect(snapshot.currentWcu!).toBeGreaterThanOrEqual(50);
    expect(snapshot.decreases).toBeGreaterThan(0);
    expect(stored).toBeGreaterThan(0);
  });
});

describe('RateController: key throttles', () => {
  it('slow only the keys named: halved at once, at most once per cooldown, at least 5% of keyWcu', () => {
    const controller = new RateController({ targetWcu: 10_000, keyWcu: 1000 }, 0);
    expect(controller.record(0, keyThrottle('hot'))).toEqual([{ kind: 'decreased', scope: 'key', key: 'hot', toWcu: 500 }]);
    expect(controller.record(500, keyThrottle('hot'))).toEqual([]);
    expect(controller.record(1000, keyThrottle('hot', 'warm'))).toEqual([
      { kind: 'decreased', scope: 'key', key: 'hot', toWcu: 250 },
      { kind: 'decreased', scope: 'key', key: 'warm', toWcu: 500 },
    ]);
    const snapshot = controller.snapshot(1000);
    expect(snapshot).toMatchObject({ currentWcu: 10_000, keyThrottles: 4, tableThrottles: 0, decreases: 0, slowedKeys: 2 });
    for (let t = 2000; t <= 20_000; t += 1000) controller.record(t, keyThrottle('hot'));
    // 5% of 1,000: a key cut lower would starve for minutes behind its own debt.
    expect(controller.record(21_000, keyThrottle('hot'))[0]!.toWcu).toBe(50);
  });

  it('a slowed key paces at its new rate; other keys keep keyWcu', () => {
    const controller = new RateController({ targetWcu: Infinity, keyWcu: 1000 }, 0);
    controller.record(0, keyThrottle('hot'));
    // 'hot' now: 500/s, burst kept at 0.1 s of the new rate (50 units).
    expect(controller.reserveKeys(0, [{ key: 'hot', units: 150 }])).toBeCloseTo(200, 9);
    expect(controller.reserveKeys(0, [{ key: 'cold', units: 150 }])).toBeCloseTo(50, 9);
  });

  it('a key throttle does not touch the table bucket', () => {
    const a = new RateController({ targetWcu: 100 }, 0);
    const b = new RateController({ targetWcu: 100 }, 0);
    a.record(0, keyThrottle('x'));
    for (let t = 0; t < 3000; t += 7) expect(a.reserveTable(t, 3)).toBeCloseTo(b.reserveTable(t, 3), 9);
  });

  it('a slowed key recovers by 5% of keyWcu per quiet second, back to keyWcu', () => {
    const controller = new RateController({ targetWcu: Infinity, keyWcu: 1000 }, 0);
    controller.record(0, keyThrottle('hot'));
    for (let t = 10; t < 2000; t += 10) expect(controller.snapshot(t).slowedKeys).toBe(1);
    for (let t = 2000; t <= 11_800; t += 10) controller.snapshot(t);
    // 500 + 50/s from 2 s on: back to 1000 at 12 s.
    expect(controller.snapshot(11_900).slowedKeys).toBe(1);
    expect(controller.snapshot(12_100).slowedKeys).toBe(0);
    // And it paces at 1000 again: 100 of burst, then 1 unit per ms.
    expect(controller.reserveKeys(20_000, [{ key: 'hot', units: 200 }])).toBeCloseTo(100, 6);
  });
});

/* ==== Cost ratio ==== */

describe('RateController: consumed / planned cost ratio', () => {
  it.each([
    // consumed per planned unit, ratio it converges to
    [2, 2],
    [1.5, 1.5],
    [0.5, 0.5],
    [10, 4],
    [0.01, 0.25],
  ])('consumed = %d × planned converges to a ratio of %d', (factor, ratio) => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    let previous = 1;
    for (let i = 1; i <= 200; i++) {
      controller.record(i, { plannedUnits: 100, consumedUnits: 100 * factor });
      const now = controller.snapshot(i).costRatio;
      // Monotone, inside [0.25, 4], one tenth of the way each time.
      expect(Math.abs(now - ratio)).toBeLessThanOrEqual(Math.abs(previous - ratio) + 1e-12);
      expect(now).toBeGreaterThanOrEqual(0.25);
      expect(now).toBeLessThanOrEqual(4);
      previous = now;
    }
    expect(previous).toBeCloseTo(ratio, 6);
  });

  it('moves one tenth of the way per response', () => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    controller.record(1, { plannedUnits: 10, consumedUnits: 30 });
    expect(controller.snapshot(1).costRatio).toBeCloseTo(1.2, 12);
    controller.record(2, { plannedUnits: 10, consumedUnits: 30 });
    expect(controller.snapshot(2).costRatio).toBeCloseTo(1.38, 12);
  });

  it.each<[string, SendResult]>([
    ['no consumed capacity reported', { plannedUnits: 10 }],
    ['consumed 0', { plannedUnits: 10, consumedUnits: 0 }],
    ['nothing stored', { plannedUnits: 0, consumedUnits: 50 }],
  ])('stays at 1: %s', (_label, result) => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    for (let i = 1; i < 50; i++) controller.record(i, result);
    expect(controller.snapshot(50).costRatio).toBe(1);
  });

  it('the ratio scales what the table and key buckets are charged', () => {
    const controller = new RateController({ targetWcu: 100, keyWcu: 100 }, 0);
    for (let i = 1; i <= 300; i++) controller.record(i, { plannedUnits: 10, consumedUnits: 20 });
    const ratio = controller.snapshot(300).costRatio;
    expect(ratio).toBeCloseTo(2, 6);
    // Table: empty at 100/s after a cold start 300 ms ago, holding at most 50 ms (5 units); 20 planned units cost 40.
    expect(controller.reserveTable(300, 20)).toBeCloseTo(((20 * ratio - 5) * 1000) / 100, 6);
    // Key: full at 10 units; 10 planned units cost 20.
    expect(controller.reserveKeys(300, [{ key: 'k', units: 10 }])).toBeCloseTo(((10 * ratio - 10) * 1000) / 100, 6);
  });

  it('consumed units are what counts as achieved', () => {
    const controller = new RateController({ targetWcu: 1000 }, 0);
    for (let t = 0; t < 3000; t += 10) controller.record(t, { plannedUnits: 5, consumedUnits: 10 });
    const snapshot = controller.snapshot(3000);
    expect(snapshot.achievedWcu).toBeCloseTo(1000, 6);
    expect(snapshot.peakWcu).toBeCloseTo(1000, 6);
  });
});

/* ==== On-demand growth ceiling ==== */

describe('RateController: on-demand growth ceiling', () => {
  it('starts at `initial`, and the table bucket paces at it', () => {
    const controller = new RateController({ targetWcu: 32_000, growth: { initial: 3200, factor: 2, windowMs: 30 * 60_000, cap: 32_000 } }, 0);
    expect(controller.snapshot(0)).toMatchObject({ targetWcu: 32_000, currentWcu: 3200 });
    expect(controller.reserveTable(0, 320)).toBeCloseTo(100, 9);
  });

  it.each([
    // seed, initial, factor, window, cap, target
    [41, 100, 2, 60_000, 1000, 2000],
    [42, 200, 2, 60_000, 2000, 2000],
    [43, 100, 1.5, 60_000, 600, Infinity],
  ])(
    'seed %i: initial %d, factor %d, window %d ms, cap %d, target %d: never above factor × the peak reached a window earlier, nor the cap',
    (seed, initial, factor, windowMs, cap, target) => {
      const controller = new RateController({ targetWcu: target, growth: { initial, factor, windowMs, cap } }, 0);
      // Per whole second: units stored (known at every record).
      const storedPerSecond = new Map<number, number>();
      const latencyMs = 10;
      const rates: Array<[number, number]> = [];
      const problems: string[] = [];
      simulate({
        controller,
        writers: 8,
        latencyMs,
        // Peaks are kept per minute: the ceiling may lag a window by up to a minute (never lead it).
        endMs: 12 * windowMs,
        nextBatch: batches(seed, 500, 0),
        respond: (at, writes) => {
          // Recorded one latency after the send, as the controller sees it.
          const s = Math.floor((at + latencyMs) / 1000);
          storedPerSecond.set(s, (storedPerSecond.get(s) ?? 0) + sum(writes));
          return { plannedUnits: sum(writes) };
        },
        everySecond: (now) => {
          const rate = controller.snapshot(now).currentWcu ?? Infinity;
          rates.push([now, rate]);
          // The highest whole second that ended at least a window ago.
          let before = 0;
          for (const [s, units] of storedPerSecond) if ((s + 1) * 1000 <= now - windowMs) before = Math.max(before, units);
          const bound = Math.min(target, cap, Math.max(initial, factor * before));
          if (rate > bound + 1e-6) problems.push(`t=${now}: rate ${rate}, bound ${bound} (peak a window ago ${before})`);
        },
      });
      expect(rates[0]).toEqual([0, initial]);
      expect(Math.max(...rates.map(([, r]) => r))).toBeLessThanOrEqual(Math.min(cap, target));
      // It grows: the cap is reached within the run.
      expect(rates[rates.length - 1]![1]).toBeCloseTo(Math.min(cap, target), 6);
      expect(problems.slice(0, 5)).toEqual([]);
    },
  );

  // rateControl.ts: "the rate is never more than `factor` × the highest rate reached at least `windowMs` ago".
  // #ceiling counts every minute m <= floor((now - windowMs) / 60000), including the minute that holds
  // now - windowMs, so a peak reached up to 60 s less than windowMs ago already raises the ceiling.
  it('a peak counts only once it is a whole window old', () => {
    const windowMs = 120_000;
    const controller = new RateController({ targetWcu: 10_000, growth: { initial: 100, factor: 2, windowMs, cap: 10_000 } }, 0);
    // 500 units in second 30 (more than the ceiling allows, as a peak the table saw), known at 31 s.
    controller.record(30_500, { plannedUnits: 500 });
    controller.record(31_000, { plannedUnits: 1 });
    expect(controller.snapshot(31_000).peakWcu).toBe(500);
    // At 120 s the peak is 89 s old: the ceiling is still `initial`.
    expect(controller.snapshot(windowMs).currentWcu).toBe(100);
  });

  it('a peak a whole window old lets the rate reach factor × peak, no more', () => {
    const windowMs = 120_000;
    const controller = new RateController({ targetWcu: 10_000, growth: { initial: 100, factor: 2, windowMs, cap: 10_000 } }, 0);
    controller.record(30_500, { plannedUnits: 500 });
    controller.record(31_000, { plannedUnits: 1 });
    // Whole minutes: by a window and a minute after the peak at the latest.
    expect(controller.snapshot(211_000).currentWcu).toBe(1000);
    expect(controller.snapshot(500_000).currentWcu).toBe(1000);
  });

  it('the cap and the target bound the ceiling', () => {
    const make = (target: number, cap: number) => new RateController({ targetWcu: target, growth: { initial: 100, factor: 10, windowMs: 1000, cap } }, 0);
    for (const [target, cap, expected] of [
      [50_000, 700, 700],
      [600, 50_000, 600],
      [50, 50_000, 50],
    ] as const) {
      const controller = make(target, cap);
      expect(controller.snapshot(0).currentWcu).toBe(Math.min(100, expected));
      for (let t = 0; t < 300_000; t += 10) controller.record(t, { plannedUnits: 10_000 });
      expect(controller.snapshot(300_000).currentWcu).toBe(expected);
    }
  });

  // A cut's floor is 5% of the target; under a growth ceiling below that floor, the "cut" raises the rate
  // above the ceiling, #adapt clamps it back to the ceiling on the next call, and the rate is never lowered.
  // chooseRate gives such a controller for auto on an on-demand table whose warm throughput is below 5% of
  // its cap (e.g. MaxWriteRequestUnits 100,000 on a new table: initial 3,200, target 80,000, floor 4,000).
  it('a table throttle lowers the rate even while the growth ceiling is below 5% of the target', () => {
    const controller = new RateController({ targetWcu: 80_000, growth: { initial: 3200, factor: 2, windowMs: 30 * 60_000, cap: 80_000 } }, 0);
    const [change] = controller.record(1000, tableThrottle);
    expect(change).toBeDefined();
    expect(change!.toWcu).toBeLessThan(3200);
    expect(controller.snapshot(1001).currentWcu!).toBeLessThan(3200);
  });
});

/* ==== Key bucket sweep ==== */

describe('RateController: idle key buckets', () => {
  /** Runs one hot key's pattern on a controller; returns its waits. */
  const hotPattern = (controller: RateController, from: number): number[] => {
    const waits: number[] = [];
    for (let t = from; t < from + 3000; t += 20) waits.push(controller.reserveKeys(t, [{ key: 'hot', units: 30 }]), controller.reserveTable(t, 30));
    return waits;
  };

  it.each([4096, 4097, 10_000])('with %i idle keys, the waits of active and slowed keys are those of a controller without them', (idle) => {
    const options = { targetWcu: 5000, keyWcu: 100, cooldownMs: 60_000 };
    const crowded = new RateController(options, 0);
    const alone = new RateController(options, 0);
    for (const controller of [crowded, alone]) {
      controller.record(0, keyThrottle('slow'));
      controller.reserveKeys(0, [{ key: 'hot', units: 500 }]);
    }
    for (let i = 0; i < idle; i++) crowded.reserveKeys(0, [{ key: `idle-${i}`, units: 1 }]);
    // Idle keys are full again after 10 ms; every call from now on may sweep them.
    const a = hotPattern(crowded, 1000);
    const b = hotPattern(alone, 1000);
    expect(a).toEqual(b);
    expect(crowded.snapshot(4000).slowedKeys).toBe(1);
    expect(alone.snapshot(4000).slowedKeys).toBe(1);
    expect(crowded.reserveKeys(4000, [{ key: 'slow', units: 50 }])).toBeCloseTo(alone.reserveKeys(4000, [{ key: 'slow', units: 50 }]), 9);
  });

  it('beyond 4096 keys, idle full buckets are dropped (a recovered key forgets its cooldown); up to 4096 they are kept', () => {
    // A key cut at 0 and back at keyWcu by 2.5 s; a second throttle at 5 s is inside its 60 s cooldown,
    // unless its state was dropped in between.
    const run = (idle: number) => {
      const controller = new RateController({ targetWcu: Infinity, keyWcu: 100, increasePerSecond: 1, cooldownMs: 60_000 }, 0);
      controller.record(0, keyThrottle('k'));
      for (let t = 100; t <= 3000; t += 100) controller.snapshot(t);
      expect(controller.snapshot(3000).slowedKeys).toBe(0);
      for (let i = 0; i < idle; i++) controller.reserveKeys(3000, [{ key: `idle-${i}`, units: 1 }]);
      for (let t = 3100; t <= 4000; t += 100) controller.snapshot(t);
      return controller.record(5000, keyThrottle('k'));
    };
    expect(run(0)).toEqual([]);
    expect(run(4095)).toEqual([]);
    expect(run(5000)).toEqual([{ kind: 'decreased', scope: 'key', key: 'k', toWcu: 50 }]);
  });

  it('a bucket in debt is never dropped, however many keys there are', () => {
    const controller = new RateController({ targetWcu: Infinity, keyWcu: 100 }, 0);
    expect(controller.reserveKeys(0, [{ key: 'hot', units: 1010 }])).toBeCloseTo(10_000, 9);
    for (let i = 0; i < 6000; i++) controller.reserveKeys(0, [{ key: `idle-${i}`, units: 1 }]);
    for (let t = 100; t < 5000; t += 100) controller.snapshot(t);
    // Half repaid at 5 s: a new reservation waits behind the rest of the debt.
    expect(controller.reserveKeys(5000, [{ key: 'hot', units: 1 }])).toBeCloseTo(5010, 6);
  });
});

/* ==== classifyThrottle ==== */

describe('classifyThrottle', () => {
  it.each<[string, string[], string[], string[], ThrottleSignal | undefined]>([
    ['no refusals', ['a', 'b', 'c'], [], [], undefined],
    ['no refusals, even with a reason', ['a'], [], ['TableWriteKeyRangeThroughputExceeded'], undefined],
    ['one refused key among several stored', ['a', 'b', 'c', 'a'], ['a'], [], { scope: 'key', keys: ['a'] }],
    ['several refusals of one key, others stored', ['a', 'a', 'a', 'b'], ['a', 'a', 'a'], [], { scope: 'key', keys: ['a'] }],
    ['one of two writes of a single-key batch refused', ['a', 'a'], ['a'], [], { scope: 'key', keys: ['a'] }],
    ['several keys refused', ['a', 'b', 'c', 'd'], ['a', 'b'], [], { scope: 'table' }],
    ['whole call refused without a reason', ['a', 'b', 'c'], ['a', 'b', 'c'], [], { scope: 'table' }],
    ['whole call of one key refused without a reason', ['a', 'a'], ['a', 'a'], [], { scope: 'table' }],
    [
      'KeyRange reason, one key',
      ['a', 'b'],
      ['a'],
      ['TableWriteKeyRangeThroughputExceeded'],
      { scope: 'key', keys: ['a'], reason: 'TableWriteKeyRangeThroughputExceeded' },
    ],
    [
      'KeyRange reason, whole call refused: the keys, once each',
      ['a', 'b', 'a'],
      ['a', 'b', 'a'],
      ['TableWriteKeyRangeThroughputExceeded'],
      { scope: 'key', keys: ['a', 'b'], reason: 'TableWriteKeyRangeThroughputExceeded' },
    ],
    [
      'KeyRange among other reasons',
      ['a', 'b'],
      ['a', 'b'],
      ['TableWriteProvisionedThroughputExceeded', 'IndexWriteKeyRangeThroughputExceeded'],
      { scope: 'key', keys: ['a', 'b'], reason: 'IndexWriteKeyRangeThroughputExceeded' },
    ],
    ['a table-level reason, one key among several refused', ['a', 'b', 'c'], ['a'], ['TableWriteProvisionedThroughputExceeded'], { scope: 'table' }],
    ['account limit', ['a', 'b'], ['a', 'b'], ['TableWriteAccountLimitExceeded'], { scope: 'table' }],
  ])('%s', (_label, sent, refused, reasons, signal) => {
    expect(classifyThrottle(sent, refused, reasons)).toEqual(signal);
  });

  it('reasons default to none', () => {
    expect(classifyThrottle(['a', 'b'], ['a'])).toEqual({ scope: 'key', keys: ['a'] });
    expect(classifyThrottle(['a', 'b'], ['a', 'b'])).toEqual({ scope: 'table' });
  });
});

/* ==== findBottleneck ==== */

describe('findBottleneck', () => {
  it("the hot-partition guidance's example: 5,000 WCU needed at a 1,000 limit -> 5 shards at least, 10 recommended", () => {
    // 100,000 units at 10,000 WCU/s take 10 s; the key's 50,000 in 10 s need 5,000 WCU/s.
    expect(findBottleneck({ key: 'hot', weight: 50_000 }, 100_000, 10_000, 1000)).toEqual({
      key: 'hot',
      units: 50_000,
      share: 0.5,
      keySeconds: 50,
      loadSeconds: 10,
      requiredWcu: 5000,
      minShards: 5,
      recommendedShards: 10,
    });
  });

  it.each<[string, number, number, number, number, number]>([
    // label, key units, total, load rate, key rate, min shards
    ['just over one key: 2 shards', 1001, 10_000, 10_000, 1000, 2],
    ['required 5,000.5 WCU: 6 shards', 50_005, 100_000, 10_000, 1000, 6],
    ['the whole load on one key', 60_000, 60_000, 3000, 1000, 3],
    ['key limit 250', 40_000, 400_000, 4000, 250, 2],
    ['a small load: 3 units of 4 at 10/s with a key limit of 1', 3, 4, 10, 1, 8],
  ])('%s', (_label, units, total, loadWcu, keyWcu, minShards) => {
    const b = findBottleneck({ key: 'k', weight: units }, total, loadWcu, keyWcu)!;
    expect(b).toBeDefined();
    expect(b.minShards).toBe(minShards);
    expect(b.recommendedShards).toBe(2 * minShards);
    expect(b.keySeconds).toBeGreaterThan(b.loadSeconds);
    // minShards shards at the key limit finish with the load; one fewer would not.
    expect(units / (minShards * keyWcu)).toBeLessThanOrEqual(b.loadSeconds * (1 + 1e-12));
    expect(units / ((minShards - 1) * keyWcu)).toBeGreaterThan(b.loadSeconds);
  });

  it.each<[string, { key: string; weight: number } | undefined, number, number, number]>([
    ['the key fits: 1,000 units at 1,000/s while the load takes 10 s', { key: 'k', weight: 1000 }, 100_000, 10_000, 1000],
    ['exactly as long as the load', { key: 'k', weight: 10_000 }, 100_000, 10_000, 1000],
    ['the load is slower than the key limit', { key: 'k', weight: 5000 }, 5000, 500, 1000],
    ['no key seen', undefined, 100_000, 10_000, 1000],
    ['no units', { key: 'k', weight: 0 }, 0, 10_000, 1000],
    ['no load rate (unlimited and never measured)', { key: 'k', weight: 50_000 }, 100_000, Infinity, 1000],
    ['a load rate of 0', { key: 'k', weight: 50_000 }, 100_000, 0, 1000],
    ['a NaN load rate', { key: 'k', weight: 50_000 }, 100_000, Number.NaN, 1000],
  ])('no bottleneck: %s', (_label, heaviest, total, loadWcu, keyWcu) => {
    expect(findBottleneck(heaviest, total, loadWcu, keyWcu)).toBeUndefined();
  });
});

describe('RateController: a target shared with other workers (setTarget)', () => {
  it('lower: at once; higher while quiet: at once (a finished worker freed it); higher after a throttle: grown into', () => {
    const controller = new RateController({ targetWcu: 200 }, 0);
    controller.setTarget(1000, 100);
    expect(controller.snapshot(1000)).toMatchObject({ targetWcu: 100, currentWcu: 100 });
    controller.setTarget(5000, 300);
    expect(controller.snapshot(5000)).toMatchObject({ targetWcu: 300, currentWcu: 300 });
    // A throttle cuts the rate; a larger share right after it is not taken at once.
    controller.record(6000, tableThrottle);
    const cut = controller.snapshot(6000).currentWcu!;
    expect(cut).toBeLessThan(300);
    controller.setTarget(6100, 600);
    expect(controller.snapshot(6100).currentWcu).toBeCloseTo(cut, 6);
    // It grows back towards the new target after the quiet period, never past it.
    expect(controller.snapshot(60_000).currentWcu).toBe(600);
  });
});
