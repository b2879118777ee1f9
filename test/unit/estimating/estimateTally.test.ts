import { describe, expect, it } from 'vitest';
import { MAX_BATCH_REQUESTS } from '../../../src/batching/batch.js';
import { EstimateTally, type Simulator } from '../../../src/estimating/estimateTally.js';
import { IndexKeyTally } from '../../../src/estimating/indexKeyTally.js';
import { offlineTableInfo, parseGsi } from '../../../src/estimating/offlineTable.js';
import type { SimWrite, SimulationOutcome } from '../../../src/estimating/simulate.js';
import { createWriteCostModel } from '../../../src/pacing/writeCost.js';
import type { Item, PlannedWrite } from '../../../src/shared/types.js';

/* ==== Inputs ==== */

/** A table with one sparse GSI (projection ALL): an item lands in it only when it has `status`. */
const TABLE = offlineTableInfo('orders', { partitionKey: { name: 'customerId', type: 'S' }, gsis: [parseGsi('byStatus:status:S')] });
const COST = createWriteCostModel(TABLE);

/** A planned write of `size` bytes for key `key` (as written), optionally sharded from `unsharded`. */
function write(key: string, size: number, extra: Partial<Item> = {}, unsharded?: string): PlannedWrite {
  const w: PlannedWrite = {
    origin: { file: 'in.csv', line: 2, raw: `${key},...` },
    item: { customerId: key, ...extra },
    keyId: `S${key}`,
    partitionId: `S${key}`,
    size,
    wcu: Math.ceil(size / 1024),
  };
  if (unsharded !== undefined) w.unshardedKey = unsharded;
  return w;
}

/** A simulator that records what it is fed and answers finish() with `seconds`. */
function recorder(seconds: number): Simulator & { batches: SimWrite[][]; finished: number } {
  const outcome: SimulationOutcome = { seconds, throttledItems: 0, retries: 0, givenUp: 0, perSecond: [], partitionWcu: 1000, partitions: 1 };
  const sim = {
    batches: [] as SimWrite[][],
    finished: 0,
    push: (writes: SimWrite[]) => void sim.batches.push([...writes]),
    finish: () => {
      sim.finished++;
      return outcome;
    },
  };
  return sim;
}

function tally() {
  const simulators = { planned: recorder(2), input: recorder(3) };
  return { simulators, tally: new EstimateTally(COST, simulators) };
}

/* ==== Counting ==== */

describe('EstimateTally counts', () => {
  it('write units on the table and on each GSI the item lands in (a sparse GSI costs nothing without its key)', () => {
    const { tally: t } = tally();
    t.add(write('a', 1500, { status: 'open' })); // 2 on the table, 2 on byStatus
    t.add(write('b', 100)); // 1 on the table, not in byStatus
    expect(t.finish().writeUnits).toEqual({ table: 3, indexes: { byStatus: 2 }, total: 5 });
  });

  it('item sizes in bands and distinct keys, exactly while few', () => {
    const { tally: t } = tally();
    for (const [key, size] of [
      ['a', 100],
      ['a', 2000],
      ['b', 5000],
    ] as const)
      t.add(write(key, size));
    const totals = t.finish();
    expect(totals.sizes).toMatchObject({ totalBytes: 7100, maxBytes: 5000 });
    expect(totals.sizes.histogram.filter((b) => b.items > 0)).toEqual([
      { upToBytes: 1024, items: 1 },
      { upToBytes: 2048, items: 1 },
      { upToBytes: 8192, items: 1 },
    ]);
    expect(totals.distinct).toBe(2);
    expect(totals.distinctWritten).toBe(2);
  });

  it('hottest keys by write units, rows counted', () => {
    const { tally: t } = tally();
    for (let i = 0; i < 3; i++) t.add(write('hot', 3000));
    t.add(write('cold', 10));
    const { hottest } = t.finish();
    expect(hottest.top(2)).toEqual([
      { key: 'hot', weight: 9, error: 0, count: 3 },
      { key: 'cold', weight: 1, error: 0, count: 1 },
    ]);
    expect(hottest.rows).toBe(4);
    expect(hottest.total).toBe(10);
  });

  it('sharded writes: keys before sharding in hottest and distinct, keys as written in hottestWritten and distinctWritten', () => {
    const { tally: t } = tally();
    for (let i = 0; i < 8; i++) t.add(write(`hot#${i % 4}`, 10, {}, 'hot'));
    const totals = t.finish();
    expect(totals.distinct).toBe(1);
    expect(totals.distinctWritten).toBe(4);
    expect(totals.hottest.top(1)[0]).toMatchObject({ key: 'hot', count: 8 });
    expect(
      totals.hottestWritten
        .top(4)
        .map((k) => k.key)
        .sort(),
    ).toEqual(['hot#0', 'hot#1', 'hot#2', 'hot#3']);
  });
});

/* ==== The slim copy ==== */

