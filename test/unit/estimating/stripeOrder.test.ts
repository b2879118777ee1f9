/**
 * The estimate replays the default order's striped read from statistics of a read from the
 * start (StripeOrderStats). Checked against the striped read's own merge (`merged`, StripeSchedule) over
 * the same rows: the same keys in the same order wherever every row of a key has one length, rows read
 * and not written between keys included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StripeOrderStats, type StripeLayoutStats } from '../../../src/estimating/stripeOrder.js';
import { createBatcher } from '../../../src/batching/batch.js';
import { merged } from '../../../src/ordering/stripes/stripedRecords.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { sized } from '../../support/testSize.js';

interface Row {
  key: string;
  units: number;
  line: number;
  raw: string;
  /** Read and not written: rejected, or of another segment. */
  skipped?: boolean;
  /** The primary key's identity (the key and a sort key). */
  id?: string;
}

/** Stripes of key runs, keys ascending over the file, lines from 2 (rows of 1-3 lines). */
function fileOf(stripes: Array<Array<{ rows: number; length: number; units: number; lines: number; skipped?: boolean }>>): {
  rows: Row[][];
  firstLines: number[];
} {
  let line = 2;
  let k = 0;
  const firstLines: number[] = [];
  const rows = stripes.map((runs, s) => {
    firstLines.push(s === 0 ? 0 : line);
    const out: Row[] = [];
    for (const run of runs) {
      const key = `k${String(k++).padStart(5, '0')}`;
      for (let i = 0; i < run.rows; i++) {
        // The text holds the key, as a row's does.
        out.push({ key, units: run.units, line, raw: `${key},${'x'.repeat(run.length)}`, ...(run.skipped ? { skipped: true } : {}) });
        line += run.lines;
      }
    }
    return out;
  });
  return { rows, firstLines };
}

/** The striped read's order of these rows: load's own merge over one generator per stripe. */
async function mergedOrder(rows: Row[][], sizes: number[]): Promise<Array<{ key: string; units: number }>> {
  const byRaw = new Map<SourceRecord, Row>();
  async function* stripe(part: Row[]): AsyncGenerator<SourceRecord[]> {
    for (let i = 0; i < part.length; i += 3) {
      yield part.slice(i, i + 3).map((row) => {
        const record: SourceRecord = { kind: 'csv', origin: { file: 'f.csv', line: row.line, raw: row.raw }, cells: { pk: row.key } };
        byRaw.set(record, row);
        return record;
      });
    }
  }
  const out: Array<{ key: string; units: number }> = [];
  for await (const records of merged(rows.map(stripe), sizes)) {
    for (const record of records) {
      const row = byRaw.get(record)!;
      if (!row.skipped) out.push({ key: row.key, units: row.units });
    }
  }
  return out;
}

function statsOf(rows: Row[][], layout: StripeLayoutStats, maxKeys?: number, maxRepeatPairs?: number): StripeOrderStats {
  const stats = new StripeOrderStats(layout, maxKeys, maxRepeatPairs);
  for (const row of rows.flat()) {
    if (row.skipped) stats.skip(row.line, row.raw.length + 1, row.raw);
    else stats.add(row.key, row.units, row.line, row.raw.length + 1, row.raw, row.id);
  }
  return stats;
}

