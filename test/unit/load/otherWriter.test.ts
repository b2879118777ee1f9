import { describe, expect, it } from 'vitest';
import { otherWriter, WORKER_FORMAT } from '../../../src/load/workerBoard.js';

const LISTED = '2026-11-27T10:00:00.000Z';
const doc = (fields: Record<string, unknown>) =>
  JSON.stringify({ format: WORKER_FORMAT, version: 1, listedAt: LISTED, updatedAt: '2026-11-27T10:05:00.000Z', ...fields });
const me = (lastWrite: string | undefined) => ({ runId: 'mine', listedAt: LISTED, lastWrite });

describe('otherWriter: another process writing the same worker document', () => {
  it('a document of another run, read after this worker wrote its own, is a second worker of the same segment', () => {
    expect(otherWriter(doc({ runId: 'theirs', host: 'b', pid: 7 }), me('2026-11-27T10:04:00.000Z'))).toMatchObject({ runId: 'theirs', host: 'b', pid: 7 });
    // Whatever the two clocks say: the read came after this worker's own write replaced the document.
    expect(otherWriter(doc({ runId: 'theirs', updatedAt: '2026-11-27T09:00:00.000Z' }), me('2026-11-27T10:04:00.000Z'))).toBeDefined();
  });

  it("nothing before this worker's first write: the document of a worker killed before it started is a restart's", () => {
    expect(otherWriter(doc({ runId: 'killed' }), me(undefined))).toBeUndefined();
  });

  it('its own document, another load at the same path, an older build and damage are not another writer', () => {
    const after = me('2026-11-27T10:04:00.000Z');
    expect(otherWriter(doc({ runId: 'mine' }), after)).toBeUndefined();
    expect(otherWriter(doc({ runId: 'theirs', listedAt: '2026-11-26T00:00:00.000Z' }), after)).toBeUndefined();
    expect(otherWriter(doc({}), after)).toBeUndefined();
    expect(otherWriter('{"format": "ddb-spread-worker", "runId": ', after)).toBeUndefined();
    expect(otherWriter(JSON.stringify({ format: 'something-else', listedAt: LISTED, runId: 'theirs' }), after)).toBeUndefined();
    expect(otherWriter(undefined, after)).toBeUndefined();
  });
});
