import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agreedDivision } from '../../../src/load/prepareLoad.js';
import { dealParts, divisionOf, exportSpans, shareOf, rangeLayout } from '../../../src/load/shares.js';
import { LoaderError } from '../../../src/shared/errors.js';
import type { ListedPart } from '../../../src/reading/inputPart.js';
import type { ListedExport } from '../../../src/reading/dynamodbExport.js';

const part = (name: string, size: number, format?: ListedPart['format']): ListedPart => ({
  part: {
    name,
    size,
    open: () => Promise.reject(new Error('not read')),
    outline: () => Promise.reject(new Error('no')),
    contentHash: () => Promise.reject(new Error('no')),
  },
  ...(format ? { format } : {}),
});
const exported = (name: string, parts = 1) => ({ name, items: 1, parts }) as unknown as ListedExport;
const seg = (index: number, count: number) => ({ index, count });

describe('dealParts', () => {
  it('gives every part to exactly one worker, none empty when parts >= workers, loads within one part of each other', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(1_000_000), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 16 }), (sizes, workers) => {
        const owner = dealParts(sizes, workers);
        expect(owner).toHaveLength(sizes.length);
        for (const w of owner) expect(w >= 0 && w < workers).toBe(true);
        const load = new Array<number>(workers).fill(0);
        const count = new Array<number>(workers).fill(0);
        owner.forEach((w, i) => {
          load[w]! += sizes[i]!;
          count[w]!++;
        });
        if (sizes.length >= workers) for (const c of count) expect(c).toBeGreaterThan(0);
        // Longest-first to the least loaded: the spread is at most the largest part.
        expect(Math.max(...load) - Math.min(...load)).toBeLessThanOrEqual(Math.max(...sizes));
        // The same deal every time: every worker computes it on its own.
        expect(dealParts(sizes, workers)).toEqual(owner);
      }),
      { numRuns: 200 },
    );
  });

  it('parts of equal size, even of size 0, go round the workers', () => {
    expect(dealParts([0, 0, 0, 0], 2)).toEqual([0, 1, 0, 1]);
    expect(dealParts([5, 5, 5, 5, 5, 5], 3)).toEqual([0, 1, 2, 0, 1, 2]);
  });
});

