/**
 * Attacks on the sampled ConsumedCapacity of 18ec1e1 (src/pacing/capacityReports.ts) without DynamoDB:
 * deletes, whose plan (1 WCU) is a guess, never go unasked; the units counted are DynamoDB's own for every
 * call from the first that asked and differed; and the summary line reads right for every mix of asked
 * calls, mismatches, dry runs and resumed loads, in text and in JSON.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadResult, type ResultFacts } from '../../../src/load/loadResult.js';
import { LoadTally } from '../../../src/load/loadTally.js';
import { CapacityReports, type CapacityReportsSummary } from '../../../src/pacing/capacityReports.js';
import type { RateSnapshot } from '../../../src/pacing/rateControl.js';
import { formatSummary, summaryJson } from '../../../src/reporting/summary.js';
import type { PlannedWrite } from '../../../src/shared/types.js';

const put = (wcu = 1): PlannedWrite => ({ wcu }) as PlannedWrite;
const del = (): PlannedWrite => ({ wcu: 1, op: 'delete' }) as PlannedWrite;

describe('CapacityReports under attack', () => {
  it('a call holding a delete asks even between the sampled calls; a delete that cost its plan keeps the sampling', () => {
    const reports = new CapacityReports((w) => w.wcu, { firstCalls: 2, every: 4 });
    for (let i = 0; i < 2; i++) {
      expect(reports.ask([put()])).toBe(true);
      reports.answered([put()], 1);
    }
    expect(reports.ask([put()])).toBe(false);
    // A delete of an item that was not there costs 1 unit, as planned.
    expect(reports.ask([put(), del()])).toBe(true);
    reports.answered([put(), del()], 2);
    expect(reports.ask([put()])).toBe(false);
    // A delete of a 3 KB item: 3 units for 1 planned, and every call asks from then on.
    expect(reports.ask([del()])).toBe(true);
    reports.answered([del()], 3);
    expect(reports.ask([put()])).toBe(true);
    // The last call asked but is not answered yet (or was refused whole): it reported nothing.
    expect(reports.summary()).toMatchObject({ calls: 7, asked: 4, everyCall: true });
  });

  it('property: with drift only on deletes, the units counted (reported + as planned) are exactly what DynamoDB charged', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.array(fc.record({ del: fc.boolean(), size: fc.integer({ min: 1, max: 5 }), existing: fc.integer({ min: 0, max: 4 }) }), { maxLength: 5 }), {
          maxLength: 60,
        }),
        (firstCalls, every, calls) => {
          const reports = new CapacityReports((w) => w.wcu, { firstCalls, every });
          let counted = 0;
          let charged = 0;
          for (const call of calls) {
            // Puts into fresh keys cost their plan; a delete costs the removed item's units (1 when none).
            const writes = call.map((w) => (w.del ? del() : put(w.size)));
            const units = call.reduce((n, w) => n + (w.del ? Math.max(1, w.existing) : w.size), 0);
            charged += units;
            if (reports.ask(writes)) {
              reports.answered(writes, units);
              counted += units;
            } else counted += reports.inferred(writes);
          }
          expect(counted).toBe(charged);
        },
      ),
    );
  });
});

/** A load's result whose counters and capacity reports are given; the rest as a small load. */
function result(capacityReports: CapacityReportsSummary | undefined, resumedFromBatch?: number, consumedWcu = 3000): ReturnType<typeof loadResult> {
  const tally = new LoadTally();
  const writes = Array.from({ length: 3000 }, (_, i) => ({
    origin: { file: 'f', line: i + 2, raw: '' },
    item: {},
    keyId: `S${i}`,
    partitionId: `S${i}`,
    size: 50,
    wcu: 1,
  }));
  for (let i = 0; i < writes.length; i++) tally.rowRead();
  tally.batchWritten({ written: writes, rejected: [], consumedWcu, throttledItems: 0, retries: 0, revived: 0 }, () => 1, false);
  const facts: ResultFacts = {
    table: 't',
    input: 'in.csv',
    order: 'input',
    elapsedMs: 1000,
    bytesRead: 0,
    rejectsPath: undefined,
    orderTempBytes: 0,
    shardManifestPath: undefined,
    shardedKeys: 0,
    rate: { targetWcu: 1000, currentWcu: 1000, achievedWcu: 1000, peakWcu: 1000, costRatio: 1 } as RateSnapshot,
    targetWcu: 1000,
    rateReason: '--wcu',
    keyWcu: 1000,
    pacing: true,
    segment: undefined,
    checkpointPath: resumedFromBatch === undefined ? undefined : 'load.checkpoint.json',
    resumedFromBatch,
    capacityReports,
  };
  return loadResult(tally, facts);
}

