import { describe, expect, it } from 'vitest';
import { loadResult, type ResultFacts } from '../../../src/load/loadResult.js';
import { LoadTally } from '../../../src/load/loadTally.js';
import type { RateSnapshot } from '../../../src/pacing/rateControl.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import { formatSummary, summaryJson } from '../../../src/reporting/summary.js';

function write(key: string, i: number): PlannedWrite {
  return { origin: { file: 'f', line: i, raw: '' }, item: {}, keyId: `S${key}|${i}`, partitionId: `S${key}`, size: 100, wcu: 1 };
}

/** 20,000 rows of 1 table unit and 1 GSI unit each, 8,000 of them on "ATL". */
function tally(): LoadTally {
  const t = new LoadTally();
  const writes = Array.from({ length: 20_000 }, (_, i) => write(i < 8_000 ? 'ATL' : `K${i}`, i));
  for (let i = 0; i < writes.length; i++) t.rowRead();
  t.batchWritten({ written: writes, rejected: [], consumedWcu: 40_000, throttledItems: 0, retries: 0, revived: 0 }, () => 2, true);
  return t;
}

function facts(targetWcu: number, peakWcu: number, elapsedMs: number): ResultFacts {
  const rate = { targetWcu, currentWcu: targetWcu, achievedWcu: peakWcu, peakWcu } as RateSnapshot;
  return {
    table: 't',
    input: 'in.csv',
    order: 'round-robin',
    elapsedMs,
    bytesRead: 0,
    rejectsPath: undefined,
    orderTempBytes: 0,
    shardManifestPath: undefined,
    shardedKeys: 0,
    rate,
    targetWcu,
    rateReason: '',
    keyWcu: 1000,
    pacing: true,
    segment: undefined,
    checkpointPath: undefined,
    resumedFromBatch: undefined,
    capacityReports: undefined,
  };
}

describe('loadResult', () => {
  it("a key's units are the table's own: GSI units land on the index's keys", () => {
    const result = loadResult(tally(), facts(4_000, 4_000, 10_000));
    expect(result.hotKeys[0]).toMatchObject({ key: 'ATL', units: 8_000, share: 0.4 });
    expect(result.plannedWcu).toBe(40_000);
  });

  it('shard advice rests on the rate the load could reach (the facts give it), with every unit of the load', () => {
    // At 4,000 WCU/s 40,000 units take 10 s, ATL's 8,000 at 1,000 WCU/s 8 s: no bottleneck. At the
    // 32,000 of --wcu auto's quota it would have asked for 28 ways.
    expect(loadResult(tally(), facts(4_000, 4_000, 10_000)).bottleneck).toBeUndefined();
    // At 8,000 WCU/s ATL needs 1,600 WCU/s: 2 shards, 4 advised.
    expect(loadResult(tally(), facts(8_000, 8_000, 5_000)).bottleneck).toMatchObject({ key: 'ATL', units: 8_000, minShards: 2, recommendedShards: 4 });
  });

  it('without a target, a hot key that stretched the load is weighed against what the table takes, not the average it dragged down', () => {
    // ATL's 8,000 units at 1,000 WCU/s took the whole 8 s: the average (40,000 units in 8 s = 5,000) and
    // the best second both stand at the pace the key allowed, and 40,000 units at 5,000 WCU/s also take 8 s.
    const untargeted = (nowWcu: number | undefined): ResultFacts => ({ ...facts(Infinity, 5_000, 8_000), nowWcu });
    expect(loadResult(tally(), untargeted(undefined)).bottleneck).toBeUndefined();
    // An on-demand table takes 40,000 WCU/s at once (its warm throughput): the rest needs 1 s, ATL 8 s.
    expect(loadResult(tally(), untargeted(40_000)).bottleneck).toMatchObject({
      key: 'ATL',
      keySeconds: 8,
      loadSeconds: 1,
      minShards: 8,
      recommendedShards: 16,
    });
    // A key that held the load back by less than a second is not named: 8,000 units at 1,000 WCU/s take
    // 8 s, and the rest at 5,500 WCU/s (the best second) 7.3 s.
    expect(loadResult(tally(), { ...facts(Infinity, 5_500, 8_000), nowWcu: undefined }).bottleneck).toBeUndefined();
    // The best second counts when it beat what the table was known to take.
    const faster = { ...facts(Infinity, 10_000, 8_000), nowWcu: 4_000 };
    expect(loadResult(tally(), faster).bottleneck).toMatchObject({ key: 'ATL', loadSeconds: 4, minShards: 2 });
  });
});

describe('--skip-expired in the result', () => {
  it('expired rows are accounted for: complete, nothing not written, a finished checkpoint keeps them; the summary says so', () => {
    const t = tally();
    for (let i = 0; i < 5; i++) {
      t.rowRead();
      t.skippedExpired();
    }
    t.inputEnded = true;
    expect(t.accounted).toBe(true);
    const result = loadResult(t, facts(4_000, 4_000, 10_000));
    expect(result).toMatchObject({ rowsRead: 20_005, written: 20_000, skippedExpired: 5, notWritten: 0, complete: true });
    expect(t.outcome()).toMatchObject({ rowsRead: 20_005, skippedExpired: 5 });
    // A finished checkpoint's outcome, run again, reports them again.
    const again = new LoadTally();
    again.restoreFinished(t.outcome(), 0, 0);
    expect(again.accounted).toBe(true);
    expect(formatSummary(result)).toMatch(/expired\s+5\s+\(--skip-expired/);
    expect(JSON.parse(summaryJson(result))).toMatchObject({ skippedExpired: 5, notWritten: 0 });
  });

  it('a load without it keeps a finished checkpoint as before and prints no expired line', () => {
    const t = tally();
    expect(t.outcome()).not.toHaveProperty('skippedExpired');
    expect(formatSummary(loadResult(t, facts(4_000, 4_000, 10_000)))).not.toMatch(/expired/);
  });

  it('a resume at a restart point restores the expired rows counted before it', () => {
    const t = new LoadTally();
    t.resume({ written: 10, plannedWcu: 10, consumedWcu: 10 });
    t.resumeAt({ rowsRead: 15, otherSegments: 0, skippedExpired: 5, superseded: 0, batch: 1 });
    expect(t.counters).toMatchObject({ rowsRead: 15, written: 10, skippedExpired: 5 });
    expect(t.accounted).toBe(true);
  });
});
