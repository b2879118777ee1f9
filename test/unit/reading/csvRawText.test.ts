/**
 * Each CSV record's line number and raw text (the reject file's "line" and "raw"), against an oracle
 * built with the file: rows of plain and quoted fields (quotes holding LF, CRLF, CR and escaped quotes),
 * rows of the wrong field count (CSV_SYNTAX rejects), blank lines, every line ending mixed, the last
 * line with or without one, read in random chunks. readCsv cuts raw text from the bytes fed to csv-parse
 * by its byte count; a slip of one byte shows here as a wrong raw text or line.
 */
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCsv } from '../../../src/reading/readCsv.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';

type Entry = { kind: 'blank'; end: string } | { kind: 'row' | 'short'; fields: string[]; end: string };

const end = fc.constantFrom('\n', '\r\n', '\r');
const plain = fc.stringMatching(/^[a-z0-9]{1,5}$/);
const quoted = fc
  .array(fc.oneof(plain, fc.constantFrom('\n', '\r\n', '\r', '""', ',', ' ')), { minLength: 1, maxLength: 4 })
  .map((parts) => `"${parts.join('')}"`);
const field = fc.oneof({ weight: 3, arbitrary: plain }, { weight: 1, arbitrary: quoted });
const entry: fc.Arbitrary<Entry> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('row' as const), fields: fc.array(field, { minLength: 3, maxLength: 3 }), end }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('short' as const), fields: fc.array(field, { minLength: 2, maxLength: 2 }), end }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('blank' as const), end }) },
);

/** Line breaks as an editor counts them: CRLF once, LF once, a lone CR once. */
const breaks = (text: string) => (text.match(/\r\n|\n|\r/g) ?? []).length;

function build(header: string, headerEnd: string, entries: Entry[], lastEnd: boolean) {
  let text = `${header}${headerEnd}`;
  const expected: Array<{ line: number; raw: string; bad: boolean }> = [];
  entries.forEach((e, i) => {
    const ending = i === entries.length - 1 && !lastEnd ? '' : e.end;
    if (e.kind === 'blank') {
      text += ending;
      return;
    }
    const raw = e.fields.join(',');
    expected.push({ line: 1 + breaks(text), raw, bad: e.kind === 'short' });
    text += raw + ending;
  });
  return { text, expected };
}

/** A lone CR ending a row, then a line starting with LF, is one CRLF: the oracle cannot tell it apart, so such files are not generated. */
const unambiguous = (text: string, entries: Entry[]) =>
  !entries.some((e, i) => e.end === '\r' && i + 1 < entries.length && entries[i + 1]!.kind === 'blank' && entries[i + 1]!.end.startsWith('\n')) &&
  !/\r$/.test(text.split('\n')[0] ?? '');

async function read(data: Buffer, cuts: number[], parseSlice: number): Promise<SourceRecord[]> {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const size of cuts) {
    if (at >= data.length) break;
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  if (at < data.length) chunks.push(data.subarray(at));
  const out: SourceRecord[] = [];
  for await (const r of readCsv(Readable.from(chunks), 'in.csv', { delimiter: ',', columns: undefined, parseSlice })) out.push(r);
  return out;
}

describe('readCsv: line and raw text of every record', () => {
  it('match the file, for rows, rejects and blank lines of every ending, in any chunking and parse slice', async () => {
    await fc.assert(
      fc.asyncProperty(
        end,
        fc.array(entry, { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 60 }),
        // Bytes parsed at a time, down to one (a striped read parses 1 KB at a time): a CRLF split between two parses.
        fc.integer({ min: 1, max: 48 }),
        async (headerEnd, entries, lastEnd, cuts, parseSlice) => {
          const { text, expected } = build('a,b,c', headerEnd, entries, lastEnd);
          fc.pre(unambiguous(text, entries) && !(headerEnd === '\r' && entries[0]?.kind === 'blank' && entries[0].end.startsWith('\n')));
          const records = await read(Buffer.from(text, 'utf8'), cuts, parseSlice);
          expect(records.map((r) => ({ line: r.origin.line, raw: r.origin.raw, bad: r.kind === 'unparsable' }))).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('readCsv: bytes parsed at a time', () => {
  it.each([0, -1, 0.5, Number.NaN])('refuses a parse slice of %s, which would spin on the first chunk or skip its bytes', async (parseSlice) => {
    const records = readCsv(Readable.from([Buffer.from('a,b,c\n1,2,3\n')]), 'in.csv', { delimiter: ',', columns: undefined, parseSlice });
    await expect(records.next()).rejects.toThrow(/parseSlice must be a whole number of bytes/);
  });
});