describe('shareOf', () => {
  it("the workers' shares are the parts, each once, in listing order", () => {
    const parts = Array.from({ length: 16 }, (_, i) => part(`p${i}`, 1000 + ((i * 7919) % 5000)));
    const division = { by: 'parts' as const, why: 'test' };
    const shares = [0, 1, 2, 3].map((i) => shareOf(parts, seg(i, 4), division));
    const names = shares.flatMap((s) => s.parts.map((p) => p.part.name));
    expect(names.sort()).toEqual(parts.map((p) => p.part.name).sort());
    const total = parts.reduce((n, p) => n + p.part.size!, 0);
    for (const s of shares) {
      expect(s.bytes + s.otherBytes).toBe(total);
      expect(s.parts.length + s.otherParts).toBe(16);
      const order = s.parts.map((p) => parts.indexOf(p));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  });
});

describe('divisionOf', () => {
  const csvParts = [part('a.csv', 10), part('b.csv', 10), part('c.csv', 10), part('d.csv', 10)];
  it('no division for one worker', () => {
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: undefined, partsDisjoint: false })).toBeUndefined();
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: seg(0, 1), partsDisjoint: true })).toBeUndefined();
  });
  it('by part for one export, full or incremental, and for parts the user says are disjoint', () => {
    const full = ['d0', 'd1', 'd2'].map((n) => part(n, 5, 'export-full'));
    expect(divisionOf({ parts: full, exports: [exported('e1')] }, { segment: seg(1, 3), partsDisjoint: false })?.by).toBe('parts');
    const incremental = ['d0', 'd1'].map((n) => part(n, 5, 'export-incremental-ion'));
    expect(divisionOf({ parts: incremental, exports: [exported('e2')] }, { segment: seg(0, 2), partsDisjoint: false })?.by).toBe('parts');
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: seg(0, 4), partsDisjoint: true })).toMatchObject({
      by: 'parts',
      why: expect.stringContaining('--parts-disjoint'),
    });
  });
  it('by key with --transform, which may write a key from rows of several parts, unless --parts-disjoint vouches for its keys', () => {
    const full = ['d0', 'd1', 'd2'].map((n) => part(n, 5, 'export-full'));
    expect(divisionOf({ parts: full, exports: [exported('e1')] }, { segment: seg(1, 3), partsDisjoint: false, transform: './t.mjs' })).toMatchObject({
      by: 'keys',
      why: expect.stringContaining('--transform'),
    });
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: seg(0, 4), partsDisjoint: true, transform: './t.mjs' })?.by).toBe('parts');
  });
  it('by key for an export chain, a set of unknown parts (naming the flag), and fewer parts than workers', () => {
    const chain = [part('d0', 5, 'export-full'), part('d1', 5, 'export-incremental')];
    expect(divisionOf({ parts: chain, exports: [exported('e1'), exported('e2')] }, { segment: seg(0, 2), partsDisjoint: false })).toMatchObject({
      by: 'keys',
      why: expect.stringContaining('chain order'),
    });
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: seg(0, 4), partsDisjoint: false })).toMatchObject({
      by: 'keys',
      why: expect.stringContaining('--parts-disjoint'),
    });
    // Fewer parts than workers: by key unless they can be cut into byte ranges (plain CSV or JSON Lines, vouched for).
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: seg(0, 5), partsDisjoint: false })).toMatchObject({
      by: 'keys',
      why: expect.stringContaining('byte range'),
    });
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: seg(0, 5), partsDisjoint: true, deletes: { column: 'op' } })?.by).toBe('keys');
    for (const uncut of [part('a.csv.gz', 10), part('a.json', 10), part('a.parquet', 10), part('d0', 10, 'export-full')])
      expect(divisionOf({ parts: [uncut], exports: [] }, { segment: seg(0, 2), partsDisjoint: true })).toMatchObject({
        by: 'keys',
        why: expect.stringContaining(uncut.part.name),
      });
  });
  it('by byte range for fewer plain parts than workers under --parts-disjoint', () => {
    expect(divisionOf({ parts: csvParts, exports: [] }, { segment: seg(0, 5), partsDisjoint: true })).toMatchObject({
      by: 'ranges',
      why: expect.stringContaining('byte ranges'),
    });
    for (const name of ['one.csv', 'one.tsv', 'one.jsonl', 'one.ndjson', 'ONE.CSV'])
      expect(divisionOf({ parts: [part(name, 10)], exports: [] }, { segment: seg(1, 4), partsDisjoint: true })?.by).toBe('ranges');
    // A name that does not tell, read as CSV by --input-format.
    expect(divisionOf({ parts: [part('dump.txt', 10)], exports: [] }, { segment: seg(1, 4), partsDisjoint: true, inputFormat: 'csv' })?.by).toBe('ranges');
    expect(divisionOf({ parts: [part('dump.txt', 10)], exports: [] }, { segment: seg(1, 4), partsDisjoint: true })?.by).toBe('keys');
  });
  it('rangeLayout: one part cut for N workers, range k to worker k; parts cut by their bytes; none under the least range', () => {
    const mb = 1 << 20;
    expect(rangeLayout([8 * mb], 4)).toEqual({ segments: [[0, 2 * mb, 4 * mb, 6 * mb]], owner: [0, 1, 2, 3] });
    // 3:1 for 4 workers: three ranges and one.
    const two = rangeLayout([6 * mb, 2 * mb], 4);
    expect(two.segments.map((s) => s.length)).toEqual([3, 1]);
    expect([...two.owner].sort()).toEqual([0, 1, 2, 3]);
    // Smaller than the least range for each worker: fewer ranges, never empty ones.
    expect(rangeLayout([100 * 1024], 4).segments).toEqual([[0]]);
    expect(rangeLayout([200 * 1024], 4)).toEqual({ segments: [[0, 68_266, 136_533]], owner: [0, 1, 2] });
    expect(rangeLayout([1000], 4).segments).toEqual([[0]]);
  });
  it('--parts-disjoint does not take an export chain apart without its barrier: an item is in every export that changed it', () => {
    const chain = [part('d0', 5, 'export-full'), part('i0', 5, 'export-incremental')];
    const set = { parts: chain, exports: [exported('e1'), exported('e2')] };
    expect(divisionOf(set, { segment: seg(0, 2), partsDisjoint: true })).toMatchObject({ by: 'keys', why: expect.stringContaining('--checkpoint') });
    expect(divisionOf(set, { segment: seg(0, 2), partsDisjoint: true, checkpointPath: 'ck.json', order: 'auto' })?.by).toBe('chain');
  });
});

