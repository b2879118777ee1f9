import { describe, expect, it } from 'vitest';
import { chooseReadRate, parseRcuSpec } from '../../../src/pacing/readRate.js';

describe('--rcu auto', () => {
  it('parses a number, auto (80%) and auto:P%, and refuses the rest', () => {
    expect(parseRcuSpec(250)).toEqual({ kind: 'fixed', rcu: 250 });
    expect(parseRcuSpec('12.5')).toEqual({ kind: 'fixed', rcu: 12.5 });
    expect(parseRcuSpec('auto')).toEqual({ kind: 'auto', percent: 80 });
    expect(parseRcuSpec('AUTO:50%')).toEqual({ kind: 'auto', percent: 50 });
    for (const bad of ['0', '-3', 'auto:0%', 'auto:150%', 'fast', '']) expect(() => parseRcuSpec(bad)).toThrow(/--rcu/);
    expect(() => parseRcuSpec(0)).toThrow(/above 0/);
  });

  it('takes P% of provisioned RCU, divided among --segment workers', () => {
    expect(chooseReadRate({ kind: 'auto', percent: 80 }, { billingMode: 'PROVISIONED', provisionedRcu: 1000 })).toMatchObject({
      rcu: 800,
      reason: expect.stringContaining("80% of the table's provisioned 1,000 RCU") as unknown,
    });
    expect(chooseReadRate({ kind: 'auto', percent: 50 }, { billingMode: 'PROVISIONED', provisionedRcu: 1000 }, 4).rcu).toBe(125);
  });

  it('on demand: P% of the warm read throughput, else of a new table 12,000, never above MaxReadRequestUnits', () => {
    expect(chooseReadRate({ kind: 'auto', percent: 80 }, { billingMode: 'PAY_PER_REQUEST', warmReadUnits: 30_000 }).rcu).toBe(24_000);
    const fresh = chooseReadRate({ kind: 'auto', percent: 80 }, { billingMode: 'PAY_PER_REQUEST' });
    expect(fresh.rcu).toBe(9600);
    expect(fresh.reason).toContain('12,000 RCU/s (what a new on-demand table takes at once');
    const capped = chooseReadRate({ kind: 'auto', percent: 50 }, { billingMode: 'PAY_PER_REQUEST', warmReadUnits: 30_000, maxReadUnits: 2000 });
    expect(capped).toMatchObject({ rcu: 1000, reason: expect.stringContaining('MaxReadRequestUnits of 2,000') as unknown });
    expect(chooseReadRate({ kind: 'fixed', rcu: 7 }, { billingMode: 'PAY_PER_REQUEST' })).toEqual({ rcu: 7, reason: '--rcu 7' });
  });
});
