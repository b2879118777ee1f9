import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/pacing/tokenBucket.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

/** One reservation: at `now`, take `units`; the bucket must answer `wait` ms. */
type Step = [now: number, units: number, wait: number];

/** The most units sent in any window [t, t + windowMs) that starts at a send. */
function maxInWindow(sends: ReadonlyArray<{ at: number; units: number }>, windowMs: number): number {
  const sorted = [...sends].sort((a, b) => a.at - b.at);
  let best = 0;
  let sum = 0;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    while (end < sorted.length && sorted[end]!.at < sorted[start]!.at + windowMs) sum += sorted[end++]!.units;
    best = Math.max(best, sum);
    sum -= sorted[start]!.units;
  }
  return best;
}

describe('TokenBucket.reserve', () => {
  it.each<[string, { rate: number; capacitySeconds: number; initialSeconds?: number }, Step[]]>([
    [
      'a full bucket lends its capacity at once, then paces',
      { rate: 100, capacitySeconds: 1 },
      [
        [0, 50, 0],
        [0, 50, 0],
        [0, 50, 500],
        [0, 50, 1000],
      ],
    ],
    [
      'an empty bucket (initialSeconds 0) paces the first reservation',
      { rate: 100, capacitySeconds: 1, initialSeconds: 0 },
      [
        [0, 10, 100],
        [100, 10, 100],
        [300, 10, 0],
      ],
    ],
    [
      'initial tokens are capped at the capacity',
      { rate: 100, capacitySeconds: 1, initialSeconds: 5 },
      [
        [0, 100, 0],
        [0, 1, 10],
      ],
    ],
    [
      'a reservation larger than the capacity is served after the debt is repaid',
      { rate: 100, capacitySeconds: 1 },
      [
        [0, 250, 1500],
        [1500, 100, 1000],
        [2500, 0, 0],
      ],
    ],
    [
      'a small capacity (0.1 s) still serves a 25-unit batch at a 100/s key',
      { rate: 100, capacitySeconds: 0.1 },
      [
        [0, 25, 150],
        [150, 25, 250],
      ],
    ],
    [
      'after a long pause the bucket holds its capacity, not more',
      { rate: 100, capacitySeconds: 1 },
      [
        [0, 100, 0],
        [60_000, 100, 0],
        [60_000, 50, 500],
      ],
    ],
    [
      'refill is linear in time',
      { rate: 1000, capacitySeconds: 1, initialSeconds: 0 },
      [
        [0, 1, 1],
        [500, 400, 0],
        [500, 99, 0],
        [500, 2, 2],
      ],
    ],
    [
      'zero units take nothing and wait for nothing',
      { rate: 10, capacitySeconds: 1, initialSeconds: 0 },
      [
        [0, 0, 0],
        [50, 0, 0],
      ],
    ],
  ])('%s', (_label, { rate, capacitySeconds, initialSeconds }, steps) => {
    const bucket = new TokenBucket(rate, capacitySeconds, 0, initialSeconds);
    for (const [now, units, wait] of steps) expect(bucket.reserve(now, units), `reserve(${now}, ${units})`).toBeCloseTo(wait, 9);
  });

  it('an unlimited bucket (rate Infinity) never makes anyone wait', () => {
    const bucket = new TokenBucket(Infinity, 1, 0);
    expect(bucket.rate).toBe(Infinity);
    for (let i = 0; i < 100; i++) expect(bucket.reserve(i, 1e9)).toBe(0);
    expect(bucket.waitFor(100, 1e12)).toBe(0);
  });

  it('the wait is exactly the time to repay: at now + wait the balance is back to zero, not below', () => {
    const random = mulberry32(11);
    const bucket = new TokenBucket(250, 1, 0, 0);
    let now = 0;
    for (let i = 0; i < 500; i++) {
      const wait = bucket.reserve(now, 1 + Math.floor(random() * 60));
      now += wait;
      if (wait > 0) expect(bucket.tokens(now)).toBeCloseTo(0, 6);
      else expect(bucket.tokens(now)).toBeGreaterThanOrEqual(0);
      now += random() < 0.1 ? random() * 2000 : 0;
    }
  });
});

