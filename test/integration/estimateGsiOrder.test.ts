/**
 * A global order (round-robin, spread) on a table with GSIs (the order from statistics and GSI-aware pacing together): key statistics
 * hold a table key's writes and units, not each write's GSI keys, so the estimate simulates such a
 * table from the materialised order. Its figures must be the materialised order's, with the hot GSI key
 * paced in the simulation, whether the table comes from flags or from DescribeTable (where the dry run
 * starts over once it has seen the GSIs). The default order's striped read, also simulated from statistics
 * on a table without GSIs, starts over the same way.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimate, type EstimateDependencies, type EstimateOptions } from '../../src/estimating/estimate.js';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import { offlineTableInfo } from '../../src/estimating/offlineTable.js';
import type { LoadEvent } from '../../src/reporting/events.js';
import type { TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = {
  partitionKey: { name: 'id', type: 'S' },
  gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' } }],
};
const { endpoint, dir, newTable } = useLocalAws({ name: 'estimate-gsi-order', processCredentials: true, keys: KEYS });

const ROWS = 2_000;
const HOT = 1_500;
const KEY_WCU = 200;

/** Rows of distinct ids (each table key once), HOT of them on status ACTIVE: a hot GSI key. */
async function statusCsv(): Promise<string> {
  const path = join(dir(), 'status.csv');
  const lines = ['id,status,payload'];
  for (let i = 0; i < ROWS; i++) lines.push(`id-${i},${i < HOT ? 'ACTIVE' : `s-${i % 50}`},${'x'.repeat(40)}`);
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

let runs = 0;
async function run(options: Partial<EstimateOptions>, events?: LoadEvent[], deps: EstimateDependencies = {}): Promise<EstimateResult> {
  return estimate(
    {
      input: await statusCsv(),
      table: 'orders',
      order: 'round-robin',
      wcu: 1000,
      keyWcu: KEY_WCU,
      rejectsPath: join(dir(), `${++runs}.rejects.jsonl`),
      ...options,
      simulation: { partitions: 4, latencyMs: 5, ...options.simulation },
    },
    { ...deps, ...(events ? { onEvent: (e: LoadEvent) => events.push(e) } : {}) },
  );
}

/** The result without the measured phases (wall-clock time of this run) and the reject file's name. */
function figures(r: EstimateResult): unknown {
  const { estimatedSeconds, startupSeconds, readSeconds, ...time } = r.time;
  expect(estimatedSeconds).toBeCloseTo(startupSeconds + readSeconds + time.writeSeconds, 9);
  return { ...r, input: { ...r.input, rejectsPath: '' }, time };
}

function expectIndexPaced(r: EstimateResult): void {
  expect(r.simulations.planned.order).toBe('round-robin');
  expect(r.time.bottleneck).toMatchObject({ kind: 'index-key', index: 'byStatus', key: 'ACTIVE', units: HOT });
  // The simulation carried each write's GSI key: ACTIVE's 1,500 index units at --key-wcu 200 take 7.5 s,
  // where the table's distinct keys alone (2,000 units at 1,000 WCU/s) would take about 2 s.
  expect(r.time.writeSeconds).toBeGreaterThanOrEqual((HOT / KEY_WCU) * 0.95);
}

describe('estimate of a global order on a table with GSIs', () => {
  it('table from flags: the materialised order, the hot GSI key paced', async () => {
    const tableInfo = offlineTableInfo('orders', {
      partitionKey: { name: 'id', type: 'S' },
      billing: 'provisioned',
      tableWcu: 1000,
      gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' }, projection: 'KEYS_ONLY', nonKeyAttributes: [] }],
    });
    const asked = await run({ tableInfo });
    const materialised = await run({ tableInfo, simulation: { materializeOrder: true } });
    expectIndexPaced(asked);
    expect(figures(asked)).toEqual(figures(materialised));
  });

  it('table from DescribeTable: the dry run starts over once, with the same figures as the materialised order', async () => {
    const table = await newTable();
    const events: LoadEvent[] = [];
    const asked = await run({ table, endpoint, region: 'us-east-1' }, events);
    const materialised = await run({ table, endpoint, region: 'us-east-1', simulation: { materializeOrder: true } });
    expect(asked.table.source).toBe('describe-table');
    expectIndexPaced(asked);
    expect(figures(asked)).toEqual(figures(materialised));
    // The first attempt stopped before any row: one 'started', no failure event.
    expect(events.filter((e) => e.type === 'started')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'warning')).toEqual([]);
    expect(asked.input.rows).toBe(ROWS);
  });

  it("the default order (stripes), table from DescribeTable: starts over materialised, the striped read's figures", async () => {
    const table = await newTable();
    // Ids that ascend as text, so the file is grouped by its partition key and cut into stripes.
    const path = join(dir(), 'status-sorted.csv');
    const lines = ['id,status,payload'];
    for (let i = 0; i < ROWS; i++) lines.push(`id-${String(i).padStart(5, '0')},${i % 4 === 0 ? 'ACTIVE' : `s-${i % 50}`},${'x'.repeat(40)}`);
    await writeFile(path, `${lines.join('\n')}\n`);
    const seams = { testSeams: { stripeBytes: 4096 } };
    const events: LoadEvent[] = [];
    const asked = await run({ input: path, table, endpoint, region: 'us-east-1', order: undefined }, events, seams);
    const materialised = await run(
      { input: path, table, endpoint, region: 'us-east-1', order: undefined, simulation: { materializeOrder: true } },
      undefined,
      seams,
    );
    expect(asked.simulations.planned.order).toBe('stripes');
    // The measured phases aside (a streaming order's time overlaps reading and writing).
    const measured = (r: EstimateResult) => {
      const { estimatedSeconds, startupSeconds, readSeconds, ...time } = r.time;
      expect(estimatedSeconds).toBeGreaterThanOrEqual(time.writeSeconds);
      expect(startupSeconds + readSeconds).toBeGreaterThanOrEqual(0);
      return { ...r, input: { ...r.input, rejectsPath: '' }, time };
    };
    expect(measured(asked)).toEqual(measured(materialised));
    expect(asked.table.source).toBe('describe-table');
    expect(asked.writeUnits.indexes['byStatus']).toBe(ROWS);
    expect(events.filter((e) => e.type === 'started')).toHaveLength(1);
    expect(asked.input.rows).toBe(ROWS);
  });
});
