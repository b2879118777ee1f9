import { describe, expect, it } from 'vitest';
import { createHotKeySketch, HeavyHitters, HOT_KEYS_TRACKED } from '../../../src/shared/heavyHitters.js';
import { mulberry32 } from '../../../tools/mulberry32.js';
import { sized } from '../../support/testSize.js';

/** Adds every (key, weight) to a sketch and to an exact map; returns both. */
function feed(stream: Iterable<[string, number]>, capacity: number): { sketch: HeavyHitters; exact: Map<string, number>; rows: number } {
  const sketch = new HeavyHitters(capacity);
  const exact = new Map<string, number>();
  let rows = 0;
  for (const [key, weight] of stream) {
    sketch.add(key, weight);
    exact.set(key, (exact.get(key) ?? 0) + weight);
    rows++;
  }
  return { sketch, exact, rows };
}

/** Tracked keys whose true weight lies outside [weight - error, weight], described. */
function boundProblems(sketch: HeavyHitters, exact: Map<string, number>, capacity: number): string[] {
  const problems: string[] = [];
  for (const e of sketch.top(capacity)) {
    const truth = exact.get(e.key) ?? 0;
    if (truth > e.weight + 1e-9 || truth < e.weight - e.error - 1e-9) problems.push(`${e.key}: true ${truth}, tracked [${e.weight - e.error}, ${e.weight}]`);
  }
  return problems;
}

/**
 * A long tail with a few heavy keys: `tail` keys drawn Zipf-like (weight ∝ 1/(rank + 10)), plus
 * heavy keys holding the given shares of the rows, in a seeded random order; weights 1 to 4 (write units).
 */
function* zipfStream(seed: number, rows: number, tail: number, heavyShares: readonly number[]): Generator<[string, number]> {
  const random = mulberry32(seed);
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 0; r < tail; r++) cumulative.push((sum += 1 / (r + 10)));
  for (let i = 0; i < rows; i++) {
    const weight = 1 + Math.floor(random() * 4);
    let r = random();
    let heavy = -1;
    for (let h = 0; h < heavyShares.length; h++) {
      if (r < heavyShares[h]!) {
        heavy = h;
        break;
      }
      r -= heavyShares[h]!;
    }
    if (heavy >= 0) {
      yield [`heavy-${heavy}`, weight];
      continue;
    }
    // Binary search of the tail's cumulative weights.
    const target = random() * sum;
    let lo = 0;
    let hi = tail - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    yield [`tail-${lo}`, weight];
  }
}

describe('HeavyHitters: exact while the keys fit', () => {
  it('counts, weights and order are exact with no more keys than the capacity', () => {
    const sketch = new HeavyHitters(4);
    const adds: Array<[string, number]> = [
      ['b', 2],
      ['a', 1],
      ['c', 5],
      ['a', 3],
      ['d', 0.5],
      ['b', 2],
      ['a', 0],
    ];
    for (const [k, w] of adds) sketch.add(k, w);
    expect(sketch.top(10)).toEqual([
      { key: 'c', weight: 5, error: 0, count: 1 },
      { key: 'a', weight: 4, error: 0, count: 3 },
      { key: 'b', weight: 4, error: 0, count: 2 },
      { key: 'd', weight: 0.5, error: 0, count: 1 },
    ]);
    expect(sketch.total).toBe(13.5);
    expect(sketch.rows).toBe(7);
  });

  it.each([
    [1, 1, 1],
    [2, 50, 50],
    [3, 1000, 1000],
    [4, 300, 1000],
  ])('seed %i: %i keys, capacity %i: every key exact, error 0', (seed, keys, capacity) => {
    const random = mulberry32(seed);
    const stream: Array<[string, number]> = [];
    for (let i = 0; i < 20_000; i++) stream.push([`k${Math.floor(random() * keys)}`, 1 + Math.floor(random() * 8)]);
    const { sketch, exact, rows } = feed(stream, capacity);
    const top = sketch.top(capacity);
    expect(top.length).toBe(exact.size);
    for (const e of top) expect([e.key, e.weight, e.error]).toEqual([e.key, exact.get(e.key), 0]);
    expect(top.reduce((n, e) => n + e.count, 0)).toBe(rows);
    expect(sketch.total).toBe([...exact.values()].reduce((a, b) => a + b, 0));
    expect(sketch.rows).toBe(rows);
  });

  it('top(n) is the heaviest n, heaviest first, ties by key; copies that cannot change the sketch', () => {
    const sketch = new HeavyHitters(10);
    for (const [k, w] of [
      ['x', 3],
      ['y', 3],
      ['w', 7],
      ['z', 1],
    ] as const)
      sketch.add(k, w);
    expect(sketch.top(2).map((e) => e.key)).toEqual(['w', 'x']);
    expect(sketch.top(0)).toEqual([]);
    const copy = sketch.top(1)[0]!;
    copy.weight = 0;
    expect(sketch.top(1)[0]!.weight).toBe(7);
  });

  it.each([0, -1, 1.5, Number.NaN, Infinity])('capacity %d is a RangeError', (capacity) => {
    expect(() => new HeavyHitters(capacity)).toThrow(RangeError);
  });

  it('the default capacity is 1000 keys; the 1001st drops the lightest 100 at once', () => {
    const sketch = new HeavyHitters();
    for (let i = 0; i < 1000; i++) sketch.add(`k${i}`, 1 + i);
    expect(sketch.top(2000).length).toBe(1000);
    sketch.add('k1000', 1);
    const top = sketch.top(2000);
    expect(top.length).toBe(901);
    expect(top.some((e) => e.key === 'k99')).toBe(false);
    expect(top.find((e) => e.key === 'k1000')).toEqual({ key: 'k1000', weight: 101, error: 100, count: 1 });
  });
});

