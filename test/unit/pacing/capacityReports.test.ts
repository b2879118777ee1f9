import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapacityReports } from '../../../src/pacing/capacityReports.js';
import type { PlannedWrite } from '../../../src/shared/types.js';

/** A write that costs `wcu` units by the plan; the reports only ever read the cost. */
const write = (wcu: number): PlannedWrite => ({ wcu }) as PlannedWrite;
const batch = (n: number, wcu = 1): PlannedWrite[] => Array.from({ length: n }, () => write(wcu));

describe('CapacityReports: which calls ask for ConsumedCapacity', () => {
  it('asks on the first calls, then one call in `every`, while every answer matches the plan', () => {
    const reports = new CapacityReports((w) => w.wcu, { firstCalls: 4, every: 3 });
    const asks: boolean[] = [];
    for (let i = 0; i < 13; i++) {
      const ask = reports.ask();
      asks.push(ask);
      const stored = batch(25);
      if (ask) reports.answered(stored, 25);
      else reports.inferred(stored);
    }
    expect(asks).toEqual([true, true, true, true, false, false, true, false, false, true, false, false, true]);
    expect(reports.summary()).toEqual({ calls: 13, asked: 7, inferredUnits: 6 * 25, everyCall: false });
  });

  it('asks on every call after an answer that differs from the plan (an overwrite of a larger item)', () => {
    const reports = new CapacityReports((w) => w.wcu, { firstCalls: 2, every: 4 });
    for (let i = 0; i < 5; i++) if (reports.ask()) reports.answered(batch(10), 10);
    // Call 6 asks (the 4th after the first two) and reports 12 units for 10 planned.
    expect(reports.ask()).toBe(true);
    reports.answered(batch(10), 12);
    for (let i = 0; i < 20; i++) expect(reports.ask()).toBe(true);
    expect(reports.summary().everyCall).toBe(true);
  });

  it('counts an asked answer without ConsumedCapacity as a mismatch, and a call that stored nothing as no answer', () => {
    const reports = new CapacityReports((w) => w.wcu, { firstCalls: 1, every: 100 });
    expect(reports.ask()).toBe(true);
    reports.answered([], undefined); // all throttled: says nothing
    expect(reports.summary().everyCall).toBe(false);
    expect(reports.ask()).toBe(false);
    const reports2 = new CapacityReports((w) => w.wcu, { firstCalls: 1, every: 100 });
    reports2.ask();
    reports2.answered(batch(3), undefined);
    expect(reports2.ask()).toBe(true);
    expect(reports2.summary().everyCall).toBe(true);
  });

  it('plans with the cost function it was given (GSI units included), in the match and in what it infers', () => {
    const reports = new CapacityReports((w) => w.wcu * 3, { firstCalls: 1, every: 2 });
    reports.ask();
    reports.answered(batch(2, 2), 12);
    expect(reports.summary().everyCall).toBe(false);
    expect(reports.ask()).toBe(false);
    expect(reports.inferred(batch(2, 2))).toBe(12);
  });

  it('property: never more than every-1 unasked calls in a row, none after a mismatch, and units add up', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.record({ items: fc.integer({ min: 0, max: 25 }), extra: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: 5 })) }), {
          maxLength: 80,
        }),
        (firstCalls, every, calls) => {
          const reports = new CapacityReports((w) => w.wcu, { firstCalls, every });
          let run = 0;
          let mismatched = false;
          let inferred = 0;
          calls.forEach((call, i) => {
            const ask = reports.ask();
            if (i < firstCalls || mismatched) expect(ask).toBe(true);
            run = ask ? 0 : run + 1;
            expect(run).toBeLessThanOrEqual(every - 1);
            const stored = batch(call.items);
            if (ask) {
              reports.answered(stored, call.items + call.extra);
              if (call.items > 0 && call.extra > 0) mismatched = true;
            } else inferred += reports.inferred(stored);
          });
          const summary = reports.summary();
          expect(summary.calls).toBe(calls.length);
          expect(summary.everyCall).toBe(mismatched);
          expect(summary.inferredUnits).toBe(inferred);
        },
      ),
    );
  });
});
