import { describe, expect, it } from 'vitest';
import { PlannedOrderStats } from '../../../src/estimating/plannedOrder.js';
import { orderAll, type GlobalOrderMode } from '../../../src/ordering/order.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

/* ==== Inputs ==== */

/** Writes [key, units] in input order: `keys` keys, Zipf-like counts, shuffled or sorted by key; units fixed per key. */
function writes(seed: number, keys: number, rows: number, sorted: boolean): Array<[string, number]> {
  const random = mulberry32(seed);
  const units = Array.from({ length: keys }, () => 1 + Math.floor(random() * 4));
  const out: Array<[string, number]> = [];
  for (let i = 0; i < rows; i++) {
    const k = Math.floor(keys * random() ** 3);
    out.push([`k${k}`, units[k]!]);
  }
  if (sorted) out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return out;
}

function statsOf(input: Array<[string, number]>, maxKeys?: number): PlannedOrderStats {
  const stats = new PlannedOrderStats(maxKeys);
  for (const [key, units] of input) stats.add(key, units);
  return stats;
}

/* ==== The order ==== */

describe('PlannedOrderStats: the planned order from key statistics', () => {
  it.each<[GlobalOrderMode, number, boolean]>([
    ['round-robin', 1, false],
    ['round-robin', 2, true],
    ['spread', 3, false],
    ['spread', 4, true],
  ])('%s (seed %i, sorted %s): the same keys in the same order as the materialised order, with their units', (mode, seed, sorted) => {
    const input = writes(seed, 40, 3000, sorted);
    const expected = orderAll(input, (w) => w[0], mode).map(([key, units]) => ({ key, units }));
    expect([...statsOf(input).ordered(mode)]).toEqual(expected);
  });

  it('one key, and keys of one write each: round-robin and spread keep them as the order would', () => {
    const one: Array<[string, number]> = Array.from({ length: 7 }, () => ['only', 2]);
    expect([...statsOf(one).ordered('spread')]).toEqual(one.map(([key, units]) => ({ key, units })));
    const singles: Array<[string, number]> = Array.from({ length: 50 }, (_, i) => [`s${i}`, 1]);
    for (const mode of ['round-robin', 'spread'] as const)
      expect([...statsOf(singles).ordered(mode)].map((w) => w.key)).toEqual(orderAll(singles, (w) => w[0], mode).map((w) => w[0]));
  });

  it('a key with writes of different sizes carries its mean units: each key sums to its own total', () => {
    const input: Array<[string, number]> = [
      ['a', 1],
      ['b', 5],
      ['a', 3],
      ['a', 2],
    ];
    const out = [...statsOf(input).ordered('round-robin')];
    expect(out.map((w) => w.key)).toEqual(['a', 'b', 'a', 'a']);
    expect(out.filter((w) => w.key === 'a').map((w) => w.units)).toEqual([2, 2, 2]);
    expect(out.find((w) => w.key === 'b')!.units).toBe(5);
  });

  it('past maxKeys, new keys count as keys of one write each: no write or unit lost, round 0 in round-robin', () => {
    const input = writes(7, 500, 4000, false);
    const stats = statsOf(input, 50);
    expect(stats.keys).toBe(50);
    const tracked = new Set<string>();
    for (const [key] of input) if (tracked.size < 50) tracked.add(key);
    const overflowRows = input.filter(([key]) => !tracked.has(key));
    expect(stats.overflow).toBe(overflowRows.length);
    for (const mode of ['round-robin', 'spread'] as const) {
      const out = [...statsOf(input, 50).ordered(mode)];
      expect(out).toHaveLength(input.length);
      expect(out.reduce((n, w) => n + w.units, 0)).toBeCloseTo(
        input.reduce((n, [, u]) => n + u, 0),
        6,
      );
      // Each overflow write is a key of its own, and no tracked key's name is reused.
      const overflowKeys = out.filter((w) => !tracked.has(w.key)).map((w) => w.key);
      expect(new Set(overflowKeys).size).toBe(overflowRows.length);
    }
    // Round-robin: every overflow write in round 0, so all of them come before any tracked key's second write.
    const rr = [...statsOf(input, 50).ordered('round-robin')];
    const lastOverflow = rr.map((w) => tracked.has(w.key)).lastIndexOf(false);
    expect(lastOverflow).toBeLessThan(50 + overflowRows.length);
  });

  it('nothing added: an empty order', () => {
    expect([...new PlannedOrderStats().ordered('spread')]).toEqual([]);
  });
});
