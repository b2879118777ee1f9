import { describe, expect, it } from 'vitest';
import { normalizeOptions } from '../../../src/load/options.js';
import { writeAffectingOptions } from '../../../src/load/writeAffectingOptions.js';
import { DEFAULT_PRICES } from '../../../src/pacing/unitPrices.js';

const base = { input: 'in.csv', table: 'Orders' };
const code = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
};

describe('--skip-expired and --max-cost options', () => {
  it('--skip-expired takes an attribute name; its load time only with it, in whole epoch seconds', () => {
    expect(normalizeOptions(base).skipExpired).toBeUndefined();
    expect(normalizeOptions({ ...base, skipExpired: 'ttl' }).skipExpired).toEqual({ attribute: 'ttl', at: undefined });
    expect(normalizeOptions({ ...base, skipExpired: 'ttl', skipExpiredAt: 1_700_000_000 }).skipExpired).toEqual({ attribute: 'ttl', at: 1_700_000_000 });
    expect(code(() => normalizeOptions({ ...base, skipExpired: '' }))).toBe('INVALID_OPTION');
    expect(code(() => normalizeOptions({ ...base, skipExpired: 'ttl', skipExpiredAt: 1.5 }))).toBe('INVALID_OPTION');
    expect(code(() => normalizeOptions({ ...base, skipExpiredAt: 1 }))).toBe('INVALID_OPTION');
  });

  it('a checkpoint pins the attribute and the load time, and a load without the option looks as before', () => {
    expect(writeAffectingOptions(normalizeOptions(base))).not.toHaveProperty('skipExpired');
    const opts = normalizeOptions({ ...base, skipExpired: 'ttl', skipExpiredAt: 1_700_000_000 });
    expect(writeAffectingOptions(opts)['skipExpired']).toEqual({ attribute: 'ttl', at: 1_700_000_000 });
    // The cost guard changes no batch: a resume under another limit is the same load.
    const a = writeAffectingOptions(normalizeOptions({ ...base, maxCostUsd: 1 }));
    const b = writeAffectingOptions(normalizeOptions({ ...base, maxCostUsd: 2, prices: { onDemandPerMillionWrites: 1 } }));
    expect(a).toEqual(b);
  });

  it('--max-cost is USD from 0, with the prices given or the defaults; an estimate only with it', () => {
    expect(normalizeOptions(base).maxCost).toBeUndefined();
    expect(normalizeOptions({ ...base, maxCostUsd: 3 }).maxCost).toEqual({
      usd: 3,
      prices: { onDemandPerMillionWrites: DEFAULT_PRICES.onDemandPerMillionWrites, provisionedPerWcuHour: DEFAULT_PRICES.provisionedPerWcuHour },
      estimate: undefined,
    });
    expect(normalizeOptions({ ...base, maxCostUsd: 3, prices: { provisionedPerWcuHour: 0.001 } }).maxCost?.prices.provisionedPerWcuHour).toBe(0.001);
    for (const bad of [-1, Number.NaN, Infinity]) expect(code(() => normalizeOptions({ ...base, maxCostUsd: bad }))).toBe('INVALID_OPTION');
    expect(code(() => normalizeOptions({ ...base, maxCostUsd: 1, prices: { onDemandPerMillionWrites: -1 } }))).toBe('INVALID_OPTION');
    // The read prices (the estimate's price of a verify) are checked as the write prices are, with or without --max-cost.
    expect(code(() => normalizeOptions({ ...base, prices: { provisionedPerRcuHour: -1 } }))).toBe('INVALID_OPTION');
    expect(code(() => normalizeOptions({ ...base, prices: { onDemandPerMillionReads: Number.NaN } }))).toBe('INVALID_OPTION');
    expect(code(() => normalizeOptions({ ...base, maxCostEstimate: { writeUnits: 5, source: 'e.json' } }))).toBe('INVALID_OPTION');
    expect(normalizeOptions({ ...base, maxCostUsd: 1, maxCostEstimate: { writeUnits: 5, source: 'e.json' } }).maxCost?.estimate).toEqual({
      writeUnits: 5,
      source: 'e.json',
    });
  });
});
