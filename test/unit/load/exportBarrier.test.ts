import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_CODE_OF, PERMANENT_EXIT_CODES } from '../../../src/cli/exitCodes.js';
import { barrierVerdict, ExportBarrier, PERMANENT_STOP_CODES } from '../../../src/load/exportBarrier.js';
import { WORKER_FORMAT, workerDocPath, type WorkerDoc } from '../../../src/load/workerBoard.js';
import { LoaderError } from '../../../src/shared/errors.js';

const LISTED = '2026-11-27T11:00:00.000Z';

function doc(segment: string, over: Partial<WorkerDoc> = {}): WorkerDoc {
  return {
    format: WORKER_FORMAT,
    version: 1,
    segment,
    listedAt: LISTED,
    state: 'running',
    table: 'T',
    host: 'h',
    pid: 1,
    startedAt: LISTED,
    updatedAt: new Date().toISOString(),
    rowsRead: 0,
    written: 0,
    superseded: 0,
    rejected: 0,
    otherSegments: 0,
    notWritten: 0,
    rejectedByReason: {},
    complete: false,
    wcu: 0,
    ...over,
  };
}

describe('barrierVerdict', () => {
  it('goes once every peer of this load has settled the exports before the next, or finished', () => {
    const peers = [
      { segment: '1/3', doc: doc('1/3', { settledExports: 2 }) },
      { segment: '2/3', doc: doc('2/3', { state: 'finished' }) },
    ];
    expect(barrierVerdict(peers, LISTED, 2)).toEqual({ go: true });
    expect(barrierVerdict(peers, LISTED, 3)).toEqual({ go: false, waitingFor: ['1/3'], stopped: [] });
  });

  it("a peer's document of another table is another load's (the same listing loaded again into a new table): waited for", () => {
    const peers = [{ segment: '1/2', doc: doc('1/2', { state: 'finished' }) }];
    expect(barrierVerdict(peers, LISTED, 2, 'T')).toEqual({ go: true });
    expect(barrierVerdict(peers, LISTED, 2, 'Other')).toEqual({ go: false, waitingFor: ['1/2'], stopped: [] });
  });

  it('waits for a peer not started, of an earlier load, running behind, silent, or stopped on what a retry fixes', () => {
    const peers = [
      { segment: '1/6', doc: undefined },
      { segment: '2/6', doc: doc('2/6', { listedAt: '2026-01-01T00:00:00.000Z', state: 'finished' }) },
      { segment: '3/6', doc: doc('3/6') },
      { segment: '4/6', doc: doc('4/6', { settledExports: 1, updatedAt: '2026-01-01T00:00:00.000Z' }) },
      { segment: '5/6', doc: doc('5/6', { state: 'stopped', stopCode: 'ENDPOINT_UNREACHABLE', settledExports: 0 }) },
    ];
    expect(barrierVerdict(peers, LISTED, 2)).toEqual({ go: false, waitingFor: ['1/6', '2/6', '3/6', '4/6', '5/6'], stopped: [] });
    // A stopped peer that had settled enough before it stopped holds nobody up.
    expect(barrierVerdict([{ segment: '1/2', doc: doc('1/2', { state: 'stopped', stopCode: 'INPUT_CHANGED', settledExports: 2 }) }], LISTED, 2)).toEqual({
      go: true,
    });
  });

  it('names a peer stopped on what no retry fixes, before it settled', () => {
    const peers = [
      { segment: '1/3', doc: undefined },
      { segment: '2/3', doc: doc('2/3', { state: 'stopped', stopCode: 'INPUT_CHANGED', settledExports: 1 }) },
    ];
    expect(barrierVerdict(peers, LISTED, 2)).toEqual({
      go: false,
      waitingFor: ['1/3', '2/3'],
      stopped: [{ segment: '2/3', code: 'INPUT_CHANGED', updatedAt: peers[1]!.doc!.updatedAt }],
    });
  });

  it("its permanent stop codes are the ones the CLI exits with a permanent code for (or a signal's, which are not codes)", () => {
    const permanent = Object.entries(EXIT_CODE_OF)
      .filter(([code, exit]) => (PERMANENT_EXIT_CODES as readonly number[]).includes(exit) && !isRowCode(code))
      .map(([code]) => code)
      .sort();
    expect([...PERMANENT_STOP_CODES].sort()).toEqual(permanent);
  });
});