/** The replay's batches of 25, as EstimateTally builds them: a write that replaces takes its slot. */
function replayBatches(stats: StripeOrderStats): Array<Array<{ key: string; units: number }>> {
  const batches: Array<Array<{ key: string; units: number }>> = [];
  let batch: Array<{ key: string; units: number }> = [];
  for (const w of stats.ordered()) {
    if (w.replaces >= 0) batch[w.replaces] = { key: w.key, units: w.units };
    else batch.push({ key: w.key, units: w.units });
    if (batch.length === 25) {
      batches.push(batch);
      batch = [];
    }
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** The replay's writes as keys and units. */
function keysOf(writes: Iterable<{ key: string; units: number }>): Array<{ key: string; units: number }> {
  return [...writes].map(({ key, units }) => ({ key, units }));
}

const runFields = {
  rows: fc.integer({ min: 1, max: 40 }),
  length: fc.integer({ min: 1, max: 300 }),
  units: fc.integer({ min: 1, max: 5 }),
  lines: fc.integer({ min: 1, max: 3 }),
};
const run = fc.record(runFields);

describe('StripeOrderStats: the striped read replayed from statistics', () => {
  it('the same keys in the same order as the striped read, with their units, where a key has one row length', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(run, { minLength: 0, maxLength: 6 }), { minLength: 2, maxLength: 8 }), fc.boolean(), async (stripes, bytesAsSizes) => {
        const { rows, firstLines } = fileOf(stripes);
        // The load weighs a stripe by its bytes in the file, which the rows' text need not add up to.
        const sizes = rows.map((part, s) => (bytesAsSizes ? part.reduce((n, r) => n + r.raw.length + 1, 0) : 1000 + 137 * s));
        const expected = await mergedOrder(rows, sizes);
        expect(keysOf(statsOf(rows, { sizes, firstLines }).ordered())).toEqual(expected);
      }),
      { numRuns: sized(38, 150) },
    );
  });

  it('row lengths that vary inside a key: the same writes per key and per stripe, each key within a few rows of its place', async () => {
    const rows: Row[][] = [[], [], []];
    let line = 2;
    const firstLines = [0, 0, 0];
    for (let s = 0; s < 3; s++) {
      firstLines[s] = s === 0 ? 0 : line;
      for (let k = 0; k < 20; k++)
        for (let i = 0; i < 30; i++) rows[s]!.push({ key: `s${s}k${k}`, units: 1 + (i % 3), line: line++, raw: 'y'.repeat(10 + ((i * 37 + k) % 90)) });
    }
    const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
    const expected = await mergedOrder(rows, sizes);
    const replayed = [...statsOf(rows, { sizes, firstLines }).ordered()];
    expect(replayed.map((w) => w.key).sort()).toEqual(expected.map((w) => w.key).sort());
    const totalUnits = (ws: Array<{ units: number }>) => ws.reduce((n, w) => n + w.units, 0);
    expect(totalUnits(replayed)).toBeCloseTo(totalUnits(expected), 6);
    // Where each key's writes sit: the mean position of a key's writes moves by a few rows at most.
    const meanPosition = (ws: Array<{ key: string }>) => {
      const sum = new Map<string, number[]>();
      ws.forEach((w, i) => sum.set(w.key, [...(sum.get(w.key) ?? []), i]));
      return new Map([...sum].map(([k, is]) => [k, is.reduce((a, b) => a + b, 0) / is.length]));
    };
    const want = meanPosition(expected);
    for (const [key, at] of meanPosition(replayed)) expect(Math.abs(at - want.get(key)!), key).toBeLessThan(6);
  });

  it('past its named runs, folds cold keys (memory stays bounded) and keeps hot keys by name, every write and unit kept', () => {
    const rows: Row[][] = [[], []];
    let line = 2;
    const firstLines = [0, 0];
    for (let s = 0; s < 2; s++) {
      firstLines[s] = s === 0 ? 0 : line;
      for (let k = 0; k < 500; k++) {
        // One hot key in each stripe, among cold keys of 1-3 rows.
        const n = k === 250 ? 1500 : 1 + (k % 3);
        for (let i = 0; i < n; i++) rows[s]!.push({ key: `s${s}k${String(k).padStart(3, '0')}`, units: 2, line: line++, raw: 'z'.repeat(20) });
      }
    }
    const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
    const stats = statsOf(rows, { sizes, firstLines }, 10);
    // 10 named, the hot key of each stripe, a folded run on each side of each hot key, and the run at hand.
    expect(stats.runs).toBeLessThanOrEqual(10 + 2 + 4 + 1);
    const replayed = [...stats.ordered()];
    expect(replayed).toHaveLength(rows.flat().length);
    expect(replayed.reduce((n, w) => n + w.units, 0)).toBe(2 * rows.flat().length);
    // Each folded key is a key of its own: as many keys as the file has.
    expect(new Set(replayed.map((w) => w.key)).size).toBe(1000);
    expect(replayed.filter((w) => w.key === 's1k250')).toHaveLength(1500);
  });

  it("rows read and not written between keys (another segment's, rejected) move their stripe as in the striped read", async () => {
    const runOrSkipped = fc.record({ ...runFields, skipped: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(runOrSkipped, { minLength: 0, maxLength: 6 }), { minLength: 2, maxLength: 8 }), async (stripes) => {
        const { rows, firstLines } = fileOf(stripes);
        const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
        const expected = await mergedOrder(rows, sizes);
        expect(keysOf(statsOf(rows, { sizes, firstLines }).ordered())).toEqual(expected);
      }),
      { numRuns: sized(38, 150) },
    );
  });

  it('lines counted short by the read from the start: each stripe still starts at its first row, found by its text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(run, { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 8 }), async (stripes) => {
        const { rows, firstLines } = fileOf(stripes);
        const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
        const expected = await mergedOrder(rows, sizes);
        const firstRaws = rows.map((part, s) => (s === 0 ? undefined : part[0]!.raw));
        // readCsv can count one line short after some mixes of blank CRLF and LF lines, more so the further it reads.
        const short = rows.map((part, s) => part.map((row) => ({ ...row, line: row.line - 3 * s - 1 })));
        expect(keysOf(statsOf(short, { sizes, firstLines, firstRaws }).ordered())).toEqual(expected);
      }),
      { numRuns: sized(38, 150) },
    );
  });

  it("primary keys repeated close together: the replay's batches and superseded count are load's batcher's over the striped read", async () => {
    let repeated = 0;
    let superseded = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(run, { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 6 }),
        fc.integer({ min: 1, max: 1000 }),
        async (stripes, seed) => {
          const { rows, firstLines } = fileOf(stripes);
          // Sort keys: mostly new, a third of them that of a row 1-3 rows back in the run (a row written again).
          let state = seed;
          const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
          for (const part of rows) {
            part.forEach((row, i) => {
              const earlier = part[i - 1 - Math.floor(next() * 3)];
              const again = earlier !== undefined && earlier.key === row.key && next() < 0.35;
              if (again) repeated++;
              row.id = again ? earlier.id! : `${row.key}|${i}`;
            });
          }
          const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
          const expected = await batchedOrder(rows, sizes);
          const stats = statsOf(rows, { sizes, firstLines });
          const batches = replayBatches(stats);
          expect(stats.superseded).toBe(expected.superseded);
          expect(batches).toEqual(expected.batches);
          superseded += expected.superseded;
        },
      ),
      { numRuns: sized(50, 200) },
    );
    // The cases hold repeats, some superseded in the striped read and some not (input order would supersede them all).
    expect(superseded).toBeGreaterThan(50);
    expect(superseded).toBeLessThan(repeated);
  });
});

