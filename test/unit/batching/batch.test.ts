import { describe, expect, it } from 'vitest';
import { createBatcher, MAX_BATCH_BYTES, MAX_BATCH_REQUESTS, type Batch } from '../../../src/batching/batch.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

let lineCounter = 0;
function write(keyId: string, size = 100): PlannedWrite {
  lineCounter++;
  return {
    origin: { file: 'in.csv', line: lineCounter, raw: `${keyId}@${lineCounter}` },
    item: { pk: keyId },
    keyId,
    partitionId: keyId,
    size,
    wcu: Math.max(1, Math.ceil(size / 1024)),
  };
}

interface Run {
  batches: Batch[];
  superseded: PlannedWrite[];
}

function runBatcher(writes: PlannedWrite[], limits: { maxRequests?: number; maxBytes?: number } = {}): Run {
  const batcher = createBatcher(limits);
  const batches: Batch[] = [];
  const superseded: PlannedWrite[] = [];
  for (const w of writes) {
    const result = batcher.push(w);
    if (result.full) batches.push(result.full);
    if (result.superseded) superseded.push(result.superseded);
  }
  const last = batcher.flush();
  if (last) batches.push(last);
  expect(batcher.flush()).toBeUndefined();
  return { batches, superseded };
}

interface Scenario {
  seed: number;
  writes: PlannedWrite[];
  limits: { maxRequests?: number; maxBytes?: number };
  maxBytes: number;
  maxRequests: number;
}

/** Random inputs: a small key pool (so keys repeat), random sizes, and sometimes tight limits. */
function scenario(seed: number): Scenario {
  const random = mulberry32(seed);
  const count = Math.floor(random() * 300);
  const pool = 1 + Math.floor(random() * 60);
  const tight = random() < 0.5;
  const maxBytes = tight ? 2000 : MAX_BATCH_BYTES;
  const maxRequests = random() < 0.3 ? 1 + Math.floor(random() * 25) : MAX_BATCH_REQUESTS;
  const writes: PlannedWrite[] = [];
  for (let i = 0; i < count; i++) {
    const size = tight ? 1 + Math.floor(random() * 600) : 1 + Math.floor(random() * 400 * 1024);
    writes.push(write(`k${Math.floor(random() * pool)}`, size));
  }
  const limits = { ...(tight ? { maxBytes } : {}), ...(maxRequests !== MAX_BATCH_REQUESTS ? { maxRequests } : {}) };
  return { seed, writes, limits, maxBytes, maxRequests };
}

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20];

