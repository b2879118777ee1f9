/**
 * Attack on one --total-wcu shared by --segment workers: the workers' states beside the listing can no
 * longer be written or read (a shared volume gone read-only or full, S3 unreachable from the workers while
 * DynamoDB is not). Each worker kept the others' last documents, saw them unchanged for 30 s, took them for
 * dead and took their parts: every worker at the whole budget, the table at N times it. A worker that
 * cannot be heard now never raises its part. Real processes, the documents made unwritable and unreadable
 * by putting a folder in their place, the table's rate read back from the partition proxy. The file is
 * removed before the folder is made: a worker that read its peer's state in between took it for a worker
 * not started and its part at once (the table at 1.5x from then on), now it keeps the last one it read.
 */
import { mkdir, rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../support/localAws.js';
import { budgetLoad, peakWindow, tableSeconds, until } from '../support/sharedBudget.js';

const aws = useLocalAws({ name: 'rate-share-outage' });
const BUDGET = 300;
/** How long the workers wait for an unheard peer here (30 s for users): what is measured is what follows it. */
const SILENT_MS = 12_000;

describe('--total-wcu when the workers can no longer write or read their states', () => {
  it('no worker takes the parts of the others it no longer hears while it is not heard itself', async () => {
    const { table, proxy, listing, worker, targetOf } = await budgetLoad(aws, 'outage', { a: 12_000, b: 12_000 }, BUDGET, 2, SILENT_MS);
    const workers = [await worker(0), await worker(1)];
    try {
      expect(await until(async () => (await targetOf(0)) === BUDGET / 2 && (await targetOf(1)) === BUDGET / 2, 20_000)).toBe(true);
      const cut = tableSeconds(proxy, table).length;
      for (const i of [0, 1]) {
        const path = `${listing}.worker-${i}-of-2.json`;
        await rm(path);
        await mkdir(path);
      }
      // Past the time the others wait, and a few beats more.
      await new Promise((r) => setTimeout(r, SILENT_MS + 8_000));
      const seconds = tableSeconds(proxy, table).slice(cut);
      // Before: 300 WCU/s each once the wait was over, the table at 600.
      expect(peakWindow(seconds).wcu, `per second since: ${seconds.join(' ')}`).toBeLessThanOrEqual(BUDGET * 1.1);
      expect(Math.max(...seconds.slice(-6)), `per second since: ${seconds.join(' ')}`).toBeLessThanOrEqual(BUDGET * 1.1);
      // Both still writing: the last seconds above measured two workers, not one left alone.
      for (const w of workers)
        if (w.child.exitCode !== null)
          expect.fail(`a worker ended (${w.child.exitCode}): ${(await w.done).stderr.slice(-1500)}; per second since: ${seconds.join(' ')}`);
    } finally {
      for (const w of workers) w.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.done));
    }
  }, 60_000);
});
