import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/aws/backoff.js';
import { partitionOf, type PartitionModelOptions } from '../../../src/estimating/partitionModel.js';
import { heatOf, LoadSimulator, throttleFreeRate, type SimulationOptions, type SimulationOutcome, type SimWrite } from '../../../src/estimating/simulate.js';

/* ==== Inputs ==== */

const BATCH = 25;

/** A model far above any load here: 16 partitions of 1000 WCU/s, 300 s of burst. */
const BIG: PartitionModelOptions = { tableWcu: 16_000, partitions: 16 };
/** Four partitions of 100 WCU/s and no saved-up capacity beyond one second (what the estimate uses). */
const SMALL: PartitionModelOptions = { tableWcu: 400, partitions: 4, burstSeconds: 0 };

/** `count` distinct keys that land on `partition` of `partitions`. */
function keysOn(partition: number, partitions: number, count: number, prefix = 'k'): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    const key = `${prefix}${i}`;
    if (partitionOf(key, partitions) === partition) keys.push(key);
  }
  return keys;
}

/** `batches` batches of 25 one-unit writes, every write to a key of its own. */
function spread(batches: number, prefix = 'k'): SimWrite[][] {
  let n = 0;
  return Array.from({ length: batches }, () => Array.from({ length: BATCH }, () => ({ key: `${prefix}${n++}`, units: 1 })));
}

/** One-unit writes cycling through `keys`, `count` in all. */
function cycling(keys: readonly string[], count: number): SimWrite[] {
  return Array.from({ length: count }, (_, i) => ({ key: keys[i % keys.length]!, units: 1 }));
}

/** Writes cut into batches of 25, in order, as the batcher does. */
function batchesOf(writes: readonly SimWrite[]): SimWrite[][] {
  const out: SimWrite[][] = [];
  for (let i = 0; i < writes.length; i += BATCH) out.push(writes.slice(i, i + BATCH));
  return out;
}

function simulate(options: Partial<SimulationOptions> & Pick<SimulationOptions, 'model'>, batches: readonly SimWrite[][]): SimulationOutcome {
  const simulator = new LoadSimulator({ backoff: DEFAULT_BACKOFF, ...options });
  for (const batch of batches) simulator.push(batch);
  return simulator.finish();
}

/* ==== Reading an outcome ==== */

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const acceptedUnits = (o: SimulationOutcome) => sum(o.perSecond.map((s) => sum(s.acceptedWcu)));
const refusedUnits = (o: SimulationOutcome) => sum(o.perSecond.map((s) => sum(s.throttledWcu)));
/** Units accepted by the model in each whole second, all partitions together. */
const acceptedPerSecond = (o: SimulationOutcome) => o.perSecond.map((s) => sum(s.acceptedWcu));

describe('LoadSimulator without pacing', () => {
  it.each([
    // concurrency, latencyMs, batches: the slots turn over once per call, so ceil(batches / slots) calls in a row.
    [1, 20, 10],
    [8, 20, 10],
    [8, 20, 16],
    [8, 20, 17],
    [8, 50, 80],
    [3, 7, 10],
    [8, 0, 40],
    [1, 0, 5],
  ])('concurrency %i, latency %i ms, %i batches -> ceil(batches / concurrency) x latency, no throttles', (concurrency, latencyMs, batches) => {
    const outcome = simulate({ model: BIG, concurrency, latencyMs }, spread(batches));
    expect(outcome.seconds).toBeCloseTo((Math.ceil(batches / concurrency) * latencyMs) / 1000, 9);
    expect(outcome).toMatchObject({ throttledItems: 0, retries: 0, givenUp: 0, partitions: 16, partitionWcu: 1000 });
    expect(acceptedUnits(outcome)).toBe(batches * BATCH);
  });

  it('defaults to 8 slots and 20 ms calls', () => {
    expect(simulate({ model: BIG }, spread(17)).seconds).toBeCloseTo(0.06, 9);
  });

  it('one slot of 100 ms calls sends 10 batches a second: the model sees each send at its own time', () => {
    const outcome = simulate({ model: BIG, concurrency: 1, latencyMs: 100 }, spread(20));
    expect(outcome.seconds).toBeCloseTo(2, 9);
    expect(acceptedPerSecond(outcome)).toEqual([250, 250]);
  });

  it('an empty batch is not a call', () => {
    const simulator = new LoadSimulator({ model: BIG, backoff: DEFAULT_BACKOFF });
    simulator.push([]);
    expect(simulator.finish()).toMatchObject({ seconds: 0, throttledItems: 0, retries: 0, givenUp: 0, perSecond: [] });
  });
});