describe("StripeOrderStats: repeats at any distance, skipped runs, folded runs: load's batcher over the striped read", () => {
  /** Each row's primary key drawn from a pool of its run's (1-40 keys): repeats near and far, chains, keys repeated many times. */
  const withIds = (rows: Row[][], pools: number[], seed: number) => {
    let state = seed;
    const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    let r = 0;
    for (const part of rows)
      part.forEach((row, i) => {
        if (i === 0 || part[i - 1]!.key !== row.key) r++;
        row.id = `${row.key}|${Math.floor(next() * pools[r % pools.length]!)}`;
      });
  };
  const runs = fc.record({ ...runFields, rows: fc.integer({ min: 1, max: 90 }), skipped: fc.boolean() });
  const pools = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 });

  it('named runs, rows skipped before runs: the same batches and superseded count', async () => {
    let superseded = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(runs, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }),
        pools,
        fc.integer({ min: 1, max: 1e6 }),
        async (stripes, p, seed) => {
          const { rows, firstLines } = fileOf(stripes);
          withIds(rows, p, seed);
          const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
          const expected = await batchedOrder(rows, sizes);
          const stats = statsOf(rows, { sizes, firstLines });
          expect(replayBatches(stats)).toEqual(expected.batches);
          expect(stats.superseded).toBe(expected.superseded);
          superseded += expected.superseded;
        },
      ),
      { numRuns: sized(75, 300) },
    );
    expect(superseded).toBeGreaterThan(1000);
  });

  it('folded runs (a few named keys, one row length a stripe): the same batch sizes and superseded count', async () => {
    let folded = 0;
    let superseded = 0;
    const uniform = fc.record({ ...runFields, rows: fc.integer({ min: 1, max: 90 }), length: fc.constant(0) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 200 }), fc.array(uniform, { minLength: 1, maxLength: 8 })), { minLength: 1, maxLength: 4 }),
        pools,
        fc.integer({ min: 1, max: 1e6 }),
        fc.integer({ min: 0, max: 3 }),
        async (stripes, p, seed, maxKeys) => {
          const { rows, firstLines } = fileOf(stripes.map(([length, rs]) => rs.map((r) => ({ ...r, length, units: 1 }))));
          withIds(rows, p, seed);
          const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
          const expected = await batchedOrder(rows, sizes);
          const stats = statsOf(rows, { sizes, firstLines }, maxKeys);
          const got = replayBatches(stats);
          expect(got.map((b) => b.length)).toEqual(expected.batches.map((b) => b.length));
          expect(stats.superseded).toBe(expected.superseded);
          if (stats.runs < stripes.reduce((n, [, rs]) => n + rs.length, 0)) folded++;
          superseded += expected.superseded;
        },
      ),
      { numRuns: sized(75, 300) },
    );
    // A third of the runs fold, in the unit pass as at full size.
    expect(folded).toBeGreaterThan(sized(25, 100));
    expect(superseded).toBeGreaterThan(sized(250, 1000));
  });
});

