/**
 * The stages at an export chain's boundaries (stages.ts ExportBoundaries): before the first row of a later
 * export, every row read of the exports before has been handed on in a batch (the order emptied, the
 * partial batch sent), and only then is the barrier crossed; a row of an earlier export after a later one
 * stops the load as a bug; a load stopping at the barrier reads no row of the next export.
 */
import { describe, expect, it } from 'vitest';
import { createBatcher } from '../../../src/batching/batch.js';
import { LoadStop } from '../../../src/load/loadStop.js';
import { LoadTally } from '../../../src/load/loadTally.js';
import { batchesOf, type ExportBoundaries } from '../../../src/load/stages.js';
import { WriteOrderer } from '../../../src/ordering/writeOrderer.js';
import { LoaderError } from '../../../src/shared/errors.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import { createRowPlanner, type SourceRecord } from '../../../src/typing/planRow.js';

/** One row per entry of `files` (the export's file, `e<index>`), on 7 keys: keys repeat within and across exports. */
async function* chainRows(files: string[]): AsyncGenerator<SourceRecord> {
  let line = 0;
  for (const file of files) {
    line++;
    yield { kind: 'csv', origin: { file, line, raw: '' }, cells: { pk: `k${line % 7}`, n: String(line) } };
  }
}

const stagesOf = (exports: ExportBoundaries, mode: 'window' | 'round-robin' = 'window') => ({
  file: 'chain',
  planner: createRowPlanner({ keySchema: { partitionKey: { name: 'pk', type: 'S' } }, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json' }),
  segment: undefined,
  onPlanned: (w: PlannedWrite) => w,
  // A window larger than an export: without the boundary it would hold rows of two exports at once.
  orderer: new WriteOrderer({ mode, windowRows: 1000, memoryBytes: 1 << 20, tempDir: '/tmp' }),
  order: mode,
  batcher: createBatcher(),
  sendLast: () => true,
  close: () => undefined,
  exports,
});
const reportOf = (stop: LoadStop) => ({
  stop,
  tally: new LoadTally(),
  rejections: { reject: () => Promise.resolve() },
  progress: () => undefined,
  emit: () => undefined,
});
const exportOf = (record: SourceRecord) => Number(record.origin.file.slice(1));

describe('batchesOf at the boundaries of an export chain', () => {
  it('hands on every row of the exports before, then crosses; an export with no row of this worker is crossed to the next', async () => {
    const files = [...Array<string>(30).fill('e0'), ...Array<string>(12).fill('e1'), ...Array<string>(5).fill('e3')];
    const handed: string[] = [];
    const crossed: Array<{ next: number; handedBefore: string[] }> = [];
    const exports: ExportBoundaries = {
      of: exportOf,
      from: 0,
      mustEmpty: true,
      cross: async (next) => {
        crossed.push({ next, handedBefore: [...handed] });
      },
    };
    for await (const batch of batchesOf(chainRows(files), stagesOf(exports), reportOf(new LoadStop())))
      for (const w of batch.writes) for (let x: PlannedWrite | undefined = w; x; x = x.predecessor) handed.push(x.origin.file);
    expect(crossed.map((c) => c.next)).toEqual([1, 3]);
    // Everything of export 0 (written or superseded in its batch) before crossing to 1; of 0 and 1 before 3.
    expect(crossed[0]!.handedBefore.filter((f) => f === 'e0')).toHaveLength(30);
    expect(crossed[0]!.handedBefore.every((f) => f === 'e0')).toBe(true);
    expect(crossed[1]!.handedBefore.filter((f) => f === 'e1')).toHaveLength(12);
    expect(crossed[1]!.handedBefore.some((f) => f === 'e3')).toBe(false);
    expect(handed).toHaveLength(files.length);
  });

  it('a resume inside a later export does not cross again; a row of an earlier export after a later one is a bug', async () => {
    const crossed: number[] = [];
    const exports = (from: number): ExportBoundaries => ({ of: exportOf, from, mustEmpty: true, cross: async (next) => void crossed.push(next) });
    for await (const batch of batchesOf(chainRows(['e2', 'e2', 'e3']), stagesOf(exports(2)), reportOf(new LoadStop()))) expect(batch).toBeDefined();
    expect(crossed).toEqual([3]);
    const out = batchesOf(chainRows(['e1', 'e2', 'e1']), stagesOf(exports(0)), reportOf(new LoadStop()));
    const error = await (async () => {
      for await (const batch of out) expect(batch).toBeDefined();
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('BUG');
  });

  it('a load that stops while at the barrier reads no row of the next export', async () => {
    const stop = new LoadStop();
    const report = reportOf(stop);
    const exports: ExportBoundaries = {
      of: exportOf,
      from: 0,
      mustEmpty: true,
      cross: async () => {
        stop.fail(new LoaderError('PEER_STOPPED', 'a peer stopped'));
      },
    };
    const files = [...Array<string>(10).fill('e0'), ...Array<string>(10).fill('e1')];
    let rows = 0;
    for await (const batch of batchesOf(chainRows(files), stagesOf(exports), report))
      for (const w of batch.writes) for (let x: PlannedWrite | undefined = w; x; x = x.predecessor) rows += x.origin.file === 'e0' ? 1 : 100;
    // Every row of export 0 handed on (written, or superseded in its batch), none of export 1.
    expect(rows).toBe(10);
    expect(report.tally.counters.rowsRead).toBe(10);
  });

  it('read by one process, a global order goes on across the exports (it holds every write to the end, each key in chain order); divided between workers it cannot', async () => {
    const files = [...Array<string>(30).fill('e0'), ...Array<string>(12).fill('e1')];
    const crossed: number[] = [];
    const exports = (mustEmpty: boolean): ExportBoundaries => ({ of: exportOf, from: 0, mustEmpty, cross: async (next) => void crossed.push(next) });
    const handed: string[] = [];
    for await (const batch of batchesOf(chainRows(files), stagesOf(exports(false), 'round-robin'), reportOf(new LoadStop())))
      for (const w of batch.writes) for (let x: PlannedWrite | undefined = w; x; x = x.predecessor) handed.push(x.origin.file);
    expect(crossed).toEqual([1]);
    expect(handed).toHaveLength(files.length);
    const out = batchesOf(chainRows(files), stagesOf(exports(true), 'round-robin'), reportOf(new LoadStop()));
    const error = await (async () => {
      for await (const batch of out) expect(batch).toBeDefined();
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as LoaderError).code).toBe('BUG');
  });
});
