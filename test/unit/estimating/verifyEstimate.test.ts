import { describe, expect, it } from 'vitest';
import { estimateVerify, readRate, verifyPlanOf } from '../../../src/estimating/verifyEstimate.js';
import type { TableInfo } from '../../../src/shared/tableInfo.js';

const onDemand: TableInfo = { name: 't', keySchema: { partitionKey: { name: 'pk', type: 'S' } }, billingMode: 'PAY_PER_REQUEST', gsis: [] };
const provisioned: TableInfo = { ...onDemand, billingMode: 'PROVISIONED', provisionedRcu: 1_001, provisionedWcu: 10 };

/** 1,000 puts of 1,000 bytes: 1 strong unit each, 1 MB left in the table. */
const reads = { writes: 1_000, strongReadUnits: 1_000, puts: 1_000, putBytes: 1_000_000 };

describe('readRate', () => {
  it('is --rcu when given, else 80% of the provisioned RCU, of the warm read throughput, or of a new on-demand table', () => {
    expect(readRate(provisioned, 37.5)).toEqual({ rcu: 37.5, rcuSource: 'given', rcuPercent: 100 });
    // Not rounded: the rate verify itself takes (80% of 1,001).
    expect(readRate(provisioned, undefined)).toEqual({ rcu: 1_001 * (80 / 100), rcuSource: 'provisioned', rcuPercent: 80 });
    expect(readRate({ ...onDemand, warmReadUnits: 20_000 }, undefined)).toEqual({ rcu: 16_000, rcuSource: 'warm-throughput', rcuPercent: 80 });
    expect(readRate(onDemand, undefined)).toEqual({ rcu: 9_600, rcuSource: 'on-demand-default', rcuPercent: 80 });
    // verify's --rcu auto:P% (pacing/readRate.ts), priced as verify will take it.
    expect(readRate(provisioned, 'auto:50%')).toEqual({ rcu: 1_001 * (50 / 100), rcuSource: 'provisioned', rcuPercent: 50 });
    expect(readRate(onDemand, 'auto')).toEqual({ rcu: 9_600, rcuSource: 'on-demand-default', rcuPercent: 80 });
    expect(readRate(provisioned, '250')).toEqual({ rcu: 250, rcuSource: 'given', rcuPercent: 100 });
    // --segment i/4 with --listing: the given rate is the four workers', a quarter each while all read; alone, each worker's own.
    expect(readRate(provisioned, 200, 4, true)).toEqual({ rcu: 50, rcuSource: 'given', rcuPercent: 100 });
    expect(readRate(provisioned, 200, 4)).toEqual({ rcu: 200, rcuSource: 'given', rcuPercent: 100 });
    // A table of 1 RCU still reads.
    expect(readRate({ ...provisioned, provisionedRcu: 1 }, undefined).rcu).toBe(1);
  });
});

describe('estimateVerify', () => {
  it('reads the keys the writes decide: superseded writes are not read again', () => {
    // 1,000 writes of 500 keys, each key twice at the same size: 500 keys, 500 units, 500 KB left.
    const v = estimateVerify(onDemand, 'flags', reads, 500);
    expect(v.keys).toBe(500);
    expect(v.batchGet.readUnits).toBe(500);
    expect(v.batchGet.calls).toBe(5);
    expect(v.table).toEqual({ bytes: 500_000, items: 500, source: 'input' });
    expect(v.flags).toBe('--rcu 9600');
  });

  it("adds the described table's size to what the load leaves, and leaves it out offline or when DynamoDB gave none", () => {
    const described = { ...onDemand, sizeBytes: 3_000_000, itemCount: 2_000 };
    expect(estimateVerify(described, 'describe-table', reads, 0).table).toEqual({ bytes: 4_000_000, items: 3_000, source: 'describe-table' });
    expect(estimateVerify(described, 'flags', reads, 0).table.source).toBe('input');
    expect(estimateVerify(onDemand, 'describe-table', reads, 0).table).toEqual({ bytes: 1_000_000, items: 1_000, source: 'input' });
    // 4 MB in 4 KB, a page of rounding per MB and the last page: the Scan of the described table.
    expect(estimateVerify(described, 'describe-table', reads, 0).scan.readUnits).toBe(Math.ceil(4_000_000 / 4096) + 3 + 1);
  });

  it('samples the keys, not the Scan; halves both for eventually consistent reads', () => {
    const all = estimateVerify(onDemand, 'flags', reads, 0);
    const sampled = estimateVerify(onDemand, 'flags', reads, 0, { sample: 0.01, consistentRead: false, rcu: 10 });
    expect(sampled.keys).toBe(10);
    expect(sampled.batchGet.readUnits).toBe(5);
    expect(sampled.batchGet.seconds).toBe(0.5);
    expect(sampled.scan.readUnits).toBe(all.scan.readUnits / 2);
    expect(sampled.flags).toBe('');
    expect(all.cheaper).toBe('scan');
    expect(sampled.cheaper).toBe('batch-get');
  });

  it('never chooses the Scan for one --segment', () => {
    const v = estimateVerify(onDemand, 'flags', reads, 0, { segmented: true });
    expect(v.scan.readUnits).toBeLessThan(v.batchGet.readUnits);
    expect(v.cheaper).toBe('batch-get');
  });

  it('prices an input of no writes at nothing', () => {
    const v = estimateVerify(onDemand, 'flags', { writes: 0, strongReadUnits: 0, puts: 0, putBytes: 0 }, 0);
    expect(v.keys).toBe(0);
    expect(v.batchGet.readUnits).toBe(0);
    expect(v.batchGet.usd).toBe(0);
  });
});

describe('verifyPlanOf (the library options of estimate())', () => {
  it('takes what verify takes', () => {
    expect(verifyPlanOf({ rcu: 5, consistentRead: false, sample: 0.5, scanSegments: 8 }, false)).toEqual({
      rcu: 5,
      consistentRead: false,
      sample: 0.5,
      scanSegments: 8,
      segmented: false,
    });
    expect(verifyPlanOf({}, true).segmented).toBe(true);
  });

  it.each([
    [{ rcu: 0 }, '--rcu'],
    [{ rcu: Number.NaN }, '--rcu'],
    [{ rcu: 'fast' }, '--rcu'],
    [{ rcu: 'auto:0%' }, '--rcu'],
    [{ sample: 0 }, '--sample'],
    [{ sample: 1.5 }, '--sample'],
    [{ scanSegments: 0 }, '--scan'],
    [{ scanSegments: 2.5 }, '--scan'],
    [{ consistentRead: 'no' as unknown as boolean }, 'consistentRead'],
  ])('refuses %o', (options, named) => {
    expect(() => verifyPlanOf(options, false)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining(named) }));
  });
});
