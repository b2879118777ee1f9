import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareGroups, GroupingCheck } from '../../../src/ordering/stripes/grouping.js';
import { StripeSchedule } from '../../../src/ordering/stripes/stripeSchedule.js';
import { LoaderError } from '../../../src/shared/errors.js';
import type { PlannedWrite } from '../../../src/shared/types.js';

const write = (partitionId: string, line = 1, unshardedKey?: string): PlannedWrite => ({
  origin: { file: 'f.csv', line, raw: '' },
  item: {},
  keyId: partitionId,
  partitionId,
  size: 1,
  wcu: 1,
  ...(unshardedKey === undefined ? {} : { unshardedKey }),
});

describe('StripeSchedule', () => {
  it('takes the stripe furthest behind by its share of bytes, lowest index on ties', () => {
    const s = new StripeSchedule([100, 300]);
    const picks: number[] = [];
    for (let k = s.next(); k !== undefined && picks.length < 8; k = s.next()) {
      picks.push(k);
      s.advance(k, 50);
    }
    // Stripe 1 is three times as big: it is picked three times as often.
    expect(picks).toEqual([0, 1, 1, 1, 0, 1, 1, 1]);
  });

  it('every stripe ends at about the same time, whatever the sizes (the schedule has no tail)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 40 }), (sizes) => {
        const s = new StripeSchedule(sizes);
        const left = [...sizes];
        const finishedAt: number[] = [];
        let step = 0;
        for (let k = s.next(); k !== undefined; k = s.next()) {
          if (left[k]! <= 0) {
            s.end(k);
            finishedAt[k] = step;
            continue;
          }
          const bytes = Math.min(left[k]!, 10);
          left[k]! -= bytes;
          s.advance(k, bytes);
          step++;
        }
        const total = step;
        // Each stripe ends within the last rows-of-one-stripe of the load.
        for (let k = 0; k < sizes.length; k++) expect(finishedAt[k]!).toBeGreaterThanOrEqual(total - Math.ceil(Math.max(...sizes) / 10) - sizes.length);
      }),
    );
  });

  it('refuses a stripe out of turn', () => {
    const s = new StripeSchedule([10, 10]);
    expect(() => s.advance(1, 5)).toThrow(/out of turn/);
  });
});

describe('GroupingCheck', () => {
  it('passes keys ascending in every part and below the next part', () => {
    const g = new GroupingCheck(3);
    for (const [part, key] of [
      [0, 'Sa'],
      [1, 'Sm'],
      [2, 'Sx'],
      [0, 'Sb'],
      [0, 'Sb'],
      [1, 'Sn'],
      [0, 'Sc'],
      [2, 'Sy'],
    ] as const)
      g.check(write(key), part);
  });

  it('throws ORDER_NOT_GROUPED, naming the line, when a part goes back', () => {
    const g = new GroupingCheck(1);
    g.check(write('Sb'), 0);
    g.check(write('Sc'), 0);
    const error = (() => {
      try {
        g.check(write('Sb', 42), 0);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('ORDER_NOT_GROUPED');
    expect((error as LoaderError).message).toContain('line 42 of f.csv');
  });

  it('throws when a part reaches the first key of the next part, or a part starts below the one before', () => {
    const g = new GroupingCheck(2);
    g.check(write('Sa'), 0);
    g.check(write('Sm'), 1);
    expect(() => g.check(write('Sm'), 0)).toThrow(/not grouped/);
    const h = new GroupingCheck(2);
    h.check(write('Sm'), 0);
    expect(() => h.check(write('Sa'), 1)).toThrow(/not grouped/);
  });

  it('groups sharded writes by their key before the suffix', () => {
    const g = new GroupingCheck(1);
    g.check(write('Sa#3', 1, 'a'), 0);
    g.check(write('Sa#1', 2, 'a'), 0);
    g.check(write('Sb#2', 3, 'b'), 0);
    expect(() => g.check(write('Sa#0', 4, 'a'), 0)).toThrow(/not grouped/);
  });
});

describe('compareGroups', () => {
  it('orders numbers by value and everything else by code unit', () => {
    expect(compareGroups('N9', 'N10')).toBeLessThan(0);
    expect(compareGroups('N-10', 'N-9')).toBeLessThan(0);
    expect(compareGroups('N-1', 'N0')).toBeLessThan(0);
    expect(compareGroups('N0.5', 'N0.25')).toBeGreaterThan(0);
    expect(compareGroups('N1E+30', 'N999')).toBeGreaterThan(0);
    expect(compareGroups('N7', 'N7')).toBe(0);
    expect(compareGroups('S9', 'S10')).toBeGreaterThan(0);
    expect(compareGroups('SB', 'Sa')).toBeLessThan(0);
  });

  it('agrees with the numbers’ order on any two integers', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (a, b) => {
        expect(Math.sign(compareGroups(`N${a}`, `N${b}`))).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
    );
  });
});
