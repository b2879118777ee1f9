import { describe, expect, it } from 'vitest';
import { offlineTableInfo } from '../../../src/estimating/offlineTable.js';
import { prepareEstimate, type EstimateLoadSettings } from '../../../src/estimating/prepareEstimate.js';
import { nowCapacity, tableCapacity } from '../../../src/estimating/tableCapacity.js';
import type { TableInfo } from '../../../src/shared/tableInfo.js';

const KEY = { partitionKey: { name: 'id', type: 'S' } } as const;
const ON_DEMAND = offlineTableInfo('orders', KEY);
const PROVISIONED = offlineTableInfo('orders', { ...KEY, billing: 'provisioned', tableWcu: 300, tableRcu: 100 });
const OPTS: EstimateLoadSettings = { pacing: true, wcu: undefined, totalWcu: undefined, segment: undefined, keyWcu: 1000, concurrency: 8, maxAttempts: 15 };

describe('prepareEstimate: the rate', () => {
  it('a fixed --wcu is the target and the assumed rate within what the table takes', () => {
    expect(prepareEstimate(ON_DEMAND, { ...OPTS, wcu: { kind: 'fixed', wcu: 200 } }).rate).toEqual({
      targetWcu: 200,
      assumedWcu: 200,
      reason: '--wcu 200',
      newTable: false,
    });
    expect(prepareEstimate(PROVISIONED, { ...OPTS, wcu: { kind: 'fixed', wcu: 250 } }).rate).toMatchObject({ targetWcu: 250, assumedWcu: 250 });
  });

  it("--wcu above a provisioned table's WCU: the target stays, the estimate works at the table's rate and warns", () => {
    const { rate } = prepareEstimate(PROVISIONED, { ...OPTS, wcu: { kind: 'fixed', wcu: 11_000 } });
    expect(rate).toMatchObject({ targetWcu: 11_000, assumedWcu: 300 });
    expect(rate.warning).toMatch(/above the table's provisioned 300 WCU.*works at the table's 300 WCU\/s/);
  });

  it('a provisioned table created for the load (as AWS allocates partitions): the estimate works at the target, no warning', () => {
    const { rate } = prepareEstimate(PROVISIONED, { ...OPTS, wcu: { kind: 'fixed', wcu: 11_000 } }, { newTable: true });
    expect(rate).toMatchObject({ targetWcu: 11_000, assumedWcu: 11_000, newTable: true });
    expect(rate.warning).toBeUndefined();
  });

  it('--wcu auto on an on-demand table: the rate grows from the warm throughput, the quota is only the cap', () => {
    const { rate } = prepareEstimate(ON_DEMAND, { ...OPTS, wcu: { kind: 'auto', percent: 80 } });
    expect(rate.growth).toMatchObject({ initial: 3_200, factor: 2, cap: 32_000 });
    const warm = prepareEstimate({ ...ON_DEMAND, warmWriteUnits: 10_000 }, { ...OPTS, wcu: { kind: 'auto', percent: 80 } }).rate;
    expect(warm.growth).toMatchObject({ initial: 8_000 });
  });

  it('a fixed --wcu above what an on-demand table takes at once grows from there, with a warning', () => {
    const { rate } = prepareEstimate(ON_DEMAND, { ...OPTS, wcu: { kind: 'fixed', wcu: 20_000 } });
    expect(rate.growth).toMatchObject({ initial: 4_000, factor: 2, cap: 20_000 });
    expect(rate.warning).toMatch(/twice the previous peak/);
  });

  it('no --wcu: no target, the estimate works at what the table takes now', () => {
    expect(prepareEstimate(ON_DEMAND, OPTS).rate).toMatchObject({ targetWcu: Infinity, assumedWcu: 4000 });
    expect(prepareEstimate({ ...ON_DEMAND, warmWriteUnits: 12_000 }, OPTS).rate.assumedWcu).toBe(12_000);
    expect(prepareEstimate(PROVISIONED, OPTS).rate.assumedWcu).toBe(300);
  });

  it('--no-pacing ignores --wcu and says so', () => {
    expect(prepareEstimate(ON_DEMAND, { ...OPTS, pacing: false, wcu: { kind: 'fixed', wcu: 200 } }).rate).toEqual({
      targetWcu: Infinity,
      assumedWcu: 4000,
      reason: '--no-pacing: no rate control',
      newTable: false,
    });
  });
});

