import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_SHARE, nextTarget } from '../../../src/load/sharedRate.js';

describe('nextTarget', () => {
  it('as workers finish, the ones left take their parts: 4 -> 3 -> 1 at a budget of 800', () => {
    expect(nextTarget(800, 200, [200, 200, 200], 4)).toBeCloseTo(200);
    // One finished (no longer a peer): its 200 is free.
    expect(nextTarget(800, 200, [200, 200], 4)).toBeCloseTo(266.67, 1);
    expect(nextTarget(800, 266, [], 4)).toBe(800);
  });

  it('a worker that joins takes only what the others leave, and they make room at their next beat', () => {
    const joined = nextTarget(800, undefined, [266, 266, 266], 4);
    expect(joined).toBe((800 * MIN_SHARE) / 4);
    // Each of the three sees four live workers and drops to 200 at once.
    expect(nextTarget(800, 266, [266, 266, joined], 4)).toBeCloseTo(200);
    // The newcomer grows only into the room left: not yet while two still publish 266.
    expect(nextTarget(800, joined, [200, 266, 266], 4)).toBeCloseTo(800 - 200 - 532);
    expect(nextTarget(800, joined, [200, 200, 200], 4)).toBeCloseTo(200);
  });

  it('workers started together, each seeing none of the others yet, take one part of N each', () => {
    expect(nextTarget(800, undefined, [], 4)).toBe(200);
    expect(nextTarget(800, undefined, [200], 4)).toBe(200);
  });

  it('the published targets never add up to more than the budget, whatever the order of beats and of joins and ends (random runs)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ worker: fc.integer({ min: 0, max: 5 }), ends: fc.boolean() }), { minLength: 1, maxLength: 80 }), (beats) => {
        const total = 1000;
        // Not started (undefined and not live), running (a target), finished (null).
        const targets: Array<number | undefined | null> = [undefined, undefined, undefined, undefined, undefined, undefined];
        for (const { worker, ends } of beats) {
          if (targets[worker] === null) continue;
          if (ends && targets[worker] !== undefined) {
            targets[worker] = null;
            continue;
          }
          const peers = targets.filter((t, i): t is number => typeof t === 'number' && i !== worker);
          targets[worker] = nextTarget(total, targets[worker] ?? undefined, peers, 6);
          const live = targets.filter((t): t is number => typeof t === 'number');
          // The floors, 2% of the budget in all, are the only way over.
          expect(live.reduce((n, t) => n + t, 0)).toBeLessThanOrEqual(total * (1 + MIN_SHARE) + 1e-6);
        }
      }),
      { numRuns: 300 },
    );
  });
});
