/**
 * The layout of a set's striped read over its parts: how many ranges each part is cut into, which ranges
 * start a stripe, and the stripes planned over real parts: a head of a part that shares the key the part
 * before ends in goes to that part's stripe (cut at its bytes for a local file, counted in rows for a part
 * read by ranged GETs only), every piece names its part, and a set whose heads do not ascend is not striped.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { planPartStripes, rangesPerPart, readPartStripes, stripeStarts, type StripePart } from '../../../src/ordering/stripes/partStripes.js';
import { stripesOf, type Head } from '../../../src/ordering/stripes/stripedRecords.js';
import type { RangeBytes } from '../../../src/ordering/stripes/ranges.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';

describe('rangesPerPart', () => {
  it('cuts a local part into its share of the stripes by bytes, never below two minimum stripes, and leaves others whole', () => {
    // 4 equal parts, 64 stripes: 16 ranges each where the minimum allows.
    expect(rangesPerPart([1e6, 1e6, 1e6, 1e6], [true, true, true, true], 64, 10_000)).toEqual([16, 16, 16, 16]);
    // A part under two minimum stripes, and one that cannot be cut (S3), are one range.
    expect(rangesPerPart([1e6, 15_000, 1e6], [true, true, false], 64, 10_000)).toEqual([32, 1, 1]);
    // The minimum bounds the count: 50 KB in 10 KB stripes is 5 ranges at most.
    expect(rangesPerPart([50_000, 50_000], [true, true], 64, 10_000)).toEqual([5, 5]);
  });
});

describe('stripeStarts', () => {
  it('starts a stripe at every range when the ranges are of equal bytes and no more than the stripes', () => {
    expect(stripeStarts([10, 10, 10, 10], 4)).toEqual([true, true, true, true]);
    expect(stripeStarts([10, 10, 10, 10], 64)).toEqual([true, true, true, true]);
  });
  it('runs small parts on in one stripe: at most maxStripes stripes of about equal bytes', () => {
    const starts = stripeStarts(new Array<number>(1000).fill(1), 64);
    expect(starts.filter(Boolean).length).toBe(64);
    // Stripes of 15-16 parts each.
    const at = starts.flatMap((s, i) => (s ? [i] : []));
    const lengths = at.map((a, i) => (at[i + 1] ?? 1000) - a);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(15);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(16);
  });
  it('gives a large range a stripe of its own among small ones; the first range always starts one', () => {
    expect(stripeStarts([1, 1, 100, 1, 1], 4)).toEqual([true, false, true, true, false]);
    expect(stripeStarts([0, 0, 5], 4)).toEqual([true, false, true]);
  });
});

describe('stripesOf with parts', () => {
  it('every piece names its part; a head of the next part goes to the stripe before', () => {
    const ranges = [
      { start: 0, end: 100, line: 1 },
      { start: 0, end: 50, line: 1 },
      { start: 0, end: 70, line: 1 },
    ];
    const head = (over: Partial<Head>): Head => ({ rows: 0, bytes: 0, whole: false, keys: [], ...over });
    const stripes = stripesOf(ranges, [head({}), head({ rows: 2, bytes: 20, nextLine: 4, keys: ['Sb'] }), head({ whole: true, rows: 0, keys: [] })], [0, 1, 2]);
    expect(stripes.map((s) => s.pieces)).toEqual([
      [
        { part: 0, range: ranges[0], skip: 0, take: Infinity },
        { part: 1, range: ranges[1], skip: 0, take: 2, running: 'Sb' },
      ],
      [
        { part: 1, range: ranges[1], skip: 2, take: Infinity },
        { part: 2, range: ranges[2], skip: 0, take: Infinity, whole: true },
      ],
    ]);
  });
});

/** The key of a CSV row: its first cell. */
const probe = (record: SourceRecord) => (record.kind === 'csv' ? `S${record.cells['pk']}` : undefined);
const rowsOf = (keys: string[], from: number) => keys.map((k, i) => `${k},${from + i},${'x'.repeat(30)}`);

/** Parts as local files (cut and probed by positional reads) or, with `remote`, as S3 objects are seen (bytes only). */
function partsOf(texts: string[], remote: boolean): StripePart[] {
  const dir = mkdtempSync(join(tmpdir(), 'partstripes-'));
  return texts.map((text, i) => {
    const path = join(dir, `part-${i}.csv`);
    writeFileSync(path, text);
    const bytes: RangeBytes = { open: (start, end) => Readable.from([readFileSync(path).subarray(start, end)]) };
    return { file: path, path: remote ? undefined : path, size: Buffer.byteLength(text), bytes, first: { syntax: 'csv', delimiter: ',', columns: undefined } };
  });
}

