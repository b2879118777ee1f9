/**
 * A striped read resumed at a restart point hands on exactly the rows the read from the start hands on after
 * that point, in the same order, and makes the same points after it: over sets of key-sorted CSV parts
 * (local, cut at their bytes; or read by bytes only, as S3 objects are, with heads counted in rows), with
 * quoted line breaks, CRLF and blank lines. The point's cursors say which rows were handed on before it
 * (what a resume keeps of the reject file), and the grouping check's keys are read again at their places.
 */
import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { planPartStripes, readPartStripes, withColumns, type PartStripePlan, type StripePart } from '../../../src/ordering/stripes/partStripes.js';
import { readRange, type ByteRange, type RangeBytes } from '../../../src/ordering/stripes/ranges.js';
import type { StripesPoint } from '../../../src/ordering/stripes/stripedRecords.js';
import { planRecord, stripesOfRecord, type Piece, type StripePlanRecord } from '../../../src/ordering/stripes/stripeLayout.js';
import { handedOnBefore, placedParts, resumeStripes, type SetPlace, type StripeCursor } from '../../../src/ordering/stripes/stripeResume.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { sized } from '../../support/testSize.js';

const probe = (record: SourceRecord) => (record.kind === 'csv' && record.cells['pk'] ? `S${record.cells['pk']}` : undefined);

/** Parts as local files, or (remote) seen by their bytes only, as S3 objects are. */
function partsOf(texts: string[], remote: boolean): StripePart[] {
  const dir = mkdtempSync(join(tmpdir(), 'striperesume-'));
  return texts.map((text, i) => {
    const path = join(dir, `part-${i}.csv`);
    writeFileSync(path, text);
    const bytes: RangeBytes = { open: (start, end) => Readable.from([readFileSync(path).subarray(start, end)]) };
    return { file: path, path: remote ? undefined : path, size: Buffer.byteLength(text), bytes, first: { syntax: 'csv', delimiter: ',', columns: undefined } };
  });
}

/** Key-sorted CSV text over `parts` parts: runs of keys, some cells with quoted line breaks, CRLF or LF, a blank line now and then. */
const setArb = fc
  .record({
    runs: fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 8, maxLength: 60 }),
    parts: fc.integer({ min: 1, max: 3 }),
    crlf: fc.boolean(),
    quoted: fc.integer({ min: 0, max: 7 }),
    blank: fc.integer({ min: 0, max: 40 }),
    remote: fc.boolean(),
  })
  .map(({ runs, parts, crlf, quoted, blank, remote }) => {
    const eol = crlf ? '\r\n' : '\n';
    const rows: string[] = [];
    runs.forEach((n, k) => {
      for (let i = 0; i < n; i++) {
        const cell = quoted > 0 && rows.length % (quoted + 3) === 0 ? `"two${eol}lines, ""q"""` : `v${rows.length}`;
        rows.push(`k${String(k).padStart(3, '0')},${i},${cell}`);
      }
    });
    const per = Math.ceil(rows.length / parts);
    const texts = Array.from({ length: parts }, (_, p) => {
      const body = rows.slice(p * per, (p + 1) * per).map((r, i) => (blank > 0 && i % blank === blank - 1 ? `${eol}${r}` : r));
      return `pk,sk,v${eol}${body.join(eol)}${eol}`;
    });
    return { texts, remote };
  });

/** Keys k000-k007 in three parts of one header each, runs crossing from part to part (CI's counterexample). */
const acrossParts = [
  [10, 7, 20],
  [28, 9],
  [3, 5, 12, 15],
].reduce<{ texts: string[]; k: number; v: number }>(
  (acc, runs, p) => {
    const rows = runs.flatMap((n, r) => {
      // The first run of parts 1 and 2 goes on a key of the part before (k004 runs from part 1 into part 2).
      const key = p === 2 && r === 0 ? acc.k - 1 : acc.k++;
      const from = p === 2 && r === 0 ? 9 : 0;
      return Array.from({ length: n }, (_, i) => `k${String(key).padStart(3, '0')},${from + i},v${acc.v++}`);
    });
    return { ...acc, texts: [...acc.texts, `pk,sk,v\n${rows.join('\n')}\n`] };
  },
  { texts: [], k: 0, v: 0 },
).texts;

interface Read {
  /** Each row handed on: its part, line (and byte offset) and key. */
  rows: { place: SetPlace; key: string | undefined; stripe: number }[];
  points: StripesPoint[];
}

async function readWith(plan: PartStripePlan, every: number, from?: StripesPoint & { pieces: Piece[][] }): Promise<Read> {
  const partOf = new Map(plan.parts.map((p, i) => [p.file, i]));
  const read = readPartStripes(plan, { every, ...(from ? { from } : {}) });
  const out: Read = { rows: [], points: [] };
  for await (const entry of read.chunks) {
    const point = read.pointAt!(entry, []);
    if (point) out.points.push(point);
    for (const record of entry)
      out.rows.push({ place: [partOf.get(record.origin.file)!, record.origin.line, record.origin.offset!], key: probe(record), stripe: record.origin.part! });
  }
  return out;
}

/** The places a GroupingCheck would hold before row `row`: each stripe's first keyed row and the first row of its latest key. */
function groupingBefore(
  rows: Read['rows'],
  row: number,
  stripes: number,
): ({ first: SetPlace; last: SetPlace; firstKey: string; lastKey: string } | undefined)[] {
  const out: ({ first: SetPlace; last: SetPlace; firstKey: string; lastKey: string } | undefined)[] = new Array(stripes).fill(undefined);
  for (const r of rows.slice(0, row)) {
    if (r.key === undefined) continue;
    const g = out[r.stripe];
    if (!g) out[r.stripe] = { first: r.place, last: r.place, firstKey: r.key, lastKey: r.key };
    else if (g.lastKey !== r.key) out[r.stripe] = { ...g, last: r.place, lastKey: r.key };
  }
  return out;
}

