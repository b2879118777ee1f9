import { describe, expect, it } from 'vitest';
import { RateController } from '../../../src/pacing/rateControl.js';
import { TokenBucket } from '../../../src/pacing/tokenBucket.js';

describe('hold: a worker of a shared budget heard again after a pause sends nothing until the others make room', () => {
  it('the bucket lends nothing for the time held, then paces at its rate again; holding again does not add up', () => {
    const bucket = new TokenBucket(100, 0.05, 0);
    bucket.hold(1000, 3000);
    bucket.hold(1000, 3000);
    expect(bucket.reserve(1000, 25)).toBeCloseTo(3250);
    // Once the hold is over, sends are spaced at the rate, not released at once.
    expect(bucket.reserve(4250, 25)).toBeCloseTo(250);
  });

  it('a hold keeps its end when the rate changes afterwards (the room given back)', () => {
    const controller = new RateController({ targetWcu: 3 }, 0);
    controller.hold(0, 3000);
    controller.setTarget(10, 150);
    expect(controller.reserveTable(10, 25)).toBeCloseTo(2990 + (25 * 1000) / 150, 0);
  });
});
