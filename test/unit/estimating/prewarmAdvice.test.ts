import { describe, expect, it } from 'vitest';
import { advisePrewarm } from '../../../src/estimating/prewarmAdvice.js';
import { planPrewarm } from '../../../src/load/prewarmPlan.js';
import type { TableInfo } from '../../../src/shared/tableInfo.js';

const table: TableInfo = {
  name: 'Orders',
  keySchema: { partitionKey: { name: 'pk', type: 'S' } },
  billingMode: 'PAY_PER_REQUEST',
  gsis: [],
  warmWriteUnits: 4_000,
};
const WINDOW = 30 * 60_000;

describe('advisePrewarm', () => {
  it('without --prewarm, on an on-demand table the warm throughput holds back: the command and the time saved', () => {
    // 100M units at --wcu 20,000: from 4,000 the rate doubles each 30 minutes (4k, 8k, 16k, then 20k).
    const growth = { initial: 4_000, factor: 2, windowMs: WINDOW, cap: 20_000 };
    const units = 100_000_000;
    const advice = advisePrewarm({ table, plan: planPrewarm(table, 20_000), growth, totalWcu: units, given: false })!;
    const growing = 1800 * 3 + (units - (4_000 + 8_000 + 16_000) * 1800) / 20_000;
    expect(advice.secondsWithout).toBeCloseTo(growing, 6);
    expect(advice.secondsWith).toBeCloseTo(units / 20_000, 6);
    expect(advice.savedSeconds).toBeCloseTo(growing - units / 20_000, 6);
    expect(advice.command).toBe('aws dynamodb update-table --table-name Orders --warm-throughput WriteUnitsPerSecond=20000');
    expect(advice.cost).toMatch(/no public price/);
  });

  it('says nothing without --prewarm when the table takes the target at once, or is provisioned', () => {
    expect(advisePrewarm({ table, plan: planPrewarm(table, 3_000), growth: undefined, totalWcu: 1e6, given: false })).toBeUndefined();
    const provisioned: TableInfo = { ...table, billingMode: 'PROVISIONED', provisionedWcu: 500 };
    expect(advisePrewarm({ table: provisioned, plan: planPrewarm(provisioned, 20_000), growth: undefined, totalWcu: 1e6, given: false })).toBeUndefined();
  });

  it('says nothing unasked when it would save less than a second of writing', () => {
    const growth = { initial: 4_000, factor: 2, windowMs: WINDOW, cap: 20_000 };
    expect(advisePrewarm({ table, plan: planPrewarm(table, 20_000), growth, totalWcu: 4_000, given: false })).toBeUndefined();
    expect(advisePrewarm({ table, plan: planPrewarm(table, 20_000), growth, totalWcu: 8_000, given: false })?.savedSeconds).toBeCloseTo(1.6, 6);
  });

  it('names no table it does not know: offline without --table the command says YOUR_TABLE', () => {
    const growth = { initial: 4_000, factor: 2, windowMs: WINDOW, cap: 20_000 };
    const unnamed = { ...table, name: 'estimate' };
    const advice = advisePrewarm({ table: unnamed, plan: planPrewarm(unnamed, 20_000), growth, totalWcu: 1e6, given: false, offline: true })!;
    expect(advice.command).toBe('aws dynamodb update-table --table-name YOUR_TABLE --warm-throughput WriteUnitsPerSecond=20000');
  });

  it('with --prewarm always reports, even when nothing is to be raised', () => {
    const advice = advisePrewarm({ table, plan: planPrewarm(table, 3_000), growth: undefined, totalWcu: 1e6, given: true })!;
    expect(advice.given).toBe(true);
    expect(advice.raises).toEqual([]);
    expect(advice.savedSeconds).toBe(0);
  });
});
