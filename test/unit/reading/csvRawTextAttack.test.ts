/**
 * Attacks on readCsv's raw text and line numbers (cut from the bytes fed to csv-parse by its byte count):
 * hostile files, in any chunking, against the file itself. Every record's raw text must stand in
 * the file at the start of the line it names, the records in file order and never overlapping; the header
 * row's own line breaks (a quoted name holding one, blank lines before it) count; a header whose quote is
 * never closed is the header's error, not a record's. Each record's byte offset is where it starts in the file.
 */
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { readCsv } from '../../../src/reading/readCsv.js';
import { LoaderError } from '../../../src/shared/errors.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { sized } from '../../support/testSize.js';

const BOM = '\ufeff';
const breaksOf = (text: string) => (text.match(/\r\n|\n|\r/g) ?? []).length;

function chunked(data: Buffer, cuts: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const size of cuts) {
    if (at >= data.length) break;
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  if (at < data.length) chunks.push(data.subarray(at));
  return chunks;
}

async function read(chunks: Buffer[], options: Parameters<typeof readCsv>[2]): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const r of readCsv(Readable.from(chunks), 'in.csv', options)) out.push(r);
  return out;
}

const text = (s: string, cuts: number[] = []) => chunked(Buffer.from(s, 'utf8'), cuts);
const lines = (records: SourceRecord[]) => records.map((r) => [r.origin.line, r.origin.raw, r.kind === 'unparsable' ? r.code : 'csv']);

// Pieces of hostile files: quotes, every line ending, blank lines, multi-byte and NUL bytes, a BOM inside
// the file, every delimiter tried, and runs long enough to cross csv-parse's 8 KB slices and the size bound.
const atoms = [
  'a',
  'b',
  '1',
  ',',
  ',',
  '"',
  '"',
  '""',
  '\r',
  '\n',
  '\r\n',
  '\r\n',
  '\n\n',
  '\r\r',
  'é',
  '\0',
  '¦',
  '\t',
  ';;',
  BOM,
  ' ',
  'y'.repeat(2000),
  'z'.repeat(4095),
  `"${'q'.repeat(3000)}`,
];

