import fc from 'fast-check';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCsv } from '../../../src/reading/readCsv.js';
import { sized } from '../../support/testSize.js';

/**
 * Fields decoded in place from csv-parse's field buffer (decodeFieldsInPlace) must be the cells written,
 * byte for byte, however the file is cut into chunks: a cut inside a multi-byte character, a field longer
 * than the buffer's first size, quoted fields with doubled quotes, line breaks inside quotes, a BOM, CRLF.
 */
const piece = fc.constantFrom('a', 'Z', '0', ' ', 'é', 'ß', '€', '😀', '中', '"', ',', ';', '\t', '|', '\n', '\r\n', 'x'.repeat(70));
const cell = fc.array(piece, { maxLength: 8 }).map((p) => p.join(''));

function quoted(value: string, delimiter: string): string {
  const needs = value.includes('"') || value.includes(delimiter) || value.includes('\n') || value.includes('\r') || value.startsWith(' ') || value === '';
  return needs ? `"${value.replaceAll('"', '""')}"` : value;
}

describe('CSV fields decoded in place, in any chunking', () => {
  it('every cell is the value written: UTF-8 cut across chunks, quotes, breaks, BOM, CRLF, any delimiter', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(',', ';', '\t', '|'),
        fc.boolean(),
        fc.constantFrom('\n', '\r\n'),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.array(cell, { minLength: 4, maxLength: 4 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }),
        async (delimiter, bom, eol, width, table, cuts) => {
          const columns = ['c0', 'c1', 'c2', 'c3'].slice(0, width);
          // A row whose only cell is empty would be a blank line (skipped): give it a value.
          const rows = table.map((r) => r.slice(0, width).map((v, i) => (width === 1 && v === '' && i === 0 ? 'e' : v)));
          const text = (bom ? '\ufeff' : '') + [columns, ...rows].map((r) => r.map((v) => quoted(v, delimiter)).join(delimiter)).join(eol) + eol;
          const data = Buffer.from(text, 'utf8');
          const chunks: Buffer[] = [];
          let at = 0;
          for (const size of cuts) {
            if (at >= data.length) break;
            chunks.push(data.subarray(at, at + size));
            at += size;
          }
          if (at < data.length) chunks.push(data.subarray(at));
          const got: string[][] = [];
          for await (const record of readCsv(Readable.from(chunks), 'f.csv', { delimiter, columns: undefined, parseSlice: 7 })) {
            if (record.kind !== 'csv') throw new Error(`${record.kind} at line ${record.origin.line}: ${JSON.stringify(record)}`);
            got.push(columns.map((c) => record.cells[c]!));
          }
          expect(got).toEqual(rows);
        },
      ),
      { numRuns: sized(200, 2000) },
    );
  });
});
