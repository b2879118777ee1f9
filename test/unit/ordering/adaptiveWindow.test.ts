/**
 * The auto order's window (WriteOrderer with `adaptive`) and the key-run watch behind it (KeyRuns): keys
 * already mixed stream through a small window; keys in runs grow it, and keys that keep coming in runs a
 * whole --window long send what it holds and the rest of the input to round-robin. Whatever the input,
 * every write comes out exactly once and each partition key's writes keep their input order.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GROW_RUN, KeyRuns, LOOK_EVERY, MIN_RUN, MIN_WINDOW_KEYS } from '../../../src/ordering/keyRuns.js';
import { AUTO_WINDOW_ROWS, orderAll } from '../../../src/ordering/order.js';
import { WriteOrderer } from '../../../src/ordering/writeOrderer.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import { mulberry32 } from '../../../tools/mulberry32.js';
import { sized } from '../../support/testSize.js';

let tempDir: string;
beforeEach(async () => void (tempDir = await mkdtemp(join(tmpdir(), 'adaptive-window-'))));
afterEach(async () => rm(tempDir, { recursive: true, force: true }));

function write(line: number, partition: string): PlannedWrite {
  const partitionId = `S${partition}`;
  return {
    origin: { file: 'in.csv', line, raw: `${partition},${line}` },
    item: { pk: partition, sk: String(line) },
    keyId: `${partitionId}\u0000S${line}`,
    partitionId,
    size: 20,
    wcu: 1,
  };
}

/** Writes from partition keys in order, `line` counting from 1. */
const writesOf = (keys: readonly string[]) => keys.map((k, i) => write(i + 1, k));

/** Keys mixed at random over `pool` keys. */
function mixed(n: number, pool: number, seed: number): string[] {
  const random = mulberry32(seed);
  return Array.from({ length: n }, () => `k${Math.floor(random() * pool)}`);
}

/** Keys sorted: `runs` rows of each key in turn. */
const sorted = (n: number, runs: number, prefix = 's') => Array.from({ length: n }, (_, i) => `${prefix}${Math.floor(i / runs)}`);

interface Run {
  out: PlannedWrite[];
  /** Writes handed out before the last row was read (streamed), and the row at which it went over. */
  streamed: number;
  groupedAt: number | undefined;
  mode: string;
}

async function run(keys: readonly string[], windowRows = 50_000, memoryBytes = 1 << 30): Promise<Run> {
  let groupedAt: number | undefined;
  const o = new WriteOrderer({ mode: 'window', windowRows, memoryBytes, tempDir, adaptive: { onGrouped: (at) => (groupedAt = at.origin.line) } });
  const out: PlannedWrite[] = [];
  try {
    for (const w of writesOf(keys)) out.push(...(o.pushNow(w) ?? (await o.push(w))));
    const streamed = out.length;
    for await (const w of o.drain()) out.push(w);
    return { out, streamed, groupedAt, mode: o.mode };
  } finally {
    await o.close();
  }
}

