import { describe, expect, it } from 'vitest';
import {
  PARTITION_MAX_BYTES,
  PartitionModel,
  partitionCount,
  partitionOf,
  type AdmitResult,
  type ModelWrite,
  type PartitionModelOptions,
} from '../../../src/estimating/partitionModel.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

const GiB = 1024 ** 3;

/** `count` distinct keys that land on `partition` of `partitions`. */
function keysOn(partition: number, partitions: number, count: number, prefix = 'k'): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    const key = `${prefix}${i}`;
    if (partitionOf(key, partitions) === partition) keys.push(key);
  }
  return keys;
}

interface Offered {
  /** Key of each write, in order; the stream cycles through them. */
  keys: string[];
  /** Writes per tick. */
  perTick: number;
  tickMs: number;
  fromMs: number;
  toMs: number;
  wcu?: number;
}

/** Drives one stream through the model, one admit() call per tick; returns every answer with its key. */
function drive(model: PartitionModel, offered: Offered): Array<{ key: string; at: number; result: AdmitResult }> {
  const out: Array<{ key: string; at: number; result: AdmitResult }> = [];
  let next = 0;
  for (let at = offered.fromMs; at < offered.toMs; at += offered.tickMs) {
    const writes: ModelWrite[] = [];
    for (let i = 0; i < offered.perTick; i++) {
      writes.push({ partitionKey: offered.keys[next % offered.keys.length]!, wcu: offered.wcu ?? 1 });
      next++;
    }
    const results = model.admit(at, writes);
    results.forEach((result, i) => out.push({ key: writes[i]!.partitionKey, at, result }));
  }
  return out;
}

const refused = (answers: Array<{ result: AdmitResult }>) => answers.filter((a) => !a.result.accepted);

