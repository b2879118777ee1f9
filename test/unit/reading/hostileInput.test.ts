/**
 * Readers against hostile input: bytes that are not UTF-8, mixed line endings,
 * records far over any item and an unterminated quote. Byte buffers in, records out.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { readCsv, type CsvReadOptions } from '../../../src/reading/readCsv.js';
import { readJsonLines } from '../../../src/reading/readJsonLines.js';
import { sized } from '../../support/testSize.js';

async function collect(records: AsyncIterable<SourceRecord>): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

/** [line, cells or raw] for good records, [line, code, field] for bad ones. */
function view(r: SourceRecord): unknown[] {
  if (r.kind === 'csv') return [r.origin.line, r.cells];
  if (r.kind === 'unparsable') return [r.origin.line, r.code, r.field];
  return [r.origin.line, r.origin.raw];
}

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
const csv = (input: Buffer | Buffer[], options: Partial<CsvReadOptions> = {}) =>
  collect(readCsv(Readable.from(Array.isArray(input) ? input : [input]), 'in.csv', { delimiter: ',', columns: undefined, ...options }));
const jsonl = (input: Buffer | Buffer[], maxRecordBytes?: number) =>
  collect(readJsonLines(Readable.from(Array.isArray(input) ? input : [input]), 'in.jsonl', maxRecordBytes === undefined ? {} : { maxRecordBytes }));

/** Every split of `data` into two chunks, at each byte position. */
const everySplit = (data: Buffer) => Array.from({ length: data.length + 1 }, (_, i) => [data.subarray(0, i), data.subarray(i)]);

/** A source of one line of `size` bytes of "x" (the same 1 MiB buffer again and again, so the source holds nothing), between two good lines; samples memory as it goes. */
function hugeLine(before: string, size: number, after: string, fill = 'x') {
  const block = Buffer.alloc(1024 * 1024, fill);
  const peak = { bytes: 0 };
  const base = process.memoryUsage();
  const sample = () => {
    const now = process.memoryUsage();
    peak.bytes = Math.max(peak.bytes, now.heapUsed - base.heapUsed + now.arrayBuffers - base.arrayBuffers);
  };
  const stream = Readable.from(
    (function* () {
      yield Buffer.from(before);
      for (let sent = 0; sent < size; sent += block.length) {
        if ((sent & (32 * 1024 * 1024 - 1)) === 0) sample();
        yield block.subarray(0, Math.min(block.length, size - sent));
      }
      yield Buffer.from(after);
    })(),
    { objectMode: false },
  );
  return { stream, peak };
}

