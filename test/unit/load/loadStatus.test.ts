import { describe, expect, it } from 'vitest';
import { loadStatus, parseWorkerDoc, SILENT_AFTER_MS } from '../../../src/load/loadStatus.js';
import { statusExitCode, statusText } from '../../../src/cli/statusCommand.js';
import { HEARTBEAT_MS, rateBeatMs, WORKER_FORMAT, type WorkerDoc } from '../../../src/load/workerBoard.js';

const NOW = Date.parse('2026-11-27T12:00:00.000Z');
const LISTED = '2026-11-27T11:00:00.000Z';

function doc(segment: string, over: Partial<WorkerDoc> = {}): WorkerDoc {
  return {
    format: WORKER_FORMAT,
    version: 1,
    segment,
    listedAt: LISTED,
    state: 'finished',
    table: 'T',
    host: 'h',
    pid: 1,
    startedAt: LISTED,
    updatedAt: new Date(NOW - 1000).toISOString(),
    rowsRead: 100,
    written: 100,
    superseded: 0,
    rejected: 0,
    otherSegments: 0,
    notWritten: 0,
    rejectedByReason: {},
    complete: true,
    wcu: 50,
    ...over,
  };
}

describe('loadStatus', () => {
  it('one listing loaded into two tables: the load is the one into the table asked for, else the worker started last; the others are not started into it', () => {
    const later = new Date(Date.parse(LISTED) + 60_000).toISOString();
    const docs = [doc('0/2', { table: 'B', startedAt: later }), doc('1/2', { table: 'A' })];
    const latest = loadStatus(2, docs, NOW, LISTED);
    expect(latest).toMatchObject({ table: 'B', complete: false, finished: false, rows: 100 });
    expect(latest.workers.map((w) => [w.state, w.otherTable])).toEqual([
      ['finished', undefined],
      ['not started', 'A'],
    ]);
    expect(statusExitCode(latest)).toBe(75);
    expect(statusText({ ...latest, listing: 'l.json', listedAt: LISTED, parts: 2, bytes: 1 })).toMatch(
      /into B .*NOT COMPLETE[\s\S]*worker 1\/2 +not started into this table: its state is of a load of this listing into A/,
    );
    expect(loadStatus(2, docs, NOW, LISTED, 'A')).toMatchObject({ table: 'A', complete: false, rows: 100 });
    expect(loadStatus(2, [doc('0/2', { table: 'A' }), doc('1/2', { table: 'A' })], NOW, LISTED, 'A')).toMatchObject({ complete: true, rows: 200 });
  });

  it('the table deleted and created again under its name: a worker whose state names the table gone has not started this load', () => {
    const later = new Date(Date.parse(LISTED) + 60_000).toISOString();
    const docs = [doc('0/2', { tableIdentity: 'id new', startedAt: later }), doc('1/2', { tableIdentity: 'id old' })];
    const s = loadStatus(2, docs, NOW, LISTED);
    expect(s).toMatchObject({ table: 'T', complete: false, rows: 100 });
    expect(s.workers[1]).toMatchObject({ state: 'not started', otherTable: 'T (id old), deleted and created again since' });
    expect(statusExitCode(s)).toBe(75);
    // A state without the identity (written before the table was described, or by an earlier ddb-spread) is not told apart.
    expect(loadStatus(2, [docs[0]!, doc('1/2')], NOW, LISTED)).toMatchObject({ complete: true, rows: 200 });
  });

  it('complete only when every worker finished its share and wrote every row', () => {
    const all = loadStatus(3, [doc('0/3'), doc('1/3'), doc('2/3')], NOW, LISTED);
    expect(all).toMatchObject({ complete: true, finished: true, rows: 300, written: 300 });
    expect(statusExitCode(all)).toBe(0);
  });

  it('a worker with rejects: finished, not complete, its reject file named, reasons summed; exit 2', () => {
    const s = loadStatus(
      2,
      [doc('0/2'), doc('1/2', { written: 98, rejected: 2, complete: false, rejectsPath: '/s/w1.rejects.jsonl', rejectedByReason: { TYPE_ERROR: 2 } })],
      NOW,
      LISTED,
    );
    expect(s).toMatchObject({ complete: false, finished: true, rejected: 2, rejectedByReason: { TYPE_ERROR: 2 } });
    expect(s.rejectFiles).toEqual([{ segment: '1/2', path: '/s/w1.rejects.jsonl', rejected: 2 }]);
    expect(statusExitCode(s)).toBe(2);
  });

  it('--condition-failures files named by worker, only those with rows; none: no field', () => {
    const s = loadStatus(
      2,
      [
        doc('0/2', { written: 97, conditionFailed: 3, conditionFailuresPath: '/s/kept.seg-0-of-2.jsonl' }),
        doc('1/2', { conditionFailed: 0, conditionFailuresPath: '/s/kept.seg-1-of-2.jsonl' }),
      ],
      NOW,
      LISTED,
    );
    expect(s.conditionFailed).toBe(3);
    expect(s.conditionFailuresFiles).toEqual([{ segment: '0/2', path: '/s/kept.seg-0-of-2.jsonl', conditionFailed: 3 }]);
    expect(loadStatus(1, [doc('0/1')], NOW, LISTED)).not.toHaveProperty('conditionFailuresFiles');
  });

  it('with --transform: skipped rows summed and shown, split rows counted in rows, so rows = written + superseded + rejected + not written + skipped', () => {
    // 100 rows each worker reads; 10 split into 2 items (110 writes), 6 skipped; each worker owns half of the items and of the skipped rows.
    const s = loadStatus(
      2,
      [
        doc('0/2', { rowsRead: 100, splitWrites: 10, skippedByTransform: 3, written: 50, otherSegments: 57 }),
        doc('1/2', { rowsRead: 100, splitWrites: 10, skippedByTransform: 3, written: 48, rejected: 2, otherSegments: 57, complete: false }),
      ],
      NOW,
      LISTED,
    );
    expect(s).toMatchObject({ rows: 106, written: 98, rejected: 2, skippedByTransform: 6, splitWrites: 20 });
    expect(s.rows).toBe(s.written + s.superseded + s.rejected + s.notWritten + s.skippedByTransform!);
    expect(statusText({ ...s, listing: 'l.json', listedAt: LISTED, parts: 1, bytes: 1 })).toMatch(/transform +6 rows skipped/);
    expect(loadStatus(1, [doc('0/1')], NOW, LISTED)).not.toHaveProperty('skippedByTransform');
  });

  it('rows divided by key are counted once: each worker counts the rows of its own segment', () => {
    const s = loadStatus(
      2,
      [doc('0/2', { rowsRead: 100, written: 40, otherSegments: 60 }), doc('1/2', { rowsRead: 100, written: 60, otherSegments: 40 })],
      NOW,
      LISTED,
    );
    expect(s.rows).toBe(100);
  });

  it('--skip-expired: the expired rows of each worker are summed and shown, and a complete load stays complete', () => {
    const s = loadStatus(
      2,
      [doc('0/2', { rowsRead: 100, written: 90, skippedExpired: 10 }), doc('1/2', { rowsRead: 100, written: 97, skippedExpired: 3 })],
      NOW,
      LISTED,
    );
    expect(s).toMatchObject({ complete: true, rows: 200, written: 187, skippedExpired: 13, notWritten: 0 });
    expect(statusText({ ...s, listing: 'l.json', listedAt: LISTED, parts: 1, bytes: 10 })).toMatch(/expired\s+13\s+\(--skip-expired/);
    // A document of a ddb-spread before it has none: counted as 0.
    expect(loadStatus(1, [doc('0/1')], NOW, LISTED).skippedExpired).toBe(0);
  });

  it('a worker stopped by the cost guard gives its permanent code (3 refused, 4 stopped)', () => {
    expect(statusExitCode(loadStatus(1, [doc('0/1', { state: 'stopped', complete: false, stopCode: 'COST_LIMIT_REACHED' })], NOW, LISTED))).toBe(4);
    expect(statusExitCode(loadStatus(1, [doc('0/1', { state: 'stopped', complete: false, stopCode: 'COST_LIMIT_EXCEEDED' })], NOW, LISTED))).toBe(3);
  });

  it('not started, running, silent and stopped workers: not complete, 75; the rate counts the running ones only', () => {
    const s = loadStatus(
      4,
      [
        undefined,
        doc('1/4', { state: 'running', complete: false, updatedAt: new Date(NOW - 5000).toISOString(), wcu: 300 }),
        doc('2/4', { state: 'running', complete: false, updatedAt: new Date(NOW - SILENT_AFTER_MS - 1).toISOString(), wcu: 700 }),
        doc('3/4', { state: 'stopped', complete: false, stopCode: 'ABORTED' }),
      ],
      NOW,
      LISTED,
    );
    expect(s.workers.map((w) => w.state)).toEqual(['not started', 'running', 'silent', 'stopped']);
    expect(s).toMatchObject({ complete: false, finished: false, wcu: 300 });
    expect(statusExitCode(s)).toBe(75);
  });

  it('a worker stopped on what no retry fixes gives its permanent code', () => {
    const s = loadStatus(2, [doc('0/2'), doc('1/2', { state: 'stopped', complete: false, stopCode: 'INPUT_CHANGED' })], NOW, LISTED);
    expect(statusExitCode(s)).toBe(66);
  });

  it("a document of an earlier load at the same path (another listing's time) is not this load's", () => {
    const s = loadStatus(1, [doc('0/1', { listedAt: '2026-01-01T00:00:00.000Z' })], NOW, LISTED);
    expect(s.workers[0]!.state).toBe('not started');
    expect(s.complete).toBe(false);
  });

  it('parseWorkerDoc refuses what ddb-spread did not write, or another worker’s', () => {
    expect(parseWorkerDoc(JSON.stringify(doc('0/2')), 'w.json', '0/2').segment).toBe('0/2');
    expect(() => parseWorkerDoc('{', 'w.json', '0/2')).toThrow(/w\.json is not a worker state/);
    expect(() => parseWorkerDoc(JSON.stringify(doc('1/2')), 'w.json', '0/2')).toThrow(/worker 1\/2's/);
    expect(() => parseWorkerDoc(JSON.stringify({ ...doc('0/2'), written: 'x' }), 'w.json', '0/2')).toThrow(/"written"/);
  });
});

describe('rateBeatMs', () => {
  it('2 s up to 20 workers, longer past them, never longer than the heartbeat status counts silence in', () => {
    expect(rateBeatMs(4)).toBe(2000);
    expect(rateBeatMs(40)).toBe(4000);
    expect(rateBeatMs(1000)).toBe(HEARTBEAT_MS);
    expect(3 * HEARTBEAT_MS).toBe(SILENT_AFTER_MS);
  });
});
