/**
 * A part cut into byte ranges by N workers together (rangeCuts.ts): the ranges, each read by its worker
 * from its first record to the next worker's, hand on exactly the records a read of the whole file does,
 * with the same lines and text, whatever the quoting around the cuts (line breaks inside quoted fields,
 * CRLF, lone CR, blank lines, a BOM), however many workers, and whichever worker scans which segment
 * (its own, or one whose worker never came). The scan documents beside the listing hold no row data and
 * are private. Real files, every worker in this process.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rangeShare } from '../../../src/load/rangeCuts.js';
import { divisionOf, type Share } from '../../../src/load/shares.js';
import { listInputs, type InputSet } from '../../../src/reading/inputSet.js';
import { readPartHeads } from '../../../src/reading/partHeads.js';
import { readInputSet } from '../../../src/reading/readInputSet.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'range-cuts-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const noS3 = () => Promise.reject(new Error('no S3 here'));

async function records(set: InputSet): Promise<string[]> {
  const input = readInputSet(set, { format: undefined, csv: { delimiter: undefined, columns: undefined } });
  const out: string[] = [];
  try {
    for await (const r of input.records) out.push(`${r.origin.line}:${r.origin.raw}`);
  } finally {
    input.close();
  }
  return out;
}

/** A CSV whose rows often hold quoted line breaks, quotes and delimiters, with blank lines and mixed line ends. */
function trickyCsv(rows: number, seed: number): string {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const ends = ['\n', '\r\n', '\r'];
  const end = () => ends[Math.floor(next() * 3)]!;
  let text = `\ufeffpk,sk,note${end()}`;
  for (let i = 0; i < rows; i++) {
    const kind = next();
    const note =
      kind < 0.3
        ? `"line one${end()}line, two ""quoted""${end()}pk${i},0,fake row"`
        : kind < 0.4
          ? `"${'x'.repeat(Math.floor(next() * 300))}"`
          : `plain ${i} ${'y'.repeat(Math.floor(next() * 80))}`;
    text += `k${i % 97},${i},${note}${end()}`;
    if (next() < 0.05) text += end();
  }
  return text;
}

function trickyJsonl(rows: number): string {
  let text = '';
  for (let i = 0; i < rows; i++) text += `{"pk":"k${i}","note":"a\\nb ${'z'.repeat(i % 50)}"}${i % 3 === 0 ? '\r\n' : '\n'}${i % 17 === 0 ? '\n' : ''}`;
  return text;
}

async function cut(path: string, workers: number, listing: string, opts: { waitMs?: number; only?: number[] } = {}): Promise<Share[]> {
  const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
  const division = divisionOf(set, { segment: { index: 0, count: workers }, partsDisjoint: true });
  expect(division?.by).toBe('ranges');
  const indexes = opts.only ?? Array.from({ length: workers }, (_, i) => i);
  return Promise.all(
    indexes.map((index) =>
      rangeShare(set, division!, {
        listing,
        listedAt: '2026-11-28T12:00:00.000Z',
        segment: { index, count: workers },
        s3: noS3,
        delimiter: undefined,
        inputFormat: undefined,
        minRangeBytes: 512,
        pollMs: 5,
        waitMs: opts.waitMs ?? 10_000,
        warn: () => undefined,
        stopping: () => false,
      }),
    ),
  );
}