describe('prepareEstimate: the simulations', () => {
  /** Four batches of 25 one-unit writes, all to one key. */
  const hotBatches = () => Array.from({ length: 4 }, () => Array.from({ length: 25 }, () => ({ key: 'hot', units: 1 })));

  it('the planned order is paced at --key-wcu, the input order is not', () => {
    const { simulators } = prepareEstimate(ON_DEMAND, { ...OPTS, keyWcu: 10 });
    for (const batch of hotBatches()) simulators.planned.push(batch);
    for (const batch of hotBatches()) simulators.input.push(batch);
    const planned = simulators.planned.finish();
    const input = simulators.input.finish();
    // 100 units at 10 WCU/s for the key: about 10 s; unpaced, four round trips of 20 ms in parallel.
    expect(planned.seconds).toBeGreaterThan(8);
    expect(input.seconds).toBeLessThan(1);
  });

  it('the simulation settings shape the partition model', () => {
    const { simulators } = prepareEstimate(ON_DEMAND, OPTS, { partitions: 3, partitionMaxWcu: 50 });
    simulators.input.push(hotBatches()[0]!);
    expect(simulators.input.finish()).toMatchObject({ partitions: 3 });
  });

  it('the cost model follows the table (GSIs included)', () => {
    const { costModel } = prepareEstimate(ON_DEMAND, OPTS);
    expect(costModel({ id: 'a' }, 1500)).toEqual({ table: 2, indexes: {}, total: 2 });
  });
});

describe('prepareEstimate --workers N: the calls in flight', () => {
  // N workers each send --concurrency batches at once: the whole load has N times the slots of one worker.
  // Without pacing (or below the rate) the time is then bound by the slots, and one worker's slots make the
  // whole load's estimate N times too slow.
  it("the whole load of 4 workers sends 4 x --concurrency batches at once, not one worker's --concurrency", () => {
    const settings = { latencyMs: 20 };
    const oneSlotEach = { ...OPTS, pacing: false, concurrency: 1 };
    const batches = Array.from({ length: 40 }, (_, i) => [{ key: `k${i}`, units: 1 }]);
    const one = prepareEstimate(ON_DEMAND, oneSlotEach, settings).simulators.planned;
    const four = prepareEstimate(ON_DEMAND, { ...oneSlotEach, workers: 4 }, settings).simulators.planned;
    for (const batch of batches) {
      one.push(batch);
      four.push(batch);
    }
    // One slot, 40 calls of 20 ms: 0.8 s. Four workers with a slot each: 10 calls each, side by side.
    expect(one.finish().seconds).toBeCloseTo(0.8, 1);
    expect(four.finish().seconds).toBeCloseTo(0.2, 1);
  });
});

describe('tableCapacity', () => {
  const table = (over: Partial<TableInfo>): TableInfo => ({ ...ON_DEMAND, ...over });

  it('on demand: at least what the target asks; provisioned: what is provisioned', () => {
    expect(tableCapacity(ON_DEMAND, 10_000)).toBe(10_000);
    expect(tableCapacity(ON_DEMAND, 100)).toBe(4000);
    expect(tableCapacity(ON_DEMAND, Infinity)).toBe(4000);
    expect(tableCapacity(PROVISIONED, 10_000)).toBe(300);
  });

  it("now: provisioned WCU, else warm throughput, else a new on-demand table's 4,000", () => {
    expect(nowCapacity(PROVISIONED)).toBe(300);
    expect(nowCapacity(table({ warmWriteUnits: 9000 }))).toBe(9000);
    expect(nowCapacity(ON_DEMAND)).toBe(4000);
  });
});
