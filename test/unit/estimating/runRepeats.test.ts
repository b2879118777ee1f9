/**
 * RunRepeats keeps at most `maxPairs` pairs (the estimate's memory bound for a file of repeats), also while
 * one run is still open: a single partition key written again and again must not hold a pair per write.
 */
import { describe, expect, it } from 'vitest';
import { RunRepeats } from '../../../src/estimating/runRepeats.js';

describe('RunRepeats: the bound on pairs', () => {
  it('one open run of repeats holds no more than maxPairs pairs before it closes, and the replay then knows of none', () => {
    const repeats = new RunRepeats(10);
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      repeats.add(i % 2 === 0 ? 'a' : 'b', i);
      most = Math.max(most, repeats.held);
    }
    expect(most).toBeLessThanOrEqual(10);
    expect(repeats.overflowed).toBe(true);
    repeats.close(0, 0);
    expect(repeats.overflowed).toBe(true);
    expect(repeats.held).toBe(0);
  });

  it('up to maxPairs, across runs, every pair is kept', () => {
    const repeats = new RunRepeats(10);
    for (let run = 0; run < 5; run++) {
      for (let i = 0; i < 3; i++) repeats.add('a', i);
      repeats.close(run, 0);
    }
    expect(repeats.overflowed).toBe(false);
    expect(repeats.size).toBe(10);
    expect([repeats.writeOf(9), repeats.partnerOf(9), repeats.runOf(9)]).toEqual([2, 1, 4]);
    repeats.add('a', 0);
    repeats.add('a', 1);
    repeats.close(5, 0);
    expect(repeats.overflowed).toBe(true);
  });
});
