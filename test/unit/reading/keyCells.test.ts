/**
 * KeyCellScanner against readCsv: every row the scanner gives is readCsv's record at that place, with the
 * same cell, line and raw text, in any chunking; on files of clear records it reads them all. The cut of a
 * striped read takes the scanner's rows for readCsv's (src/ordering/stripes/keyCellRows.ts), so a row it read otherwise
 * would cut a stripe at a wrong line or a wrong key.
 */
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { KeyCellScanner, type KeyCellRow } from '../../../src/ordering/stripes/keyCells.js';
import { readCsv } from '../../../src/reading/readCsv.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { sized } from '../../support/testSize.js';

const COLUMNS = ['pk', 'sk', 'note'];
const end = fc.constantFrom('\n', '\r\n', '\r');
const plain = fc.stringMatching(/^[a-z0-9 ]{0,5}$/);
const nonAscii = fc.constantFrom('é', 'Ωmega', '日本', '🦆', '\u{feff}x');
const quoted = fc
  .array(fc.oneof(plain, nonAscii, fc.constantFrom('\n', '\r\n', '\r', '""', ',', ' ', "'")), { maxLength: 4 })
  .map((parts) => `"${parts.join('')}"`);
/** Text an unquoted field may hold: a quote past its first byte is text (relax_quotes). */
const midQuote = fc.tuple(fc.stringMatching(/^[a-z]{1,3}$/), fc.stringMatching(/^[a-z"]{0,3}$/)).map(([a, b]) => `${a}"${b}`);
const clearField = fc.oneof(
  { weight: 4, arbitrary: plain },
  { weight: 2, arbitrary: quoted },
  { weight: 1, arbitrary: nonAscii },
  { weight: 1, arbitrary: midQuote },
);

type Piece = { text: string | Buffer; end: string };
const clearRow: fc.Arbitrary<Piece> = fc.record({ text: fc.array(clearField, { minLength: 3, maxLength: 3 }).map((f) => f.join(',')), end });
const blank: fc.Arbitrary<Piece> = fc.record({ text: fc.constant(''), end });
/** Records readCsv reads otherwise than the scanner's clear ones, or rejects. */
const unclearRow: fc.Arbitrary<Piece> = fc.record({
  text: fc.oneof(
    fc.array(clearField, { minLength: 2, maxLength: 2 }).map((f) => f.join(',')),
    fc.array(clearField, { minLength: 4, maxLength: 4 }).map((f) => f.join(',')),
    fc.constantFrom('"a"b,c,d', 'a,"b" ,c', 'a,b,"c', '"a""",b,"c"x', ' '),
    fc.constant(Buffer.from([0x61, 0x2c, 0xff, 0x2c, 0x63])),
  ),
  end,
});

function bytesOf(pieces: Piece[], lastEnd: boolean): Buffer {
  const parts: Buffer[] = [Buffer.from('pk,sk,note\n')];
  pieces.forEach((p, i) => {
    parts.push(typeof p.text === 'string' ? Buffer.from(p.text, 'utf8') : p.text);
    if (i < pieces.length - 1 || lastEnd) parts.push(Buffer.from(p.end));
  });
  return Buffer.concat(parts);
}

async function readCsvRecords(bytes: Buffer): Promise<SourceRecord[]> {
  const records: SourceRecord[] = [];
  for await (const r of readCsv(Readable.from([bytes]), 'in.csv', { delimiter: ',', columns: undefined })) records.push(r);
  return records;
}

/** The scanner's rows of the bytes after the header row, fed in chunks cut at `cuts`. */
function scan(data: Buffer, cuts: number[], column: number): { rows: KeyCellRow[]; unclear: boolean } {
  const scanner = new KeyCellScanner(column, COLUMNS.length, 0x2c, 4 * 1024 * 1024);
  const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
  const rows: KeyCellRow[] = [];
  let from = 0;
  for (const to of [...at, data.length]) {
    rows.push(...scanner.feed(data.subarray(from, Math.max(from, to)), to === data.length));
    from = Math.max(from, to);
    if (to === data.length) break;
  }
  return { rows, unclear: scanner.unclear };
}

function expectSameAsReadCsv(bytes: Buffer, rows: KeyCellRow[], records: SourceRecord[], column: number): void {
  const header = 'pk,sk,note\n'.length;
  expect(rows.length).toBeLessThanOrEqual(records.length);
  rows.forEach((row, i) => {
    const record = records[i]!;
    expect(record.kind).toBe('csv');
    if (record.kind !== 'csv') return;
    expect(row.cell).toBe(record.cells[COLUMNS[column]!]);
    expect(2 + row.breaksBefore).toBe(record.origin.line);
    expect(row.raw).toBe(record.origin.raw);
    // The record's bytes start at its offset.
    const raw = Buffer.from(row.raw, 'utf8');
    expect(bytes.subarray(header + row.offset, header + row.offset + raw.length).equals(raw)).toBe(true);
  });
}

describe('KeyCellScanner', () => {
  it('reads every record of a file of clear records as readCsv does, whatever the chunks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({ weight: 5, arbitrary: clearRow }, { weight: 1, arbitrary: blank }), { maxLength: 25 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.nat(2),
        async (pieces, lastEnd, cuts, column) => {
          const bytes = bytesOf(pieces, lastEnd);
          const records = await readCsvRecords(bytes);
          const { rows, unclear } = scan(bytes.subarray('pk,sk,note\n'.length), cuts, column);
          expectSameAsReadCsv(bytes, rows, records, column);
          // A quoted field closed at the very end of the input is left to readCsv (csv-parse's to judge).
          const lastQuoted = !lastEnd && /"$/.test(bytes.toString('latin1'));
          if (!lastQuoted) {
            expect(unclear).toBe(false);
            expect(rows.length).toBe(records.length);
          }
        },
      ),
      { numRuns: sized(100, 400) },
    );
  });

  it('gives only rows readCsv reads the same, and stops at any other', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({ weight: 4, arbitrary: clearRow }, { weight: 1, arbitrary: blank }, { weight: 2, arbitrary: unclearRow }), { maxLength: 25 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.nat(2),
        async (pieces, lastEnd, cuts, column) => {
          const bytes = bytesOf(pieces, lastEnd);
          const records = await readCsvRecords(bytes);
          const { rows } = scan(bytes.subarray('pk,sk,note\n'.length), cuts, column);
          expectSameAsReadCsv(bytes, rows, records, column);
        },
      ),
      { numRuns: sized(150, 600) },
    );
  });

  it('stops at a record with the wrong field count, a quote closed before other text, or bytes that are not UTF-8', () => {
    for (const bad of ['a,b\n', 'a,b,c,d\n', '"a"b,c,d\n', 'a,"b" ,c\n', Buffer.from([0x61, 0x2c, 0xff, 0x2c, 0x63, 0x0a])]) {
      const scanner = new KeyCellScanner(0, 3, 0x2c, 1024);
      const rows = scanner.feed(Buffer.concat([Buffer.from('k1,1,x\n'), Buffer.from(bad), Buffer.from('k2,2,y\n')]), true);
      expect(rows.map((r) => r.cell)).toEqual(['k1']);
      expect(scanner.unclear).toBe(true);
    }
  });

  it('stops at a record over the size bound, held or not', () => {
    const scanner = new KeyCellScanner(0, 3, 0x2c, 16);
    expect(scanner.feed(Buffer.from('k1,1,x\nk2,2,'), false).map((r) => r.cell)).toEqual(['k1']);
    expect(scanner.feed(Buffer.from('a long note that goes on'), false)).toEqual([]);
    expect(scanner.unclear).toBe(true);
  });

  it('reads quoted cells, escaped quotes, quoted line breaks and blank lines, counting lines as readCsv does', () => {
    const scanner = new KeyCellScanner(0, 2, 0x2c, 1024);
    const rows = scanner.feed(Buffer.from('"a""b",1\r\n\r\n"line\r\nbreak",2\r"é",3\n'), true);
    expect(rows).toEqual([
      { cell: 'a"b', offset: 0, breaksBefore: 0, raw: '"a""b",1' },
      { cell: 'line\r\nbreak', offset: 12, breaksBefore: 2, raw: '"line\r\nbreak",2' },
      { cell: 'é', offset: 28, breaksBefore: 4, raw: '"é",3' },
    ]);
  });
});
