/**
 * Attack on one --total-wcu shared by --segment workers: a worker whose machine's clock is ahead, killed.
 * Judged by the dead worker's own updatedAt, 10 minutes in the others' future, it looked alive for 10
 * minutes more and its part of the budget was never handed on. Real processes, the clock skewed by
 * `node --import`.
 */
import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../support/localAws.js';
import { budgetLoad, until } from '../support/sharedBudget.js';

const aws = useLocalAws({ name: 'rate-share-ahead' });
const BUDGET = 300;
/** How long the others wait for an unheard worker here (30 s for users). */
const SILENT_MS = 12_000;

describe('--total-wcu with a worker whose clock is ahead', () => {
  it("a worker whose clock is 10 minutes ahead, killed, hands its part on once silent past the others' wait, by their clock", async () => {
    const { worker, targetOf } = await budgetLoad(aws, 'ahead', { a: 9000, b: 9000 }, BUDGET, 2, SILENT_MS);
    const first = await worker(0);
    const second = await worker(1, 600_000);
    try {
      // Both at their half of the budget, then the one ahead dies without a last word.
      expect(await until(async () => (await targetOf(0)) === BUDGET / 2 && (await targetOf(1)) === BUDGET / 2, 20_000)).toBe(true);
      second.child.kill('SIGKILL');
      const killed = Date.now();
      expect(await until(async () => ((await targetOf(0)) ?? 0) > BUDGET * 0.99, SILENT_MS + 12_000), "the dead worker's part was never handed on").toBe(true);
      // Not before it had been silent as long as the others wait (30 s for users, as status): a pause is not a death.
      expect(Date.now() - killed).toBeGreaterThan(SILENT_MS - 2_000);
    } finally {
      first.child.kill('SIGKILL');
      second.child.kill('SIGKILL');
      await Promise.all([first.done, second.done]);
    }
  }, 60_000);
});
