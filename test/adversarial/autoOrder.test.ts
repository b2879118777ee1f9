/**
 * Adversarial suite for the default order (`auto`) on local sets: a folder of generated parts whose keys
 * are sorted across the set (read in stripes across parts, with the stripe size shrunk by the test seam),
 * mixed (streamed through the window), grouped in a part's head only (the striped read's guess proved
 * wrong mid-load, so the load starts over through the window), or mixed then grouped for long enough that
 * the window goes over to round-robin mid-stream; CSV, TSV and JSON Lines, plain or gzipped. The CLI runs
 * with --checkpoint and restart points every few rows, is killed with SIGKILL at random batches (once or
 * twice), and the same command is run until it ends. The oracle is the test's own (adversarialLayouts.ts):
 * the table equals writing the parts' rows one by one in the parts' byte order, each rejected row is in
 * the reject file once with its part and line, rows read = written + superseded + rejected + not written,
 * and `complete` is true exactly when nothing was rejected.
 *
 * Seen to fail on a loader whose checkpointed load stopped with ORDER_NOT_GROUPED on every run when the
 * parts' heads looked sorted and a part was not (the `head` shape).
 */
import { fc, it } from '@fast-check/vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { expectedOfParts, extOf, MIGRATION_TYPES, partBytes, type MRow, type PartModel } from '../support/adversarialLayouts.js';
import { fcParams, REPLAY, scanRaw } from '../support/adversarialPipeline.js';
import { KEY_SCHEMA } from '../support/adversarialRows.js';
import { batchesDone } from '../support/checkpoint.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejectsIfAny } from '../support/rejects.js';

