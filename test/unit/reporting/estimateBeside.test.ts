import { describe, expect, it } from 'vitest';
import { parseEstimateJson } from '../../../src/reporting/estimateBeside.js';

const ESTIMATE = {
  version: 1,
  input: { file: 'orders.csv', rows: 1000, rejected: 3 },
  table: { name: 'Orders' },
  writeUnits: { total: 1200.5 },
  rate: { assumedWcu: 400 },
  time: { estimatedSeconds: 3.2 },
  simulations: { planned: { throttledItems: 0 } },
};

describe('--compare-estimate', () => {
  it('takes the predictions of an `estimate --json` output', () => {
    expect(parseEstimateJson(JSON.stringify(ESTIMATE), 'e.json')).toEqual({
      input: 'orders.csv',
      table: 'Orders',
      seconds: 3.2,
      writeUnits: 1200.5,
      rateWcu: 400,
      throttledItems: 0,
      rows: 1000,
      rejected: 3,
    });
  });

  it.each([
    ['not JSON', '{"version":1,', /e\.json is not the output of `ddb-spread estimate --json` \(not JSON: /],
    ['a --report', JSON.stringify({ reportVersion: 1, written: 5 }), /\(no "version": 1 at its top\)/],
    ['a field missing', JSON.stringify({ ...ESTIMATE, time: {} }), /\(time\.estimatedSeconds is missing\)/],
    ['a field of another type', JSON.stringify({ ...ESTIMATE, rate: { assumedWcu: '400' } }), /\(rate\.assumedWcu is not a number from 0 up: "400"\)/],
  ])('refuses %s, saying how to write one', (_what, text, message) => {
    expect(() => parseEstimateJson(text, 'e.json')).toThrow(message);
    expect(() => parseEstimateJson(text, 'e.json')).toThrow(/write one with `ddb-spread estimate <input> --table <table> --json > e\.json`$/);
  });
});
