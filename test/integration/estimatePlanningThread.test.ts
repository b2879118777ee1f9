/**
 * The estimate reads, types and plans its rows on a second thread (src/load/planningThread.ts) where the
 * input allows it. Every figure it gives must be what planning on its own thread gives (the
 * `planningThread: false` path), apart from the measured phases of time: counts, rejects (the reject
 * file line for line), keys, units, the simulations; and an input's errors the same, before any row.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimate, type EstimateOptions } from '../../src/estimating/estimate.js';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import { offlineTableInfo } from '../../src/estimating/offlineTable.js';
import type { LoadEvent } from '../../src/reporting/events.js';
import { LoaderError } from '../../src/shared/errors.js';
import { mulberry32 } from '../../tools/mulberry32.js';
import { buildExport, writeExport } from '../support/exportFixture.js';

let dir: string;
beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'ddb-spread-planning-thread-'))));
afterAll(async () => rm(dir, { recursive: true, force: true }));

const TABLE = offlineTableInfo('estimate', {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'N' },
  billing: 'provisioned',
  tableWcu: 1000,
});

/** Rows of 200 keys in a random order (keys mixed, as a log in time order), some bad: no key, a bad number, a quoted comma. */
function mixedRows(seed: number, rows: number): string[][] {
  const random = mulberry32(seed);
  const out: string[][] = [];
  for (let i = 0; i < rows; i++) {
    const key = `key-${Math.floor(random() ** 2 * 200)}`;
    if (i % 211 === 7) out.push(['', String(i), 'no key']);
    else if (i % 307 === 11) out.push([key, 'x' + String(i), 'bad sort key']);
    else out.push([key, String(i), `"payload, ${'y'.repeat(Math.floor(random() * 1500))}"`]);
  }
  return out;
}

const csvOf = (rows: string[][]) => `pk,sk,payload\n${rows.map((r) => r.join(',')).join('\n')}\n`;
const jsonlOf = (rows: string[][]) =>
  `${rows.map((r) => (r[0] === '' ? '{"sk": 1}' : JSON.stringify({ pk: r[0], sk: Number(r[1]) || r[1], payload: r[2] }))).join('\n')}\n`;

let runs = 0;

interface Run {
  result: EstimateResult;
  events: LoadEvent[];
  rejects: string;
}

async function run(input: string, options: Partial<EstimateOptions>, thread: boolean): Promise<Run> {
  const events: LoadEvent[] = [];
  const rejectsPath = join(dir, `${++runs}.rejects.jsonl`);
  const result = await estimate(
    {
      input,
      table: 'estimate',
      types: { sk: 'N' },
      tableInfo: TABLE,
      rejectsPath,
      ...options,
      simulation: { partitions: 4, latencyMs: 8, ...options.simulation, planningThread: thread },
    },
    { onEvent: (e) => events.push(e) },
  );
  const rejects = await readFile(rejectsPath, 'utf8').catch(() => '');
  return { result, events, rejects };
}

/** The result without the measured phases of time and the reject file's name. */
function figures(r: EstimateResult): unknown {
  const { estimatedSeconds: _e, startupSeconds: _s, readSeconds: _r, ...time } = r.time;
  const { rejectsPath: _p, ...input } = r.input;
  return { ...r, input, time };
}

async function both(input: string, options: Partial<EstimateOptions> = {}): Promise<[Run, Run]> {
  const threaded = await run(input, options, true);
  const own = await run(input, options, false);
  return [threaded, own];
}

const threadUsed = (events: LoadEvent[]) => events.some((e) => e.type === 'reading' && e.planningThread === true);
const warnings = (events: LoadEvent[]) => events.filter((e) => e.type === 'warning').map((e) => (e as { message: string }).message);