describe('StripeOrderStats: repeats past what it keeps', () => {
  it('replays no repeat at all (every write batched, superseded unknown), so the estimate counts them as its read met them', () => {
    const { rows, firstLines } = fileOf([[{ rows: 40, length: 10, units: 1, lines: 1 }], [{ rows: 40, length: 10, units: 1, lines: 1 }]]);
    // Every row the same primary key as the row before: 39 repeats a stripe.
    for (const part of rows) for (const row of part) row.id = `${row.key}|same`;
    const sizes = rows.map((part) => part.reduce((n, r) => n + r.raw.length + 1, 0));
    const kept = statsOf(rows, { sizes, firstLines });
    const keptWrites = [...kept.ordered()];
    expect(kept.superseded).toBeGreaterThan(0);
    expect(keptWrites.filter((w) => w.replaces >= 0)).toHaveLength(kept.superseded!);
    const over = statsOf(rows, { sizes, firstLines }, undefined, 50);
    const writes = [...over.ordered()];
    expect(over.superseded).toBeUndefined();
    expect(writes).toHaveLength(80);
    expect(writes.every((w) => w.replaces === -1)).toBe(true);
  });
});

/** The striped read's batches: load's merge, then load's batcher (a repeat in the batch being filled takes its place). */
async function batchedOrder(rows: Row[][], sizes: number[]): Promise<{ batches: Array<Array<{ key: string; units: number }>>; superseded: number }> {
  const byRaw = new Map<SourceRecord, Row>();
  async function* stripe(part: Row[]): AsyncGenerator<SourceRecord[]> {
    for (const row of part) {
      const record: SourceRecord = { kind: 'csv', origin: { file: 'f.csv', line: row.line, raw: row.raw }, cells: { pk: row.key } };
      byRaw.set(record, row);
      yield [record];
    }
  }
  const batcher = createBatcher();
  const batches: Array<Array<{ key: string; units: number }>> = [];
  let superseded = 0;
  const take = (writes: PlannedWrite[]) => batches.push(writes.map((w) => ({ key: w.partitionId, units: w.wcu })));
  for await (const records of merged(rows.map(stripe), sizes)) {
    for (const record of records) {
      const row = byRaw.get(record)!;
      if (row.skipped) continue;
      const write = { keyId: row.id!, partitionId: row.key, wcu: row.units, size: 0, item: {}, origin: record.origin } as unknown as PlannedWrite;
      const pushed = batcher.push(write);
      if (pushed.superseded) superseded++;
      if (pushed.full) take(pushed.full.writes);
    }
  }
  const last = batcher.flush();
  if (last) take(last.writes);
  return { batches, superseded };
}
