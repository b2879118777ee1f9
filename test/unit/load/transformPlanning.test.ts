/**
 * The stages with --transform (load/stages.ts planning()): each row's outputs become writes in the order
 * returned, a skipped row is counted apart, a throw or invalid return is one reject of the row, async
 * transforms are awaited, and with --segment every output and every skipped row is one worker's, so the
 * counters of all workers add up to one load's.
 */
import { describe, expect, it } from 'vitest';
import { LoadTally } from '../../../src/load/loadTally.js';
import { planning, type Planned } from '../../../src/load/stages.js';
import { writesToAccount } from '../../../src/reporting/result.js';
import type { PlannedWrite, RejectedRow } from '../../../src/shared/types.js';
import { createRowPlanner, type SourceRecord } from '../../../src/typing/planRow.js';
import type { TransformFunction } from '../../../src/typing/transform.js';

const planner = () => createRowPlanner({ keySchema: { partitionKey: { name: 'pk', type: 'S' } }, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json' });
const row = (line: number, pk: string, kind: string): SourceRecord => ({
  kind: 'csv',
  origin: { file: 'in.csv', line, raw: `${pk},${kind}` },
  cells: { pk, kind },
});

/** Splits "split" rows into pk and pk-2, skips "skip", throws on "boom", returns junk on "junk". */
const transform: TransformFunction = (item) => {
  if (item['kind'] === 'skip') return undefined;
  if (item['kind'] === 'boom') throw new Error('boom');
  if (item['kind'] === 'junk') return 42 as never;
  if (item['kind'] === 'split') return [item, { ...item, pk: `${String(item['pk'])}-2` }];
  return item;
};

const ROWS = Array.from({ length: 200 }, (_, i) => row(i + 2, `k${i}`, ['keep', 'split', 'skip', 'boom', 'junk', 'keep', 'split'][i % 7]!));

async function run(fn: TransformFunction, segment?: { index: number; count: number }) {
  const tally = new LoadTally();
  tally.countTransform();
  const rejects: RejectedRow[] = [];
  const writes: PlannedWrite[] = [];
  const plan = planning(
    { file: 'in.csv', planner: planner(), transform: fn, segment, onPlanned: (w) => w },
    {
      tally,
      rejections: {
        reject: (r) => {
          tally.rejected(r.code);
          rejects.push(r);
          return Promise.resolve();
        },
      },
      emit: () => undefined,
    },
  );
  for (const record of ROWS) {
    const out: Planned | Promise<Planned> = plan(record);
    const planned = out instanceof Promise ? await out : out;
    if (planned) writes.push(...(Array.isArray(planned) ? planned : [planned]));
  }
  return { tally, rejects, writes };
}

describe('planning with a transform', () => {
  it('writes the outputs in the order returned; skipped, failed and invalid rows are accounted for once', async () => {
    const { tally, rejects, writes } = await run(transform);
    const c = tally.counters;
    const count = (kind: string) => ROWS.filter((r) => r.kind === 'csv' && r.cells['kind'] === kind).length;
    expect(c.rowsRead).toBe(200);
    expect(c.skippedByTransform).toBe(count('skip'));
    expect(c.splitWrites).toBe(count('split'));
    expect(c.transformOutputs).toBe(count('keep') + 2 * count('split'));
    expect(writes).toHaveLength(count('keep') + 2 * count('split'));
    expect(rejects.map((r) => r.code).sort()).toEqual([
      ...Array(count('boom')).fill('TRANSFORM_FAILED'),
      ...Array(count('junk')).fill('TRANSFORM_OUTPUT_INVALID'),
    ]);
    expect(rejects.find((r) => r.code === 'TRANSFORM_FAILED')).toMatchObject({
      origin: { file: 'in.csv', line: 5 },
      message: 'the transform threw: boom',
      key: { pk: 'k3' },
    });
    // A split row's two writes come one after the other, in the order returned, both of its line.
    const first = writes.findIndex((w) => w.item['pk'] === 'k1');
    expect([writes[first + 1]!.item['pk'], writes[first + 1]!.origin.line]).toEqual(['k1-2', 3]);
    // Nothing written yet: every write planned is what is left to account for.
    expect(writesToAccount(c)).toBe(writes.length + c.rejected);
  });

  it('an async transform (and a rejected promise) gives what the synchronous one gives', async () => {
    const sync = await run(transform);
    const async = await run(async (item, origin) => {
      await new Promise((r) => setTimeout(r, 0));
      return transform(item, origin);
    });
    expect(async.writes.map((w) => w.keyId)).toEqual(sync.writes.map((w) => w.keyId));
    expect(async.rejects).toEqual(sync.rejects);
    expect(async.tally.counters).toEqual(sync.tally.counters);
  });

  it('with --segment, every output and every skipped or rejected row is exactly one worker’s', async () => {
    const whole = await run(transform);
    const workers = await Promise.all([0, 1, 2].map((index) => run(transform, { index, count: 3 })));
    const keys = workers.flatMap((w) => w.writes.map((x) => x.keyId)).sort();
    expect(keys).toEqual(whole.writes.map((w) => w.keyId).sort());
    const sum = (name: 'skippedByTransform' | 'rejected') => workers.reduce((n, w) => n + (w.tally.counters[name] ?? 0), 0);
    expect([sum('skippedByTransform'), sum('rejected')]).toEqual([whole.tally.counters.skippedByTransform, whole.tally.counters.rejected]);
    for (const w of workers) {
      const c = w.tally.counters;
      expect(writesToAccount(c)).toBe(w.writes.length + c.rejected + c.otherSegments);
    }
  });
});