describe('an export chain divided by part', () => {
  // FULL (4 files), INCR1 (2 files), INCR2 (1 file).
  const parts = [
    ...[40, 30, 20, 10].map((size, i) => part(`full/d${i}`, size, 'export-full')),
    ...[7, 5].map((size, i) => part(`incr1/d${i}`, size, 'export-incremental')),
    part('incr2/d0', 3, 'export-incremental'),
  ];
  const set = { parts, exports: [exported('FULL', 4), exported('INCR1', 2), exported('INCR2', 1)] };
  const withCheckpoint = { segment: seg(0, 3), partsDisjoint: false, checkpointPath: 'w.checkpoint.json' };

  it('is divided by chain with a checkpoint and an order that empties itself; by key otherwise, saying what to pass', () => {
    expect(divisionOf(set, withCheckpoint)).toMatchObject({
      by: 'chain',
      why: 'an export chain of 3 exports, each divided by data file; no worker starts an export before every worker has written the one before it',
    });
    for (const order of ['auto', 'window', 'input'] as const) expect(divisionOf(set, { ...withCheckpoint, order })?.by).toBe('chain');
    expect(divisionOf(set, { segment: seg(0, 3), partsDisjoint: false })).toMatchObject({ by: 'keys', why: expect.stringContaining('pass --checkpoint') });
    for (const order of ['round-robin', 'spread', 'stripes'] as const)
      expect(divisionOf(set, { ...withCheckpoint, order })).toMatchObject({ by: 'keys', why: expect.stringContaining(`not ${order}`) });
    // Export counts that do not cover the parts: they cannot be told apart by export.
    expect(divisionOf({ ...set, exports: [exported('FULL', 4), exported('INCR1', 2)] }, withCheckpoint)?.by).toBe('keys');
  });

  it('deals each export apart: every part once, each export spread over the workers, each part tagged with its export', () => {
    const spans = exportSpans(set)!;
    expect(spans).toEqual([
      { first: 0, count: 4 },
      { first: 4, count: 2 },
      { first: 6, count: 1 },
    ]);
    const division = { by: 'chain' as const, why: 'test' };
    const shares = [0, 1, 2].map((i) => shareOf(parts, seg(i, 3), division, spans));
    expect(shares.flatMap((s) => s.parts.map((p) => p.part.name)).sort()).toEqual(parts.map((p) => p.part.name).sort());
    for (const s of shares) {
      expect(s.exportOfPart).toHaveLength(s.parts.length);
      s.parts.forEach((p, i) => expect(p.part.name.startsWith(['full/', 'incr1/', 'incr2/'][s.exportOfPart![i]!]!)).toBe(true));
    }
    // Each export by itself is dealt to the least loaded: FULL's 4 files over 3 workers, none without one.
    for (const s of shares) expect(s.exportOfPart!.filter((e) => e === 0).length).toBeGreaterThan(0);
    // The one-file exports do not all go to worker 0: each export goes first to the workers with the fewest parts.
    const ownerOf = (name: string) => shares.findIndex((s) => s.parts.some((p) => p.part.name === name));
    expect(ownerOf('full/d0')).toBe(0);
    expect(new Set([ownerOf('incr1/d0'), ownerOf('incr1/d1')])).toEqual(new Set([0, 1]));
    expect(ownerOf('incr2/d0')).toBe(0);
  });

  it('every part once, and no worker without a part when the chain has as many parts as workers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(1000), { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 6 }),
        fc.integer({ min: 2, max: 8 }),
        (exports, workers) => {
          const chainParts = exports.flatMap((sizes, e) => sizes.map((size, i) => part(`e${e}/d${i}`, size, 'export-incremental')));
          const spans = exportSpans({ parts: chainParts, exports: exports.map((sizes, e) => exported(`e${e}`, sizes.length)) })!;
          const shares = Array.from({ length: workers }, (_, w) => shareOf(chainParts, seg(w, workers), { by: 'chain', why: '' }, spans));
          expect(shares.flatMap((s) => s.parts.map((p) => p.part.name)).sort()).toEqual(chainParts.map((p) => p.part.name).sort());
          if (chainParts.length >= workers) for (const s of shares) expect(s.parts.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("agreedDivision: every worker keeps the listing's division", () => {
  const chain = { by: 'chain' as const, why: 'an export chain of 2 exports, each divided by data file; ...' };
  it('a chain the listing divides by key, or records no division for (an earlier ddb-spread), stays divided by key', () => {
    expect(agreedDivision(chain, 'chain', 'l.json')).toBe(chain);
    expect(agreedDivision(chain, 'keys', 'l.json')).toMatchObject({ by: 'keys', why: expect.stringContaining('no --checkpoint') });
    expect(agreedDivision(chain, undefined, 'l.json')?.by).toBe('keys');
  });
  it('a worker that would read every export by key where the listing divides the chain by part is refused, naming --checkpoint', () => {
    const keys = { by: 'keys' as const, why: 'an export chain of 2 exports: ... (pass --checkpoint to every worker ...)' };
    const refusal = (() => {
      try {
        return agreedDivision(keys, 'chain', 'l.json');
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(LoaderError);
    expect((refusal as LoaderError).code).toBe('INVALID_OPTION');
    expect((refusal as LoaderError).message).toMatch(/divides the work by part, export by export .* --checkpoint/);
  });
});
