import { describe, expect, it } from 'vitest';
import { assembleEstimate, type EstimateParts } from '../../../src/estimating/assembleEstimate.js';
import type { EstimateTotals } from '../../../src/estimating/estimateTally.js';
import { HeavyHitters } from '../../../src/shared/heavyHitters.js';
import { offlineTableInfo } from '../../../src/estimating/offlineTable.js';
import type { SimulationOutcome } from '../../../src/estimating/simulate.js';
import { SizeHistogram } from '../../../src/estimating/sizeHistogram.js';

/* ==== Inputs ==== */

const TABLE = offlineTableInfo('orders', { partitionKey: { name: 'customerId', type: 'S' } });

function outcome(seconds: number, partitions = 7): SimulationOutcome {
  return { seconds, throttledItems: 3, retries: 3, givenUp: 0, perSecond: [], partitionWcu: 1000, partitions };
}

/** A sketch of [key, write units] rows, one add() per row. */
function heavy(rows: Array<[string, number]>): HeavyHitters {
  const h = new HeavyHitters(100);
  for (const [key, units] of rows) h.add(key, units);
  return h;
}

/**
 * 800 write units: "hot" has 600 in three rows, "cold" 200 in one. At 200 WCU the load takes 4 s; at
 * --key-wcu 60 "hot" takes 10 s (it needs 150 WCU: 3 shards at least, 6 recommended) and "cold" 3.3 s.
 */
function totals(): EstimateTotals {
  const sizes = new SizeHistogram();
  sizes.add(100);
  const rows: Array<[string, number]> = [
    ['hot', 200],
    ['hot', 200],
    ['hot', 200],
    ['cold', 200],
  ];
  return {
    sizes: sizes.toJSON(),
    writeUnits: { table: 800, indexes: {}, total: 800 },
    reads: { writes: 8, strongReadUnits: 8, puts: 8, putBytes: 800 },
    hottest: heavy(rows),
    distinct: 2,
    hottestWritten: heavy(rows),
    distinctWritten: 2,
    planned: outcome(5),
    input: outcome(9),
    indexHottest: [],
  };
}

function parts(overrides: Partial<EstimateParts> = {}): EstimateParts {
  return {
    run: {
      input: 'in.csv',
      bytesRead: 1234,
      rowsRead: 10,
      rejected: 2,
      superseded: 1,
      rejectedByReason: { MISSING_KEY: 2 },
      rejectsPath: 'in.csv.dry-run.rejects.jsonl',
    },
    table: TABLE,
    tableSource: 'flags',
    rate: { targetWcu: 200, assumedWcu: 200, reason: '--wcu 200', newTable: false },
    totals: totals(),
    load: { pacing: true, keyWcu: 60, order: 'round-robin', sharded: false },
    ...overrides,
  };
}

/* ==== Sections ==== */

