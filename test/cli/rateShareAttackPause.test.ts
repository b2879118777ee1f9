/**
 * Attack on one --total-wcu shared by --segment workers: a worker paused (SIGSTOP) longer than the others
 * wait for it, then let go on (SIGCONT). The others rightly take its part once it has been silent 30 s; when
 * it came back it wrote at its old part beside theirs until they saw it again (a beat), the table at 1.75x
 * the budget for a second and a 10 s window at 1.16x. Real processes, the table's rate read back from
 * the partition proxy.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { scanAll } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { budgetLoad, peakWindow, tableSeconds, until } from '../support/sharedBudget.js';

const aws = useLocalAws({ name: 'rate-share-pause' });
const BUDGET = 300;
/** How long the others wait for an unheard worker here (30 s for users): what is measured is what follows it. */
const SILENT_MS = 12_000;

describe('--total-wcu with a worker paused longer than the others wait', () => {
  it('the others take its part once it is silent past their wait; let go on, it joins again: no 10 s window above the budget by 10%', async () => {
    const { table, proxy, worker, targetOf } = await budgetLoad(aws, 'long', { a: 8000, b: 2400 }, BUDGET, 2, SILENT_MS);
    const first = await worker(0);
    const second = await worker(1);
    expect(await until(async () => (await targetOf(0)) === BUDGET / 2 && (await targetOf(1)) === BUDGET / 2, 20_000)).toBe(true);
    second.child.kill('SIGSTOP');
    // Not taken while it may only be slow: the others wait SILENT_MS (30 s for users).
    const stopped = Date.now();
    expect(await until(async () => ((await targetOf(0)) ?? 0) > BUDGET * 0.99, SILENT_MS + 12_000)).toBe(true);
    expect(Date.now() - stopped).toBeGreaterThan(SILENT_MS - 2_000);
    await new Promise((r) => setTimeout(r, 2000));
    second.child.kill('SIGCONT');
    const runs = await Promise.all([first.done, second.done]);
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect((await scanAll(aws.client(), table)).length).toBe(8000 + 2400);
    const seconds = tableSeconds(proxy, table);
    // Before: ... 150 150 250 300 300 525 450 400 300 300 ... (a 10 s window at 347.5 WCU/s); after:
    // ... 175 300 300 450 400 300 200 300 300 ... (315): what is left are the sends already reserved when
    // it stopped, which go out as it wakes.
    expect(peakWindow(seconds).wcu, `per second: ${seconds.join(' ')}`).toBeLessThanOrEqual(BUDGET * 1.1);
  }, 70_000);
});