describe('createBatcher on generated inputs', () => {
  it.each(SEEDS)('seed %i: no batch is empty or exceeds the request limit', (seed) => {
    const s = scenario(seed);
    for (const batch of runBatcher(s.writes, s.limits).batches) {
      expect(batch.writes.length).toBeGreaterThan(0);
      expect(batch.writes.length).toBeLessThanOrEqual(s.maxRequests);
    }
  });

  it.each(SEEDS)('seed %i: no batch exceeds maxBytes, and bytes/wcu are the sums of its writes', (seed) => {
    const s = scenario(seed);
    for (const batch of runBatcher(s.writes, s.limits).batches) {
      expect(batch.bytes).toBe(batch.writes.reduce((sum, w) => sum + w.size, 0));
      expect(batch.wcu).toBe(batch.writes.reduce((sum, w) => sum + w.wcu, 0));
      expect(batch.bytes).toBeLessThanOrEqual(s.maxBytes);
    }
  });

  it.each(SEEDS)('seed %i: no key twice in a batch', (seed) => {
    const s = scenario(seed);
    for (const batch of runBatcher(s.writes, s.limits).batches) {
      const keys = batch.writes.map((w) => w.keyId);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  it.each(SEEDS)('seed %i: every write appears exactly once across batches and superseded', (seed) => {
    const s = scenario(seed);
    const { batches, superseded } = runBatcher(s.writes, s.limits);
    const seen = [...batches.flatMap((b) => b.writes), ...superseded];
    expect(seen).toHaveLength(s.writes.length);
    expect(new Set(seen).size).toBe(s.writes.length);
    for (const w of s.writes) expect(seen).toContain(w);
  });

  it.each(SEEDS)('seed %i: sending the batches in order leaves each key with its last input write', (seed) => {
    const s = scenario(seed);
    const { batches } = runBatcher(s.writes, s.limits);
    const expected = new Map<string, PlannedWrite>();
    for (const w of s.writes) expected.set(w.keyId, w);
    const actual = new Map<string, PlannedWrite>();
    for (const batch of batches) for (const w of batch.writes) actual.set(w.keyId, w);
    expect(actual).toEqual(expected);
    for (const [key, w] of expected) expect(actual.get(key)).toBe(w);
  });

  it.each(SEEDS)('seed %i: a write is superseded only by a later write to the same key', (seed) => {
    const s = scenario(seed);
    const { superseded } = runBatcher(s.writes, s.limits);
    for (const old of superseded) {
      const at = s.writes.indexOf(old);
      expect(s.writes.slice(at + 1).some((w) => w.keyId === old.keyId)).toBe(true);
    }
  });
});

describe('createBatcher: behaviour', () => {
  it('limits default to 25 requests and 16 MB', () => {
    expect(MAX_BATCH_REQUESTS).toBe(25);
    expect(MAX_BATCH_BYTES).toBe(16 * 1024 * 1024);
  });

  it('the 25th write completes a batch; the 26th starts the next', () => {
    const batcher = createBatcher();
    const writes = Array.from({ length: 26 }, (_, i) => write(`k${i}`));
    const results = writes.map((w) => batcher.push(w));
    expect(results.slice(0, 24).every((r) => r.full === undefined)).toBe(true);
    expect(results[24]?.full?.writes).toEqual(writes.slice(0, 25));
    expect(results[25]?.full).toBeUndefined();
    expect(batcher.flush()?.writes).toEqual([writes[25]]);
  });

  it('a repeated key in the filling batch supersedes the earlier write; the later write is kept', () => {
    const batcher = createBatcher();
    const first = write('a');
    const other = write('b');
    const second = write('a');
    expect(batcher.push(first)).toEqual({});
    expect(batcher.push(other)).toEqual({});
    expect(batcher.push(second)).toEqual({ superseded: first });
    const batch = batcher.flush();
    expect(batch?.writes).toHaveLength(2);
    expect(batch?.writes).toContain(second);
    expect(batch?.writes).not.toContain(first);
  });

  it('a key repeated three times keeps only the last', () => {
    const batcher = createBatcher();
    const [a1, a2, a3] = [write('a', 10), write('a', 20), write('a', 30)];
    batcher.push(a1);
    expect(batcher.push(a2).superseded).toBe(a1);
    expect(batcher.push(a3).superseded).toBe(a2);
    expect(batcher.flush()).toEqual({ writes: [a3], wcu: 1, bytes: 30 });
  });

  it('a key repeated after its batch was completed is not superseded: it goes in the next batch', () => {
    const batcher = createBatcher({ maxRequests: 2 });
    const a1 = write('a');
    batcher.push(a1);
    expect(batcher.push(write('b')).full?.writes).toHaveLength(2);
    const a2 = write('a');
    expect(batcher.push(a2)).toEqual({});
    expect(batcher.flush()?.writes).toEqual([a2]);
  });

  it('a write that does not fit in maxBytes completes the batch before it', () => {
    const batcher = createBatcher({ maxBytes: 100 });
    const w60 = write('a', 60);
    const w50 = write('b', 50);
    const w40 = write('c', 40);
    expect(batcher.push(w60)).toEqual({});
    expect(batcher.push(w50).full?.writes).toEqual([w60]);
    expect(batcher.push(w40)).toEqual({});
    expect(batcher.flush()).toEqual({ writes: [w50, w40], wcu: 2, bytes: 90 });
  });

  it('a batch may fill maxBytes exactly', () => {
    const batcher = createBatcher({ maxBytes: 100 });
    batcher.push(write('a', 60));
    expect(batcher.push(write('b', 40))).toEqual({});
    expect(batcher.flush()?.bytes).toBe(100);
  });

  it('a superseding write that is larger must not push the batch over maxBytes', () => {
    const batcher = createBatcher({ maxBytes: 100 });
    const batches: Batch[] = [];
    for (const w of [write('a', 10), write('b', 80), write('a', 30)]) {
      const full = batcher.push(w).full;
      if (full) batches.push(full);
    }
    const last = batcher.flush();
    if (last) batches.push(last);
    for (const batch of batches) expect(batch.bytes).toBeLessThanOrEqual(100);
  });

  it('keys sorted by partition (like a DB export) are batched in input order, 25 at a time', () => {
    const writes: PlannedWrite[] = [];
    for (let p = 0; p < 7; p++) for (let s = 0; s < 11; s++) writes.push(write(`p${p}\u0000s${s}`));
    const { batches, superseded } = runBatcher(writes);
    expect(superseded).toEqual([]);
    expect(batches.map((b) => b.writes.length)).toEqual([25, 25, 25, 2]);
    expect(batches.flatMap((b) => b.writes)).toEqual(writes);
  });

  it('flush returns the partial batch, then undefined', () => {
    const batcher = createBatcher();
    const w = write('a', 1500);
    batcher.push(w);
    expect(batcher.flush()).toEqual({ writes: [w], wcu: 2, bytes: 1500 });
    expect(batcher.flush()).toBeUndefined();
  });

  it('flush on a fresh batcher returns undefined', () => {
    expect(createBatcher().flush()).toBeUndefined();
  });
});

describe('createBatcher without supersede (conditional writes)', () => {
  it('a repeated key closes the batch: every row is sent, a key at most once a batch, in input order', () => {
    const writes = ['a', 'b', 'a', 'c', 'a', 'b'].map((k) => write(k));
    const batcher = createBatcher({ supersede: false });
    const batches: Batch[] = [];
    for (const w of writes) {
      const result = batcher.push(w);
      expect(result.superseded).toBeUndefined();
      if (result.full) batches.push(result.full);
    }
    const last = batcher.flush();
    if (last) batches.push(last);
    expect(batches.map((b) => b.writes.map((w) => w.keyId))).toEqual([
      ['a', 'b'],
      ['a', 'c'],
      ['a', 'b'],
    ]);
    expect(batches.flatMap((b) => b.writes)).toEqual(writes);
    expect(writes.every((w) => w.predecessor === undefined)).toBe(true);
  });
});