describe('a striped read resumed at a restart point', () => {
  it('hands on the rows after the point in the same order, makes the same points, and knows which rows were before it', async () => {
    await fc.assert(
      fc.asyncProperty(
        setArb,
        fc.integer({ min: 3, max: 40 }),
        fc.nat(),
        fc.boolean(),
        fc.constantFrom(undefined, 4, 30),
        async ({ texts, remote }, every, pick, offsets, placedBytes) => {
          const parts = partsOf(texts, remote);
          const plan = await planPartStripes({ parts, probe, minBytes: 200 });
          fc.pre(plan !== undefined);
          const full = await readWith(plan!, every);
          // Every row once.
          expect(full.rows.length).toBe(texts.reduce((n, t) => n + t.split(/\r?\n/).filter((l) => /^k\d/.test(l)).length, 0));
          fc.pre(full.points.length > 0);
          const point = full.points[pick % full.points.length]!;
          expect(point.row % every).toBe(0);
          // What the stages add at the point: where each stripe's grouping check stands.
          const grouping = groupingBefore(full.rows, point.row, plan!.stripes.length);
          // A checkpoint of the build before holds no offsets: its places are found by scanning the pieces.
          const keep = (place: SetPlace): SetPlace => (offsets ? place : [place[0], place[1]]);
          const cursors: StripeCursor[] = point.cursors.map((c, k) => {
            const at = c.at ? { at: keep(c.at) } : {};
            return grouping[k] ? { ...c, ...at, first: keep(grouping[k].first), last: keep(grouping[k].last) } : { ...c, ...at };
          });
          // The rows before the point, and only those, were handed on before it.
          full.rows.forEach((r, i) => expect(handedOnBefore(r.place, cursors), `row ${i} at ${r.place.join(':')}`).toBe(i < point.row));
          // As a resume does: the columns of every part a place names (a grouping row may be in another part than the last row).
          await withColumns(plan!, placedParts(cursors));
          const reading = {
            bytes: (i: number) => plan!.parts[i]!.bytes,
            file: (i: number) => plan!.parts[i]!.file,
            syntax: (i: number) => plan!.parts[i]!.how,
            firstRecord: async (i: number, range: ByteRange) => {
              const part = plan!.parts[i]!;
              const reader = readRange(part.file, part.file, range, range.start === 0 ? part.first : part.how, undefined, part.bytes);
              const first = await reader.records.next();
              reader.close();
              return first.done ? undefined : first.value;
            },
            keyOf: probe,
            // A record longer than the bytes read first for it is read again whole.
            ...(placedBytes === undefined ? {} : { placedBytes }),
          };
          // A resume reads by the stripes its checkpoint kept (numbers only), not by a new cut.
          const kept = stripesOfRecord(
            JSON.parse(JSON.stringify(planRecord(plan!.stripes))) as StripePlanRecord,
            plan!.parts.map((p) => p.size),
          );
          expect(kept).toBeDefined();
          expect(stripesOfRecord(planRecord(plan!.stripes), [])).toBeUndefined();
          const stored = { ...plan!, stripes: kept! };
          const resumed = await resumeStripes(stored.stripes, cursors, reading);
          resumed.forEach((r, k) => {
            const g = grouping[k];
            expect(r.grouping?.first.key, `stripe ${k}'s first key`).toBe(g?.firstKey);
            expect(r.grouping?.last.key, `stripe ${k}'s latest key`).toBe(g?.lastKey);
          });
          const again = await readWith(stored, every, { ...point, pieces: resumed.map((r) => r.pieces) });
          expect(again.rows.map((r) => r.place.join(':'))).toEqual(full.rows.slice(point.row).map((r) => r.place.join(':')));
          expect(again.rows.map((r) => r.stripe)).toEqual(full.rows.slice(point.row).map((r) => r.stripe));
          // The points after it are the same ones, stripe by stripe (a stripe read no further keeps the place it was resumed with).
          const plain = (points: StripesPoint[]) =>
            points.map((p) => ({ ...p, cursors: p.cursors.map((c) => ({ ...c, ...(c.at ? { at: c.at.slice(0, 2) } : {}) })) }));
          const after = full.points.filter((p) => p.row > point.row);
          expect(offsets ? again.points : plain(again.points)).toEqual(offsets ? after : plain(after));
          // An offset that is not where its line starts (a checkpoint of another input's plan) is refused, never read from.
          const moved = cursors.findIndex((c) => c.at?.[2] !== undefined && c.at[2] > 0);
          if (offsets && moved >= 0) {
            const at = cursors[moved]!.at!;
            const wrong = cursors.map((c, k) => (k === moved ? { ...c, at: [at[0], at[1], at[2]! + 1] as SetPlace } : c));
            // The stripe's own read proves its last row's place: opened there, it stops before handing on a row.
            const refused = (async () => {
              const reopened = await resumeStripes(stored.stripes, wrong, reading);
              await readWith(stored, every, { ...point, cursors: wrong, pieces: reopened.map((r) => r.pieces) });
            })();
            await expect(refused).rejects.toMatchObject({ code: 'INPUT_CHANGED' });
          }
        },
      ),
      {
        numRuns: sized(40, 200),
        // Found by CI: a stripe over parts 0 and 1 whose grouping rows are each its part's first row, at the
        // same byte past the same header; the records read again were kept by byte alone, so the latest key
        // came out as the first's.
        examples: [true, false].map((offsets) => [{ texts: acrossParts, remote: false }, 3, 708319785, offsets, undefined]),
      },
    );
  }, 120_000);
});
