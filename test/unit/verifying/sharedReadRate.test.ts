/**
 * The shared read rate of verify's workers (--segment with --listing): which peers count, the part each
 * takes, and two workers handing the rate between them through their state documents (in memory here;
 * test/cli/verifyShare.test.ts runs real processes against DynamoDB Local). Attacks: a finished, silent
 * or other table's worker keeping its part; parts that add up to more than the total while a worker joins
 * or finishes; a worker that finishes leaving its part unused.
 */
import { describe, expect, it } from 'vitest';
import { SILENT_AFTER_MS } from '../../../src/load/loadStatus.js';
import type { WorkerDocStore } from '../../../src/load/workerBoard.js';
import {
  nextReadTarget,
  parseVerifyWorkerDoc,
  SharedReadRate,
  VERIFY_WORKER_FORMAT,
  verifyWorkerDocPath,
  type VerifyWorkerDoc,
} from '../../../src/verifying/sharedReadRate.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const doc = (over: Partial<VerifyWorkerDoc>): VerifyWorkerDoc => ({
  format: VERIFY_WORKER_FORMAT,
  version: 1,
  segment: '1/2',
  state: 'running',
  table: 'T',
  host: 'h',
  pid: 1,
  runId: 'r',
  startedAt: new Date(NOW).toISOString(),
  updatedAt: new Date(NOW).toISOString(),
  totalRcu: 40,
  targetRcu: 20,
  consumedRcu: 0,
  ...over,
});
const how = { table: 'T', workers: 2, wallMs: NOW };

describe('nextReadTarget', () => {
  it('joins with at most 1/N, and with only what the running peers leave free', () => {
    expect(nextReadTarget(40, undefined, [undefined], how)).toBe(20);
    expect(nextReadTarget(40, undefined, [doc({ targetRcu: 40 })], how)).toBeCloseTo(0.4);
    expect(nextReadTarget(40, undefined, [doc({ targetRcu: 25 })], how)).toBe(15);
  });

  it("lowers at once to an equal part when a peer runs, raises into the room a finished, silent or other table's peer left", () => {
    expect(nextReadTarget(40, 40, [doc({ targetRcu: 1 })], how)).toBe(20);
    expect(nextReadTarget(40, 20, [doc({ state: 'finished' })], how)).toBe(40);
    expect(nextReadTarget(40, 20, [doc({ state: 'stopped' })], how)).toBe(40);
    expect(nextReadTarget(40, 20, [doc({ updatedAt: new Date(NOW - SILENT_AFTER_MS - 1).toISOString() })], how)).toBe(40);
    expect(nextReadTarget(40, 20, [doc({ updatedAt: new Date(NOW - SILENT_AFTER_MS + 1000).toISOString() })], how)).toBe(20);
    expect(nextReadTarget(40, 20, [doc({ table: 'Other' })], how)).toBe(40);
    // Raised only into what is free: the peer still publishes 30 of the 40.
    expect(nextReadTarget(40, 10, [doc({ targetRcu: 30 })], how)).toBe(10);
  });

  it("reads only its own format, beside the listing apart from the load's workers", () => {
    expect(parseVerifyWorkerDoc(JSON.stringify(doc({})))?.targetRcu).toBe(20);
    expect(parseVerifyWorkerDoc(JSON.stringify({ format: 'ddb-spread-worker', targetWcu: 5 }))).toBeUndefined();
    expect(parseVerifyWorkerDoc('{"format": "ddb-spread-verify-worker", ')).toBeUndefined();
    expect(parseVerifyWorkerDoc(undefined)).toBeUndefined();
    expect(verifyWorkerDocPath('/v/l.json', { index: 1, count: 3 })).toBe('/v/l.json.verify-worker-1-of-3.json');
  });
});