describe('readJsonLines: bytes that are not UTF-8', () => {
  it('keys B\\xff and B\\xfe are two INVALID_UTF8 rejects naming the attribute, not one merged key', async () => {
    const input = bytes('{"pk":"B', [0xff], '"}\n{"pk":"B', [0xfe], '"}\n{"pk":"ok"}\n');
    expect((await jsonl(input)).map(view)).toEqual([
      [1, 'INVALID_UTF8', 'pk'],
      [2, 'INVALID_UTF8', 'pk'],
      [3, '{"pk":"ok"}'],
    ]);
  });

  it('the message says which byte, the raw text keeps the line', async () => {
    const [record] = await jsonl(bytes('{"a":1,"name":"x', [0xc3, 0x28], '"}\n'));
    expect(record?.kind).toBe('unparsable');
    if (record?.kind !== 'unparsable') return;
    expect(record.message).toContain('byte 17');
    expect(record.message).toContain('"name"');
    expect(record.origin.raw).toBe('{"a":1,"name":"x\uFFFD("}');
  });

  it.each<[string, number[]]>([
    ['overlong "/"', [0xc0, 0xaf]],
    ['a UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['a lone continuation byte', [0x80]],
    ['a cut 3-byte character', [0xe6, 0x97]],
  ])('%s is INVALID_UTF8', async (_label, bad) => {
    expect((await jsonl(bytes('{"pk":"', bad, '"}\n'))).map(view)).toEqual([[1, 'INVALID_UTF8', 'pk']]);
  });

  it('bytes that break an attribute name are INVALID_UTF8 without a field', async () => {
    expect((await jsonl(bytes('{"p', [0xff], 'k":"a"}\n'))).map(view)).toEqual([[1, 'INVALID_UTF8', undefined]]);
  });

  it('multi-byte characters, a BOM and CRLF split at every byte position are valid', async () => {
    const data = Buffer.from('\uFEFF{"s":"日本😀"}\r\n{"s":"é𝄞"}\r\n');
    for (const chunks of everySplit(data)) {
      expect((await jsonl(chunks)).map(view)).toEqual([
        [1, '{"s":"日本😀"}'],
        [2, '{"s":"é𝄞"}'],
      ]);
    }
  });
});

describe('readJsonLines: lines far over any item', () => {
  it('a line over the bound is RECORD_TOO_LARGE with its line number; the lines around it come out', async () => {
    const input = bytes('{"pk":"a"}\n', `{"pk":"${'x'.repeat(200)}"}\n`, '{"pk":"b"}\n');
    const records = await jsonl(input, 100);
    expect(records.map(view)).toEqual([
      [1, '{"pk":"a"}'],
      [2, 'RECORD_TOO_LARGE', undefined],
      [3, '{"pk":"b"}'],
    ]);
    const big = records[1]!;
    expect(big.kind === 'unparsable' && big.message).toContain('209 bytes');
  });

  it('the bound holds at every chunk split; a line of exactly the bound is kept', async () => {
    const exact = `{"pk":"${'y'.repeat(90)}"}`;
    const data = bytes(`${exact}\n${exact}z\n{"pk":"c"}`);
    for (const chunks of everySplit(data)) {
      expect((await jsonl(chunks, exact.length)).map(view)).toEqual([
        [1, exact],
        [2, 'RECORD_TOO_LARGE', undefined],
        [3, '{"pk":"c"}'],
      ]);
    }
  });

  it('a 1 GiB line is skipped in bounded memory, its raw text cut to 1 KB, and the next line loads', async () => {
    const { stream, peak } = hugeLine('{"pk":"a"}\n{"pk":"', 1024 * 1024 * 1024, '"}\n{"pk":"b"}\n');
    const records = await collect(readJsonLines(stream, 'in.jsonl'));
    expect(records.map(view)).toEqual([
      [1, '{"pk":"a"}'],
      [2, 'RECORD_TOO_LARGE', undefined],
      [3, '{"pk":"b"}'],
    ]);
    expect(records[1]!.origin.raw.length).toBeLessThanOrEqual(1024);
    expect(peak.bytes).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);
});

describe('readCsv: bytes that are not UTF-8', () => {
  it('keys B\\xff and B\\xfe are two INVALID_UTF8 rejects naming the column; the rest reads', async () => {
    const input = bytes('pk,n\nB', [0xff], ',1\nB', [0xfe], ',2\nok,3\n"x,', [0xe9], '",4\n');
    expect((await csv(input)).map(view)).toEqual([
      [2, 'INVALID_UTF8', 'pk'],
      [3, 'INVALID_UTF8', 'pk'],
      [4, { pk: 'ok', n: '3' }],
      [5, 'INVALID_UTF8', 'pk'],
    ]);
  });

  it('a bad byte in a later column names that column', async () => {
    expect((await csv(bytes('pk,n,note\na,1,caf', [0xe9], '\n'))).map(view)).toEqual([[2, 'INVALID_UTF8', 'note']]);
  });

  it('a header that is not UTF-8 stops the read (INPUT_HEADER)', async () => {
    await expect(csv(bytes('pk,n', [0xff], '\na,1\n'))).rejects.toMatchObject({ code: 'INPUT_HEADER', line: 1 });
  });

  it('multi-byte text, a multi-byte delimiter, a BOM and CRLF split at every byte position read the same', async () => {
    const data = Buffer.from('\uFEFFpk¦name\r\n"a\r\nb"¦日本😀\r\nc¦é\r\n');
    for (const chunks of everySplit(data)) {
      expect((await csv(chunks, { delimiter: '¦' })).map(view)).toEqual([
        [2, { pk: 'a\r\nb', name: '日本😀' }],
        [4, { pk: 'c', name: 'é' }],
      ]);
    }
  });
});

describe('readCsv: mixed line endings', () => {
  const expected = (n: number, first = 2) => Array.from({ length: n }, (_, i) => [first + i, { pk: `k${i}`, n: `${i}` }]);
  const rows = (from: number, to: number, eol: string) => Array.from({ length: to - from }, (_, i) => `k${from + i},${from + i}${eol}`).join('');

  it.each<[string, string]>([
    ['LF then CRLF', `pk,n\n${rows(0, 5, '\n')}${rows(5, 10, '\r\n')}`],
    ['CRLF then LF', `pk,n\r\n${rows(0, 5, '\r\n')}${rows(5, 10, '\n')}`],
    ['lone CR (old Mac) then LF', `pk,n\r${rows(0, 5, '\r')}${rows(5, 10, '\n')}`],
    ['alternating', `pk,n\n${Array.from({ length: 10 }, (_, i) => `k${i},${i}${['\n', '\r\n', '\r'][i % 3]}`).join('')}`],
  ])('%s: every row as a person sees it, no \\r in a field', async (_label, text) => {
    expect((await csv(Buffer.from(text))).map(view)).toEqual(expected(10));
  });

  it('blank lines of every ending, up to three in any order between rows: each row at the line an editor shows', async () => {
    // csv-parse leaves the LF of a blank CRLF line out of the next record's raw text, so a blank CRLF
    // line then a blank LF line came out as "\r\n" there, counted as one line: every row after, one short.
    const endings = ['\n', '\r\n', '\r'];
    const blanks: string[] = [''];
    for (let n = 1; n <= 3; n++) for (const before of blanks.filter((b) => b.length >= n - 1)) for (const e of endings) blanks.push(before + e);
    const runs = [...new Set(blanks)];
    for (const header of [true, false]) {
      for (const rowEnd of endings) {
        const text = (header ? 'pk,n\n' : '') + runs.map((run, i) => `k${i},${i}${rowEnd}${run}`).join('');
        const lines = text.split(/\r\n|\n|\r/);
        const expected = runs.map((_, i) => [lines.indexOf(`k${i},${i}`) + 1, { pk: `k${i}`, n: String(i) }]);
        const records = await csv(Buffer.from(text), header ? {} : { columns: ['pk', 'n'] });
        expect(records.map(view), `rows ending ${JSON.stringify(rowEnd)}, header ${header}`).toEqual(expected);
      }
    }
    const mixed = Buffer.from('pk,n\na,1\n\r\n\nb,2\r\n\r\n\nc,3\r\r\n\nd,4\n');
    for (const chunks of everySplit(mixed)) {
      expect((await csv(chunks)).map((r) => r.origin.line)).toEqual([2, 5, 8, 11]);
    }
  });

  it('quoted fields keep their own line breaks exactly, whatever ends the records; at every split', async () => {
    const data = Buffer.from('pk,n\na,"x\r\ny"\r\nb,"p\nq\rr"\nc,3\r\n\r\nd,4\r');
    for (const chunks of everySplit(data)) {
      expect((await csv(chunks)).map(view)).toEqual([
        [2, { pk: 'a', n: 'x\r\ny' }],
        [4, { pk: 'b', n: 'p\nq\rr' }],
        [7, { pk: 'c', n: '3' }],
        [9, { pk: 'd', n: '4' }],
      ]);
    }
  });
});

describe('readCsv: records far over any item', () => {
  it('a record over the bound is RECORD_TOO_LARGE at its line; line numbers after it stay right; at every split', async () => {
    const data = Buffer.from(`pk,n\na,1\nb,${'x'.repeat(150)}\nc,"multi\n${'y'.repeat(150)}\nline"\nd,4\n`);
    for (const chunks of everySplit(data)) {
      const records = await csv(chunks, { maxRecordBytes: 100 });
      expect(records.map(view)).toEqual([
        [2, { pk: 'a', n: '1' }],
        [3, 'RECORD_TOO_LARGE', undefined],
        [4, 'RECORD_TOO_LARGE', undefined],
        [7, { pk: 'd', n: '4' }],
      ]);
      expect(records[2]!.kind === 'unparsable' && records[2]!.message).toContain('lines 4-6 (3 lines)');
    }
  });

  // 64 MB in the unit pass, 200 MB at full size (test/support/testSize.ts): either way a field that held
  // whole would pass the 96 MB bound (as UTF-16 text it takes twice its bytes).
  const fieldMb = sized(64, 200);
  it(`a ${fieldMb} MB quoted field is read past in bounded memory; the quoting is followed, so its lines are not rows`, async () => {
    const { stream, peak } = hugeLine('pk,n\na,1\nb,"', fieldMb * 1024 * 1024, '"\nc,3\n', 'v,w\n');
    const records = await collect(readCsv(stream, 'in.csv', { delimiter: ',', columns: undefined }));
    expect(records.map(view)).toEqual([
      [2, { pk: 'a', n: '1' }],
      [3, 'RECORD_TOO_LARGE', undefined],
      [3 + fieldMb * 1024 * 256 + 1, { pk: 'c', n: '3' }],
    ]);
    expect(records[1]!.origin.raw.length).toBeLessThanOrEqual(1024);
    expect(peak.bytes).toBeLessThan(96 * 1024 * 1024);
  }, 120_000);

  it('an oversized header row stops the read with INPUT_HEADER', async () => {
    await expect(csv(Buffer.from(`${'h'.repeat(200)}\na\n`), { maxRecordBytes: 100 })).rejects.toMatchObject({ code: 'INPUT_HEADER', line: 1 });
  });
});

describe('readCsv: an unterminated quote', () => {
  it('the reject says which lines the open quote swallowed', async () => {
    const records = await csv(Buffer.from('pk,n\na,1\nb,"open\nc,3\nd,4\n'));
    expect(records.map(view)).toEqual([
      [2, { pk: 'a', n: '1' }],
      [3, 'CSV_SYNTAX', undefined],
    ]);
    const bad = records[1]!;
    expect(bad.kind === 'unparsable' && bad.message).toContain('lines 3-5 (3 lines)');
    expect(bad.kind === 'unparsable' && bad.message).toContain('quote is left open at line 3');
  });

  it('past the record bound it is RECORD_TOO_LARGE naming the span, and memory stays bounded', async () => {
    const body = Array.from({ length: 20_000 }, (_, i) => `k${i},${i}\n`).join('');
    const records = await csv(Buffer.from(`pk,n\na,1\nb,"open\n${body}`), { maxRecordBytes: 1000 });
    expect(records.map(view)).toEqual([
      [2, { pk: 'a', n: '1' }],
      [3, 'RECORD_TOO_LARGE', undefined],
    ]);
    expect(records[1]!.kind === 'unparsable' && records[1]!.message).toContain('lines 3-20003 (20,001 lines)');
  });
});

describe('readCsv: the framer changes nothing csv-parse would read (random CSV, random chunk splits)', () => {
  const files = sized(100, 300);
  it(`${files} random files of quotes, delimiters, CR, LF and multi-byte text read the same as csv-parse on the whole file`, async () => {
    const { parse } = await import('csv-parse/sync');
    const pieces = ['a', 'b', ',', '"', '""', '\n', '\r\n', '\r', 'é', '😀', ' '];
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < files; round++) {
      const text = `x,y\n${Array.from({ length: 5 + random(40) }, () => pieces[random(pieces.length)]).join('')}`;
      const data = Buffer.from(text);
      const reference = (
        parse(data, {
          columns: true,
          relax_quotes: true,
          skip_empty_lines: true,
          skip_records_with_error: true,
          record_delimiter: ['\r\n', '\n', '\r'],
        }) as Record<string, string>[]
      ).map((cells) => ({ ...cells }));
      const cuts = [random(data.length + 1), random(data.length + 1)].sort((a, b) => a - b);
      const chunks = [data.subarray(0, cuts[0]), data.subarray(cuts[0], cuts[1]), data.subarray(cuts[1])];
      const records = await csv(chunks);
      expect(
        records.filter((r) => r.kind === 'csv').map((r) => (r.kind === 'csv' ? r.cells : undefined)),
        JSON.stringify(text),
      ).toEqual(reference);
    }
  });
});
