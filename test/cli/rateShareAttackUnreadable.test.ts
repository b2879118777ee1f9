/**
 * Attack on one --total-wcu shared by --segment workers: the workers' states beside the listing are there
 * but cannot be read from the start (a folder where the file should be: a volume a worker may list but not
 * read, S3 objects it is denied). A state never read is not a worker known not to run: each worker took
 * the other for one not started and the whole budget at once, the table at twice the budget (the outage
 * test's race, where the states went unreadable before a worker had first read its peer's, made it 1.5x in
 * one run of three). Each must keep to its part of N. Real processes, the table's rate read back from the
 * partition proxy.
 */
import { mkdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useLocalAws } from '../support/localAws.js';
import { budgetLoad, peakWindow, tableSeconds } from '../support/sharedBudget.js';

const aws = useLocalAws({ name: 'rate-share-unreadable' });
const BUDGET = 300;
const SILENT_MS = 8_000;

describe('--total-wcu when no worker can read the states of the others from the start', () => {
  it('no worker takes the part of a peer whose state it has never read', async () => {
    const { table, proxy, listing, worker } = await budgetLoad(aws, 'unreadable', { a: 8_000, b: 8_000 }, BUDGET, 2, SILENT_MS);
    for (const i of [0, 1]) await mkdir(`${listing}.worker-${i}-of-2.json`);
    const workers = [await worker(0), await worker(1)];
    try {
      // Past the time the others wait, and a few beats more.
      await new Promise((r) => setTimeout(r, SILENT_MS + 6_000));
      const seconds = tableSeconds(proxy, table);
      expect(seconds.filter((s) => s > 0).length, `per second: ${seconds.join(' ')}`).toBeGreaterThan(8);
      expect(peakWindow(seconds).wcu, `per second: ${seconds.join(' ')}`).toBeLessThanOrEqual(BUDGET * 1.1);
      for (const w of workers)
        if (w.child.exitCode !== null)
          expect.fail(`a worker ended (${w.child.exitCode}): ${(await w.done).stderr.slice(-1500)}; per second: ${seconds.join(' ')}`);
    } finally {
      for (const w of workers) w.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.done));
    }
  }, 60_000);
});