/** Codes of one row, never a load's stop (errors.ts RejectCode). */
function isRowCode(code: string): boolean {
  return /_SYNTAX$|^(NOT_AN_OBJECT|MISSING_KEY|KEY_TYPE_MISMATCH|KEY_TOO_LONG|TYPE_ERROR|ITEM_TOO_LARGE|INVALID_UTF8|TOO_DEEP|RECORD_TOO_LARGE|SHARD_ATTRIBUTE|SHARD_KEY_COLLISION|WRITE_REJECTED|RETRIES_EXHAUSTED|TRANSFORM_FAILED|TRANSFORM_OUTPUT_INVALID|IF_NEWER_VALUE|ITEM_CONDITION|INVALID_CONDITION)$/.test(
    code,
  );
}

/** Resolves once `done` holds, read every 10 ms (the barrier reads the documents every 20 ms here). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('ExportBarrier over the documents beside a listing', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'barrier-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const barrier = (listing: string, said: string[], published: number[], stopping = () => false, stopGraceMs = 150) =>
    new ExportBarrier({
      segment: { index: 0, count: 3 },
      listing,
      listedAt: LISTED,
      table: 'T',
      s3: () => Promise.reject(new Error('no S3 here')),
      exportNames: ['FULL', 'INCR1', 'INCR2'],
      beatMs: 20,
      publish: async (n) => {
        published.push(n);
      },
      stopGraceMs,
      onWait: (message, waiting) => {
        said.push(message ?? 'done');
        // What the document says for status: the same workers.
        if (waiting) for (const w of waiting.waitingFor) expect(message).toContain(w);
      },
      stopping,
    });
  const put = (listing: string, index: number, over: Partial<WorkerDoc>) =>
    writeFile(workerDocPath(listing, { index, count: 3 }), JSON.stringify(doc(`${index}/3`, over)));

  it('publishes first, says whom it waits for and why, and goes once they have settled', async () => {
    const listing = join(dir, 'l.json');
    await put(listing, 1, { settledExports: 0 });
    const said: string[] = [];
    const published: number[] = [];
    const crossing = barrier(listing, said, published).cross(1);
    await until(() => said.length === 1);
    expect(published).toEqual([1]);
    expect(said).toEqual([
      "waiting for workers 1/3, 2/3 to write export 1 of 3 (FULL) before reading export 2 of 3 (INCR1): an item's record in a later export must land after its record in an earlier one",
    ]);
    await put(listing, 1, { settledExports: 1 });
    await until(() => said.length === 2);
    expect(said[1]).toMatch(/^waiting for worker 2\/3 to write/);
    await put(listing, 2, { state: 'finished' });
    await crossing;
    expect(published).toEqual([1]);
    // Once past, it says it waits no more (the document's barrier is cleared).
    expect(said).toHaveLength(3);
    expect(said[2]).toBe('done');
  });

  it('stops with PEER_STOPPED (a retry later works) when a peer stopped on what no retry fixes; returns when the load stops', async () => {
    const listing = join(dir, 'l.json');
    await put(listing, 1, { state: 'finished' });
    await put(listing, 2, { state: 'stopped', stopCode: 'CHECKPOINT_MISMATCH', settledExports: 1 });
    const error = await barrier(listing, [], [])
      .cross(2)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('PEER_STOPPED');
    expect((error as LoaderError).message).toMatch(
      /^worker 2\/3 stopped \(CHECKPOINT_MISMATCH\) before it had written exports 1 to 2 of the chain, and this worker must not read export 3 of 3 \(INCR2\) until it has\. .* then run worker 0\/3 again$/,
    );
    expect(EXIT_CODE_OF.PEER_STOPPED).toBe(75);
    // Started again within the grace (workers restarted together after a fix): its new word is waited on.
    await put(listing, 2, { state: 'stopped', stopCode: 'CHECKPOINT_MISMATCH', settledExports: 1, updatedAt: new Date(Date.now() - 60_000).toISOString() });
    const said: string[] = [];
    const patient = barrier(listing, said, [], () => false, 5_000).cross(2);
    await until(() => said.length === 1);
    await put(listing, 2, { state: 'running', settledExports: 1 });
    await new Promise((r) => setTimeout(r, 300));
    await put(listing, 2, { settledExports: 2 });
    await expect(patient).resolves.toBeUndefined();
    let stop = false;
    const waiting = barrier(listing, [], [], () => stop).cross(3);
    await put(listing, 2, { state: 'stopped', stopCode: 'ABORTED', settledExports: 1 });
    stop = true;
    await expect(waiting).resolves.toBeUndefined();
  });
});
