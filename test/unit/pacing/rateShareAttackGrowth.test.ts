import { describe, expect, it } from 'vitest';
import { chooseWorkerRate } from '../../../src/pacing/rateChoice.js';
import { RateController } from '../../../src/pacing/rateControl.js';

const NEW_ON_DEMAND = { billingMode: 'PAY_PER_REQUEST' as const, gsis: [] };

describe('--total-wcu auto on an on-demand table, handed on as workers finish', () => {
  it("the last worker running takes the table's whole warm rate at once, not only its first part of it", () => {
    // 4 workers: 80% of a new table's 4,000 WCU/s is 3,200 for all of them, 800 each to begin with.
    const rate = chooseWorkerRate(undefined, { kind: 'auto', percent: 80 }, 4, NEW_ON_DEMAND);
    expect(rate.targetWcu * 4).toBe(rate.wholeWcu);
    const controller = new RateController({ targetWcu: rate.targetWcu, growth: rate.growth! }, 0);
    expect(controller.reachableWcu(1000)).toBe(800);
    // The three others finished: the budget (80% of the table's 40,000 quota) is all this worker's, and so
    // is the rate the table takes at once (rateSharing.ts gives it the whole: 4 times its first part).
    controller.setTarget(60_000, rate.wholeWcu!, 4);
    expect(controller.reachableWcu(60_000)).toBe(3200);
    // Four again (a restarted worker joined): back to its part at once.
    controller.setTarget(70_000, rate.targetWcu, 1);
    expect(controller.reachableWcu(70_000)).toBe(800);
  });
});
