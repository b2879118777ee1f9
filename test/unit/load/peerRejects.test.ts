import { describe, expect, it } from 'vitest';
import { sharedRejectsOf } from '../../../src/load/peerRejects.js';
import { WORKER_FORMAT, type WorkerDoc } from '../../../src/load/workerBoard.js';

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
    updatedAt: LISTED,
    rowsRead: 10,
    written: 9,
    superseded: 0,
    rejected: 1,
    otherSegments: 0,
    notWritten: 0,
    rejectedByReason: { TYPE_ERROR: 1 },
    complete: false,
    wcu: 1,
    rejectsPath: '/state/rejects.jsonl',
    ...over,
  };
}

describe('sharedRejectsOf', () => {
  const me = { listedAt: LISTED, table: 'T', rejectsPath: '/state/./rejects.jsonl' };
  it("names the worker of this load whose rejected rows are in this worker's --rejects", () => {
    expect(
      sharedRejectsOf(
        [
          { segment: '0/3', doc: undefined },
          { segment: '2/3', doc: doc('2/3') },
        ],
        me,
      ),
    ).toBe('2/3');
  });
  it('none for another file, a worker with no rejected rows, or a state of another load (listing time or table)', () => {
    expect(sharedRejectsOf([{ segment: '2/3', doc: doc('2/3', { rejectsPath: '/state/rejects-2.jsonl' }) }], me)).toBeUndefined();
    expect(sharedRejectsOf([{ segment: '2/3', doc: doc('2/3', { rejected: 0, rejectsPath: undefined }) }], me)).toBeUndefined();
    expect(sharedRejectsOf([{ segment: '2/3', doc: doc('2/3', { listedAt: '2026-11-27T10:00:00.000Z' }) }], me)).toBeUndefined();
    expect(sharedRejectsOf([{ segment: '2/3', doc: doc('2/3', { table: 'U' }) }], me)).toBeUndefined();
  });
});