describe('assembleEstimate', () => {
  it("input: the dry run's counters; valid rows are those not rejected; no size for a stream (0 bytes read)", () => {
    expect(assembleEstimate(parts()).input).toEqual({
      file: 'in.csv',
      bytes: 1234,
      rows: 10,
      validRows: 8,
      expired: 0,
      superseded: 1,
      rejected: 2,
      rejectedByReason: { MISSING_KEY: 2 },
      rejectsPath: 'in.csv.dry-run.rejects.jsonl',
    });
    // --skip-expired: expired rows are neither valid nor rejected.
    const skipping = parts();
    skipping.run = { ...skipping.run, skippedExpired: 3 };
    expect(assembleEstimate(skipping).input).toMatchObject({ rows: 10, validRows: 5, expired: 3, rejected: 2 });
    const stream = parts();
    stream.run = { ...stream.run, bytesRead: 0 };
    expect(assembleEstimate(stream).input.bytes).toBeUndefined();
  });

  it('rate and time: ideal at the assumed rate, estimated as simulated, no target shown when there is none', () => {
    const result = assembleEstimate(parts());
    expect(result.rate).toEqual({
      targetWcu: 200,
      assumedWcu: 200,
      peakWcu: 200,
      reason: '--wcu 200',
      warning: undefined,
      keyWcu: 60,
      throttleFreeWcu: 800 / 5,
    });
    expect(result.time).toMatchObject({ idealSeconds: 4, estimatedSeconds: 5 });
    const unlimited = assembleEstimate(parts({ rate: { targetWcu: Infinity, assumedWcu: 4000, reason: 'no --wcu', newTable: false } }));
    expect(unlimited.rate.targetWcu).toBeUndefined();
    expect(unlimited.rate.assumedWcu).toBe(4000);
  });

  it('duration counts start-up and the read phase: after it in a global order, alongside writing in a streaming one', () => {
    const phases = { startupSeconds: 0.5, readSeconds: 3 };
    const global = assembleEstimate(parts({ phases }));
    expect(global.time).toMatchObject({ estimatedSeconds: 8.5, startupSeconds: 0.5, readSeconds: 3, writeSeconds: 5 });
    // The rate the simulation reached, and the cost, stay those of the writing itself.
    expect(global.rate.throttleFreeWcu).toBe(800 / 5);
    const streaming = (order: 'input' | 'window', readSeconds: number) =>
      assembleEstimate(parts({ phases: { startupSeconds: 0.5, readSeconds }, load: { pacing: true, keyWcu: 60, order, sharded: false } })).time
        .estimatedSeconds;
    expect(streaming('input', 3)).toBe(5.5);
    expect(streaming('window', 7)).toBe(7.5);
    expect(assembleEstimate(parts()).time).toMatchObject({ estimatedSeconds: 5, startupSeconds: 0, readSeconds: 0 });
  });

  it('N workers read side by side: the read phase is the largest share of it, the writing the same whole load', () => {
    const phases = { startupSeconds: 0.5, readSeconds: 8 };
    const plan = { count: 4, by: 'parts' as const, why: 'test', inputBytes: 1000, largestShareBytes: 300, bytesReadByAll: 1000, readShare: 0.3 };
    const divided = assembleEstimate(parts({ phases, workers: plan }));
    // A global order reads before it writes: 0.5 + 8 x 0.3 + 5.
    expect(divided.time).toMatchObject({ readSeconds: 2.4, writeSeconds: 5, estimatedSeconds: 7.9 });
    expect(divided.workers).toEqual({ count: 4, by: 'parts', why: 'test', inputBytes: 1000, largestShareBytes: 300, bytesReadByAll: 1000, readSeconds: 2.4 });
    // Divided by key, every worker reads everything: no faster to read than one process.
    const byKey = assembleEstimate(parts({ phases, workers: { ...plan, by: 'keys', largestShareBytes: 1000, bytesReadByAll: 4000, readShare: 1 } }));
    expect(byKey.time).toMatchObject({ readSeconds: 8, estimatedSeconds: 13.5 });
    expect(assembleEstimate(parts({ phases })).workers).toBeUndefined();
  });

  it('a key slower at --key-wcu than the whole load is the bottleneck, with the flags that shard it', () => {
    const result = assembleEstimate(parts());
    expect(result.time.bottleneck).toEqual({ kind: 'key', key: 'hot', units: 600, seconds: 10 });
    expect(result.shardAdvice).toEqual([
      {
        key: 'hot',
        units: 600,
        requiredWcu: 150,
        minShards: 3,
        recommendedShards: 6,
        flags: '--shard hash:6 --shard-keys hot',
        index: undefined,
        reads: expect.stringContaining('6 queries per key') as string,
      },
    ]);
  });

  it('unpaced (--no-pacing): the table is the bottleneck, yet the advice for the hot key stays', () => {
    const result = assembleEstimate(parts({ load: { pacing: false, keyWcu: 60, order: 'input', sharded: false } }));
    expect(result.time.bottleneck).toEqual({ kind: 'table', wcu: 200 });
    expect(result.shardAdvice.map((a) => a.key)).toEqual(['hot']);
    expect(result.simulations.planned).toMatchObject({ order: 'input', paced: false });
  });

  it('sharded: advice comes from the keys as written and asks for more shards', () => {
    const t = totals();
    t.hottestWritten = heavy([
      ['hot#0', 300],
      ['hot#0', 300],
      ['hot#1', 200],
    ]);
    const result = assembleEstimate(parts({ totals: t, load: { pacing: true, keyWcu: 60, order: 'round-robin', sharded: true } }));
    expect(result.keys.sharded).toBe(true);
    expect(result.shardAdvice[0]).toMatchObject({ key: 'hot#0', flags: 'shard this key 6 more ways: raise N in --shard, or add --shard hash:6' });
    expect(result.keys.hottest[0]!.key).toBe('hot');
    expect(result.keys.hottestWritten[0]!.key).toBe('hot#0');
  });

  it('hot keys with their shares of rows and of write units, at most 10', () => {
    const t = totals();
    t.hottest = heavy(Array.from({ length: 12 }, (_, i): [string, number] => [`k${String(i).padStart(2, '0')}`, 12 - i]));
    const result = assembleEstimate(parts({ totals: t }));
    expect(result.keys.hottest).toHaveLength(10);
    expect(result.keys.hottest[0]).toEqual({ key: 'k00', rows: 1, rowShare: 1 / 12, units: 12, unitShare: 12 / 78 });
    expect(result.keys.hottestWritten[0]).toEqual({ key: 'hot', rows: 3, rowShare: 3 / 4, units: 600, unitShare: 600 / 800 });
    expect(result.keys).toMatchObject({ distinct: 2, distinctWritten: 2 });
  });

  it('table: where its description came from, partitions now and, on demand, as the planned simulation had them', () => {
    const result = assembleEstimate(parts({ tableSource: 'describe-table' }));
    expect(result.table).toMatchObject({
      name: 'orders',
      source: 'describe-table',
      billingMode: 'PAY_PER_REQUEST',
      gsis: [],
      partitionsNow: 4,
      partitionsAtTarget: 7,
    });
  });

  it('simulations: the planned order as paced, the input order unpaced', () => {
    const { simulations } = assembleEstimate(parts());
    expect(simulations.planned).toMatchObject({ order: 'round-robin', paced: true, seconds: 5, throttledItems: 3 });
    expect(simulations.input).toMatchObject({ order: 'input', paced: false, seconds: 9, throttledItems: 3 });
  });

  it('cost: prices the user gave are labelled as theirs; an unknown item count counts as an empty table', () => {
    const given = assembleEstimate(parts({ prices: { provisionedPerWcuHour: 0.1 } }));
    expect(given.cost.prices).toMatchObject({ region: 'as given', date: 'as given', provisionedPerWcuHour: 0.1 });
    expect(given.cost.importFromS3).toMatch(/Import from S3/);
    const known = assembleEstimate(parts({ table: { ...TABLE, itemCount: 5 } }));
    expect(known.cost.prices.region).toBe('us-east-1');
    expect(known.cost.importFromS3).toBeUndefined();
  });

  it('a hot GSI key is named with its index units, bounds the duration, and gets sharded-key advice with its read cost', () => {
    const t = totals();
    // 800 table units plus 800 index units, 700 of them on one status value.
    t.writeUnits = { table: 800, indexes: { byStatus: 800 }, total: 1600 };
    t.indexHottest = [
      {
        index: 'byStatus',
        hottest: heavy([
          ['ACTIVE', 700],
          ['DONE', 100],
        ]),
      },
    ];
    const table = offlineTableInfo('orders', {
      partitionKey: { name: 'customerId', type: 'S' },
      gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' }, projection: 'ALL', nonKeyAttributes: [] }],
    });
    const result = assembleEstimate(parts({ totals: t, table, load: { pacing: true, keyWcu: 60, order: 'round-robin', sharded: false } }));
    expect(result.keys.indexes.map((i) => i.index)).toEqual(['byStatus']);
    expect(result.keys.indexes[0]!.hottest[0]).toMatchObject({ key: 'ACTIVE', rows: 1, units: 700, unitShare: 700 / 1600 });
    // 700 units at 60 WCU/s (11.7 s) is longer than "hot"'s 600 (10 s): the index key bounds the load.
    expect(result.time.bottleneck).toEqual({ kind: 'index-key', index: 'byStatus', key: 'ACTIVE', units: 700, seconds: 700 / 60 });
    const advice = result.shardAdvice.find((a) => a.index === 'byStatus');
    expect(advice).toMatchObject({ key: 'ACTIVE', units: 700 });
    expect(advice!.flags).toMatch(/"ACTIVE#SHARD#0" \.\. "ACTIVE#SHARD#\d+"/);
    expect(advice!.flags).toContain('a sharded GSI key, e.g. pk = STATUS#{status}#SHARD#{shard}');
    expect(advice!.reads).toMatch(/\d+ queries of the index per status value/);
  });

  it('--wcu auto on an on-demand table: figures and advice at the rate the load reaches, not at the quota', () => {
    const growth = { initial: 3_200, factor: 2, windowMs: 30 * 60_000, cap: 32_000 };
    const t = totals();
    // The simulated model had the partitions of what the table takes now: 4 for 4,000 WCU/s.
    t.planned = outcome(5, 4);
    const result = assembleEstimate(parts({ totals: t, rate: { targetWcu: 32_000, assumedWcu: 32_000, reason: 'auto', growth, newTable: false } }));
    expect(result.rate).toMatchObject({ assumedWcu: 3_200, peakWcu: 3_200 });
    expect(result.time.idealSeconds).toBeCloseTo(800 / 3_200, 9);
    // 4 partitions for 3,200 WCU/s, not 32 for the quota.
    expect(result.table.partitionsAtTarget).toBe(4);
    expect(result.capacity.advice.join(' ')).toContain('3,200 WCU/s');
  });

  it("AWS's bulk-load example: a provisioned table created at 11,000 WCU has 11 partitions, ~18 WCU/s each back at 200", () => {
    const t = totals();
    t.writeUnits = { table: 20_000_000, indexes: {}, total: 20_000_000 };
    const table = offlineTableInfo('orders', { partitionKey: { name: 'id', type: 'S' }, billing: 'provisioned', tableWcu: 200 });
    const result = assembleEstimate(parts({ totals: t, table, rate: { targetWcu: 11_000, assumedWcu: 11_000, reason: '--wcu 11000', newTable: true } }));
    expect(result.capacity).toMatchObject({ loadWcu: 11_000, partitionsAfterRaise: 11 });
    expect(result.capacity.perPartitionWcuAfterLoad).toBeCloseTo(200 / 11, 9);
    expect(result.table.partitionsAtTarget).toBe(11);
    expect(result.capacity.advice[0]).toMatch(/^Creating the table at 11,000 WCU .* 11 partitions, which are never merged/);
  });
});