describe('LoadSimulator with pacing at the target', () => {
  it.each([
    // target WCU/s, batches: units / target is the duration (the table budget starts empty, so no first burst).
    [100, 20],
    [400, 80],
    [2000, 400],
  ])('target %i WCU/s, %i batches on a big model: duration = units / target, never refused, at most target + one batch a second', (targetWcu, batches) => {
    const units = batches * BATCH;
    const outcome = simulate({ model: BIG, rate: { targetWcu }, latencyMs: 20 }, spread(batches));
    expect(Math.abs(outcome.seconds - units / targetWcu)).toBeLessThanOrEqual(BATCH / targetWcu + 0.02);
    expect(outcome).toMatchObject({ throttledItems: 0, retries: 0, givenUp: 0 });
    expect(acceptedUnits(outcome)).toBe(units);
    for (const perSecond of acceptedPerSecond(outcome)) expect(perSecond).toBeLessThanOrEqual(targetWcu + BATCH);
  });

  it.each([
    // keyWcu, writes (all to one key), target: the key's budget binds, not the table's.
    [25, 400, 1000],
    [50, 400, 1000],
    [100, 400, 1000],
    [100, 1000, 400],
  ])('one key at --key-wcu %i below the target: %i writes take writes / keyWcu, and its partition (100 WCU/s) never refuses', (keyWcu, writes, targetWcu) => {
    const outcome = simulate({ model: SMALL, rate: { targetWcu, keyWcu }, latencyMs: 20 }, batchesOf(cycling(['hot'], writes)));
    expect(Math.abs(outcome.seconds - writes / keyWcu)).toBeLessThanOrEqual(BATCH / keyWcu + 0.02);
    expect(outcome).toMatchObject({ throttledItems: 0, retries: 0, givenUp: 0 });
    expect(acceptedUnits(outcome)).toBe(writes);
  });

  it('one key at --key-wcu above its partition rate is refused, and the key slows down', () => {
    const outcome = simulate({ model: SMALL, rate: { targetWcu: 1000, keyWcu: 400 } }, batchesOf(cycling(['hot'], 1000)));
    expect(outcome.throttledItems).toBeGreaterThan(0);
    expect(outcome.givenUp).toBe(0);
    expect(acceptedUnits(outcome)).toBe(1000);
    // The partition sustains 100 WCU/s (a second of it saved up at the start), so no faster than that.
    expect(outcome.seconds).toBeGreaterThanOrEqual(1000 / 100 - 1);
  });

  it('hot keys waiting on --key-wcu do not push the table above the target (table budget reserved after the key wait, as the pacer does)', () => {
    // 8 batches, each of 25 writes to one hot key of its own (2.4 s of waiting at --key-wcu 10), then spread
    // batches paced at 100 WCU/s. The pacer (io/ratePacer.ts) reserves the table only once a batch's keys
    // allow it, so no second sends more than the target plus one batch. Reserving the table before the key
    // wait lets each hot batch take table budget at time 0 and send 2.4 s later, on top of the spread batches
    // paced at the target in the meantime: 200 WCU in second 3.
    const hot = Array.from({ length: 8 }, (_, h) => cycling([`hot${h}`], BATCH));
    const outcome = simulate({ model: BIG, rate: { targetWcu: 100, keyWcu: 10 }, concurrency: 16 }, [...hot, ...spread(40, 'cold')]);
    expect(outcome.throttledItems).toBe(0);
    for (const perSecond of acceptedPerSecond(outcome)) expect(perSecond).toBeLessThanOrEqual(100 + BATCH);
  });
});

