/**
 * Attack on one --total-wcu shared by --segment workers: a worker that starts seconds after the other (a
 * slow pod), which has meanwhile taken the whole budget, then is killed (SIGKILL) and started again at
 * once with the same index. The early worker must give back its part when the late one arrives, and the
 * restarted one must not count its killed run's state beside its own: no 10 s window above the budget by
 * more than 10%, every row in the table. Real processes, the table's rate read back from the partition proxy.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { scanAll } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { budgetLoad, peakWindow, tableSeconds, until } from '../support/sharedBudget.js';

const aws = useLocalAws({ name: 'rate-share-restart' });
const BUDGET = 300;

describe('--total-wcu with a late worker killed and started again', () => {
  it('the early worker gives back the late one its part; the restarted one joins again; the table within the budget', async () => {
    const { table, proxy, worker, targetOf } = await budgetLoad(aws, 'restart', { a: 4500, b: 2400 }, BUDGET);
    const first = await worker(0);
    // Alone, it takes the whole budget before the other starts.
    expect(await until(async () => ((await targetOf(0)) ?? 0) > BUDGET * 0.99, 20_000)).toBe(true);
    const late = await worker(1);
    expect(await until(async () => (await targetOf(0)) === BUDGET / 2 && (await targetOf(1)) === BUDGET / 2, 20_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 2000));
    late.child.kill('SIGKILL');
    await late.done;
    const again = await worker(1);
    const runs = await Promise.all([first.done, again.done]);
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect((await scanAll(aws.client(), table)).length).toBe(4500 + 2400);
    const seconds = tableSeconds(proxy, table);
    // Measured: 50 150 150 200 300 300 300 175 150 250 300 200 275 300 ... 300 175 25 (peak 10 s: 300).
    expect(peakWindow(seconds).wcu, `per second: ${seconds.join(' ')}`).toBeLessThanOrEqual(BUDGET * 1.1);
  }, 70_000);
});