const unitsLine = (r: ReturnType<typeof loadResult>) =>
  formatSummary(r)
    .split('\n')
    .find((l) => l.includes('write units'));

describe('the write units line, for every way the units were counted', () => {
  it.each([
    ['a dry run (no calls)', undefined, undefined, '  write units   3,000 consumed (DynamoDB), 3,000 planned'],
    ['every call asked', { calls: 60, asked: 60, inferredUnits: 0, everyCall: false }, undefined, '  write units   3,000 consumed (DynamoDB), 3,000 planned'],
    [
      'sampled, every answer matched',
      { calls: 120, asked: 67, inferredUnits: 1325, everyCall: false },
      undefined,
      '  write units   3,000 consumed (DynamoDB; reported on 67 of 120 calls, the rest as planned, as every answer matched), 3,000 planned',
    ],
    [
      'sampled until an answer differed',
      { calls: 120, asked: 90, inferredUnits: 750, everyCall: true },
      undefined,
      '  write units   3,000 consumed (DynamoDB; reported on 90 of 120 calls, the rest as planned until an answer differed), 3,000 planned',
    ],
    [
      'a mismatch within the first calls: every call asked',
      { calls: 120, asked: 120, inferredUnits: 0, everyCall: true },
      undefined,
      '  write units   3,000 consumed (DynamoDB), 3,000 planned',
    ],
    [
      'resumed, this run asked on every call',
      { calls: 20, asked: 20, inferredUnits: 0, everyCall: false },
      100,
      '  write units   3,000 consumed (DynamoDB; every unit of this run reported; the batches done before as their run counted them), 3,000 planned',
    ],
    [
      'resumed and sampled',
      { calls: 120, asked: 67, inferredUnits: 1325, everyCall: false },
      10,
      '  write units   3,000 consumed (DynamoDB; this run reported on 67 of 120 calls, the rest as planned, as every answer matched; the batches done before as their run counted them), 3,000 planned',
    ],
    [
      'a finished checkpoint run again (no calls)',
      { calls: 0, asked: 0, inferredUnits: 0, everyCall: false },
      120,
      '  write units   3,000 consumed (DynamoDB; the batches done before as their run counted them), 3,000 planned',
    ],
    [
      'calls refused whole, nothing counted as planned',
      { calls: 70, asked: 60, inferredUnits: 0, everyCall: false },
      undefined,
      '  write units   3,000 consumed (DynamoDB), 3,000 planned',
    ],
    [
      'a fresh checkpoint (resumed from batch 0)',
      { calls: 120, asked: 120, inferredUnits: 0, everyCall: false },
      0,
      '  write units   3,000 consumed (DynamoDB), 3,000 planned',
    ],
  ] as const)('%s', (_name, reports, resumedFrom, line) => {
    expect(unitsLine(result(reports ? { ...reports } : undefined, resumedFrom))).toBe(line);
  });

  it('--json carries the reports as they are and the consumed units rounded to a tenth', () => {
    const json = JSON.parse(summaryJson(result({ calls: 120, asked: 67, inferredUnits: 1325, everyCall: false }, undefined, 3000.04))) as Record<
      string,
      unknown
    >;
    expect(json['consumedWcu']).toBe(3000);
    expect(json['capacityReports']).toEqual({ calls: 120, asked: 67, inferredUnits: 1325, everyCall: false });
    expect(JSON.parse(summaryJson(result(undefined)))).not.toHaveProperty('capacityReports');
  });
});
