/**
 * The cut of a striped read with the heads read by KeyCellScanner (planStripes's keyColumn) against the
 * cut read through readCsv: each head the scanner gives is readCsv's, and the whole plan (stripes, their
 * pieces, sizes, first lines and texts) is the same. A checkpoint records batches of the striped order, so
 * a plan that differed would make a resumed load skip other rows than the ones it wrote.
 */
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headByKeyCells, headByRows, planStripes } from '../../../src/ordering/stripes/stripedRecords.js';
import { cutFile, readRange, type RangeSyntax } from '../../../src/ordering/stripes/ranges.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { sized } from '../../support/testSize.js';

const how: RangeSyntax = { syntax: 'csv', delimiter: ',', columns: ['pk', 'sk', 'note'] };
const headerHow: RangeSyntax = { ...how, columns: undefined };
/** recordGroup's key of a CSV string partition key: the cell as it is, none when empty. */
const probe = (r: SourceRecord) => (r.kind === 'csv' && r.cells['pk'] ? `S${r.cells['pk']}` : undefined);

const end = fc.constantFrom('\n', '\n', '\r\n', '\r');
const note = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z ]{0,12}$/) },
  { weight: 1, arbitrary: fc.constantFrom('"quoted, with a comma"', '"two\r\nlines"', '"a ""quote"""', 'é', 'mid"quote') },
);
/** Rows a head may meet that the scanner leaves to readCsv, or readCsv rejects. */
const oddRow = fc.constantFrom('short,row', 'one,too,many,fields', '"a"b,1,x', ',1,no key', 'x,"open', '   ');

/** Rows sorted by key: runs of one key (some longer than the probe's 1,000 rows), odd rows and blank lines here and there. */
const fileText = fc
  .tuple(
    fc.array(fc.tuple(fc.integer({ min: 1, max: 1_400 }), fc.nat(30)), { minLength: 2, maxLength: 12 }),
    fc.array(fc.tuple(fc.nat(20_000), fc.oneof(oddRow, fc.constant(''))), { maxLength: 4 }),
    end,
    fc.array(note, { minLength: 1, maxLength: 5 }),
  )
  .map(([runs, odd, ending, notes]) => {
    const rows: string[] = [];
    runs.forEach(([n, k], j) => {
      for (let i = 0; i < n; i++) rows.push(`k${String(j).padStart(3, '0')}${'x'.repeat(k % 3)},${i},${notes[i % notes.length]}`);
    });
    for (const [at, row] of odd) rows.splice(at % (rows.length + 1), 0, row);
    return `pk,sk,note\n${rows.join(ending)}${ending}`;
  });

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'heads-')), 'in.csv');
  writeFileSync(path, text);
  return path;
}

describe('the heads of a striped read, by key cells', () => {
  it("are readCsv's heads wherever the scanner gives one, and the scanner gives most", async () => {
    let given = 0;
    let ranges = 0;
    await fc.assert(
      fc.asyncProperty(fileText, fc.integer({ min: 2, max: 24 }), async (text, parts) => {
        const path = file(text);
        const { ranges: cut } = await cutFile(path, Buffer.byteLength(text), how, parts, 1);
        for (const range of cut.slice(1)) {
          ranges++;
          const fast = await headByKeyCells(path, range, how, 'pk');
          const slow = await headByRows(readRange(path, 'in.csv', range, how), probe);
          if (fast === undefined) continue;
          given++;
          expect(fast).toEqual(slow);
        }
      }),
      { numRuns: sized(20, 80) },
    );
    expect(given).toBeGreaterThan(ranges / 2);
  });

  it('make the same plan as heads read through readCsv', async () => {
    let planned = 0;
    await fc.assert(
      fc.asyncProperty(fileText, fc.integer({ min: 2, max: 24 }), async (text, parts) => {
        const path = file(text);
        const args = { path, file: 'in.csv', size: Buffer.byteLength(text), how: headerHow, parts, probe };
        const slow = await planStripes(args);
        const fast = await planStripes({ ...args, keyColumn: 'pk' });
        expect(fast).toEqual(slow);
        if (slow) planned++;
      }),
      { numRuns: sized(15, 60) },
    );
    // Half the files or more are cut (the rest are found not grouped, by both).
    expect(planned).toBeGreaterThan(sized(7, 30));
  });

  it("make the same plan where keys run over whole ranges and are searched for over the ranges' parts", async () => {
    // Ranges of ~100 KB (over the searches' 64 KB, so they search by parts) and keys of 4,000-9,000 rows
    // (~200-450 KB) running over whole ranges; quoted line breaks, CRLF and blank lines here and there.
    const rows: string[] = ['pk,sk,note'];
    for (let j = 0; j < 120; j++) {
      const n = j % 23 === 5 ? 4_000 + ((j * 977) % 5_000) : 30 + ((j * 13) % 90);
      for (let i = 0; i < n; i++) rows.push(`k${String(j).padStart(4, '0')},${i},${i % 17 === 0 ? '"two\r\nlines, quoted"' : `note ${i % 7}`}`);
      if (j % 11 === 0) rows.push('');
    }
    const text = rows.map((l, i) => l + (i % 9 === 0 ? '\r\n' : '\n')).join('');
    const path = file(text);
    const args = { path, file: 'in.csv', size: Buffer.byteLength(text), how: headerHow, parts: Math.floor(Buffer.byteLength(text) / 100_000), probe };
    const slow = await planStripes(args);
    const fast = await planStripes({ ...args, keyColumn: 'pk' });
    expect(slow).toBeDefined();
    // Keys over whole ranges were cut out into stripes of their own: more stripes than ranges that start one.
    expect(slow!.stripes.length).toBeGreaterThan(args.parts / 2);
    expect(fast).toEqual(slow);
  });

  it('are left to readCsv where the columns do not name the key once, or the file cannot be read', async () => {
    const path = file('pk,sk,note\nk1,1,a\nk1,2,b\nk2,1,c\n');
    const range = { start: 11, end: 34, line: 2 };
    expect(await headByKeyCells(path, range, how, 'missing')).toBeUndefined();
    expect(await headByKeyCells(path, range, { ...how, columns: ['pk', 'pk', 'note'] }, 'pk')).toBeUndefined();
    expect(await headByKeyCells(path, range, how, 'pk')).toMatchObject({ rows: 2, whole: false, nextLine: 4, nextRaw: 'k2,1,c', keys: ['Sk1', 'Sk2'] });
    // A file it cannot read: readCsv's reader reads it, and its error names the file.
    expect(await headByKeyCells(`${path}.gone`, range, how, 'pk')).toBeUndefined();
  });
});
