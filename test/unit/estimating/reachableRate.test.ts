import { describe, expect, it } from 'vitest';
import { growthSchedule } from '../../../src/estimating/reachableRate.js';

const AUTO = { initial: 3_200, factor: 2, windowMs: 30 * 60_000, cap: 32_000 };

describe('growthSchedule', () => {
  it('a load shorter than one window never goes above the initial rate, whatever the cap', () => {
    expect(growthSchedule(AUTO, 20_000)).toEqual({ seconds: 20_000 / 3_200, peakWcu: 3_200, averageWcu: 3_200 });
  });

  it('a longer load doubles once per window, up to the cap', () => {
    const first = 3_200 * 1800;
    const second = 6_400 * 1800;
    const s = growthSchedule(AUTO, first + second + 12_800 * 900);
    expect(s.peakWcu).toBe(12_800);
    expect(s.seconds).toBeCloseTo(1800 + 1800 + 900, 6);
    expect(s.averageWcu).toBeCloseTo((first + second + 12_800 * 900) / 4500, 6);
    expect(growthSchedule(AUTO, 1e12).peakWcu).toBe(32_000);
  });

  it('no units take no time', () => {
    expect(growthSchedule(AUTO, 0).seconds).toBe(0);
  });
});