/** Every write once, and per partition key in input order. */
function expectComplete(out: readonly PlannedWrite[], n: number): void {
  expect(out.map((w) => w.origin.line).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  const last = new Map<string, number>();
  for (const w of out) {
    expect(w.origin.line).toBeGreaterThan(last.get(w.partitionId) ?? 0);
    last.set(w.partitionId, w.origin.line);
  }
}

/** The longest stretch of consecutive writes to one partition key. */
function longestRun(out: readonly PlannedWrite[]): number {
  let best = 0;
  let run = 0;
  out.forEach((w, i) => {
    run = i > 0 && out[i - 1]!.partitionId === w.partitionId ? run + 1 : 1;
    best = Math.max(best, run);
  });
  return best;
}

describe('KeyRuns', () => {
  it('mixed keys never say "go over", however long the input', () => {
    const runs = new KeyRuns(4096);
    const keys = mixed(200_000, 200, 1);
    // The window as it would hold them: many keys.
    expect(keys.some((k) => runs.add(k, () => 150))).toBe(false);
  });

  it('keys in runs, with the window holding few keys, say so once a whole stretch has passed, looking every LOOK_EVERY rows', () => {
    const runs = new KeyRuns(10_000);
    const keys = sorted(40_000, 5_000);
    const at = keys.findIndex((k) => runs.add(k, () => 2));
    // The first look at or past the stretch.
    expect(at + 1).toBe(Math.ceil(10_000 / LOOK_EVERY) * LOOK_EVERY);
  });

  it('a few keys well mixed (round-robin could not do better) never say so, even with the window holding few keys', () => {
    const runs = new KeyRuns(2048);
    expect(mixed(100_000, 3, 2).some((k) => runs.add(k, () => 3))).toBe(false);
  });

  it('a window holding enough keys never says so, even when keys come in runs', () => {
    const runs = new KeyRuns(2048);
    expect(sorted(100_000, 500).some((k) => runs.add(k, () => MIN_WINDOW_KEYS))).toBe(false);
  });

  it('runs just under MIN_RUN rows do not count as runs; at MIN_RUN they do', () => {
    const under = new KeyRuns(2048);
    expect(sorted(50_000, MIN_RUN - 8).some((k) => under.add(k, () => 1))).toBe(false);
    const at = new KeyRuns(2048);
    expect(sorted(50_000, MIN_RUN).some((k) => at.add(k, () => 1))).toBe(true);
  });

  it('with the growing threshold (GROW_RUN), runs of a few rows count: the window grows where a global order would not be called for', () => {
    const grow = new KeyRuns(2048);
    expect(sorted(50_000, GROW_RUN).some((k) => grow.add(k, () => 1, GROW_RUN))).toBe(true);
    const mixedFew = new KeyRuns(2048);
    expect(mixed(50_000, 3, 9).some((k) => mixedFew.add(k, () => 3, GROW_RUN))).toBe(false);
  });

  it('restart() begins a new stretch', () => {
    const runs = new KeyRuns(1024);
    const keys = sorted(10_000, 5_000);
    const first = keys.findIndex((k) => runs.add(k, () => 1));
    expect(first + 1).toBe(1024);
    runs.restart(4096);
    const next = keys.slice(first + 1).findIndex((k) => runs.add(k, () => 1));
    expect(next + 1).toBe(4096);
  });
});

describe("WriteOrderer, the auto order's window", () => {
  it('mixed keys stream: the window starts small, stays a window, never goes over, and hands nearly everything on while reading', async () => {
    const keys = mixed(60_000, 300, 3);
    const r = await run(keys);
    expectComplete(r.out, keys.length);
    expect(r.mode).toBe('window');
    expect(r.groupedAt).toBeUndefined();
    // Only the small first window is left for the drain.
    expect(keys.length - r.streamed).toBeLessThanOrEqual(AUTO_WINDOW_ROWS);
    // While streaming, the window breaks up what little repeats there are (the drain's last few rows may be
    // one key's leftover backlog).
    expect(longestRun(r.out.slice(0, r.streamed))).toBeLessThanOrEqual(2);
    expect(longestRun(r.out)).toBeLessThanOrEqual(16);
  });

  it('keys sorted from the first row go over before anything is handed out: round-robin of the whole input', async () => {
    const keys = sorted(120_000, 10_000);
    const r = await run(keys, 20_000);
    expectComplete(r.out, keys.length);
    expect(r.mode).toBe('round-robin');
    expect(r.streamed).toBe(0);
    expect(r.groupedAt).toBeLessThanOrEqual(20_000);
    // Exactly the global order: what round-robin makes of the input.
    const expected = orderAll(writesOf(keys), (w) => w.partitionId, 'round-robin');
    expect(r.out.map((w) => w.origin.line)).toEqual(expected.map((w) => w.origin.line));
  });

  it('a mixed head and a grouped tail: streams the head, goes over in the tail, no row read twice, each key in input order', async () => {
    const head = mixed(30_000, 500, 4);
    const tail = sorted(60_000, 6_000, 't');
    const keys = [...head, ...tail];
    const r = await run(keys, 8_000);
    expectComplete(r.out, keys.length);
    expect(r.mode).toBe('round-robin');
    expect(r.groupedAt).toBeGreaterThan(head.length);
    expect(r.groupedAt).toBeLessThan(head.length + 4 * 8_000);
    expect(r.streamed).toBeGreaterThan(head.length - 8_000);
    // After the change, the tail's keys alternate (round-robin over 10 keys).
    const afterwards = r.out.slice(r.streamed);
    expect(longestRun(afterwards)).toBe(1);
  });

  it('a small file sorted by key, runs of 50 rows: the window grows to hold it all and writes it in round-robin', async () => {
    const keys = sorted(2_000, 50);
    const r = await run(keys);
    expectComplete(r.out, keys.length);
    expect(r.mode).toBe('window');
    expect(r.streamed).toBe(0);
    expect(longestRun(r.out)).toBe(1);
  });

  it('keys in runs a few hundred rows long: the window grows to hold enough keys and keeps streaming', async () => {
    const keys = sorted(100_000, 300);
    const r = await run(keys, 50_000);
    expectComplete(r.out, keys.length);
    expect(r.mode).toBe('window');
    expect(r.streamed).toBeGreaterThan(keys.length / 2);
  });

  it('a burst of one key inside mixed input (shorter than --window) does not turn the load over', async () => {
    const keys = [...mixed(20_000, 400, 5), ...Array.from({ length: 6_000 }, () => 'burst'), ...mixed(20_000, 400, 6)];
    const r = await run(keys, 50_000);
    expectComplete(r.out, keys.length);
    expect(r.mode).toBe('window');
  });

  it('the same input and limits make the same order (a resume replays it)', async () => {
    const keys = [...mixed(5_000, 50, 7), ...sorted(30_000, 3_000)];
    const a = await run(keys, 4_000, 256 * 1024);
    const b = await run(keys, 4_000, 256 * 1024);
    expect(a.out.map((w) => w.origin.line)).toEqual(b.out.map((w) => w.origin.line));
  });

  it('property: any mix of mixed and grouped stretches, window and memory: every write once, each key in input order', async () => {
    const stretch = fc.record({
      grouped: fc.boolean(),
      rows: fc.integer({ min: 1, max: 4_000 }),
      keys: fc.integer({ min: 1, max: 400 }),
      run: fc.integer({ min: 1, max: 3_000 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(stretch, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 2, max: 12_000 }),
        fc.integer({ min: 0, max: 1 }),
        fc.integer(),
        async (stretches, windowRows, smallMemory, seed) => {
          const random = mulberry32(seed);
          const keys = stretches.flatMap((s, i) =>
            s.grouped
              ? sorted(s.rows, s.run, `g${i}_`)
              : // Keys shared between stretches too: a key may come back after the order went over.
                Array.from({ length: s.rows }, () => `m${Math.floor(random() * s.keys)}`),
          );
          const r = await run(keys, windowRows, smallMemory ? 64 * 1024 : 1 << 30);
          expectComplete(r.out, keys.length);
        },
      ),
      { numRuns: sized(10, 30) },
    );
  }, 240_000);
});