async function readAll(
  parts: StripePart[],
  minBytes: number,
): Promise<{ stripes: number; rows: { file: string; line: number; pk: string; part: number }[] } | undefined> {
  const plan = await planPartStripes({ parts, probe, minBytes });
  if (!plan) return undefined;
  const read = readPartStripes(plan);
  const rows: { file: string; line: number; pk: string; part: number }[] = [];
  for await (const record of read.records)
    if (record.kind === 'csv') rows.push({ file: record.origin.file, line: record.origin.line, pk: record.cells['pk']!, part: record.origin.part! });
  return { stripes: read.parts, rows };
}

describe('planPartStripes over parts', () => {
  /** Keys `from` … `to - 1`, 4 rows each (k00, k01, …). */
  const keys = (from: number, to: number) => Array.from({ length: (to - from) * 4 }, (_, i) => `k${String(from + Math.floor(i / 4)).padStart(2, '0')}`);
  // Three parts of ~1.3 KB, keys ascending from part to part; key k09 runs on from part 0 into part 1.
  const texts = [
    `pk,sk,v\n${rowsOf([...keys(0, 10), 'k09'], 0).join('\n')}\n`,
    `pk,sk,v\n${rowsOf(['k09', 'k09', ...keys(10, 20)], 100).join('\n')}\n`,
    `pk,sk,v\n${rowsOf(keys(20, 30), 200).join('\n')}\n`,
  ];
  for (const remote of [false, true]) {
    it(`${remote ? 'parts read by bytes only (S3)' : 'local parts'}: every row once, by its own part and line; a key in one stripe`, async () => {
      const read = (await readAll(partsOf(texts, remote), 256))!;
      expect(read.stripes).toBeGreaterThanOrEqual(3);
      const expected = texts.flatMap((t, p) =>
        t
          .trim()
          .split('\n')
          .slice(1)
          .map((l, i) => `${p}:${i + 2}:${l.split(',')[0]}`),
      );
      const got = read.rows.map((r) => `${/part-(\d)/.exec(r.file)![1]}:${r.line}:${r.pk}`);
      expect([...got].sort()).toEqual([...expected].sort());
      // Each key is in one stripe, and within it in input order (part, then line).
      const stripeOf = new Map<string, Set<number>>();
      for (const r of read.rows) stripeOf.set(r.pk, (stripeOf.get(r.pk) ?? new Set()).add(r.part));
      for (const [k, s] of stripeOf) expect(s.size, k).toBe(1);
      expect(got.filter((g) => g.endsWith(':k09'))).toEqual(['0:38:k09', '0:39:k09', '0:40:k09', '0:41:k09', '0:42:k09', '1:2:k09', '1:3:k09']);
    });
  }

  it('one part read by bytes only (S3) is cut inside, at record starts, every row by its own line', async () => {
    const rows = rowsOf(keys(0, 30), 0).map((r, i) => (i % 5 === 0 ? `${r},"two\nlines"` : `${r},plain`));
    const text = `pk,sk,v,w\r\n${rows.join('\r\n')}\r\n`;
    const read = (await readAll(partsOf([text], true), 256))!;
    expect(read.stripes).toBeGreaterThanOrEqual(3);
    // Each row's first physical line is the line it is named by.
    const lines = text.split(/\r\n|\n/);
    expect(read.rows.length).toBe(rows.length);
    for (const r of read.rows) expect(lines[r.line - 1]!.split(',')[0]).toBe(r.pk);
  });

  it('parts whose heads do not ascend are not striped', async () => {
    expect(await readAll(partsOf([texts[2]!, texts[0]!, texts[1]!], true), 256)).toBeUndefined();
  });

  it('each CSV part is read by its own header', async () => {
    const swapped = [
      texts[0]!,
      `sk,pk,v\n${rowsOf(keys(10, 20), 100)
        .map((l) => l.split(','))
        .map(([k, s, v]) => `${s},${k},${v}`)
        .join('\n')}\n`,
    ];
    for (const remote of [false, true]) {
      const read = (await readAll(partsOf(swapped, remote), 256))!;
      const part1 = read.rows.filter((r) => r.file.endsWith('part-1.csv')).sort((a, b) => a.line - b.line);
      expect(part1.map((r) => r.pk)).toEqual(keys(10, 20));
    }
  });
});