describe('partitionCount', () => {
  it.each([
    // AWS "Best Practices for Tables", "Initial Allocation of Partitions" and "Throughput Capacity Per Partition".
    [{ rcu: 1000, wcu: 500 }, 1],
    [{ rcu: 1000, wcu: 1000 }, 2],
    [{ rcu: 5000, wcu: 2000 }, 4],
    // The initial formula, not the doubling on a later increase (AWS's 8,000 RCU case is a doubling to 8).
    [{ rcu: 8000, wcu: 2000 }, 5],
    // Exact multiples do not round up on a float's last bit.
    [{ rcu: 3000, wcu: 0 }, 1],
    [{ rcu: 0, wcu: 3000 }, 3],
    [{ rcu: 9000, wcu: 3000 }, 6],
    [{ rcu: 1000, wcu: 2000 / 3 }, 1],
    [{ wcu: 0 }, 1],
    [{ wcu: 1 }, 1],
    [{ wcu: 1001 }, 2],
    [{ wcu: 40_000 }, 40],
  ])('%o -> %i', (opts, expected) => {
    expect(partitionCount(opts)).toBe(expected);
  });

  it.each([
    [{ wcu: 100, sizeBytes: 10 * GiB }, 1],
    [{ wcu: 100, sizeBytes: 10 * GiB + 1 }, 2],
    [{ wcu: 100, sizeBytes: 25 * GiB }, 3],
    // Size and throughput: the larger count wins (80 GB on 8 partitions, as in AWS's example).
    [{ rcu: 8000, wcu: 2000, sizeBytes: 80 * GiB }, 8],
    [{ rcu: 5000, wcu: 2000, sizeBytes: 1 * GiB }, 4],
  ])('by size %o -> %i', (opts, expected) => {
    expect(partitionCount(opts)).toBe(expected);
    expect(PARTITION_MAX_BYTES).toBe(10 * GiB);
  });

  it.each([
    // partitionMaxWcu scales 1000 -> M and 3000 -> 3M: the seed's examples divided by 10.
    [{ rcu: 100, wcu: 50, partitionMaxWcu: 100 }, 1],
    [{ rcu: 100, wcu: 100, partitionMaxWcu: 100 }, 2],
    [{ rcu: 500, wcu: 200, partitionMaxWcu: 100 }, 4],
    [{ wcu: 400, partitionMaxWcu: 100 }, 4],
    [{ wcu: 401, partitionMaxWcu: 100 }, 5],
    [{ wcu: 30, partitionMaxWcu: 10 }, 3],
  ])('scaled %o -> %i', (opts, expected) => {
    expect(partitionCount(opts)).toBe(expected);
  });

  it('rejects nonsense', () => {
    expect(() => partitionCount({ wcu: -1 })).toThrow(RangeError);
    expect(() => partitionCount({ wcu: Number.NaN })).toThrow(RangeError);
    expect(() => partitionCount({ wcu: 10, partitionMaxWcu: 0 })).toThrow(RangeError);
    expect(() => partitionCount({ wcu: 10, sizeBytes: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
});

describe('partitionOf', () => {
  it('is stable: the same key lands on the same partition, across versions too', () => {
    // Golden values: a change to the hash moves every key and must be a deliberate decision.
    const golden = ['user-1', 'user-2', '2014-07-09.1', '42', 'AQID', 'é🙂', ''].map((k) => partitionOf(k, 1024));
    expect(golden).toEqual([478, 203, 409, 163, 597, 850, 684]);
    for (let i = 0; i < 1000; i++) expect(partitionOf(`key${i}`, 7)).toBe(partitionOf(`key${i}`, 7));
  });

  it('stays in range and gives one partition everything', () => {
    for (let i = 0; i < 2000; i++) {
      const p = partitionOf(`x${i}`, 13);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(13);
      expect(Number.isInteger(p)).toBe(true);
      expect(partitionOf(`x${i}`, 1)).toBe(0);
    }
  });

  it('is roughly uniform over many keys (chi-square), for sequential and random-looking keys', () => {
    const partitions = 16;
    const n = 64_000;
    const random = mulberry32(7);
    for (const make of [(i: number) => `user-${i}`, (i: number) => String(i), () => random().toString(36).slice(2)]) {
      const counts = new Array<number>(partitions).fill(0);
      for (let i = 0; i < n; i++) counts[partitionOf(make(i), partitions)]!++;
      const expected = n / partitions;
      const chi2 = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
      // 15 degrees of freedom: the 99.9th percentile is 37.7.
      expect(chi2).toBeLessThan(37.7);
      for (const c of counts) expect(Math.abs(c - expected) / expected).toBeLessThan(0.05);
    }
  });

  it('owns contiguous ranges: doubling the partition count splits each partition in two', () => {
    for (let i = 0; i < 5000; i++) {
      const key = `split-${i}`;
      expect(partitionOf(key, 16) >> 1).toBe(partitionOf(key, 8));
      expect(Math.floor(partitionOf(key, 12) / 3)).toBe(partitionOf(key, 4));
    }
  });
});

describe('PartitionModel construction', () => {
  it('derives partitions and the per-partition rate', () => {
    expect(new PartitionModel({ tableWcu: 500, tableRcu: 1000 })).toMatchObject({ partitions: 1, partitionWcu: 500 });
    expect(new PartitionModel({ tableWcu: 2000, tableRcu: 5000 })).toMatchObject({ partitions: 4, partitionWcu: 500 });
    expect(new PartitionModel({ tableWcu: 400, partitionMaxWcu: 100 })).toMatchObject({ partitions: 4, partitionWcu: 100 });
    // More partitions than the throughput needs (size, or a fixed count): each gets less.
    expect(new PartitionModel({ tableWcu: 100, sizeBytes: 35 * GiB })).toMatchObject({ partitions: 4, partitionWcu: 25 });
    expect(new PartitionModel({ tableWcu: 200, partitions: 8 })).toMatchObject({ partitions: 8, partitionWcu: 25 });
    // Fewer partitions than the throughput needs: each is capped at the partition maximum.
    expect(new PartitionModel({ tableWcu: 5000, partitions: 2 })).toMatchObject({ partitions: 2, partitionWcu: 1000 });
    expect(new PartitionModel({ tableWcu: 100, partitions: 4, adaptiveCapacity: true })).toMatchObject({ partitionWcu: 1000 });
  });

  it.each<[string, PartitionModelOptions]>([
    ['zero WCU', { tableWcu: 0 }],
    ['negative burst', { tableWcu: 10, burstSeconds: -1 }],
    ['fractional partitions', { tableWcu: 10, partitions: 1.5 }],
    ['zero partitions', { tableWcu: 10, partitions: 0 }],
    ['NaN initial', { tableWcu: 10, initialSeconds: Number.NaN }],
  ])('rejects %s', (_name, options) => {
    expect(() => new PartitionModel(options)).toThrow(RangeError);
  });

  it('refuses time that goes backwards, and bad write units', () => {
    const model = new PartitionModel({ tableWcu: 100 });
    model.admitOne(1000, 'a', 1);
    model.admitOne(1000, 'a', 1);
    expect(() => model.admitOne(999, 'a', 1)).toThrow(RangeError);
    expect(() => model.admit(Number.NaN, [])).toThrow(RangeError);
    expect(() => model.admitOne(2000, 'a', -1)).toThrow(RangeError);
    expect(() => model.admitToPartition(2000, 1, 1)).toThrow(RangeError);
  });
});

describe('PartitionModel admission', () => {
  it('a steady stream at exactly the table rate, spread evenly over partitions, is never throttled', () => {
    // 4 partitions of 100 WCU/s, no initial tokens: every write is paid for by the refill just before it.
    const model = new PartitionModel({ tableWcu: 400, partitionMaxWcu: 100, initialSeconds: 0 });
    expect(model.partitions).toBe(4);
    const perPartition = [0, 1, 2, 3].map((p) => keysOn(p, 4, 25));
    // Interleave so each tick of 4 writes hits each partition once: 100 WCU/s per partition, 400 in all.
    const keys = perPartition[0]!.flatMap((_, i) => perPartition.map((list) => list[i]!));
    const answers = drive(model, { keys, perTick: 4, tickMs: 10, fromMs: 10, toMs: 120_010 });
    expect(answers).toHaveLength(48_000);
    expect(refused(answers)).toHaveLength(0);
    const stats = model.stats();
    expect(stats.acceptedWcu).toBe(48_000);
    for (const second of stats.perSecond.slice(1, 120)) expect(second.acceptedWcu).toEqual([100, 100, 100, 100]);

    // The same stream 20% faster cannot be sustained: the control that the test above can fail.
    const faster = new PartitionModel({ tableWcu: 400, partitionMaxWcu: 100, initialSeconds: 0 });
    const over = drive(faster, { keys, perTick: 4, tickMs: 25 / 3, fromMs: 10, toMs: 20_010 });
    expect(refused(over).length).toBeGreaterThan(over.length * 0.15);
  });

  it('a stream at 90% of the table rate over many random keys is (almost) never throttled', () => {
    const random = mulberry32(11);
    // Enough keys that no partition's share strays far from its fifteenth (hashing, not balancing, spreads them).
    const keys = Array.from({ length: 20_000 }, () => `u${Math.floor(random() * 1e9)}`);
    // 15 partitions (RCU counts too) of 66.7 WCU/s: below the 100 WCU/s ceiling, so a second with more
    // than its share of writes draws on burst instead of meeting the ceiling. (A table whose partitions
    // each run at the ceiling throttles random traffic in every busier-than-average second.)
    const model = new PartitionModel({ tableWcu: 1000, tableRcu: 1500, partitionMaxWcu: 100 });
    expect(model.partitions).toBe(15);
    // 9 writes every 10 ms = 900 WCU/s for 60 s.
    const answers = drive(model, { keys, perTick: 9, tickMs: 10, fromMs: 0, toMs: 60_000 });
    expect(refused(answers).length).toBeLessThanOrEqual(answers.length * 0.001);

    // The control: one key in ten carries the stream's load, so its partition is well over its share.
    const skewed = new PartitionModel({ tableWcu: 1000, tableRcu: 1500, partitionMaxWcu: 100 });
    const hotKeys = keys.slice(0, 9).concat(keys[0]!, keys[0]!, keys[0]!);
    expect(refused(drive(skewed, { keys: hotKeys, perTick: 9, tickMs: 10, fromMs: 0, toMs: 20_000 })).length).toBeGreaterThan(0);
  });

  it('one key over its partition rate is throttled with scope "partition" while the table has room', () => {
    const model = new PartitionModel({ tableWcu: 400, partitionMaxWcu: 100, initialSeconds: 0, burstSeconds: 1 });
    const [hot] = keysOn(2, 4, 1);
    // 3 WCU every 20 ms = 150 WCU/s on a partition that sustains 100.
    const answers = drive(model, { keys: [hot!], perTick: 3, tickMs: 20, fromMs: 20, toMs: 10_020 });
    const refusals = refused(answers);
    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals.map((a) => (a.result.accepted ? 'accepted' : a.result.scope)))).toEqual(new Set(['partition']));
    const stats = model.stats();
    // It gets its 100 WCU/s (1000 in 10 s) and no more, while the table used only a quarter of its 4000.
    expect(stats.perPartition[2]!.acceptedWcu).toBeGreaterThanOrEqual(999);
    expect(stats.perPartition[2]!.acceptedWcu).toBeLessThanOrEqual(1001);
    expect(stats.throttledByScope).toEqual({ partition: { items: refusals.length, wcu: refusals.length }, table: { items: 0, wcu: 0 } });
    // Another partition's key is accepted at the same instant: the table had room.
    const [cold] = keysOn(0, 4, 1);
    expect(model.admitOne(10_020, cold!, 1).accepted).toBe(true);
  });

  it('burst lets an idle partition run above its rate for a while, but never above partitionMaxWcu in a second', () => {
    // 4 partitions of 50 WCU/s (a 200 WCU table), ceiling 100 WCU/s.
    const model = new PartitionModel({ tableWcu: 200, partitions: 4, partitionMaxWcu: 100, initialSeconds: 1 });
    expect(model.partitionWcu).toBe(50);
    const [key] = keysOn(1, 4, 1);
    // Idle 20 s (50 + 20 × 50 = 1050 WCU saved), then 200 WCU/s offered for 40 s.
    const answers = drive(model, { keys: [key!], perTick: 2, tickMs: 10, fromMs: 20_000, toMs: 60_000 });
    const perSecond = model.stats().perSecond.map((s) => s.acceptedWcu[1]!);
    expect(perSecond).toHaveLength(60);
    for (const wcu of perSecond) expect(wcu).toBeLessThanOrEqual(100);
    // Above its 50 WCU/s: the ceiling binds while the burst lasts (1050 saved, draining at 50/s: ~21 s)...
    for (const wcu of perSecond.slice(20, 40)) expect(wcu).toBe(100);
    // ... then back to its sustained rate.
    for (const wcu of perSecond.slice(45, 60)) expect(wcu).toBeGreaterThanOrEqual(49);
    for (const wcu of perSecond.slice(45, 60)) expect(wcu).toBeLessThanOrEqual(51);
    const accepted = answers.length - refused(answers).length;
    expect(accepted).toBeGreaterThanOrEqual(1050 + 40 * 50 - 2);
    expect(accepted).toBeLessThanOrEqual(1050 + 40 * 50 + 2);
  });

  it('retains at most burstSeconds of unused capacity', () => {
    const model = new PartitionModel({ tableWcu: 10, partitionMaxWcu: 100, burstSeconds: 5 });
    // Idle for an hour: 10 WCU/s × 5 s = 50 saved, not 36,000. One write per ms for 10 s, all at once per ms.
    let accepted = 0;
    for (let t = 3_600_000; t < 3_610_000; t += 1) if (model.admitOne(t, 'k', 1).accepted) accepted++;
    expect(accepted).toBeGreaterThanOrEqual(50 + 100 - 1);
    expect(accepted).toBeLessThanOrEqual(50 + 100 + 1);
  });

  it('the table bucket throttles with scope "table" when partitions may take more than their share', () => {
    // Adaptive capacity: each partition may run at up to 100 WCU/s, the table has 100 WCU/s in all.
    const model = new PartitionModel({ tableWcu: 100, partitions: 4, partitionMaxWcu: 100, adaptiveCapacity: true, initialSeconds: 0, burstSeconds: 1 });
    const keys = [keysOn(0, 4, 1)[0]!, keysOn(3, 4, 1)[0]!];
    // Two keys on two partitions, 80 WCU/s each: each under its ceiling, together over the table.
    const answers = drive(model, { keys, perTick: 4, tickMs: 25, fromMs: 25, toMs: 10_025 });
    const refusals = refused(answers);
    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals.map((a) => (a.result.accepted ? 'accepted' : a.result.scope)))).toEqual(new Set(['table']));
    const stats = model.stats();
    expect(stats.acceptedWcu).toBeGreaterThanOrEqual(999);
    expect(stats.acceptedWcu).toBeLessThanOrEqual(1001);
    expect(stats.throttledByScope.table.items).toBe(refusals.length);

    // Without adaptive capacity the same load meets each partition's even share (25 WCU/s) first.
    const even = new PartitionModel({ tableWcu: 100, partitions: 4, partitionMaxWcu: 100, initialSeconds: 0, burstSeconds: 1 });
    const evenAnswers = drive(even, { keys, perTick: 4, tickMs: 25, fromMs: 25, toMs: 10_025 });
    expect(even.stats().throttledByScope.table.items).toBe(0);
    expect(even.stats().throttledByScope.partition.items).toBe(refused(evenAnswers).length);
    expect(even.stats().acceptedWcu).toBeLessThanOrEqual(501);
  });

  it('admits a write larger than a bucket from a full bucket and makes the partition pay it back', () => {
    // A 10 WCU/s partition and 25 WCU items: possible, at 10 WCU/s on average.
    const model = new PartitionModel({ tableWcu: 10, partitionMaxWcu: 10, burstSeconds: 1, initialSeconds: 1 });
    const accepted: number[] = [];
    for (let t = 0; t < 20_000; t += 100) if (model.admitOne(t, 'big', 25).accepted) accepted.push(t);
    expect(accepted.length).toBeGreaterThanOrEqual(7);
    expect(accepted.length).toBeLessThanOrEqual(9);
    // Never two in a row without the debt being repaid (2.5 s at 10 WCU/s).
    for (let i = 1; i < accepted.length; i++) expect(accepted[i]! - accepted[i - 1]!).toBeGreaterThanOrEqual(2000);
  });

  it('admits the writes of one call in order, each on its own; refused writes spend nothing', () => {
    const model = new PartitionModel({ tableWcu: 10, partitionMaxWcu: 100, initialSeconds: 1 });
    const results = model.admit(0, [
      { partitionKey: 'a', wcu: 4 },
      { partitionKey: 'a', wcu: 7 }, // 4 + 7 > 10: refused
      { partitionKey: 'a', wcu: 6 }, // fits in what the refused write left
      { partitionKey: 'a', wcu: 0.5 },
    ]);
    expect(results.map((r) => r.accepted)).toEqual([true, false, true, false]);
  });

  it('per-second stats add up to the totals, per partition and per scope', () => {
    const random = mulberry32(2024);
    const keys = Array.from({ length: 50 }, (_, i) => `key-${i}`);
    const model = new PartitionModel({ tableWcu: 300, partitionMaxWcu: 100, burstSeconds: 3, adaptiveCapacity: false });
    let t = 0;
    let items = 0;
    let wcuOffered = 0;
    for (let call = 0; call < 3000; call++) {
      t += Math.floor(random() * 20);
      // Skewed: a third of the writes go to one key.
      const writes = Array.from({ length: 1 + Math.floor(random() * 25) }, () => ({
        partitionKey: random() < 0.33 ? 'key-0' : keys[Math.floor(random() * keys.length)]!,
        wcu: 1 + Math.floor(random() * 4),
      }));
      items += writes.length;
      wcuOffered += writes.reduce((n, w) => n + w.wcu, 0);
      model.admit(t, writes);
    }
    const stats = model.stats();
    expect(stats.acceptedItems + stats.throttledItems).toBe(items);
    expect(stats.acceptedWcu + stats.throttledWcu).toBe(wcuOffered);
    expect(stats.throttledItems).toBeGreaterThan(0);
    expect(stats.acceptedItems).toBeGreaterThan(0);
    expect(stats.perSecond).toHaveLength(Math.floor(t / 1000) + 1);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    for (let p = 0; p < stats.partitions; p++) {
      expect(sum(stats.perSecond.map((s) => s.acceptedWcu[p]!))).toBe(stats.perPartition[p]!.acceptedWcu);
      expect(sum(stats.perSecond.map((s) => s.throttledWcu[p]!))).toBe(stats.perPartition[p]!.throttledWcu);
    }
    expect(sum(stats.perPartition.map((c) => c.acceptedItems))).toBe(stats.acceptedItems);
    expect(stats.throttledByScope.partition.wcu + stats.throttledByScope.table.wcu).toBe(stats.throttledWcu);
    stats.perSecond.forEach((s, i) => {
      expect(s.second).toBe(i);
      for (const wcu of s.acceptedWcu) expect(wcu).toBeLessThanOrEqual(100);
    });
  });

  it('is deterministic: the same calls give the same answers and stats', () => {
    const run = () => {
      const random = mulberry32(5);
      const model = new PartitionModel({ tableWcu: 50, partitionMaxWcu: 20 });
      const answers: boolean[] = [];
      for (let t = 0; t < 5000; t += 7) answers.push(model.admitOne(t, `k${Math.floor(random() * 30)}`, 1 + Math.floor(random() * 3)).accepted);
      return { answers, stats: model.stats() };
    };
    expect(run()).toEqual(run());
  });
});
