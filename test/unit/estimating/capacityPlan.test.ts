import { describe, expect, it } from 'vitest';
import { planCapacity } from '../../../src/estimating/capacityPlan.js';
import { partitionCount } from '../../../src/estimating/partitionModel.js';

const GiB = 1024 ** 3;
/** AWS's bulk-load example ("Best Practices for Tables"): 20 million items of 1 KB. */
const SEED_TOTAL = 20_000_000;

describe('planCapacity: AWS "Best Practices for Tables", "Understand Partition Behavior"', () => {
  it('a new table created at 11,000 WCU gets 11 partitions, ~20 WCU each back at 200 WCU', () => {
    const plan = planCapacity({ totalWcu: SEED_TOTAL, targetWcu: 11_000, billingMode: 'PROVISIONED', provisionedWcu: 200, newTable: true });
    expect(plan.loadWcu).toBe(11_000);
    expect(plan.partitionsAfterRaise).toBe(11);
    expect(plan.perPartitionWcuAfterLoad).toBeCloseTo(200 / 11, 10);
    expect(plan.advice[0]).toBe(
      'Creating the table at 11,000 WCU for this load (30 min 18 s) gives it 11 partitions, which are never merged: back at 200 WCU each partition gets 18.2 WCU/s.',
    );
    // The table it would be without the load: 200 WCU, one partition, which holds 1,000 WCU.
    expect(plan.noSplitWcu).toBe(1000);
    expect(plan.noSplitSeconds).toBe(20_000);
    expect(plan.advice[1]).toBe('Created at 1,000 WCU, the most 1 partition holds, the load takes 5 h 33 min and the table keeps 1 partition.');
  });

  it('30 minutes needs 11,112 WCU: 12 partitions for a new table, 16 by doubling for an existing one-partition table', () => {
    const targetWcu = SEED_TOTAL / 1800;
    const created = planCapacity({ totalWcu: SEED_TOTAL, targetWcu, billingMode: 'PROVISIONED', provisionedWcu: 200, newTable: true });
    expect(created.loadWcu).toBe(11_112);
    expect(created.partitionsAfterRaise).toBe(12);

    const raised = planCapacity({ totalWcu: SEED_TOTAL, targetWcu, billingMode: 'PROVISIONED', provisionedWcu: 200 });
    expect(raised.loadWcu).toBe(11_112);
    expect(raised.partitionsAfterRaise).toBe(16);
    expect(raised.perPartitionWcuAfterLoad).toBe(12.5);
    expect(raised.noSplitWcu).toBe(1000);
    expect(raised.advice).toEqual([
      'Raising the table from 200 to 11,112 WCU for this load (30 min 00 s) splits it from 1 partition into 16 (DynamoDB doubles the partitions until they hold the new capacity), ' +
        'which are never merged: back at 200 WCU each partition gets 12.5 WCU/s.',
      'At 1,000 WCU, the most its 1 partition holds, the load takes 5 h 33 min and the table keeps 1 partition.',
    ]);
  });

  it('3 hours needs ~1,852 WCU: 2 partitions, new or raised', () => {
    const targetWcu = SEED_TOTAL / (3 * 3600);
    for (const newTable of [true, false]) {
      const plan = planCapacity({ totalWcu: SEED_TOTAL, targetWcu, billingMode: 'PROVISIONED', provisionedWcu: 200, newTable });
      expect(plan.loadWcu).toBe(1852);
      expect(plan.partitionsAfterRaise).toBe(2);
      expect(plan.perPartitionWcuAfterLoad).toBe(100);
      expect(plan.advice[0]).toContain('(3 h 00 min)');
    }
  });

  it('5,000 RCU and 2,000 WCU are 4 partitions; a raise they cannot hold doubles them to 8', () => {
    const table = { billingMode: 'PROVISIONED' as const, provisionedWcu: 2000, provisionedRcu: 5000 };
    expect(partitionCount({ rcu: 5000, wcu: 2000 })).toBe(4);
    const plan = planCapacity({ ...table, totalWcu: 1_000_000, targetWcu: 3000 });
    expect(plan.partitionsAfterRaise).toBe(8);
    // "250 writes per second (2,000 write capacity units / 8 partitions)"
    expect(plan.perPartitionWcuAfterLoad).toBe(250);
    // ceil(5000 / 3000 + W / 1000) <= 4 up to W = 2,333.
    expect(plan.noSplitWcu).toBe(2333);
    expect(partitionCount({ rcu: 5000, wcu: 2333 })).toBe(4);
    expect(partitionCount({ rcu: 5000, wcu: 2334 })).toBe(5);
    expect(plan.noSplitSeconds).toBeCloseTo(1_000_000 / 2333, 9);
    // Twice when once is not enough: 9 partitions' worth becomes 16, not 9.
    expect(planCapacity({ ...table, totalWcu: 1_000_000, targetWcu: 7000 }).partitionsAfterRaise).toBe(16);
  });

  it('counts partitions made by size: a 20 GB table at 200 WCU and 300 RCU holds 1,900 WCU', () => {
    const plan = planCapacity({
      totalWcu: SEED_TOTAL,
      targetWcu: 11_000,
      billingMode: 'PROVISIONED',
      provisionedWcu: 200,
      provisionedRcu: 300,
      sizeBytes: 20 * GiB,
    });
    expect(plan.partitionsAfterRaise).toBe(16);
    expect(plan.noSplitWcu).toBe(1900);
    expect(plan.advice[1]).toBe('At 1,900 WCU, the most its 2 partitions hold, the load takes 2 h 55 min and the table keeps 2 partitions.');
  });

  it('needs no raise when the table already has the capacity', () => {
    const plan = planCapacity({ totalWcu: 3_600_000, targetWcu: 2000, billingMode: 'PROVISIONED', provisionedWcu: 5000 });
    expect(plan.loadWcu).toBe(2000);
    expect(plan.partitionsAfterRaise).toBe(5);
    expect(plan.perPartitionWcuAfterLoad).toBe(1000);
    expect(plan.advice).toEqual(["The table's 5,000 provisioned WCU cover the load's 2,000 WCU/s (30 min 00 s): no change of capacity, no new partition."]);
  });

  it('says so when a raise stays within the partitions', () => {
    const plan = planCapacity({ totalWcu: 800 * 600, targetWcu: 800, billingMode: 'PROVISIONED', provisionedWcu: 200 });
    expect(plan.partitionsAfterRaise).toBe(1);
    expect(plan.perPartitionWcuAfterLoad).toBe(200);
    expect(plan.advice).toEqual([
      'Raising the table from 200 to 800 WCU for this load (10 min 00 s) adds no partition: its 1 partition holds up to 1,000 WCU.',
    ]);
  });

  it('takes a provisioned table without WCU as new, with no WCU to go back to', () => {
    const plan = planCapacity({ totalWcu: SEED_TOTAL, targetWcu: 11_000, billingMode: 'PROVISIONED' });
    expect(plan.partitionsAfterRaise).toBe(11);
    expect(plan.perPartitionWcuAfterLoad).toBeUndefined();
    expect(plan.advice[0]).toContain("each partition gets 1/11 of the table's WCU");
  });

  it('prints small per-partition rates with a decimal', () => {
    const plan = planCapacity({ totalWcu: SEED_TOTAL, targetWcu: 16_000, billingMode: 'PROVISIONED', provisionedWcu: 5 });
    expect(plan.partitionsAfterRaise).toBe(16);
    expect(plan.advice[0]).toContain('each partition gets 0.3 WCU/s');
  });

  it('leaves an on-demand table to its peaks: no WCU figures, advice on splits and the doubling rule', () => {
    const plan = planCapacity({ totalWcu: SEED_TOTAL, targetWcu: 11_000, billingMode: 'PAY_PER_REQUEST', provisionedWcu: 200 });
    expect(plan).toMatchObject({
      loadWcu: undefined,
      partitionsAfterRaise: undefined,
      perPartitionWcuAfterLoad: undefined,
      noSplitWcu: undefined,
      noSplitSeconds: undefined,
    });
    const text = plan.advice.join(' ');
    expect(text).toContain('only split, never merged');
    expect(text).toContain('Scaling DynamoDB');
    expect(text).toContain('11,000 WCU/s');
    expect(text).toContain('twice the previous peak');
  });

  it('refuses rates and totals that are not numbers of units', () => {
    const base = { totalWcu: 1000, targetWcu: 100, billingMode: 'PROVISIONED' as const, provisionedWcu: 100 };
    expect(() => planCapacity({ ...base, targetWcu: 0 })).toThrow(RangeError);
    expect(() => planCapacity({ ...base, targetWcu: Infinity })).toThrow(RangeError);
    expect(() => planCapacity({ ...base, totalWcu: -1 })).toThrow(RangeError);
    expect(() => planCapacity({ ...base, provisionedRcu: Number.NaN })).toThrow(RangeError);
  });
});
