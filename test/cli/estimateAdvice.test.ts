/**
 * Through the built CLI: the estimate's figures and advice rest on the rate the load can reach,
 * a hot GSI key is named with write-sharding advice for the index key (offline and from DescribeTable against DynamoDB Local),
 * and AWS's bulk-load case ("create the table at the load's capacity") is reachable offline.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const BIN = new URL('../../bin/ddb-spread.js', import.meta.url).pathname;
const { endpoint, dir, newTable } = useLocalAws({
  name: 'estadvice',
  keys: { partitionKey: { name: 'id', type: 'S' }, gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' } }] },
});

const cli = (args: string[], env = localEnv('http://127.0.0.1:9')) =>
  promisify(execFile)(process.execPath, [BIN, ...args], { cwd: dir(), env, maxBuffer: 16 * 1024 * 1024 });

/** `rows` rows with distinct ids; `active` of them have status ACTIVE, the others one status each. */
async function statusCsv(name: string, rows: number, active: number): Promise<string> {
  const lines = ['id,status,payload'];
  for (let i = 0; i < rows; i++) lines.push(`id-${i},${i < active ? 'ACTIVE' : `S${i}`},${'x'.repeat(60)}`);
  const path = join(dir(), name);
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

const json = async (args: string[], env?: NodeJS.ProcessEnv) => JSON.parse((await cli([...args, '--json'], env)).stdout) as EstimateResult;

describe('estimate advice at the reachable rate', () => {
  it('--wcu auto on a new on-demand table: 3,200 WCU/s (80% of 4,000), not the 32,000 of the quota; 4 partitions', async () => {
    const input = await statusCsv('auto.csv', 20_000, 0);
    const r = await json(['estimate', input, '--partition-key', 'id:S', '--wcu', 'auto']);
    expect(r.rate).toMatchObject({ targetWcu: 32_000, assumedWcu: 3_200, peakWcu: 3_200 });
    expect(r.time.idealSeconds).toBeCloseTo(r.writeUnits.total / 3_200, 1);
    expect(r.table.partitionsAtTarget).toBe(4);
    // A warm throughput (offline --table-wcu on on-demand) is where the rate starts.
    const warm = await json(['estimate', input, '--partition-key', 'id:S', '--wcu', 'auto', '--table-wcu', '10000']);
    expect(warm.rate).toMatchObject({ assumedWcu: 8_000 });
  });

  it("--wcu above a provisioned table's WCU warns, and the figures use the table's rate", async () => {
    const input = await statusCsv('over.csv', 3_000, 0);
    const r = await json(['estimate', input, '--partition-key', 'id:S', '--billing', 'provisioned', '--table-wcu', '200', '--wcu', '11000']);
    expect(r.rate.warning).toMatch(/above the table's provisioned 200 WCU/);
    expect(r.rate.assumedWcu).toBe(200);
    expect(r.time.bottleneck).toEqual({ kind: 'table', wcu: 200 });
    expect(r.rate.throttleFreeWcu).toBeGreaterThan(150);
    const text = (await cli(['estimate', input, '--partition-key', 'id:S', '--billing', 'provisioned', '--table-wcu', '200', '--wcu', '11000'])).stdout;
    expect(text).toMatch(/warning\s+--wcu 11,000 is above the table's provisioned 200 WCU/);
  });

  it("AWS's bulk-load example offline: a table created at 11,000 WCU for the load has 11 partitions, never merged", async () => {
    const input = await statusCsv('bulk.csv', 2_000, 0);
    const r = await json(['estimate', input, '--partition-key', 'id:S', '--billing', 'provisioned', '--table-wcu', '200', '--wcu', '11000', '--new-table']);
    expect(r.rate).toMatchObject({ assumedWcu: 11_000, warning: null });
    expect(r.capacity).toMatchObject({ loadWcu: 11_000, partitionsAfterRaise: 11 });
    expect(r.table.partitionsAtTarget).toBe(11);
    expect(r.capacity.advice[0]).toMatch(
      /Creating the table at 11,000 WCU .* 11 partitions, which are never merged: back at 200 WCU each partition gets 18\.2 WCU\/s/,
    );
    await expect(cli(['estimate', input, '--partition-key', 'id:S', '--wcu', '11000', '--new-table'])).rejects.toMatchObject({
      stderr: expect.stringMatching(/--new-table needs --billing provisioned and a fixed --wcu/) as string,
    });
  });

  it('a hot GSI key is named, bounds the duration and gets write-sharding advice: offline and from DescribeTable', async () => {
    // 3,000 of 4,000 rows on ACTIVE: 3,000 index units at 1,000 WCU/s take 3 s; the load at 3,200 WCU/s ~2.5 s.
    const input = await statusCsv('status.csv', 4_000, 3_000);
    const offline = await json(['estimate', input, '--partition-key', 'id:S', '--gsi', 'byStatus:status:S', '--wcu', 'auto']);
    const table = await newTable();
    const described = await json(['estimate', input, '--table', table, '--wcu', 'auto'], localEnv(endpoint));
    for (const r of [offline, described]) {
      expect(r.keys.indexes[0]!.index).toBe('byStatus');
      expect(r.keys.indexes[0]!.hottest[0]).toMatchObject({ key: 'ACTIVE', rows: 3_000, units: 3_000 });
      expect(r.time.bottleneck).toMatchObject({ kind: 'index-key', index: 'byStatus', key: 'ACTIVE', units: 3_000 });
      const advice = r.shardAdvice.find((a) => a.index === 'byStatus');
      expect(advice).toMatchObject({ key: 'ACTIVE', minShards: 2, recommendedShards: 4 });
      expect(advice!.flags).toContain('"ACTIVE#SHARD#0" .. "ACTIVE#SHARD#3"');
      expect(advice!.reads).toContain('4 queries of the index per status value');
      // The table's keys are all distinct: no advice for them, and the simulation paced ACTIVE at 1,000 WCU/s.
      expect(r.shardAdvice.filter((a) => a.index === undefined || a.index === null)).toEqual([]);
      expect(r.time.estimatedSeconds).toBeGreaterThanOrEqual(2.8);
      // The index partition of ACTIVE also holds a share of the other statuses, so a few writes throttle.
      expect(r.simulations.planned.throttledItems).toBeLessThan(0.05 * 4_000);
      // The throttle-free rate counts the index's partitions: ACTIVE's fills before the table's do.
      expect(r.rate.throttleFreeWcu).toBeLessThan(3_200);
    }
    const text = (await cli(['estimate', input, '--partition-key', 'id:S', '--gsi', 'byStatus:status:S', '--wcu', 'auto'])).stdout;
    expect(text).toMatch(/bottleneck\s+GSI byStatus key "ACTIVE": 3,000 index units at 1,000 WCU\/s\s+take 3\.0 s/);
    expect(text).toContain('hottest keys of GSI byStatus');
    expect(text).toMatch(/Adaptive capacity may isolate a hot key, never above 1,000 WCU\/s/);
  });
});