describe('EstimateTally.add returns the slim copy the write order carries', () => {
  it('keys and cost only: no item, no raw text, size 0, wcu the full cost (table and GSIs)', () => {
    const { tally: t } = tally();
    const original = write('a', 1500, { status: 'open' });
    const slim = t.add(original);
    expect(slim).toEqual({ origin: { file: 'in.csv', line: 2, raw: '' }, item: {}, keyId: 'Sa', partitionId: 'Sa', size: 0, wcu: 4 });
    expect(original.item).toEqual({ customerId: 'a', status: 'open' });
    // One empty item for every slim copy of a table without GSIs: frozen, so a write to it throws instead of reaching every write.
    expect(t.add(write('b', 10)).item).toBe(slim.item);
    expect(() => {
      slim.item['x'] = 1;
    }).toThrow(TypeError);
  });

  it('keeps the key before sharding', () => {
    const { tally: t } = tally();
    expect(t.add(write('a#1', 10, {}, 'a')).unshardedKey).toBe('a');
  });
});

/* ==== The simulations' feed ==== */

describe('EstimateTally feeds the simulations', () => {
  it('the input order in batches of 25 as the writes come, the last partial batch at finish()', () => {
    const { tally: t, simulators } = tally();
    const count = 2 * MAX_BATCH_REQUESTS + 10;
    for (let i = 0; i < count; i++) t.add(write(`k${i}`, 1500, { status: 'open' }));
    expect(simulators.input.batches.map((b) => b.length)).toEqual([MAX_BATCH_REQUESTS, MAX_BATCH_REQUESTS]);
    t.finish();
    expect(simulators.input.batches.map((b) => b.length)).toEqual([MAX_BATCH_REQUESTS, MAX_BATCH_REQUESTS, 10]);
    expect(simulators.input.batches.flat().map((w) => w.key)).toEqual(Array.from({ length: count }, (_, i) => `k${i}`));
    expect(simulators.input.batches[0]![0]).toEqual({ key: 'k0', units: 4 });
    expect(simulators.planned.batches).toEqual([]);
  });

  it("the planned order batch by batch, keys as written and the slim copies' units", () => {
    const { tally: t, simulators } = tally();
    const slims = [t.add(write('a#0', 1500, { status: 'open' }, 'a')), t.add(write('b', 100))];
    t.addBatch(slims);
    t.addBatch([slims[0]!]);
    expect(simulators.planned.batches).toEqual([
      [
        { key: 'a#0', units: 4 },
        { key: 'b', units: 1 },
      ],
      [{ key: 'a#0', units: 4 }],
    ]);
  });

  it('finish() runs both simulations to their end once, and refuses a second call', () => {
    const { tally: t, simulators } = tally();
    const totals = t.finish();
    expect(totals.planned.seconds).toBe(2);
    expect(totals.input.seconds).toBe(3);
    expect(simulators.input.batches).toEqual([]);
    expect([simulators.planned.finished, simulators.input.finished]).toEqual([1, 1]);
    expect(() => t.finish()).toThrow(/bug/);
  });
});

describe('EstimateTally with a global order from statistics', () => {
  it('ignores batches and, at finish(), feeds the planned simulation the round-robin order in batches of 25', () => {
    const simulators = { planned: recorder(2), input: recorder(3) };
    const t = new EstimateTally(COST, simulators, { plannedOrder: { mode: 'round-robin' } });
    for (let i = 0; i < 30; i++) t.add(write(i < 20 ? 'hot' : `cold${i}`, 100));
    t.addBatch([write('ignored', 100)]);
    expect(simulators.planned.batches).toEqual([]);
    t.finish();
    const keys = simulators.planned.batches.map((b) => b.map((w) => w.key));
    expect(keys.map((b) => b.length)).toEqual([MAX_BATCH_REQUESTS, 5]);
    // Round 0: hot then the ten cold keys in order of first appearance; then hot's other 19 writes.
    expect(keys.flat().slice(0, 11)).toEqual(['hot', ...Array.from({ length: 10 }, (_, i) => `cold${i + 20}`)]);
    expect(keys.flat().slice(11)).toEqual(Array.from({ length: 19 }, () => 'hot'));
    expect(simulators.input.batches.flat()).toHaveLength(30);
  });

  it('refuses key statistics for a table with GSIs: they cannot carry each write GSI keys (estimate.ts materialises instead)', () => {
    const simulators = { planned: recorder(1), input: recorder(1) };
    expect(() => new EstimateTally(COST, simulators, { indexes: new IndexKeyTally(TABLE.gsis), plannedOrder: { mode: 'spread' } })).toThrow(/GSIs.*bug/);
    expect(() => new EstimateTally(COST, simulators, { indexes: new IndexKeyTally([]), plannedOrder: { mode: 'spread' } })).not.toThrow();
  });
});

describe('EstimateTally without --shard', () => {
  it('counts keys once and reports them as written too: the same figures as a tally that counts them twice', () => {
    const rows = [write('a', 100), write('b', 3000), write('a', 100), write('c', 900)];
    const once = new EstimateTally(COST, { planned: recorder(1), input: recorder(1) }, { sharded: false });
    const twice = new EstimateTally(COST, { planned: recorder(1), input: recorder(1) });
    for (const r of rows) {
      once.add({ ...r });
      twice.add({ ...r });
    }
    const a = once.finish();
    const b = twice.finish();
    expect(a.hottestWritten.top(10)).toEqual(b.hottestWritten.top(10));
    expect(a.distinctWritten).toBe(b.distinctWritten);
    expect(a.hottest.top(10)).toEqual(b.hottest.top(10));
    expect(() => new EstimateTally(COST, { planned: recorder(1), input: recorder(1) }, { sharded: false }).add(write('s#1', 100, {}, 's'))).toThrow(/bug/);
  });
});
