/**
 * Attack on one --total-wcu shared by --segment workers: a worker whose machine's clock is behind. Whether
 * a peer was alive was judged by its document's updatedAt, written by the peer's clock, against the
 * reader's: a peer whose clock is 60 s behind looked silent from its first beat, and its part was taken
 * while it still wrote at it (the table at 1.5x the budget). Real processes, the clock skewed by
 * `node --import`, the table's rate read back from the partition proxy.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { scanAll } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { budgetLoad, peakWindow, tableSeconds } from '../support/sharedBudget.js';

const aws = useLocalAws({ name: 'rate-share-clock' });
const BUDGET = 300;

describe('--total-wcu with a worker whose clock is behind', () => {
  it('a worker whose clock is 60 s behind is not taken for silent: the table stays within the budget', async () => {
    const { table, proxy, worker } = await budgetLoad(aws, 'behind', { a: 2400, b: 2400 }, BUDGET);
    const [first, second] = [await worker(0), await worker(1, -60_000)];
    const runs = await Promise.all([first.done, second.done]);
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect((await scanAll(aws.client(), table)).length).toBe(4800);
    const seconds = tableSeconds(proxy, table);
    // Before: 325 300 325 450 450 450 450 450 450 275 200 300 300 (a 10 s window at 392.5 WCU/s, 1.31x).
    expect(peakWindow(seconds).wcu, `per second: ${seconds.join(' ')}`).toBeLessThanOrEqual(BUDGET * 1.1);
  }, 60_000);
});