describe('TokenBucket: pacing of many callers', () => {
  // Callers reserve at random moments and send when their wait is over: whatever the arrival pattern, sends
  // keep reservation order, and the units sent in any window of W ms are at most rate × W + capacity, plus
  // the first send of the window (a reservation is sent whole, and may be larger than the capacity).
  it.each([
    [1, 100, 1],
    [2, 1000, 1],
    [3, 1000, 0.1],
    [4, 37.5, 2],
  ])('seed %i: rate %d/s, capacity %d s: window bound and FIFO hold', (seed, rate, capacitySeconds) => {
    const random = mulberry32(seed);
    const bucket = new TokenBucket(rate, capacitySeconds, 0);
    const capacity = rate * capacitySeconds;
    const largest = 3 * capacity;
    const sends: Array<{ at: number; units: number }> = [];
    let now = 0;
    let lastSend = -Infinity;
    for (let i = 0; i < 4000; i++) {
      // Bursts of arrivals at one instant, pauses, and reservations larger than the capacity.
      now += random() < 0.7 ? 0 : random() * (random() < 0.05 ? 5000 : 200);
      const units = random() < 0.02 ? largest : 1 + Math.floor(random() * 25);
      const at = now + bucket.reserve(now, units);
      expect(at).toBeGreaterThanOrEqual(lastSend - 1e-9);
      lastSend = at;
      sends.push({ at, units });
    }
    for (const windowMs of [1, 50, 100, 1000, 10_000]) {
      expect(maxInWindow(sends, windowMs), `window ${windowMs} ms`).toBeLessThanOrEqual((rate * windowMs) / 1000 + capacity + Math.max(25, largest) + 1e-6);
    }
    // Over the whole run: what the bucket earned since the start, plus what it held at the start.
    const total = sends.reduce((sum, s) => sum + s.units, 0);
    expect(total).toBeLessThanOrEqual((rate * lastSend) / 1000 + capacity + largest + 1e-6);
  });

  it('with steady demand above the rate, units sent in any window stay within rate × window + capacity', () => {
    const bucket = new TokenBucket(500, 1, 0);
    const sends: Array<{ at: number; units: number }> = [];
    // Eight callers, each reserving again as soon as its previous send went out (earliest caller first,
    // so time never goes back for the bucket).
    const next = Array.from({ length: 8 }, () => 0);
    for (let i = 0; i < 8000; i++) {
      const now = Math.min(...next);
      const caller = next.indexOf(now);
      const at = now + bucket.reserve(now, 20);
      next[caller] = at;
      sends.push({ at, units: 20 });
    }
    for (const windowMs of [100, 1000, 5000]) expect(maxInWindow(sends, windowMs)).toBeLessThanOrEqual(500 * (windowMs / 1000) + 500);
    const total = sends.reduce((sum, s) => sum + s.units, 0);
    const last = sends[sends.length - 1]!.at;
    // 500 units from the full bucket at the start, then 500/s.
    expect(total).toBeCloseTo(500 + (500 * last) / 1000, 6);
  });

  // tokenBucket.ts: "Reservations are served in the order they are made". A raise of the rate while a debt
  // is outstanding repays the rest of the debt faster, so a later reservation gets an earlier send time than
  // one made before the raise, whose wait was computed at the old rate.
  it('reservations are served in the order they are made, also across a raise of the rate', () => {
    const bucket = new TokenBucket(10, 1, 0, 0);
    const first = 0 + bucket.reserve(0, 100);
    expect(first).toBe(10_000);
    bucket.setRate(1, 1000);
    const second = 1 + bucket.reserve(1, 1);
    expect(second).toBeGreaterThanOrEqual(first);
  });
});

