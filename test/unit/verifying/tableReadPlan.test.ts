import { describe, expect, it } from 'vitest';
import { planTableRead, type InputReadTally } from '../../../src/verifying/tableReadPlan.js';

/** 1,000 keys of 200-byte items, one write each: 1,000 read units by key, ~49 by a Scan of ~200 KB. */
const tally: InputReadTally = { writes: 1000, keys: 1000, strongReadUnits: 1000, putBytes: 200_000 };
const facts = { tally, tableBytes: 200_000, consistent: true, sample: 1, rcu: undefined, billing: 'PAY_PER_REQUEST' as const, segmented: false };

describe('planTableRead', () => {
  it('reads the keys by default, and by a Scan of N segments with --scan N', () => {
    expect(planTableRead(undefined, facts)).toMatchObject({ read: 'batch-get', segments: 0 });
    expect(planTableRead(8, facts)).toEqual({ read: 'scan', segments: 8, why: '--scan 8: a Scan of the table in 8 segments' });
  });

  it('--scan auto: a Scan when the table is about the input, BatchGetItem when it is much bigger', () => {
    expect(planTableRead('auto', facts)).toMatchObject({ read: 'scan', segments: 1 });
    // 1,000 keys in a table of 40 MB: ~10,000 units by a Scan.
    const big = planTableRead('auto', { ...facts, tableBytes: 40_000_000 });
    expect(big).toMatchObject({ read: 'batch-get', segments: 0 });
    expect(big.why).toContain('(the table 38.1 MB)');
    // A Scan reads the whole table whatever the sample; the keys read shrink with it.
    expect(planTableRead('auto', { ...facts, tableBytes: 2_000_000, sample: 1 }).read).toBe('scan');
    expect(planTableRead('auto', { ...facts, tableBytes: 2_000_000, sample: 0.1 }).read).toBe('batch-get');
  });

  it('never takes the table for smaller than what the input leaves in it (a stale or unreported TableSizeBytes)', () => {
    // 1,000 keys of 40 KB: 10,000 units by key, the same bytes by a Scan; a reported 0 must not make the Scan look free.
    const large: InputReadTally = { writes: 1000, keys: 1000, strongReadUnits: 10_000, putBytes: 40_960_000 };
    const stale = planTableRead('auto', { ...facts, tally: large, tableBytes: 0 });
    expect(stale.why).toContain("the table's size reported as 0 bytes, less than the input's 39.1 MB: taken as the input's");
    expect(stale.read).toBe('batch-get');
    expect(planTableRead('auto', { ...facts, tableBytes: undefined }).why).toContain("the table's size unreported, taken as the input's 195.3 KB");
  });

  it('a --segment verify reads its own keys', () => {
    expect(planTableRead('auto', { ...facts, segmented: true })).toMatchObject({ read: 'batch-get' });
  });
});
