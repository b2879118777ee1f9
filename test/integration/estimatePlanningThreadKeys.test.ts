/**
 * Attack on the planning thread's numbered partition keys (a table both threads build, started over at a
 * chunk past 65,536 keys) and its fast CSV measure: an estimate over more distinct keys than the table
 * holds, crossing its restart inside a chunk, with keys equal as text but of another type or written
 * non-canonically (N "7" and "7.0" and "07", S "7"), multi-byte keys, and rows the fast path declines,
 * must give every figure the estimate gives planning on its own thread.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimate, type EstimateOptions } from '../../src/estimating/estimate.js';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import { offlineTableInfo } from '../../src/estimating/offlineTable.js';
import type { LoadEvent } from '../../src/reporting/events.js';
import { mulberry32 } from '../../tools/mulberry32.js';

let dir: string;
beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'ddb-spread-planning-keys-'))));
afterAll(async () => rm(dir, { recursive: true, force: true }));

let runs = 0;

async function run(input: string, options: Partial<EstimateOptions>, thread: boolean) {
  const events: LoadEvent[] = [];
  const rejectsPath = join(dir, `${++runs}.rejects.jsonl`);
  const result = await estimate(
    { input, table: 'estimate', rejectsPath, ...options, simulation: { partitions: 4, latencyMs: 8, planningThread: thread } } as EstimateOptions,
    { onEvent: (e) => events.push(e) },
  );
  const rejects = await readFile(rejectsPath, 'utf8').catch(() => '');
  return { result, events, rejects };
}

function figures(r: EstimateResult): unknown {
  const { estimatedSeconds: _e, startupSeconds: _s, readSeconds: _r, ...time } = r.time;
  const { rejectsPath: _p, ...input } = r.input;
  return { ...r, input, time };
}

const threadUsed = (events: LoadEvent[]) => events.some((e) => e.type === 'reading' && e.planningThread === true);

describe('an estimate on the planning thread past its table of keys', () => {
  it('N keys past 65,536 distinct, some written non-canonically, and a hot few: the same figures and rejects as on one thread', async () => {
    const random = mulberry32(7);
    const rows: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const r = random();
      // Distinct keys for most rows (the table restarts once, inside a chunk), a hot few, the same
      // numbers written as 7.0 / 07 / -0 (plan() makes them canonical; the fast path declines them), and bad ones.
      const key =
        r < 0.75 ? String(i) : r < 0.85 ? String(i % 5) : r < 0.9 ? `${i % 5}.0` : r < 0.93 ? `0${i % 5}` : r < 0.95 ? '-0' : r < 0.97 ? 'x7' : `${i % 5}.50`;
      rows.push(`${key},${i},${random() < 0.5 ? 'é' : 'a'}${'z'.repeat(Math.floor(random() * 300))}`);
    }
    const file = join(dir, 'numbers.csv');
    await writeFile(file, `pk,sk,v\n${rows.join('\n')}\n`);
    const tableInfo = offlineTableInfo('estimate', {
      partitionKey: { name: 'pk', type: 'N' },
      sortKey: { name: 'sk', type: 'N' },
      billing: 'provisioned',
      tableWcu: 1000,
    });
    const [threaded, own] = [await run(file, { tableInfo, types: {}, keyWcu: 100 }, true), await run(file, { tableInfo, types: {}, keyWcu: 100 }, false)];
    expect(threadUsed(threaded.events)).toBe(true);
    expect(threadUsed(own.events)).toBe(false);
    expect(threaded.result.input.rows).toBe(100_000);
    expect(threaded.result.input.rejected).toBeGreaterThan(500);
    expect(figures(threaded.result)).toEqual(figures(own.result));
    expect(threaded.rejects).toBe(own.rejects);
  }, 240_000);

  it('S keys that read as numbers, multi-byte keys, inferred cells: the same figures as on one thread', async () => {
    const random = mulberry32(8);
    const rows: string[] = [];
    for (let i = 0; i < 70_000; i++) {
      const r = random();
      const key = r < 0.8 ? `${i}` : r < 0.9 ? `${i % 7}.0` : r < 0.95 ? `ключ${i % 11}` : `😀${i % 3}`;
      const cell = random() < 0.3 ? String(i) : random() < 0.5 ? 'true' : random() < 0.5 ? '1.50' : `"q""${i}, é"`;
      rows.push(`${key},${cell}`);
    }
    const file = join(dir, 'strings.csv');
    await writeFile(file, `pk,v\n${rows.join('\r\n')}\r\n`);
    const tableInfo = offlineTableInfo('estimate', { partitionKey: { name: 'pk', type: 'S' }, billing: 'on-demand' });
    const [threaded, own] = [await run(file, { tableInfo, types: {} }, true), await run(file, { tableInfo, types: {} }, false)];
    expect(threadUsed(threaded.events)).toBe(true);
    expect(threaded.result.input.rows).toBe(70_000);
    expect(figures(threaded.result)).toEqual(figures(own.result));
    expect(threaded.rejects).toBe(own.rejects);
  }, 240_000);
});