describe('TokenBucket: tokens, waitFor, isFull, setRate', () => {
  it('tokens() refills with time and shows a debt as negative', () => {
    const bucket = new TokenBucket(100, 2, 0, 0.5);
    expect(bucket.tokens(0)).toBe(50);
    expect(bucket.tokens(1000)).toBe(150);
    expect(bucket.tokens(10_000)).toBe(200);
    bucket.reserve(10_000, 260);
    expect(bucket.tokens(10_000)).toBe(-60);
    expect(bucket.tokens(10_600)).toBeCloseTo(0, 9);
  });

  it('waitFor tells the wait without taking anything', () => {
    const bucket = new TokenBucket(100, 1, 0, 0);
    expect(bucket.waitFor(0, 30)).toBeCloseTo(300, 9);
    expect(bucket.waitFor(0, 30)).toBeCloseTo(300, 9);
    expect(bucket.waitFor(300, 30)).toBeCloseTo(0, 9);
    expect(bucket.waitFor(300, 0)).toBe(0);
    expect(bucket.tokens(300)).toBeCloseTo(30, 9);
    // A wait longer than the capacity is still a wait, not "never".
    expect(bucket.waitFor(300, 500)).toBeCloseTo(4700, 9);
  });

  it('isFull is true only once every unit of the capacity is back', () => {
    const bucket = new TokenBucket(100, 1, 0);
    expect(bucket.isFull(0)).toBe(true);
    bucket.reserve(0, 1);
    expect(bucket.isFull(0)).toBe(false);
    expect(bucket.isFull(9)).toBe(false);
    expect(bucket.isFull(10)).toBe(true);
    bucket.reserve(10, 300);
    expect(bucket.isFull(3000)).toBe(false);
    expect(bucket.isFull(4000)).toBe(true);
  });

  it.each<[string, number, number, number, number]>([
    // label, tokens before (at rate 100, capacity 1 s), new rate, tokens after, wait for 10 units after
    ['a cut keeps what was earned, up to the new capacity', 100, 20, 20, 0],
    ['a cut keeps a partial balance below the new capacity', 15, 20, 15, 0],
    ['a raise keeps the balance; the capacity grows for later refills', 100, 400, 100, 0],
    // 40 units owed at 100/s are repaid at 400 ms, whatever the new rate: those callers already wait for that.
    ['a debt keeps the time it is repaid at (400 ms); the new rate applies after it', -40, 20, -8, 900],
  ])('setRate: %s', (_label, before, rate, after, wait) => {
    const bucket = new TokenBucket(100, 1, 0);
    bucket.reserve(0, 100 - before);
    expect(bucket.tokens(0)).toBeCloseTo(before, 9);
    bucket.setRate(0, rate);
    expect(bucket.rate).toBe(rate);
    expect(bucket.tokens(0)).toBeCloseTo(after, 9);
    expect(bucket.waitFor(0, 10)).toBeCloseTo(wait, 9);
  });

  it('setRate counts the time before the change at the old rate and after it at the new one', () => {
    const bucket = new TokenBucket(100, 10, 0, 0);
    bucket.setRate(1000, 10);
    expect(bucket.tokens(1000)).toBeCloseTo(100, 9);
    expect(bucket.tokens(2000)).toBeCloseTo(100, 9);
    // Capacity at 10/s is 100: the balance earned at 100/s was already at the new cap.
    bucket.reserve(2000, 100);
    expect(bucket.tokens(3000)).toBeCloseTo(10, 9);
    bucket.setRate(3000, 1000);
    expect(bucket.tokens(3500)).toBeCloseTo(510, 9);
  });

  it('from unlimited to a rate: the bucket starts empty at the new rate', () => {
    const bucket = new TokenBucket(Infinity, 1, 0);
    bucket.reserve(0, 1e6);
    bucket.setRate(5000, 200);
    expect(bucket.tokens(5000)).toBe(0);
    expect(bucket.reserve(5000, 50)).toBeCloseTo(250, 9);
  });
});
