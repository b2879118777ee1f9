/**
 * Rate control under noise, through the partition proxy in front of DynamoDB Local: a noisy network's fault mix (5% of calls
 * each answered 500, 503, ThrottlingException, a dropped connection or a lost reply, and 2% of replies
 * held 2.5 s) on a table far below its capacity, so no fault is about capacity. Scaled to the suite's
 * time budget: the same rows clean and noisy in one test, the ratio of their items/s.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load, type LoadOptions, type LoadResult } from '../../src/index.js';
import type { LoadEvent } from '../../src/reporting/events.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { GENERATED_TYPES, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy, type PartitionProxy, type ProxyFaults } from '../support/partitionProxy.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'noise', processCredentials: true, keys: KEYS });

/** The issue's mix. */
const ISSUE_FAULTS: ProxyFaults = { internal: 0.05, unavailable: 0.05, throttling: 0.05, drop: 0.05, lostReply: 0.05, slow: { rate: 0.02, ms: 2500 } };
/** Far above anything DynamoDB Local can take: no throttle here is about capacity. */
const NO_LIMIT = { tableWcu: 1_000_000, partitions: 8, partitionMaxWcu: 1_000_000 };

async function proxyWith(faults: ProxyFaults | undefined, seed: number): Promise<PartitionProxy> {
  const proxy = await startPartitionProxy(endpoint, { partitionKeyName: 'pk', model: NO_LIMIT, seed, ...(faults ? { faults } : {}) });
  closeAfterAll(proxy);
  return proxy;
}

let seq = 0;
async function run(
  proxy: PartitionProxy,
  input: string,
  options: Partial<LoadOptions> = {},
): Promise<{ result: LoadResult; events: LoadEvent[]; table: string }> {
  const table = await newTable();
  const events: LoadEvent[] = [];
  const types = { ...GENERATED_TYPES, sk: 'N' } as LoadOptions['types'];
  const result = await load(
    { region: 'us-east-1', input, table, types, rejectsPath: join(dir(), `${++seq}.rejects.jsonl`), ...options, endpoint: proxy.url },
    { onEvent: (e) => events.push(e) },
  );
  return { result, events, table };
}

