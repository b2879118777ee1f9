/**
 * Attack on one --total-wcu shared by --segment workers: a worker alive but stalled for a few seconds (a
 * long GC pause, a starved pod: SIGSTOP, then SIGCONT). The other must not take its part meanwhile (it may
 * go on at any moment), and when it goes on its stalled sends must not push the table over the budget by
 * more than 10% over any 10 s window. Real processes, the table's rate read back from the partition proxy.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { scanAll } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { budgetLoad, peakWindow, tableSeconds, until } from '../support/sharedBudget.js';

const aws = useLocalAws({ name: 'rate-share-stall' });
const BUDGET = 300;

describe('--total-wcu with a worker stalled for a few seconds', () => {
  it('its part is not taken while it stalls, and going on it keeps the table within the budget', async () => {
    const { table, proxy, worker, targetOf } = await budgetLoad(aws, 'stall', { a: 3000, b: 3000 }, BUDGET);
    const workers = [await worker(0), await worker(1)];
    expect(await until(async () => (await targetOf(0)) === BUDGET / 2 && (await targetOf(1)) === BUDGET / 2, 20_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 2000));
    workers[1]!.child.kill('SIGSTOP');
    let highest = 0;
    const stalled = Date.now();
    while (Date.now() - stalled < 8000) {
      highest = Math.max(highest, (await targetOf(0)) ?? 0);
      await new Promise((r) => setTimeout(r, 100));
    }
    workers[1]!.child.kill('SIGCONT');
    expect(highest, "the stalled worker's part was taken").toBe(BUDGET / 2);
    const runs = await Promise.all(workers.map((w) => w.done));
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect((await scanAll(aws.client(), table)).length).toBe(6000);
    const seconds = tableSeconds(proxy, table);
    // Measured: ... 150 150 425 275 325 300 ... (going on, the sends it had reserved go out at once: one
    // second at 1.4x, the 10 s window at 1.01x).
    expect(peakWindow(seconds).wcu, `per second: ${seconds.join(' ')}`).toBeLessThanOrEqual(BUDGET * 1.1);
  }, 70_000);
});