describe('readCsv raw text and lines, against the file', () => {
  it('every record stands in the file at its line, in order, whatever the delimiter, BOM, bound, first line or chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...atoms), { maxLength: 60 }),
        fc.constantFrom(',', '\t', '¦', ';;'),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('', '\n', '\r\n\r\n', '\r', '"h\n0",'),
        fc.constantFrom(undefined, 6, 12, 1000, 5000),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 8000, max: 30000 })), { maxLength: 40 }),
        fc.constantFrom(1, 5),
        fc.constantFrom(0, 7),
        async (parts, delimiter, header, bom, pre, maxRecordBytes, cuts, firstLine, firstByte) => {
          const atStart = header || firstLine === 1;
          const data = Buffer.from((bom && atStart ? BOM : '') + (header ? `${pre}h1,h2\n` : pre.replace(/"h\n0",/, '')) + parts.join(''), 'utf8');
          const options = {
            delimiter,
            columns: header ? undefined : ['c1', 'c2'],
            ...(maxRecordBytes ? { maxRecordBytes } : {}),
            ...(header ? {} : { firstLine }),
            firstByte,
          };
          let records: SourceRecord[];
          try {
            records = await read(chunked(data, cuts), options);
          } catch (error) {
            // Only the header may stop a read (a header that is no header: a quote left open, a name twice...).
            expect(error).toBeInstanceOf(LoaderError);
            expect(header).toBe(true);
            return;
          }
          const whole = data.toString('utf8');
          const file = atStart && whole.startsWith(BOM) ? whole.slice(1) : whole;
          const bomBytes = file === whole ? 0 : 3;
          const lineStarts = [0];
          for (const m of file.matchAll(/\r\n|\n|\r/g)) lineStarts.push(m.index + m[0].length);
          const base = header ? 1 : firstLine;
          let minLine = header ? 2 : firstLine;
          let from = 0;
          for (const r of records) {
            // An oversized record keeps its first bytes only, which may end inside a character.
            const raw = r.kind === 'unparsable' && r.code === 'RECORD_TOO_LARGE' ? r.origin.raw.replace(/\ufffd+$/, '') : r.origin.raw;
            const where = JSON.stringify({ file, options, cuts, origin: r.origin });
            expect(r.origin.line, where).toBeGreaterThanOrEqual(minLine);
            const start = lineStarts[r.origin.line - base];
            expect(start, where).toBeDefined();
            expect(start!, where).toBeGreaterThanOrEqual(from);
            expect(file.startsWith(raw, start), where).toBe(true);
            // Where the record starts in the file's bytes (a striped read's restart point records it).
            expect(r.origin.offset, where).toBe(firstByte + bomBytes + Buffer.byteLength(file.slice(0, start)));
            const tooLarge = r.kind === 'unparsable' && r.code === 'RECORD_TOO_LARGE';
            from = start! + (tooLarge ? 1 : raw.length);
            minLine = r.origin.line + (tooLarge ? 1 : breaksOf(raw) + 1);
            // A row of plain cells (no quote) is its raw text cut at the delimiter.
            if (r.kind === 'csv' && !raw.includes('"')) expect(Object.values(r.cells), where).toEqual(raw.split(delimiter));
          }
        },
      ),
      { numRuns: sized(375, 1500) },
    );
  });

  it('a multi-byte delimiter stays whole in the raw text (csv-parse raw option dropped its last bytes)', async () => {
    for (const delimiter of ['¦', ';;']) {
      const records = await read(text(`h1${delimiter}h2\nx${delimiter}é\nbad${delimiter}é${delimiter}3\n`, [1, 1, 1, 2, 3]), { delimiter, columns: undefined });
      expect(lines(records)).toEqual([
        [2, `x${delimiter}é`, 'csv'],
        [3, `bad${delimiter}é${delimiter}3`, 'CSV_SYNTAX'],
      ]);
    }
  });

  it('a header whose quoted name holds a line break: the rows after it keep their own lines', async () => {
    for (const cuts of [[], [1], [3, 1, 1, 2]]) {
      expect(lines(await read(text('"h\n1",h2\nA,B\nC\n', cuts), { delimiter: ',', columns: undefined }))).toEqual([
        [3, 'A,B', 'csv'],
        [4, 'C', 'CSV_SYNTAX'],
      ]);
      expect(lines(await read(text('\r\n\r\n"h\r\n1",h2\r\nA,B\r\n\r\nC\r\n', cuts), { delimiter: ',', columns: undefined }))).toEqual([
        [5, 'A,B', 'csv'],
        [7, 'C', 'CSV_SYNTAX'],
      ]);
    }
  });

  it('a header with a quote left open is the header error, at the header line, small file or large', async () => {
    for (const [file, maxRecordBytes] of [
      ['"h1,h2\nA,B\nC,D\n', undefined],
      ['\n\n"h1,h2\nA,B\nC,D\n', undefined],
      [`"h1,h2\n${'A,B\n'.repeat(10)}`, 16],
    ] as const) {
      const error = await read(text(file, [2]), { delimiter: ',', columns: undefined, ...(maxRecordBytes ? { maxRecordBytes } : {}) }).then(
        (records) => records,
        (e: unknown) => e,
      );
      expect(error, file).toBeInstanceOf(LoaderError);
      expect((error as LoaderError).code).toBe('INPUT_HEADER');
      expect((error as LoaderError).line).toBe(1 + breaksOf(file.slice(0, file.indexOf('"'))));
    }
  });

  it('a header error names the header line, past blank lines before it', async () => {
    const error = await read(text('\r\n\n\ra,a\nx,y\n'), { delimiter: ',', columns: undefined }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).line).toBe(4);
  });

  it('--columns with blank lines first, a stripe starting past line 1, and a file of only a header', async () => {
    expect(lines(await read(text('\r\n\r\n\na,b\r\rc\n', [1]), { delimiter: ',', columns: ['x', 'y'], firstLine: 7 }))).toEqual([
      [10, 'a,b', 'csv'],
      [12, 'c', 'CSV_SYNTAX'],
    ]);
    for (const file of ['h1,h2', 'h1,h2\n', '\n\nh1,h2\r\n\r\n', `${BOM}h1,h2\r`])
      expect(await read(text(file, [1]), { delimiter: ',', columns: undefined })).toEqual([]);
  });

  it('the last record without a line break, of the wrong width, and an unclosed quote after rows', async () => {
    for (const cuts of [[], [1], [5, 1, 1]]) {
      expect(lines(await read(text('h1,h2\na,b\r\nc', cuts), { delimiter: ',', columns: undefined }))).toEqual([
        [2, 'a,b', 'csv'],
        [3, 'c', 'CSV_SYNTAX'],
      ]);
      expect(lines(await read(text('h1,h2\na,b\n\n"c,d\ne,f\n', cuts), { delimiter: ',', columns: undefined }))).toEqual([
        [2, 'a,b', 'csv'],
        [4, '"c,d\ne,f', 'CSV_SYNTAX'],
      ]);
    }
  });

  it('a row kept holds its own raw text, not the 8 KB of input it was cut from', async () => {
    // V8 makes a slice of a string a view that keeps the whole string alive: a row held in a write order
    // (a hot key's rows wait while others go) kept every byte csv-parse was fed with it, ~8 KB a row.
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    const rows = ['pk,name,value'];
    for (let i = 0; i < 200_000; i++) rows.push(`key${i},some name ${i},${i * 7}`);
    const data = Buffer.from(`${rows.join('\n')}\n`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < data.length; i += 64 * 1024) chunks.push(data.subarray(i, i + 64 * 1024));
    const kept: unknown[] = [];
    gc();
    const before = process.memoryUsage().heapUsed;
    let n = 0;
    for await (const r of readCsv(Readable.from(chunks), 'in.csv', { delimiter: ',', columns: undefined })) if (n++ % 250 === 0) kept.push(r.origin);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // 800 origins of ~35 characters: well under 1 MB held; 800 views of 8 KB each would be 6.5 MB.
    expect(kept).toHaveLength(800);
    expect(grown).toBeLessThan(2_000_000);
  });
});
