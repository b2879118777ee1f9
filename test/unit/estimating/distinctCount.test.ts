import { describe, expect, it } from 'vitest';
import { DistinctCounter } from '../../../src/estimating/distinctCount.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

function count(values: Iterable<string>): number {
  const counter = new DistinctCounter();
  for (const value of values) counter.add(value);
  return counter.estimate;
}

function* keys(n: number, prefix = 'cust-'): Generator<string> {
  for (let i = 0; i < n; i++) yield `${prefix}${i}`;
}

describe('DistinctCounter', () => {
  it('counts nothing as 0 and one value as 1', () => {
    expect(new DistinctCounter().estimate).toBe(0);
    expect(count(['a'])).toBe(1);
    expect(count([''])).toBe(1);
  });

  it('is exact for a few thousand values', () => {
    for (const n of [2, 37, 1000, 4096]) expect(count(keys(n))).toBe(n);
  });

  it('does not count duplicates', () => {
    const counter = new DistinctCounter();
    for (let round = 0; round < 5; round++) for (const key of keys(1000)) counter.add(key);
    expect(counter.estimate).toBe(1000);
    // Past the exact range too: the registers only keep maxima.
    const big = new DistinctCounter();
    for (let round = 0; round < 3; round++) for (const key of keys(50_000)) big.add(key);
    const once = count(keys(50_000));
    expect(big.estimate).toBe(once);
  });

  it.each([
    [5_000, 'cust-'],
    [20_000, 'order#2024-07-09.'],
    [100_000, 'cust-'],
    [100_000, ''],
    [1_000_000, 'cust-'],
  ])('estimates %i distinct values (prefix %j) within 2%%', (n, prefix) => {
    const estimate = count(keys(n, prefix));
    expect(Math.abs(estimate - n) / n).toBeLessThan(0.02);
  });

  it('estimates random values within 2%', () => {
    const random = mulberry32(42);
    const values: string[] = [];
    for (let i = 0; i < 200_000; i++) values.push(Math.floor(random() * 2 ** 32).toString(36) + Math.floor(random() * 2 ** 32).toString(36));
    const truth = new Set(values).size;
    expect(Math.abs(count(values) - truth) / truth).toBeLessThan(0.02);
  });

  it('tells apart values that differ in one code unit, odd lengths and non-ASCII text', () => {
    const values = ['a', 'b', 'ab', 'ba', 'a\u0000', '\u0000a', 'abc', 'abd', 'é', 'e\u0301', '日本', '😀', '😁', ' a', 'a '];
    expect(count(values)).toBe(values.length);
  });

  it('is deterministic', () => {
    const a = count(keys(300_000, 'k'));
    const b = count(keys(300_000, 'k'));
    expect(a).toBe(b);
  });
});
