import { describe, expect, it } from 'vitest';
import { inSample, parseSampleShare, sampleStatement } from '../../../src/verifying/sampling.js';

describe('--sample', () => {
  it('takes about the share asked, the same keys every time, and every key at 100%', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `Sk-${i}`);
    const chosen = keys.filter((k) => inSample(k, 0.01));
    expect(chosen.length).toBeGreaterThan(150);
    expect(chosen.length).toBeLessThan(250);
    expect(keys.filter((k) => inSample(k, 0.01))).toEqual(chosen);
    // A larger sample holds the smaller one: raising --sample checks more, never other, keys.
    const larger = new Set(keys.filter((k) => inSample(k, 0.05)));
    expect(chosen.every((k) => larger.has(k))).toBe(true);
    expect(keys.every((k) => inSample(k, 1))).toBe(true);
  });

  it('states the 95% bound of a clean sample, 1 - 0.05^(1/n), and the observed rate otherwise', () => {
    expect(sampleStatement(300, 0).upperBound95).toBeCloseTo(0.00994, 5);
    expect(sampleStatement(3000, 0).upperBound95).toBeCloseTo(0.000998, 6);
    // Were 1% of the keys to differ, a clean sample of 300 would happen under 5% of the time: the bound is below 1%.
    expect(0.99 ** 300).toBeLessThan(0.05);
    expect(sampleStatement(1000, 10)).toEqual({ checked: 1000, differing: 10, observedRate: 0.01 });
    expect(sampleStatement(0, 0)).toEqual({ checked: 0, differing: 0, observedRate: 0 });
  });

  it('reads 1%, 0.5%, 100 and refuses 0, above 100 and words', () => {
    expect(parseSampleShare('1%')).toBe(0.01);
    expect(parseSampleShare('0.5%')).toBe(0.005);
    expect(parseSampleShare('100')).toBe(1);
    for (const bad of ['0', '0%', '101%', 'half', '', '-1%']) expect(parseSampleShare(bad)).toMatch(/--sample takes a share/);
  });
});
