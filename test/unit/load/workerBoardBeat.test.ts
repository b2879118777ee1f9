/**
 * Attacks on the worker's document (workerBoard.ts) without DynamoDB: a beat that reads the document
 * (to find a second worker of the same --segment) while the load ends. Each test is named after the hole
 * it shows.
 */
import { describe, expect, it } from 'vitest';
import { WorkerBoard, type WorkerDoc, type WorkerDocStore } from '../../../src/load/workerBoard.js';
import type { LoadResult } from '../../../src/reporting/result.js';

const LISTED = '2026-11-27T10:00:00.000Z';
const RESULT = {
  table: 't',
  rowsRead: 0,
  written: 0,
  superseded: 0,
  rejected: 0,
  otherSegments: 0,
  notWritten: 0,
  rejectedByReason: {},
  complete: true,
  rate: { averageWcu: 0 },
} as unknown as LoadResult;

/** A store in memory whose reads wait until the test lets them go (an S3 GET, or a slow shared volume). */
function slowStore() {
  let text: string | undefined;
  const readers: Array<() => void> = [];
  let readAsked: () => void = () => undefined;
  const firstRead = new Promise<void>((resolve) => (readAsked = resolve));
  const store: WorkerDocStore = {
    where: 'memory',
    read: () =>
      new Promise<string | undefined>((resolve) => {
        readers.push(() => resolve(text));
        readAsked();
      }),
    write: (next) => {
      text = next;
      return Promise.resolve();
    },
  };
  return { store, firstRead, release: () => readers.splice(0).forEach((go) => go()), doc: () => JSON.parse(text!) as WorkerDoc };
}

describe('WorkerBoard: the last word stays the last', () => {
  it("a beat whose read is slow lands no 'running' after the last word 'finished' (status would call a finished worker silent)", async () => {
    const { store, firstRead, release, doc } = slowStore();
    const board = new WorkerBoard(
      store,
      { index: 0, count: 2 },
      LISTED,
      () => RESULT,
      () => undefined,
    );
    board.onDuplicate = () => undefined;
    await board.start(5);
    // A beat has started: it reads the document before writing it again.
    await firstRead;
    await board.end('finished', undefined, true);
    expect(doc().state).toBe('finished');
    // The beat's read answers after the last word was written.
    release();
    await new Promise((resolve) => setTimeout(resolve, 30));
    release();
    expect(doc().state).toBe('finished');
  });

  it("the same process's second pass (a striped read found the input not grouped) is not taken for a second worker by the first pass's late beat", async () => {
    // load() runs loadOnce again in the same process, with a new board (a new run id) on the same document.
    const { store, firstRead, release } = slowStore();
    const first = new WorkerBoard(
      store,
      { index: 0, count: 2 },
      LISTED,
      () => RESULT,
      () => undefined,
    );
    first.onDuplicate = () => undefined;
    await first.start(5);
    await firstRead;
    await first.end('stopped', 'ORDER_NOT_GROUPED');
    const second = new WorkerBoard(
      store,
      { index: 0, count: 2 },
      LISTED,
      () => RESULT,
      () => undefined,
    );
    let duplicated = false;
    second.onDuplicate = () => (duplicated = true);
    await second.start(5);
    // The first pass's beat answers now, and the second pass's beats read what it wrote.
    for (let i = 0; i < 10; i++) {
      release();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await second.end('finished', undefined, true);
    release();
    expect(duplicated).toBe(false);
  });
});