describe('noise through the partition proxy', () => {
  // The noisy network's mix, and the same with 15% ThrottlingException: above the 10% share that once
  // cut the rate whatever the rate; main at c13a51c did not finish that load within the 120 s limit.
  // Speed is the bench's to measure (bench/noise.ts prints the ratio; 0.59 against the 0.5 target): here
  // the outcome. A wide floor of 0.3x only catches the collapse the issue saw (1/90 of the clean speed);
  // the 15% mix varies from 0.19x to 0.45x with the machine's load, so it is held to finishing in time and
  // to its rate cuts being undone as noise.
  it.each([
    [3, 0.05, 0.3],
    [5, 0.15, undefined],
  ])(
    "a noisy network's fault mix, seed %i, ThrottlingException on a share %d of calls: nothing lost, the rate kept",
    async (seed, throttling, floor) => {
      const rows = 10_000;
      const input = join(dir(), `noise-${seed}.csv`);
      await writeGeneratedCsv(input, rows);

      const clean = await run(await proxyWith(undefined, seed), input);
      expect(clean.result).toMatchObject({ rowsRead: rows, written: rows, rejected: 0, complete: true });

      const proxy = await proxyWith({ ...ISSUE_FAULTS, throttling }, seed);
      const noisy = await run(proxy, input);
      // Nothing lost, every row in the table.
      expect(noisy.result).toMatchObject({ rowsRead: rows, written: rows, rejected: 0, complete: true });
      expect((await scanAll(client(), noisy.table)).length).toBe(rows);
      const faults = proxy.stats().faults;
      for (const kind of ['internal', 'unavailable', 'throttling', 'drop', 'lostReply', 'slow'] as const) expect(faults[kind], kind).toBeGreaterThan(5);

      const ratio = noisy.result.itemsPerSecond / clean.result.itemsPerSecond;
      console.log(
        `issue 12 noise: clean ${clean.result.itemsPerSecond.toFixed(0)} items/s, noisy ${noisy.result.itemsPerSecond.toFixed(0)} items/s, ratio ${ratio.toFixed(2)}; errors ${noisy.result.rate.errors}, rate cuts ${noisy.result.rate.decreases}, undone ${noisy.result.rate.restores}`,
      );
      if (floor !== undefined)
        expect(ratio, `noisy ${noisy.result.itemsPerSecond.toFixed(0)} vs clean ${clean.result.itemsPerSecond.toFixed(0)} items/s`).toBeGreaterThanOrEqual(
          floor,
        );
      // Noise is told from capacity: cuts of the whole load's rate are undone (before noise was told from capacity the rate was
      // cut 100 times and never came back); at most two stand (measured: 0-1). A probe that took a busy
      // machine's writers for capacity once left 4 (CI) to 9 (here, 1 run in 4 under CPU load) standing;
      // 1 over 6 runs under the same load since (test/unit/pacing/rateNoise.test.ts has the model).
      expect(noisy.result.rate.decreases - noisy.result.rate.restores).toBeLessThanOrEqual(2);
      // Errors are counted apart from throttles, and every rate change says why.
      expect(noisy.result.rate.errors).toBeGreaterThan(0);
      expect(noisy.result.rate.errors).toBeGreaterThanOrEqual(faults.internal + faults.unavailable + faults.drop);
      for (const e of noisy.events)
        if (e.type === 'rateChanged' && e.change.scope === 'table') expect(['probe', 'capacity', 'noise']).toContain(e.change.reason);
    },
    120_000,
  );

  // Noise on top of a real capacity limit converges near the capacity, not to the floor. A
  // table of 4 partitions taking 100 WCU/s each (400 in all, no burst), no --wcu: only the table's
  // throttles can teach the load its capacity, while the noisy network's fault mix throttles and fails calls at
  // random. The same load clean is the yardstick; the floor (5% of the best rate) would take minutes.
  it('noise on top of a capacity limit: every row lands, near the clean load at capacity, never down at the floor', async () => {
    const rows = 4000;
    const capacity = 400;
    const input = join(dir(), 'noise-capacity.csv');
    await writeGeneratedCsv(input, rows);
    const atCapacity = async (faults: ProxyFaults | undefined) => {
      const proxy = await startPartitionProxy(endpoint, {
        partitionKeyName: 'pk',
        model: { tableWcu: capacity, partitions: 4, burstSeconds: 0, initialSeconds: 1 },
        seed: 7,
        ...(faults ? { faults } : {}),
      });
      closeAfterAll(proxy);
      const { result, table } = await run(proxy, input);
      expect(result).toMatchObject({ rowsRead: rows, written: rows, rejected: 0, complete: true });
      expect((await scanAll(client(), table)).length).toBe(rows);
      return result;
    };
    const clean = await atCapacity(undefined);
    const noisy = await atCapacity(ISSUE_FAULTS);
    const idealMs = (noisy.plannedWcu / capacity) * 1000;
    const line = (r: LoadResult) =>
      `${r.elapsedMs.toFixed(0)} ms (${(r.elapsedMs / idealMs).toFixed(2)}x ideal), average ${r.rate.averageWcu.toFixed(0)} WCU/s, throttled ${r.throttledItems}, errors ${r.rate.errors}, cuts ${r.rate.decreases}, undone ${r.rate.restores}`;
    console.log(`issue 12 noise at capacity ${capacity} WCU/s: clean ${line(clean)}; noisy ${line(noisy)}`);
    // Measured over three runs: clean 1.07-1.16x the ideal time (346-374 WCU/s), noisy 1.35-2.0x (200-296
    // WCU/s). Since probes need a clearer rise of throttles to call capacity (so that noise alone is not
    // taken for it), over 4 runs: clean 1.03-1.39x (288-389 WCU/s), noisy 1.54-2.24x (179-259 WCU/s). The floor would
    // be 20x (20 WCU/s). The noise costs retries, lost replies written twice and
    // replies held 2.5 s. The bound is the one that tells "near the capacity" from "down at the floor".
    expect(noisy.rate.averageWcu).toBeGreaterThanOrEqual(0.3 * capacity);
    expect(noisy.elapsedMs).toBeLessThanOrEqual(3 * clean.elapsedMs);
    expect(noisy.rate.errors).toBeGreaterThan(0);
  }, 150_000);
});
