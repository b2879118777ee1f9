import { describe, expect, it } from 'vitest';
import { planPrewarm, prewarmCommand, prewarmedTable, prewarmTargetWcu, warmThroughputUpdate } from '../../../src/load/prewarmPlan.js';
import type { IndexInfo, TableInfo } from '../../../src/shared/tableInfo.js';

const gsi = (name: string, extra: Partial<IndexInfo> = {}): IndexInfo => ({
  name,
  partitionKey: { name: `${name}_pk`, type: 'S' },
  projection: 'ALL',
  nonKeyAttributes: [],
  ...extra,
});

const onDemand = (extra: Partial<TableInfo> = {}): TableInfo => ({
  name: 'Orders',
  keySchema: { partitionKey: { name: 'pk', type: 'S' } },
  billingMode: 'PAY_PER_REQUEST',
  gsis: [],
  ...extra,
});

describe('prewarmTargetWcu', () => {
  it("is a fixed --wcu, every worker's --wcu together, or --total-wcu", () => {
    expect(prewarmTargetWcu({ kind: 'fixed', wcu: 20_000 }, undefined, 1, {})).toBe(20_000);
    expect(prewarmTargetWcu({ kind: 'fixed', wcu: 5_000 }, undefined, 4, {})).toBe(20_000);
    expect(prewarmTargetWcu(undefined, { kind: 'fixed', wcu: 30_000 }, 4, {})).toBe(30_000);
  });

  it('for --wcu auto is the table cap, so auto:P% starts at its own target once warm', () => {
    expect(prewarmTargetWcu({ kind: 'auto', percent: 80 }, undefined, 1, {})).toBe(40_000);
    expect(prewarmTargetWcu({ kind: 'auto', percent: 80 }, undefined, 1, { onDemandMaxWriteUnits: 12_000 })).toBe(12_000);
  });

  it('is undefined without a target', () => {
    expect(prewarmTargetWcu(undefined, undefined, 1, {})).toBeUndefined();
  });
});

describe('planPrewarm', () => {
  it('raises the table and each GSI below the target, to the target (rounded up)', () => {
    const table = onDemand({ warmWriteUnits: 4_000, gsis: [gsi('byCustomer', { warmWriteUnits: 4_000, status: 'ACTIVE' })] });
    const plan = planPrewarm(table, 19_999.5);
    expect(plan.raises).toEqual([
      { index: undefined, from: 4_000, to: 20_000 },
      { index: 'byCustomer', from: 4_000, to: 20_000 },
    ]);
    expect(warmThroughputUpdate(plan)).toEqual({ table: 20_000, indexes: [{ name: 'byCustomer', writeUnits: 20_000 }] });
  });

  it('never lowers: a table or GSI at or above the target is left alone', () => {
    const table = onDemand({ warmWriteUnits: 50_000, gsis: [gsi('hot', { warmWriteUnits: 20_000 }), gsi('cold', { warmWriteUnits: 4_000 })] });
    const plan = planPrewarm(table, 20_000);
    expect(plan.raises).toEqual([{ index: 'cold', from: 4_000, to: 20_000 }]);
  });

  it("takes an unreported warm throughput as a new table's 4,000 and raises only above it", () => {
    expect(planPrewarm(onDemand(), 4_000).raises).toEqual([]);
    expect(planPrewarm(onDemand(), 8_000).raises).toEqual([{ index: undefined, from: undefined, to: 8_000 }]);
  });

  it('caps each at its own MaxWriteRequestUnits', () => {
    const table = onDemand({ onDemandMaxWriteUnits: 10_000, gsis: [gsi('g', { onDemandMaxWriteUnits: 6_000 })] });
    expect(planPrewarm(table, 20_000).raises.map((r) => r.to)).toEqual([10_000, 6_000]);
  });

  it('leaves a provisioned table alone, and says why', () => {
    const plan = planPrewarm(onDemand({ billingMode: 'PROVISIONED', provisionedWcu: 1_000 }), 20_000);
    expect(plan.raises).toEqual([]);
    expect(plan.notes[0]).toMatch(/provisioned/);
  });

  it('skips a GSI that is not ACTIVE, with a note', () => {
    const plan = planPrewarm(onDemand({ warmWriteUnits: 30_000, gsis: [gsi('building', { status: 'CREATING' })] }), 20_000);
    expect(plan.raises).toEqual([]);
    expect(plan.notes).toEqual(['GSI "building" is CREATING: its warm throughput cannot be raised until it is ACTIVE']);
  });

  it('has nothing to do without a finite target', () => {
    const plan = planPrewarm(onDemand(), NaN);
    expect(plan.raises).toEqual([]);
    expect(plan.notes[0]).toMatch(/--wcu/);
  });

  it('gives the table as warmed, and the AWS CLI command that does the same', () => {
    const table = onDemand({ warmWriteUnits: 4_000, gsis: [gsi('byCustomer', { warmWriteUnits: 4_000 })] });
    const plan = planPrewarm(table, 12_000);
    const warmed = prewarmedTable(table, plan);
    expect(warmed.warmWriteUnits).toBe(12_000);
    expect(warmed.gsis[0]!.warmWriteUnits).toBe(12_000);
    expect(table.warmWriteUnits).toBe(4_000);
    expect(prewarmCommand('Orders', plan)).toBe(
      `aws dynamodb update-table --table-name Orders --warm-throughput WriteUnitsPerSecond=12000 --global-secondary-index-updates '[{"Update":{"IndexName":"byCustomer","WarmThroughput":{"WriteUnitsPerSecond":12000}}}]'`,
    );
    expect(prewarmCommand('Orders', planPrewarm(table, 1_000))).toBeUndefined();
  });
});
