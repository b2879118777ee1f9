import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chooseTableRead, scanPages, scanSegmentsFor, verifyCosts, type VerifyCostInput } from '../../../src/estimating/verifyCost.js';
import { DEFAULT_READ_PRICES } from '../../../src/pacing/unitPrices.js';

const PRICES = { region: 'test', date: 'test', onDemandPerMillionReads: 1, provisionedPerRcuHour: 0.01 };

/** Keys of these sizes, read back: the inputs of the model, worked out here by DynamoDB's rule. */
function keysOf(sizes: readonly number[]): Pick<VerifyCostInput, 'keys' | 'strongReadUnits'> & { bytes: number } {
  return {
    keys: sizes.length,
    strongReadUnits: sizes.reduce((sum, s) => sum + Math.max(1, Math.ceil(s / 4096)), 0),
    bytes: sizes.reduce((sum, s) => sum + s, 0),
  };
}

const base = { consistent: true, rcu: 100, billing: 'PAY_PER_REQUEST' as const, scanSegments: 1, prices: PRICES };

describe('verifyCosts', () => {
  it('prices BatchGetItem per key rounded up to 4 KB, and the Scan on the bytes of the table', () => {
    // AWS's example: 1.5 KB and 6.5 KB read as 4 KB + 8 KB = 3 units by BatchGetItem; a Scan of the two
    // reads 8 KB = 2 units, plus at most one of rounding on its one page.
    const costs = verifyCosts({ ...base, keys: 2, strongReadUnits: 3, tableBytes: 1536 + 6656 });
    expect(costs.batchGet.readUnits).toBe(3);
    expect(costs.batchGet.calls).toBe(1);
    expect(costs.scan.readUnits).toBe(3);
    expect(costs.scan.calls).toBe(1);
    expect(costs.batchGet.seconds).toBeCloseTo(0.03, 10);
    expect(costs.batchGet.onDemandUsd).toBeCloseTo(3e-6, 15);
    expect(costs.batchGet.usd).toBe(costs.batchGet.onDemandUsd);
  });

  it('halves both ways for eventually consistent reads', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 * 1024 }), { minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 64 }), (sizes, segments) => {
        const k = keysOf(sizes);
        const input = { ...base, ...k, tableBytes: k.bytes, scanSegments: segments };
        const strong = verifyCosts(input);
        const eventual = verifyCosts({ ...input, consistent: false });
        expect(eventual.batchGet.readUnits).toBe(strong.batchGet.readUnits / 2);
        expect(eventual.scan.readUnits).toBe(strong.scan.readUnits / 2);
        expect(eventual.batchGet.seconds).toBeCloseTo(strong.batchGet.seconds / 2, 9);
      }),
    );
  });

  it('calls BatchGetItem once per 100 keys', () => {
    expect(verifyCosts({ ...base, keys: 100, strongReadUnits: 100, tableBytes: 0 }).batchGet.calls).toBe(1);
    expect(verifyCosts({ ...base, keys: 101, strongReadUnits: 101, tableBytes: 0 }).batchGet.calls).toBe(2);
    expect(verifyCosts({ ...base, keys: 0, strongReadUnits: 0, tableBytes: 0 }).batchGet.calls).toBe(0);
  });

  it('counts a 1 MB page per MB and a last page per segment', () => {
    expect(scanPages(0, 1)).toBe(1);
    expect(scanPages(1024 * 1024 - 1, 4)).toBe(4);
    expect(scanPages(1024 * 1024, 4)).toBe(5);
    expect(scanPages(3 * 1024 * 1024 + 1, 1)).toBe(4);
    expect(scanSegmentsFor(0)).toBe(1);
    expect(scanSegmentsFor(2 * 1024 ** 3)).toBe(1);
    expect(scanSegmentsFor(2 * 1024 ** 3 + 1)).toBe(2);
    expect(scanSegmentsFor(2e12)).toBe(932);
  });

  it('never prices a Scan below what its pages must cost: every page of items rounded up to 4 KB', () => {
    // Items dealt into segments, each read in pages that end once past 1 MB: the units DynamoDB charges
    // page by page are within the model.
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 * 1024 }), { maxLength: 200 }), fc.integer({ min: 1, max: 8 }), (sizes, segments) => {
        let charged = 0;
        for (let s = 0; s < segments; s++) {
          let page = 0;
          for (const size of sizes.filter((_, i) => i % segments === s)) {
            page += size;
            if (page > 1024 * 1024) {
              charged += Math.ceil(page / 4096);
              page = 0;
            }
          }
          charged += Math.ceil(page / 4096);
        }
        const bytes = sizes.reduce((a, b) => a + b, 0);
        const scan = verifyCosts({ ...base, keys: 0, strongReadUnits: 0, tableBytes: bytes, scanSegments: segments }).scan;
        expect(scan.readUnits).toBeGreaterThanOrEqual(charged);
        expect(scan.readUnits).toBeGreaterThanOrEqual(bytes / 4096);
      }),
    );
  });

  it('never makes a Scan the choice when the table holds 4 KB per input key more than the input', () => {
    // BatchGetItem costs at most 4 KB of waste per key (sum of ceil(size/4096) <= bytes/4096 + keys); a table
    // larger than the input by that much cannot be scanned for less, whatever the sizes and billing.
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 400 * 1024 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 0, max: 1e9 }),
        fc.boolean(),
        fc.constantFrom('PROVISIONED' as const, 'PAY_PER_REQUEST' as const),
        fc.integer({ min: 1, max: 100_000 }),
        (sizes, more, consistent, billing, rcu) => {
          const k = keysOf(sizes);
          const costs = verifyCosts({ ...base, ...k, consistent, billing, rcu, tableBytes: k.bytes + k.keys * 4096 + more });
          expect(costs.scan.readUnits).toBeGreaterThanOrEqual(costs.batchGet.readUnits);
          expect(chooseTableRead(costs).read).toBe('batch-get');
        },
      ),
    );
  });

  it('makes the Scan the choice for small items when the table holds no more than the input', () => {
    // 10,000 keys of 200 bytes: BatchGetItem 10,000 units; a Scan of 2 MB about 490.
    const k = keysOf(Array.from({ length: 10_000 }, () => 200));
    const costs = verifyCosts({ ...base, ...k, tableBytes: k.bytes, scanSegments: 4 });
    expect(costs.batchGet.readUnits).toBe(10_000);
    expect(costs.scan.readUnits).toBe(Math.ceil(2_000_000 / 4096) + 1 + 4);
    const choice = chooseTableRead(costs);
    expect(choice.read).toBe('scan');
    expect(choice.why).toContain('10,000');
    // The same keys, sampled at 1%: BatchGetItem reads 100 keys, the Scan still the whole table.
    const sampled = verifyCosts({ ...base, keys: 100, strongReadUnits: 100, tableBytes: k.bytes, scanSegments: 4 });
    expect(chooseTableRead(sampled).read).toBe('batch-get');
    // One --segment of a load cannot Scan the table.
    expect(chooseTableRead(costs, { segmented: true }).read).toBe('batch-get');
  });

  it('keeps the Scan dearer as the table grows, and BatchGetItem as the keys do', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 1, max: 100 }), (a, b, segments) => {
        const [small, large] = a <= b ? [a, b] : [b, a];
        const at = (tableBytes: number) => verifyCosts({ ...base, keys: 1, strongReadUnits: 1, tableBytes, scanSegments: segments }).scan;
        expect(at(large).readUnits).toBeGreaterThanOrEqual(at(small).readUnits);
        expect(at(large).usd).toBeGreaterThanOrEqual(at(small).usd);
      }),
    );
  });

  it('prices provisioned reads as the rate for the started hours, on-demand per million read request units', () => {
    const costs = verifyCosts({ ...base, billing: 'PROVISIONED', rcu: 800.5, keys: 0, strongReadUnits: 0, tableBytes: 4096 * 5_700_000 });
    // 5.72 million units at 800.5 units/s, just under 2 hours: 2 started hours of 801 RCU.
    expect(costs.scan.seconds).toBeLessThan(7200);
    expect(costs.scan.provisionedRcuHours).toBe(801 * 2);
    expect(costs.scan.usd).toBeCloseTo(801 * 2 * 0.01, 10);
    expect(costs.scan.onDemandUsd).toBeCloseTo(costs.scan.readUnits / 1e6, 10);
    expect(costs.batchGet.provisionedRcuHours).toBe(0);
    // A provisioned tie in dollars goes to fewer read units.
    const tie = verifyCosts({ ...base, billing: 'PROVISIONED', keys: 1000, strongReadUnits: 1000, tableBytes: 40_960 });
    expect(tie.scan.usd).toBe(tie.batchGet.usd);
    expect(chooseTableRead(tie).read).toBe('scan');
  });

  it('has us-east-1 read prices by default, and refuses nonsense', () => {
    expect(DEFAULT_READ_PRICES).toEqual({ region: 'us-east-1', date: '2024-11', onDemandPerMillionReads: 0.125, provisionedPerRcuHour: 0.00013 });
    const costs = verifyCosts({ ...base, prices: undefined, keys: 1_000_000, strongReadUnits: 1_000_000, tableBytes: 0 });
    expect(costs.prices).toEqual(DEFAULT_READ_PRICES);
    expect(costs.batchGet.usd).toBeCloseTo(0.125, 12);
    expect(() => verifyCosts({ ...base, keys: 1, strongReadUnits: 1, tableBytes: 0, rcu: 0 })).toThrow(RangeError);
    expect(() => verifyCosts({ ...base, keys: NaN, strongReadUnits: 1, tableBytes: 0 })).toThrow(RangeError);
    expect(() => verifyCosts({ ...base, keys: 1, strongReadUnits: 1, tableBytes: 0, scanSegments: 0 })).toThrow(RangeError);
  });
});