const FILE = 'test/adversarial/autoOrder.test.ts';
const { endpoint, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-auto-order', keys: KEY_SCHEMA });
let seq = 0;
let landed = 0;
let cases = 0;

beforeAll(assertCliBuilt);

/**
 * How a part's keys come: `sorted` ascending from the part's own base (so a set of sorted parts is sorted
 * across parts, a key running on from one part into the next); `mixed` anywhere in the set's key range;
 * `head` sorted for its first rows, then one key far back in the range, then sorted again (the heads look
 * sorted, the part is not); `switch` mixed for a few rows, then runs of ~100 rows of one key for long
 * enough that the window (--window 64) goes over to round-robin.
 */
type Shape = 'sorted' | 'mixed' | 'head' | 'switch';
const key = (k: number) => `k${String(k).padStart(4, '0')}`;

interface PartDraw {
  shape: Shape;
  format: PartModel['format'];
  gzip: boolean;
  rows: number;
  seed: number;
}

/** The rows of a part, from its draw (a seeded generator, so fast-check shrinks the draw, not the rows). */
function rowsOf(draw: PartDraw, p: number, badShare: number): MRow[] {
  let state = draw.seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  // A sorted part's keys rise by under 50 over its rows: parts 100 keys apart never overlap.
  const base = p * 100;
  const rows: MRow[] = [];
  let k = base;
  const row = (pk: number): MRow => ({
    pk: key(pk),
    sk: Math.floor(next() * 4),
    v: String(rows.length),
    n: next() < badShare ? 'bad' : Math.floor(next() * 2000) - 1000,
  });
  const count = draw.shape === 'switch' ? 2300 : draw.rows;
  for (let i = 0; i < count; i++) {
    switch (draw.shape) {
      case 'sorted':
        if (next() < 0.3) k++;
        rows.push(row(k));
        break;
      case 'mixed':
        rows.push(row(Math.floor(next() * 400)));
        break;
      case 'head':
        if (next() < 0.3) k++;
        // One row far back in key order, past the head: only the striped read's check finds it.
        rows.push(row(i === Math.floor((count * 3) / 5) ? Math.max(0, base - 30) : k));
        break;
      case 'switch':
        if (i < 40) rows.push(row(Math.floor(next() * 400)));
        else {
          if ((i - 40) % 100 === 0) k++;
          rows.push(row(k));
        }
        break;
    }
  }
  return rows;
}

const partDraw = fc.record({
  shape: fc.constantFrom<Shape>('sorted', 'sorted', 'mixed', 'head', 'head', 'switch'),
  format: fc.constantFrom<PartModel['format']>('csv', 'tsv', 'jsonl'),
  gzip: fc.boolean(),
  rows: fc.integer({ min: 20, max: 150 }),
  seed: fc.integer({ min: 1, max: 0x7fffffff }),
});

describe(`the auto order on local sets, killed and resumed (${REPLAY(FILE)})`, () => {
  it.prop(
    [
      fc.record({
        parts: fc.array(partDraw, { minLength: 2, maxLength: 4 }),
        // Most sets all sorted and plain: those are read in stripes across parts.
        striped: fc.boolean(),
        bad: fc.constantFrom(0, 0.05),
        kills: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 2 }),
        // Small stripes cut parts many ways (and probe many heads); larger ones leave each part one range, so
        // a part's disorder past its head is found only as it is written.
        stripeBytes: fc.constantFrom(256, 2048, 2048),
        // Restart points every 20 rows start the window's watch of the keys anew each time (no switch); every
        // 2,500 rows let the `switch` part's runs last the two looks (2,048 rows) the window takes to go over.
        restartRows: fc.constantFrom(20, 2500),
      }),
    ],
    {
      ...fcParams(4),
      interruptAfterTimeLimit: 150_000,
      markInterruptAsFailure: true,
      // Always tried: a wrong guess found mid-load (a part's disorder past its head, each part one range),
      // and the window's switch to round-robin in a gzipped part, each killed and resumed.
      examples: [
        [
          {
            parts: [
              { shape: 'sorted', format: 'csv', gzip: false, rows: 120, seed: 7 },
              { shape: 'head', format: 'tsv', gzip: false, rows: 150, seed: 11 },
              { shape: 'sorted', format: 'jsonl', gzip: false, rows: 100, seed: 13 },
            ],
            striped: true,
            bad: 0.05,
            kills: [3],
            stripeBytes: 2048,
            restartRows: 20,
          },
        ],
        [
          {
            parts: [
              { shape: 'mixed', format: 'jsonl', gzip: false, rows: 60, seed: 17 },
              { shape: 'switch', format: 'csv', gzip: true, rows: 20, seed: 19 },
            ],
            striped: false,
            bad: 0,
            kills: [4, 3],
            stripeBytes: 256,
            restartRows: 2500,
          },
        ],
      ],
    },
  )(
    'sorted, mixed, wrongly guessed and switching parts, SIGKILL then the same command: table = one by one, each reject once, counts add up',
    async ({ parts: drawn, striped, bad, kills, stripeBytes, restartRows }) => {
      // At most one part long enough to switch the window (it costs seconds).
      let switches = 0;
      const draws = drawn.map((d) => {
        const shape = d.shape === 'switch' && switches++ > 0 ? 'mixed' : d.shape;
        return striped ? { ...d, shape: shape === 'switch' || shape === 'mixed' ? ('sorted' as const) : shape, gzip: false } : { ...d, shape };
      });
      const n = ++seq;
      const folder = join(dir(), `set${n}`);
      await mkdir(folder);
      const parts = draws.map((d, p) => {
        const part: PartModel = { format: d.format, compression: d.gzip ? 'gz' : 'none', rows: rowsOf(d, p, bad) };
        return { name: join(folder, `part-${p}${extOf(part)}`), part };
      });
      for (const { name, part } of parts) await writeFile(name, partBytes(part));
      const expected = expectedOfParts(parts);
      const table = await newTable();
      const checkpoint = join(dir(), `${n}.checkpoint.json`);
      const rejectsPath = join(dir(), `${n}.rejects.jsonl`);
      const args = [
        'load',
        folder,
        '--table',
        table,
        '--types',
        Object.entries(MIGRATION_TYPES)
          .map(([name, type]) => `${name}:${type}`)
          .join(','),
        '--window',
        '64',
        '--concurrency',
        '2',
        '--checkpoint',
        checkpoint,
        '--rejects',
        rejectsPath,
        '--no-progress',
        '--json',
      ];
      const env = { ...localEnv(endpoint), DDB_SPREAD_TEST_STRIPE_BYTES: String(stripeBytes), DDB_SPREAD_TEST_RESTART_ROWS: String(restartRows) };
      try {
        let target = 0;
        for (const step of kills) {
          target += step;
          const at = target;
          const run = await runCli(args, {
            cwd: dir(),
            env,
            stdout: 'ignore',
            timeoutMs: 60_000,
            kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= at },
          });
          if (run.signal === 'SIGKILL') landed++;
          else expect([0, 2], run.stderr).toContain(run.code);
        }
        cases++;
        const last = await runCli(args, { cwd: dir(), env, timeoutMs: 60_000 });
        expect(last.code, last.stderr).toBe(expected.rejects.size > 0 ? 2 : 0);
        const summary = JSON.parse(last.stdout) as {
          rowsRead: number;
          written: number;
          superseded: number;
          rejected: number;
          notWritten: number;
          otherSegments: number;
          complete: boolean;
        };
        expect(
          summary.written + summary.superseded + summary.rejected + summary.notWritten + summary.otherSegments,
          'read = written + superseded + rejected + not written',
        ).toBe(summary.rowsRead);
        expect({ rowsRead: summary.rowsRead, rejected: summary.rejected, notWritten: summary.notWritten, complete: summary.complete }).toEqual({
          rowsRead: expected.rows,
          rejected: expected.rejects.size,
          notWritten: 0,
          complete: expected.rejects.size === 0,
        });
        const actual = await scanRaw(endpoint, table);
        expect([...actual.keys()].sort(), 'primary keys in the table').toEqual([...expected.table.keys()].sort());
        for (const [k, item] of expected.table) expect(actual.get(k), `item ${k}`).toEqual(item);
        const records = await readRejectsIfAny(rejectsPath);
        const seen = records.map((r) => `${r.file}\u0000${r.line}`);
        expect(seen.length, `each rejected row once: ${seen.join(' | ')}`).toBe(new Set(seen).size);
        expect(new Map(records.map((r) => [`${r.file}\u0000${r.line}`, r.code]))).toEqual(expected.rejects);
      } finally {
        await dropTable(table);
      }
    },
    300_000,
  );

  it('kills landed while writing in most cases', () => {
    expect(landed, `${landed} kills landed in ${cases} cases`).toBeGreaterThanOrEqual(Math.ceil(cases / 3));
  });
});