describe('a part cut into byte ranges by its workers', () => {
  const cases: [string, () => string][] = [
    ['tricky.csv', () => trickyCsv(600, 7)],
    ['tricky2.csv', () => trickyCsv(900, 11)],
    ['rows.jsonl', () => trickyJsonl(800)],
  ];
  it.each(cases)('%s: the workers read every record once, in order, with its line, for 2, 3, 4 and 7 workers', async (name, make) => {
    const path = join(dir, name);
    await writeFile(path, make());
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const whole = await records(set);
    expect(whole.length).toBeGreaterThan(500);
    for (const workers of [2, 3, 4, 7]) {
      const listing = join(dir, `${name}-${workers}.listing.json`);
      const shares = await cut(path, workers, listing);
      const parts = shares.flatMap((s) => s.parts);
      // Every worker has a range, the ranges tile the file.
      expect(parts.length).toBe(workers);
      expect(parts[0]!.range!.start).toBe(0);
      for (let i = 1; i < parts.length; i++) expect(parts[i]!.range!.start).toBe(parts[i - 1]!.range!.end);
      expect(parts.at(-1)!.range!.end).toBe(set.parts[0]!.part.size);
      const read: string[] = [];
      for (const share of shares) read.push(...(await records({ ...set, parts: share.parts, totalBytes: share.bytes })));
      expect(read).toEqual(whole);
      expect(shares.reduce((sum, s) => sum + s.bytes, 0)).toBe(set.parts[0]!.part.size);
      // Beside the listing: offsets, counts and states only, private.
      const docs = (await readdir(dir)).filter((f) => f.startsWith(`${name}-${workers}.listing.json.range-scan-`));
      expect(docs.length).toBe(workers - 1);
      for (const doc of docs) {
        expect((await stat(join(dir, doc))).mode & 0o777).toBe(0o600);
        const text = await readFile(join(dir, doc), 'utf8');
        expect(text).not.toMatch(/plain|line one|fake|"k\d/);
      }
    }
  });

  it("each range carries its part's header row, the names a look at the head finds (a BOM, blank lines, quoted names over lines, over 4 KB): every cell under its column", async () => {
    const names = ['pk', 'sk', '"say ""hi""\r\nthere"', `"${'wide'.repeat(1_200)}"`, '"a,b"'];
    const rows = Array.from({ length: 1_500 }, (_, i) => `k${i % 31},${i},v${i},"w${i}\nx",z${i % 7}`).join('\n');
    const path = join(dir, 'header.csv');
    await writeFile(path, `\ufeff\n\r\n${names.join(',')}\r\n${rows}\n`);
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const looked = await readPartHeads(set, { format: undefined, csv: { delimiter: undefined, columns: undefined } });
    const header = looked.columns[0]!.names;
    expect(header).toEqual(['pk', 'sk', 'say "hi"\r\nthere', 'wide'.repeat(1_200), 'a,b']);
    const cells = async (s: InputSet) => {
      const input = readInputSet(s, { format: undefined, csv: { delimiter: undefined, columns: undefined } });
      const out: string[] = [];
      try {
        for await (const r of input.records) out.push(JSON.stringify(r.kind === 'csv' ? r.cells : r.kind));
      } finally {
        input.close();
      }
      return out;
    };
    const whole = await cells(set);
    expect(whole.length).toBe(1_500);
    const shares = await cut(path, 3, join(dir, 'header.listing.json'));
    const read: string[] = [];
    for (const share of shares) {
      expect(share.parts.map((p) => p.header)).toEqual([header]);
      // The look before the first write takes them from the range: the same names.
      const again = await readPartHeads({ ...set, parts: share.parts }, { format: undefined, csv: { delimiter: undefined, columns: undefined } });
      expect(again.columns[0]!.names).toEqual(header);
      read.push(...(await cells({ ...set, parts: share.parts, totalBytes: share.bytes })));
    }
    expect(read).toEqual(whole);
  });

  it('a worker whose earlier segments nobody scanned scans them itself after its wait; the others then read those scans', async () => {
    const path = join(dir, 'alone.csv');
    await writeFile(path, trickyCsv(700, 3));
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const whole = await records(set);
    const listing = join(dir, 'alone.listing.json');
    // Worker 3 of 4 starts alone: nobody has scanned segments 0-2.
    const [last] = await cut(path, 4, listing, { waitMs: 50, only: [3] });
    const [first, second, third] = await cut(path, 4, listing, { only: [0, 1, 2] });
    const read: string[] = [];
    for (const share of [first!, second!, third!, last!]) read.push(...(await records({ ...set, parts: share.parts, totalBytes: share.bytes })));
    expect(read).toEqual(whole);
  });

  it('a file compressed under a plain name is refused before any range is read', async () => {
    const path = join(dir, 'packed.csv');
    const { gzipSync } = await import('node:zlib');
    await writeFile(path, gzipSync(Buffer.from(trickyCsv(400, 5))));
    await expect(cut(path, 2, join(dir, 'packed.listing.json'))).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
});
