import { describe, expect, it } from 'vitest';
import { CostGuard } from '../../../src/load/costGuard.js';
import { DEFAULT_PRICES, usdPerUnit } from '../../../src/pacing/unitPrices.js';

const ON_DEMAND = usdPerUnit('PAY_PER_REQUEST', DEFAULT_PRICES);
const guard = (maxUsd: number, totalBytes: number | undefined, perUnit = ON_DEMAND) =>
  new CostGuard({ maxUsd, usdPerUnit: perUnit, totalBytes, pricing: 'test prices' });

describe('unit prices', () => {
  it('on demand: a write request unit each; provisioned: the WCU-hours the units occupy', () => {
    expect(usdPerUnit('PAY_PER_REQUEST', DEFAULT_PRICES) * 1_000_000).toBeCloseTo(0.625, 12);
    expect(usdPerUnit('PROVISIONED', DEFAULT_PRICES) * 3600).toBeCloseTo(0.00065, 12);
    expect(usdPerUnit('PAY_PER_REQUEST', { onDemandPerMillionWrites: 2, provisionedPerWcuHour: 1 }) * 1_000_000).toBeCloseTo(2, 12);
  });
});

describe('the cost guard', () => {
  it('refuses at the first send when the sampled rows price the whole input above the limit', () => {
    // 100 rows of 100 bytes, a unit each: 0.01 unit per byte; 100 MB of input: 1,000,000 units, $0.625.
    const g = guard(0.5, 100_000_000);
    for (let i = 0; i < 100; i++) g.sample(1, 100);
    const refusal = g.beforeSend(25, 0);
    expect(refusal?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(refusal?.message).toMatch(/before the first write.*\$0\.625.*above --max-cost \$0\.50/);
    expect(g.sampling).toBe(false);
  });

  it('lets the load start when the prediction is within the limit, and predicts once', () => {
    const g = guard(0.7, 100_000_000);
    for (let i = 0; i < 100; i++) g.sample(1, 100);
    expect(g.beforeSend(25, 0)).toBeUndefined();
    g.sent(25);
    // Later samples change nothing: the prediction was made.
    g.sample(1_000_000, 1);
    expect(g.beforeSend(25, 0)).toBeUndefined();
  });

  it('cannot predict an input of unknown size (stdin) or without a sample: only the stop during the load guards it', () => {
    const g = guard(0.000_01, undefined);
    g.sample(10, 100);
    expect(g.beforeSend(1, 0)).toBeUndefined();
    expect(guard(1, 1000).beforeSend(1, 0)).toBeUndefined();
  });

  it('stops before consumed + in flight + the next batch would pass the limit', () => {
    // $1 per unit makes the arithmetic plain: a limit of $100 is 100 units.
    const g = guard(100, undefined, 1);
    expect(g.beforeSend(25, 0)).toBeUndefined();
    g.sent(25);
    expect(g.beforeSend(25, 0)).toBeUndefined();
    g.sent(25);
    expect(g.beforeSend(25, 0)).toBeUndefined();
    g.sent(25);
    // 75 in flight, nothing booked yet: a fourth batch makes 100, exactly the limit, and goes.
    expect(g.beforeSend(25, 0)).toBeUndefined();
    g.sent(25);
    // A fifth would make 101: stopped, with what was counted.
    const stop = g.beforeSend(1, 0);
    expect(stop?.code).toBe('COST_LIMIT_REACHED');
    expect(stop?.message).toMatch(/\$100\.00 of write units counted so far .*would pass --max-cost \$100\.00/);
    // Once booked, the consumed units count instead of the planned ones (DynamoDB charged fewer here).
    for (let i = 0; i < 4; i++) g.settled(25);
    expect(g.beforeSend(1, 90)).toBeUndefined();
    expect(g.beforeSend(11, 90)?.code).toBe('COST_LIMIT_REACHED');
  });

  it('a first batch that alone passes the limit is a refusal (nothing of the load written), not a stop', () => {
    const g = guard(10, undefined, 1);
    expect(g.beforeSend(25, 0)?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(guard(0, undefined, 1).beforeSend(1, 0)?.message).toMatch(/the first batch alone .* would pass --max-cost \$0\.00/);
    // A resumed load's earlier units make it a stop.
    expect(guard(10, undefined, 1).beforeSend(25, 5)?.code).toBe('COST_LIMIT_REACHED');
  });

  it('counts the units an earlier run consumed (a resume): the limit is the whole load’s', () => {
    const g = guard(100, undefined, 1);
    expect(g.beforeSend(25, 80)?.code).toBe('COST_LIMIT_REACHED');
    expect(guard(200, undefined, 1).beforeSend(25, 80)).toBeUndefined();
  });
});

describe('the cost guard with an estimate of the input', () => {
  it('refuses by the estimate before anything is read, whatever the first rows look like', () => {
    const g = new CostGuard({ maxUsd: 1, usdPerUnit: 1, totalBytes: 1000, pricing: 'test prices', estimate: { writeUnits: 5, source: 'est.json' } });
    const refusal = g.refusalByEstimate();
    expect(refusal?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(refusal?.message).toMatch(/the estimate est\.json counts 5 write units/);
    // Predicted once: the sample is not asked again.
    expect(g.sampling).toBe(false);
  });

  it('lets the load start when the estimate is within the limit; the stop during the load still counts units', () => {
    const g = new CostGuard({ maxUsd: 10, usdPerUnit: 1, totalBytes: 1000, pricing: 'test prices', estimate: { writeUnits: 5, source: 'est.json' } });
    expect(g.refusalByEstimate()).toBeUndefined();
    // A sample that would price the input at 1,000 units is not the guard's word: the estimate is.
    g.sample(10, 10);
    expect(g.beforeSend(5, 0)).toBeUndefined();
    g.sent(5);
    expect(g.beforeSend(6, 0)?.code).toBe('COST_LIMIT_REACHED');
  });
});
