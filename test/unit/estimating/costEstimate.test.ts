import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, estimateCost } from '../../../src/estimating/costEstimate.js';

const PRICES = { region: 'eu-west-1', date: '2025-01', onDemandPerMillionWrites: 1, provisionedPerWcuHour: 0.001 };

describe('estimateCost', () => {
  it('prices on-demand per million write request units and provisioned per WCU-hour', () => {
    const cost = estimateCost({ totalWcu: 20_000_000, seconds: 3 * 3600, targetWcu: 1852, tableIsEmpty: false, prices: PRICES });
    expect(cost.prices).toEqual(PRICES);
    expect(cost.onDemandUsd).toBeCloseTo(20, 10);
    expect(cost.provisionedWcuHours).toBe(1852 * 3);
    expect(cost.provisionedUsd).toBeCloseTo(1852 * 3 * 0.001, 10);
  });

  it('bills provisioned capacity per started hour, in whole WCU', () => {
    const at = (seconds: number, targetWcu = 1000) =>
      estimateCost({ totalWcu: 0, seconds, targetWcu, tableIsEmpty: false, prices: PRICES }).provisionedWcuHours;
    expect(at(0)).toBe(0);
    expect(at(1)).toBe(1000);
    expect(at(3600)).toBe(1000);
    expect(at(3601)).toBe(2000);
    expect(at(61 * 60)).toBe(2000);
    expect(at(1800, 11_111.2)).toBe(11_112);
  });

  it('has us-east-1 defaults with their date, and fills in what is not given', () => {
    expect(DEFAULT_PRICES).toEqual({ region: 'us-east-1', date: '2024-11', onDemandPerMillionWrites: 0.625, provisionedPerWcuHour: 0.00065 });
    expect(Object.isFrozen(DEFAULT_PRICES)).toBe(true);
    const defaults = estimateCost({ totalWcu: 20_000_000, seconds: 1800, targetWcu: 11_112, tableIsEmpty: false });
    expect(defaults.prices).toEqual(DEFAULT_PRICES);
    // AWS's bulk-load example: 20M write units on demand, or 11,112 WCU for the half hour.
    expect(defaults.onDemandUsd).toBeCloseTo(12.5, 10);
    expect(defaults.provisionedUsd).toBeCloseTo(11_112 * 0.00065, 10);
    const partial = estimateCost({ totalWcu: 1_000_000, seconds: 60, targetWcu: 10, tableIsEmpty: false, prices: { onDemandPerMillionWrites: 2 } });
    expect(partial.prices).toEqual({ ...DEFAULT_PRICES, onDemandPerMillionWrites: 2 });
    expect(partial.onDemandUsd).toBe(2);
  });

  it('mentions Import from S3 for an empty table only', () => {
    const empty = estimateCost({ totalWcu: 1000, seconds: 10, targetWcu: 100, tableIsEmpty: true });
    expect(empty.importFromS3).toMatch(/Import from S3/);
    expect(empty.importFromS3).toMatch(/NEW table/);
    expect(empty.importFromS3).toMatch(/CSV.*DynamoDB JSON.*Amazon Ion/);
    expect(empty.importFromS3).toMatch(/GZIP\/ZSTD/);
    expect(empty.importFromS3).toContain('{"Item":{...}}');
    expect(estimateCost({ totalWcu: 1000, seconds: 10, targetWcu: 100, tableIsEmpty: false }).importFromS3).toBeUndefined();
  });

  it('refuses negative or non-finite figures', () => {
    const base = { totalWcu: 1000, seconds: 10, targetWcu: 100, tableIsEmpty: false };
    expect(() => estimateCost({ ...base, totalWcu: -1 })).toThrow(RangeError);
    expect(() => estimateCost({ ...base, seconds: Infinity })).toThrow(RangeError);
    expect(() => estimateCost({ ...base, targetWcu: Number.NaN })).toThrow(RangeError);
    expect(() => estimateCost({ ...base, prices: { provisionedPerWcuHour: -0.1 } })).toThrow(RangeError);
  });
});