describe('HeavyHitters: a long tail beyond the capacity', () => {
  it('capacity 1: one counter, replaced by each newcomer which inherits the weight dropped', () => {
    const sketch = new HeavyHitters(1);
    sketch.add('a', 5);
    sketch.add('b', 2);
    expect(sketch.top(5)).toEqual([{ key: 'b', weight: 7, error: 5, count: 1 }]);
    sketch.add('b', 1);
    sketch.add('c', 1);
    expect(sketch.top(5)).toEqual([{ key: 'c', weight: 9, error: 8, count: 1 }]);
    expect([sketch.total, sketch.rows]).toEqual([9, 4]);
  });

  it('when full, the lightest tenth is dropped at once and a newcomer starts from the heaviest weight dropped', () => {
    const sketch = new HeavyHitters(20);
    for (let i = 0; i < 20; i++) sketch.add(`k${String(i).padStart(2, '0')}`, i + 1);
    sketch.add('new', 1);
    const keys = sketch.top(100).map((e) => e.key);
    expect(keys.length).toBe(19);
    expect(keys).not.toContain('k00');
    expect(keys).not.toContain('k01');
    expect(sketch.top(100).find((e) => e.key === 'new')).toEqual({ key: 'new', weight: 3, error: 2, count: 1 });
  });

  // heavyHitters.ts: "a tracked key's true weight lies in [weight - error, weight]". After a bulk eviction
  // frees several slots, a key that comes back into a free slot starts at its own weight with error 0
  // (add(), the `size < capacity` branch), forgetting the weight it had when it was dropped.
  it('a key dropped and added again into a free slot keeps an upper bound of its true weight', () => {
    const sketch = new HeavyHitters(20);
    for (let i = 0; i < 20; i++) sketch.add(`k${i}`, 1);
    sketch.add('newcomer', 1); // drops k0 and k1 (weight 1 each); 19 tracked
    sketch.add('k0', 1); // true weight 2
    const k0 = sketch.top(100).find((e) => e.key === 'k0')!;
    expect(k0.weight).toBeGreaterThanOrEqual(2);
    expect(k0.weight - k0.error).toBeLessThanOrEqual(2);
  });

  // A quarter of the rows (and of the tail) in the unit pass, the whole at full size (test/support/testSize.ts).
  const scale = sized(4, 1);
  const ZIPF_CASES = (
    [
      [1, 200_000, 20_000, 200, [0.05, 0.03, 0.02]],
      [2, 200_000, 5_000, 100, [0.1, 0.01]],
      [3, 100_000, 50_000, 1000, [0.004, 0.003]],
      [4, 100_000, 100_000, 50, [0.2]],
    ] as const
  ).map(([seed, rows, tail, capacity, shares]) => [seed, rows / scale, tail / scale, capacity, shares] as const);

  it.each(ZIPF_CASES)(
    'seed %i: %i rows over a %i-key Zipf tail, capacity %i, heavy shares %j: the heavy keys are tracked, the heaviest first',
    (seed, rows, tail, capacity, shares) => {
      const { sketch, exact } = feed(zipfStream(seed, rows, tail, shares), capacity);
      expect(exact.size).toBeGreaterThan(capacity);
      const tracked = new Map(sketch.top(capacity).map((e) => [e.key, e]));
      expect(tracked.size).toBeLessThanOrEqual(capacity);
      for (let h = 0; h < shares.length; h++) expect(tracked.has(`heavy-${h}`), `heavy-${h}`).toBe(true);
      // Documented: a key heavier than about total / (0.9 × capacity) is always tracked.
      const threshold = sketch.total / (0.9 * capacity);
      const missing = [...exact].filter(([k, w]) => w > threshold && !tracked.has(k)).map(([k, w]) => `${k} (${w})`);
      expect(missing).toEqual([]);
      const heaviest = [...exact].sort((a, b) => b[1] - a[1])[0]!;
      expect(sketch.top(1)[0]!.key).toBe(heaviest[0]);
    },
  );

  it.each(ZIPF_CASES)(
    "seed %i: %i rows over a %i-key Zipf tail, capacity %i, heavy shares %j: every tracked key's true weight lies in [weight - error, weight]",
    (seed, rows, tail, capacity, shares) => {
      const { sketch, exact } = feed(zipfStream(seed, rows, tail, shares), capacity);
      expect(boundProblems(sketch, exact, capacity)).toEqual([]);
    },
  );

  it('the error of newcomers never decreases and stays below total / (0.9 × capacity)', () => {
    const capacity = 100;
    const sketch = new HeavyHitters(capacity);
    let floor = 0;
    let i = 0;
    for (const [key, weight] of zipfStream(9, 100_000, 30_000, [0.05])) {
      sketch.add(key, weight);
      if (++i % 997 !== 0) continue;
      const maxError = Math.max(...sketch.top(capacity).map((e) => e.error));
      expect(maxError).toBeGreaterThanOrEqual(floor);
      expect(maxError).toBeLessThanOrEqual(sketch.total / (0.9 * capacity) + 1e-9);
      floor = maxError;
    }
    expect(floor).toBeGreaterThan(0);
  });
});

describe('createHotKeySketch', () => {
  it('tracks HOT_KEYS_TRACKED keys before it evicts any', () => {
    const sketch = createHotKeySketch();
    for (let i = 0; i < HOT_KEYS_TRACKED; i++) sketch.add(`k${i}`, 1);
    expect(sketch.top(HOT_KEYS_TRACKED + 1)).toHaveLength(HOT_KEYS_TRACKED);
    expect(sketch.top(HOT_KEYS_TRACKED).every((k) => k.error === 0)).toBe(true);
  });
});