describe('LoadSimulator: throttles, resends and giving up', () => {
  // Two keys on each of the 4 partitions, so that interleaving them uses every partition evenly.
  const keys = [0, 1, 2, 3].flatMap((p) => keysOn(p, 4, 2));
  const sorted = batchesOf(keys.flatMap((key) => cycling([key], 125)));
  const interleaved = batchesOf(cycling(keys, 1000));
  const ideal = 1000 / 400;

  it('sorted input unpaced: whole batches on one partition are refused, resent, and take longer than the table rate allows', () => {
    const outcome = simulate({ model: SMALL }, sorted);
    expect(outcome.throttledItems).toBeGreaterThan(500);
    expect(outcome.retries).toBeGreaterThan(0);
    expect(outcome.givenUp).toBe(0);
    expect(outcome.seconds).toBeGreaterThan(1.2 * ideal);
    expect(acceptedUnits(outcome)).toBe(1000);
  });

  it('the same writes interleaved across keys and paced at the table rate: far fewer throttles, about the ideal time', () => {
    const unpaced = simulate({ model: SMALL }, sorted);
    const paced = simulate({ model: SMALL, rate: { targetWcu: 400 } }, interleaved);
    expect(paced.throttledItems).toBeLessThanOrEqual(unpaced.throttledItems / 20);
    expect(paced.givenUp).toBe(0);
    expect(Math.abs(paced.seconds - ideal)).toBeLessThanOrEqual(BATCH / 400 + 0.02);
    expect(paced.seconds).toBeLessThan(unpaced.seconds);
  });

  it('throttledItems counts every refusal: it equals the refused units of one-unit writes, resends included', () => {
    const outcome = simulate({ model: SMALL }, sorted);
    expect(outcome.throttledItems).toBe(refusedUnits(outcome));
    // 1000 writes, more refusals than that: writes refused more than once count each time.
    expect(outcome.throttledItems).toBeGreaterThan(1000);
    // A retry is one resend call, of all the writes its call had refused.
    expect(outcome.retries).toBeLessThan(outcome.throttledItems);
  });

  it.each([
    // maxAttempts, throttledItems, retries, givenUp, seconds.
    // One write on a 1-WCU table that starts empty: it can go after 1 s. Sends at 0, 45, 115, 235, 455, 875
    // (20 ms call + the mean of full jitter: 25, 50, 100, 200, 400 ms) are refused; the one at 1695 ms is taken.
    [1, 1, 0, 1, 0.02],
    [3, 3, 2, 1, 0.135],
    [6, 6, 5, 1, 0.895],
    [7, 6, 6, 0, 1.715],
    [15, 6, 6, 0, 1.715],
  ])('maxAttempts %i: %i refusals, %i resends, %i given up, %f s', (maxAttempts, throttledItems, retries, givenUp, seconds) => {
    const outcome = simulate({ model: { tableWcu: 1, burstSeconds: 0, initialSeconds: 0 }, maxAttempts }, [[{ key: 'a', units: 1 }]]);
    expect(outcome).toMatchObject({ throttledItems, retries, givenUp });
    expect(outcome.seconds).toBeCloseTo(seconds, 9);
    expect(acceptedUnits(outcome)).toBe(1 - givenUp);
  });

  it('maxAttempts 1: every refused write is given up at once', () => {
    const outcome = simulate({ model: SMALL, maxAttempts: 1 }, sorted);
    expect(outcome.retries).toBe(0);
    expect(outcome.givenUp).toBe(outcome.throttledItems);
    expect(outcome.givenUp).toBeGreaterThan(0);
    expect(acceptedUnits(outcome) + outcome.givenUp).toBe(1000);
  });

  it('items far above the table rate are let through one at a time in debt, so most of a large load is given up at the default 15 sends', () => {
    // 200 items of 10 WCU on a 1-WCU table: each one accepted leaves the bucket 9 units in debt, 10 s to repay,
    // while 15 sends with mean backoff span about 30 s. Nothing is refused forever: the first items do land.
    const batches = Array.from({ length: 8 }, (_, b) => Array.from({ length: BATCH }, (_, i) => ({ key: `k${b}-${i}`, units: 10 })));
    const outcome = simulate({ model: { tableWcu: 1, burstSeconds: 0 } }, batches);
    expect(outcome.givenUp).toBeGreaterThan(150);
    expect(acceptedUnits(outcome)).toBeGreaterThan(0);
    expect(acceptedUnits(outcome) / 10 + outcome.givenUp).toBe(200);
  });

  it('is deterministic: the same input gives the same outcome', () => {
    const run = () => simulate({ model: SMALL, rate: { targetWcu: 600 } }, sorted);
    expect(run()).toEqual(run());
    expect(simulate({ model: SMALL }, sorted)).toEqual(simulate({ model: SMALL }, sorted));
  });
});

/* ==== heatOf, throttleFreeRate ==== */

/** An outcome of one row per whole second: each partition's accepted (and refused) units in that second. */
function outcomeOf(
  partitionWcu: number,
  rows: ReadonlyArray<{ accepted: number[]; refused?: number[] }>,
  partitions = rows[0]?.accepted.length ?? 1,
): Pick<SimulationOutcome, 'perSecond' | 'partitionWcu' | 'partitions'> {
  return {
    partitionWcu,
    partitions,
    perSecond: rows.map((row, second) => ({ second, acceptedWcu: row.accepted, throttledWcu: row.refused ?? new Array<number>(partitions).fill(0) })),
  };
}

const steady = (seconds: number, accepted: number[]) => Array.from({ length: seconds }, () => ({ accepted }));

