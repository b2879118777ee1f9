import { parse } from 'csv-parse';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCsv } from '../../../src/reading/readCsv.js';

describe("readCsv's field decoding in place", () => {
  // readCsv decodes csv-parse's field buffer in place (decodeFieldsInPlace); it relies on the buffer as 6.x keeps it.
  it("finds csv-parse's field buffer where it reads it: bytes [0, length) of a Buffer", () => {
    const api = (parse({ encoding: 'latin1' }) as unknown as { api: { state: { field: { buf: unknown; length: unknown } } } }).api;
    expect(Buffer.isBuffer(api.state.field.buf)).toBe(true);
    expect(typeof api.state.field.length).toBe('number');
  });

  it('gives every field the bytes it holds: long fields past the buffer, quoted, UTF-8, empty, BOM', async () => {
    const long = 'x'.repeat(5000);
    const text = `\ufeffa,b,c\n1,"q,""u""",é😀\n${long},,"${long}\nnext"\n`;
    const rows: Record<string, string>[] = [];
    for await (const record of readCsv(Readable.from([Buffer.from(text)]), 'f.csv', { delimiter: ',', columns: undefined })) {
      if (record.kind !== 'csv') throw new Error(`${record.kind} at line ${record.origin.line}`);
      rows.push({ ...record.cells });
    }
    expect(rows).toEqual([
      { a: '1', b: 'q,"u"', c: 'é😀' },
      { a: long, b: '', c: `${long}\nnext` },
    ]);
  });
});