describe('an estimate planned on a second thread', () => {
  it('a key-mixed CSV with bad rows: every figure, the warnings and the reject file line for line the same as on one thread', async () => {
    const file = join(dir, 'mixed.csv');
    await writeFile(file, csvOf(mixedRows(1, 30_000)));
    const [threaded, own] = await both(file, { wcu: 1000, keyWcu: 200 });
    expect(threadUsed(threaded.events)).toBe(true);
    expect(threadUsed(own.events)).toBe(false);
    expect(threaded.result.input.rows).toBe(30_000);
    expect(threaded.result.input.rejected).toBeGreaterThan(200);
    expect(threaded.result.simulations.planned.order).toBe('window');
    expect(figures(threaded.result)).toEqual(figures(own.result));
    expect(threaded.rejects.split('\n').length).toBe(threaded.result.input.rejected + 1);
    expect(threaded.rejects).toBe(own.rejects);
    expect(warnings(threaded.events)).toEqual(warnings(own.events));
  });

  it('a folder of mixed parts (CSV, gzip CSV, JSON lines) in a global order: the same figures; each part named in its rejects', async () => {
    const folder = join(dir, 'parts');
    await mkdir(folder);
    const rows = mixedRows(2, 24_000);
    await writeFile(join(folder, 'a.csv'), csvOf(rows.slice(0, 8000)));
    await writeFile(join(folder, 'b.csv.gz'), gzipSync(csvOf(rows.slice(8000, 16_000))));
    await writeFile(join(folder, 'c.jsonl'), jsonlOf(rows.slice(16_000)));
    for (const order of ['round-robin', 'auto'] as const) {
      const [threaded, own] = await both(folder, { order, wcu: 1000 });
      expect(threadUsed(threaded.events)).toBe(order === 'round-robin' || threaded.result.simulations.planned.order === 'window');
      expect(threaded.result.input.rows).toBe(24_000);
      expect(figures(threaded.result)).toEqual(figures(own.result));
      expect(threaded.rejects).toBe(own.rejects);
      for (const part of ['a.csv', 'b.csv.gz', 'c.jsonl']) expect(threaded.rejects).toContain(part);
    }
  });

  it('a DynamoDB export (data files side by side, checked against the manifest) the same figures', async () => {
    const random = mulberry32(3);
    const files = Array.from({ length: 4 }, (_, f) =>
      Array.from({ length: 2500 }, (_, i) => ({
        Item: { pk: { S: `k${Math.floor(random() * 300)}` }, sk: { N: String(f * 10_000 + i) }, v: { S: 'z'.repeat(Math.floor(random() * 900)) } },
      })),
    );
    const folder = await writeExport(join(dir, 'export'), buildExport('exports', 'FULL_EXPORT', files));
    const [threaded, own] = await both(folder, { types: {} });
    expect(threadUsed(threaded.events)).toBe(true);
    expect(threaded.result.input.rows).toBe(10_000);
    expect(figures(threaded.result)).toEqual(figures(own.result));
  });

  it('an export whose data file holds fewer items than its manifest says: the same error, as on one thread', async () => {
    const files = [Array.from({ length: 50 }, (_, i) => ({ Item: { pk: { S: `k${i % 7}` }, sk: { N: String(i) } } }))];
    const folder = await writeExport(join(dir, 'short-export'), buildExport('exports', 'FULL_EXPORT', files, { countOf: (_, n) => n + 1 }));
    const errors: LoaderError[] = [];
    for (const thread of [true, false]) {
      const error = await run(folder, { types: {} }, thread).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LoaderError);
      errors.push(error as LoaderError);
    }
    expect(errors[0]!.code).toBe(errors[1]!.code);
    expect(errors[0]!.message).toBe(errors[1]!.message);
    expect(errors[0]!.file).toBe(errors[1]!.file);
    // The rows read before the failure are counted as on one thread (the thread's last chunk handed on first).
    const counts = (e: LoaderError) => e.result && { rowsRead: e.result.rowsRead, rejected: e.result.rejected };
    expect(counts(errors[0]!)).toEqual({ rowsRead: 50, rejected: 0 });
    expect(counts(errors[0]!)).toEqual(counts(errors[1]!));
  });

  it("a CSV part whose header lacks the table's sort key: INPUT_HEADER naming it, as on one thread, and no row of it counted", async () => {
    const folder = join(dir, 'bad-header');
    await mkdir(folder);
    await writeFile(join(folder, 'a.csv'), csvOf(mixedRows(4, 3000)));
    await writeFile(join(folder, 'b.csv'), `pk,payload\n${'k1,x\n'.repeat(100)}`);
    const errors: LoaderError[] = [];
    for (const thread of [true, false]) {
      const error = await run(folder, { order: 'round-robin' }, thread).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LoaderError);
      errors.push(error as LoaderError);
    }
    expect(errors[0]!.code).toBe('INPUT_HEADER');
    expect({ code: errors[0]!.code, message: errors[0]!.message, file: errors[0]!.file, line: errors[0]!.line }).toEqual({
      code: errors[1]!.code,
      message: errors[1]!.message,
      file: errors[1]!.file,
      line: errors[1]!.line,
    });
    expect(errors[0]!.file).toContain('b.csv');
  });

  it('columns named after Object.prototype members, typed: the same rejects and figures (the types cross threads as they are)', async () => {
    const file = join(dir, 'proto-names.csv');
    const rows = Array.from({ length: 3000 }, (_, i) => `k${i % 13},${i},${i % 50 === 3 ? 'not a number' : String(i * 7)},${i % 2 === 0 ? 'x' : ''}`);
    await writeFile(file, `pk,sk,__proto__,constructor\n${rows.join('\n')}\n`);
    // JSON.parse makes "__proto__" an own key, as a config file's types would be.
    const types = JSON.parse('{"sk": "N", "__proto__": "N", "constructor": "S"}') as Record<string, 'N' | 'S'>;
    const [threaded, own] = await both(file, { types });
    expect(threadUsed(threaded.events)).toBe(true);
    expect(threaded.result.input.rejected).toBe(60);
    expect(threaded.rejects).toBe(own.rejects);
    expect(figures(threaded.result)).toEqual(figures(own.result));
  });

  it('JSON lines that look like DynamoDB JSON: the same warning, once', async () => {
    const file = join(dir, 'ddb-looking.jsonl');
    const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify({ pk: { S: `k${i % 9}` }, sk: { N: String(i) } }));
    await writeFile(file, `${lines.join('\n')}\n`);
    const [threaded, own] = await both(file, { types: {} });
    expect(threadUsed(threaded.events)).toBe(true);
    expect(warnings(threaded.events).filter((m) => m.includes('looks like DynamoDB JSON'))).toHaveLength(1);
    expect(warnings(threaded.events)).toEqual(warnings(own.events));
    expect(figures(threaded.result)).toEqual(figures(own.result));
  });

  it("a table with GSIs: the rows are planned on the estimate's own thread (the tally needs their items)", async () => {
    const file = join(dir, 'gsi.csv');
    await writeFile(file, csvOf(mixedRows(6, 2000)));
    const withGsi = offlineTableInfo('estimate', {
      partitionKey: { name: 'pk', type: 'S' },
      sortKey: { name: 'sk', type: 'N' },
      billing: 'provisioned',
      tableWcu: 1000,
      gsis: [{ name: 'byPayload', partitionKey: { name: 'payload', type: 'S' }, projection: 'KEYS_ONLY', nonKeyAttributes: [] }],
    });
    const { events } = await run(file, { tableInfo: withGsi }, true);
    expect(threadUsed(events)).toBe(false);
  });
});