describe('heatOf', () => {
  it.each([
    // seconds, maxBuckets, bucketSeconds, buckets
    [0, 60, 1, 0],
    [1, 60, 1, 1],
    [60, 60, 1, 60],
    [61, 60, 2, 31],
    [120, 60, 2, 60],
    [121, 60, 3, 41],
    [600, 60, 10, 60],
    [3600, 60, 60, 60],
    [10, 4, 3, 4],
  ])('%i s with at most %i buckets -> buckets of %i s, %i of them', (seconds, maxBuckets, bucketSeconds, buckets) => {
    const heat = heatOf(outcomeOf(100, steady(seconds, [100, 50]), 2), maxBuckets);
    expect(heat.bucketSeconds).toBe(bucketSeconds);
    expect(heat.partitions).toHaveLength(2);
    for (const row of heat.partitions) expect(row).toHaveLength(buckets);
    expect(buckets).toBeLessThanOrEqual(maxBuckets);
  });

  it('a partition used at its rate reads 1, one at half reads 0.5, in whole buckets', () => {
    const heat = heatOf(outcomeOf(100, steady(120, [100, 50, 0])));
    expect(heat.bucketSeconds).toBe(2);
    expect(heat.partitions[0]!.every((h) => h === 1)).toBe(true);
    expect(heat.partitions[1]!.every((h) => h === 0.5)).toBe(true);
    expect(heat.partitions[2]!.every((h) => h === 0)).toBe(true);
  });

  it('refused units count as heat: demand, not only what was taken', () => {
    const heat = heatOf(outcomeOf(100, [{ accepted: [100, 0], refused: [150, 30] }]));
    expect(heat.partitions).toEqual([[2.5], [0.3]]);
  });

  it('from a simulation: the one partition written at its rate reads about 1, the others 0', () => {
    const outcome = simulate({ model: SMALL, rate: { targetWcu: 100 } }, batchesOf(cycling(keysOn(2, 4, 10), 1000)));
    expect(outcome.throttledItems).toBe(0);
    const heat = heatOf(outcome);
    expect(heat.bucketSeconds).toBe(1);
    // The first second starts the budget empty and the last one is partial; the ones between are full.
    const middle = heat.partitions[2]!.slice(1, -1);
    expect(middle.length).toBeGreaterThanOrEqual(8);
    for (const h of middle) expect(h).toBeCloseTo(1, 6);
    for (const p of [0, 1, 3]) expect(heat.partitions[p]!.every((h) => h === 0)).toBe(true);
  });

  it.each([60, 3, 1])('from a throttled simulation with at most %i buckets: the heat adds up to the units accepted plus refused', (maxBuckets) => {
    const keys = [0, 1, 2, 3].flatMap((p) => keysOn(p, 4, 2));
    const outcome = simulate({ model: SMALL }, batchesOf(keys.flatMap((key) => cycling([key], 125))));
    const heat = heatOf(outcome, maxBuckets);
    const capacity = outcome.partitionWcu * heat.bucketSeconds;
    const units = sum(heat.partitions.map((row) => sum(row))) * capacity;
    expect(units).toBeCloseTo(1000 + outcome.throttledItems, 6);
    expect(heat.partitions[0]!.length).toBeLessThanOrEqual(maxBuckets);
  });
});

describe('throttleFreeRate', () => {
  it.each([
    ['every partition at half its rate', steady(5, [50, 50, 50, 50]), 200, 400],
    ['one partition at its rate, the rest idle', steady(5, [100, 0, 0, 0]), 100, 100],
    ['one partition at twice its rate', steady(5, [200, 10, 10, 10]), 230, 115],
    ['the busiest partition-second decides', [{ accepted: [50, 50] }, { accepted: [80, 20] }, { accepted: [50, 50] }, { accepted: [1, 1] }], 100, 125],
    ['refused units are demand', [{ accepted: [50, 50], refused: [50, 0] }, { accepted: [0, 0] }], 100, 100],
    ['the last, partial second is left out', [{ accepted: [50, 50] }, { accepted: [50, 50] }, { accepted: [100, 100] }], 100, 200],
    ['a single second is used, partial or not', [{ accepted: [25, 25] }], 50, 200],
    ['no demand at all: the simulated rate', steady(3, [0, 0]), 300, 300],
  ])('%s', (_label, rows, simulatedWcu, expected) => {
    expect(throttleFreeRate(outcomeOf(100, rows), simulatedWcu)).toBeCloseTo(expected, 9);
  });

  it('from a simulation: uniform use at half the capacity -> about twice the simulated rate', () => {
    // Keys cycling through the partitions in turn, so each partition takes a quarter of every batch.
    const keys = [0, 1, 2, 3].flatMap((p) => keysOn(p, 4, 1));
    const outcome = simulate({ model: SMALL, rate: { targetWcu: 200 } }, batchesOf(cycling(keys, 2000)));
    expect(outcome.throttledItems).toBe(0);
    const rate = throttleFreeRate(outcome, 200);
    expect(rate).toBeGreaterThan(0.9 * 400);
    expect(rate).toBeLessThanOrEqual(400 * 1.0000001);
  });

  it('from a simulation: one partition written at its rate -> about the simulated rate', () => {
    const outcome = simulate({ model: SMALL, rate: { targetWcu: 100 } }, batchesOf(cycling(keysOn(1, 4, 10), 1000)));
    expect(outcome.throttledItems).toBe(0);
    expect(throttleFreeRate(outcome, 100)).toBeCloseTo(100, 6);
  });
});