describe("SharedReadRate: a peer heard by this worker's own clock", () => {
  // A peer whose clock is far off writes its own time in its document: judged by it, a live peer 60 s
  // behind looked silent (its part taken while it read at it), and a dead one 10 min ahead kept its part.
  const peerAt = (updatedAt: () => string, state: VerifyWorkerDoc['state'] = 'running'): WorkerDocStore => ({
    where: 'peer',
    read: () => Promise.resolve(JSON.stringify(doc({ segment: '1/2', updatedAt: updatedAt(), state }))),
    write: () => Promise.resolve(),
  });
  const own: WorkerDocStore = { where: 'own', read: () => Promise.resolve(undefined), write: () => Promise.resolve() };
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('a live peer whose clock is behind keeps its part: its document changes at every beat', async () => {
    let beat = 0;
    // Written every beat, each time 60 s before this worker's clock.
    const behind = peerAt(() => new Date(Date.now() - 60_000 - ++beat).toISOString());
    const worker = new SharedReadRate({
      total: 40,
      table: 'T',
      segment: { index: 0, count: 2 },
      own,
      peers: [behind],
      beatMs: 20,
      setRate: () => undefined,
      consumed: () => 0,
      warn: () => undefined,
    });
    await worker.start();
    await wait(200);
    expect(worker.target).toBe(20);
    await worker.end('finished');
  });

  it('a dead peer whose clock was ahead is silent once its document has not changed for SILENT_AFTER_MS by this clock', async () => {
    const ahead = new Date(Date.now() + 600_000).toISOString();
    let clock = 0;
    const worker = new SharedReadRate({
      total: 40,
      table: 'T',
      segment: { index: 0, count: 2 },
      own,
      peers: [peerAt(() => ahead)],
      beatMs: 20,
      setRate: () => undefined,
      consumed: () => 0,
      warn: () => undefined,
      now: () => clock,
    });
    await worker.start();
    expect(worker.target).toBe(20);
    clock = SILENT_AFTER_MS - 1000;
    await wait(100);
    expect(worker.target).toBe(20);
    clock = SILENT_AFTER_MS + 1000;
    await wait(100);
    expect(worker.target).toBe(40);
    await worker.end('finished');
  });
});

describe('SharedReadRate', () => {
  it('two workers hand the rate between them: never more than the total published, all of it to the one left', async () => {
    const files = new Map<number, string>();
    const store = (i: number): WorkerDocStore => ({
      where: `w${i}`,
      read: () => Promise.resolve(files.get(i)),
      write: (text) => {
        files.set(i, text);
        return Promise.resolve();
      },
    });
    const rates: number[][] = [[], []];
    const worker = (i: number) =>
      new SharedReadRate({
        total: 40,
        table: 'T',
        segment: { index: i, count: 2 },
        own: store(i),
        peers: [store(1 - i)],
        beatMs: 50,
        setRate: (rcu) => rates[i]!.push(rcu),
        consumed: () => 7,
        warn: () => undefined,
      });
    const published = () =>
      [0, 1]
        .map((i) => parseVerifyWorkerDoc(files.get(i)))
        .filter((d) => d?.state === 'running')
        .reduce((sum, d) => sum + d!.targetRcu, 0);
    const sums: number[] = [];
    const sampler = setInterval(() => sums.push(published()), 5);
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    const a = worker(0);
    await a.start();
    expect(a.target).toBe(20);
    await wait(400);
    // Alone: the whole rate.
    expect(a.target).toBe(40);
    const b = worker(1);
    // b joins with no room and waits for a to make it.
    await b.start();
    expect(b.target).toBe(20);
    await wait(100);
    expect(a.target).toBe(20);
    await b.end('finished');
    expect(parseVerifyWorkerDoc(files.get(1))).toMatchObject({ state: 'finished', consumedRcu: 7, totalRcu: 40 });
    await wait(400);
    expect(a.target).toBe(40);
    await a.end('stopped');
    clearInterval(sampler);
    expect(rates[0]).toEqual([20, 40, 20, 40]);
    expect(sums.length).toBeGreaterThan(10);
    // Over the total only by a joining worker's least part (2% of 1/N).
    for (const sum of sums) expect(sum).toBeLessThanOrEqual(40 * 1.01 + 1e-9);
  });
});
