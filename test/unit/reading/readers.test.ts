import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { openInput } from '../../../src/reading/openInput.js';
import { readCsv, type CsvReadOptions } from '../../../src/reading/readCsv.js';
import { readJsonLines } from '../../../src/reading/readJsonLines.js';

async function collect(records: AsyncIterable<SourceRecord>): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

async function rejection(promise: Promise<unknown>): Promise<LoaderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LoaderError) return error;
    throw error;
  }
  throw new Error('expected a LoaderError, the promise resolved');
}

/** A compact view of a record: [line, raw, cells] for CSV rows, [line, 'unparsable', code, raw] otherwise. */
function view(r: SourceRecord): unknown[] {
  if (r.kind === 'csv') return [r.origin.line, r.origin.raw, r.cells];
  if (r.kind === 'unparsable') return [r.origin.line, 'unparsable', r.code, r.origin.raw];
  return [r.origin.line, r.origin.raw];
}

const CSV_DEFAULTS: CsvReadOptions = { delimiter: ',', columns: undefined };

function csvOf(input: string | Buffer[], options: Partial<CsvReadOptions> = {}) {
  const chunks = typeof input === 'string' ? [Buffer.from(input)] : input;
  return collect(readCsv(Readable.from(chunks), 'in.csv', { ...CSV_DEFAULTS, ...options }));
}

function jsonlOf(input: string | (Buffer | string)[]) {
  const chunks = typeof input === 'string' ? [Buffer.from(input)] : input;
  return collect(readJsonLines(Readable.from(chunks), 'in.jsonl'));
}

/** Splits bytes into chunks of `size` bytes, cutting multi-byte characters wherever they fall. */
function chunked(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('readCsv: records and line numbers', () => {
  it.each<[string, string, Partial<CsvReadOptions>, unknown[][]]>([
    [
      'header row',
      'pk,n\na,1\nb,2\n',
      {},
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    [
      'CRLF',
      'pk,n\r\na,1\r\nb,2\r\n',
      {},
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    [
      'no final line break',
      'pk,n\na,1\nb,2',
      {},
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    ['UTF-8 BOM', '\uFEFFpk,n\na,1\n', {}, [[2, 'a,1', { pk: 'a', n: '1' }]]],
    [
      '--columns: no header',
      'a,1\nb,2\n',
      { columns: ['pk', 'n'] },
      [
        [1, 'a,1', { pk: 'a', n: '1' }],
        [2, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    ['delimiter ;', 'pk;n\n"a;b";"x""y"\n', { delimiter: ';' }, [[2, '"a;b";"x""y"', { pk: 'a;b', n: 'x"y' }]]],
    [
      'tab delimiter',
      'pk\tn\na\t1\n"b\tc"\t2\n',
      { delimiter: '\t' },
      [
        [2, 'a\t1', { pk: 'a', n: '1' }],
        [3, '"b\tc"\t2', { pk: 'b\tc', n: '2' }],
      ],
    ],
    ['quoted delimiter and quotes', 'pk,n\n"a,b","say ""hi"""\n', {}, [[2, '"a,b","say ""hi"""', { pk: 'a,b', n: 'say "hi"' }]]],
    ['empty cells', 'pk,n,x\na,,\n', {}, [[2, 'a,,', { pk: 'a', n: '', x: '' }]]],
    ['multi-byte text', 'pk,name\na,日本😀\n', {}, [[2, 'a,日本😀', { pk: 'a', name: '日本😀' }]]],
    ['header only', 'pk,n\n', {}, []],
    ['empty file', '', {}, []],
    [
      'quoted multi-line field (LF), then the next row',
      'pk,n\n"a\nx\ny",1\nb,2\n',
      {},
      [
        [2, '"a\nx\ny",1', { pk: 'a\nx\ny', n: '1' }],
        [5, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    [
      'quoted multi-line field (CRLF), then the next row',
      'pk,n\r\n"a\r\nx",1\r\nb,2\r\n',
      {},
      [
        [2, '"a\r\nx",1', { pk: 'a\r\nx', n: '1' }],
        [4, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    [
      'blank lines (LF)',
      'pk,n\n\na,1\n\n\nb,2\n',
      {},
      [
        [3, 'a,1', { pk: 'a', n: '1' }],
        [6, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    [
      'blank lines (CRLF)',
      'pk,n\r\n\r\na,1\r\n\r\n\r\nb,2\r\n',
      {},
      [
        [3, 'a,1', { pk: 'a', n: '1' }],
        [6, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    [
      'blank lines after a multi-line field',
      'pk,n\n"a\nx",1\n\nb,2\n',
      {},
      [
        [2, '"a\nx",1', { pk: 'a\nx', n: '1' }],
        [5, 'b,2', { pk: 'b', n: '2' }],
      ],
    ],
    ['blank lines before the header', '\n\npk,n\na,1\n', {}, [[4, 'a,1', { pk: 'a', n: '1' }]]],
  ])('%s', async (_label, text, options, expected) => {
    expect((await csvOf(text, options)).map(view)).toEqual(expected);
  });

  it('every record names its file', async () => {
    const records = await csvOf('pk,n\na,1\nb,2,3\n');
    expect(records.map((r) => r.origin.file)).toEqual(['in.csv', 'in.csv']);
  });

  it('the same rows come out when the input arrives in 3-byte chunks split mid-character', async () => {
    const text = 'pk,name\r\n"a\r\nb",日本😀\r\n\r\nc,é\r\n';
    expect((await csvOf(chunked(text, 3))).map(view)).toEqual((await csvOf(text)).map(view));
    expect((await csvOf(chunked(text, 3))).map(view)).toEqual([
      [2, '"a\r\nb",日本😀', { pk: 'a\r\nb', name: '日本😀' }],
      [5, 'c,é', { pk: 'c', name: 'é' }],
    ]);
  });
});

describe('readCsv: bad rows come out in place, with their line; the good rows around them still come out', () => {
  it.each<[string, string | Buffer[], unknown[][]]>([
    [
      'too many fields (LF)',
      'pk,n\na,1\nb,2,3\nc,3\n',
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'unparsable', 'CSV_SYNTAX', 'b,2,3'],
        [4, 'c,3', { pk: 'c', n: '3' }],
      ],
    ],
    [
      'too few fields (CRLF) and a blank line',
      'pk,n\r\na,1\r\nb\r\n\r\nc,3\r\n',
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'unparsable', 'CSV_SYNTAX', 'b'],
        [5, 'c,3', { pk: 'c', n: '3' }],
      ],
    ],
    [
      'bad row in its own chunk',
      [Buffer.from('pk,n\na,1\n'), Buffer.from('b,2,3\n'), Buffer.from('c,3\n')],
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'unparsable', 'CSV_SYNTAX', 'b,2,3'],
        [4, 'c,3', { pk: 'c', n: '3' }],
      ],
    ],
    [
      'bad row as the first data row',
      'pk,n\nb,2,3\nc,3\n',
      [
        [2, 'unparsable', 'CSV_SYNTAX', 'b,2,3'],
        [3, 'c,3', { pk: 'c', n: '3' }],
      ],
    ],
    [
      'two bad rows in a row',
      'pk,n\na,1\nb\nc\nd,4\n',
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'unparsable', 'CSV_SYNTAX', 'b'],
        [4, 'unparsable', 'CSV_SYNTAX', 'c'],
        [5, 'd,4', { pk: 'd', n: '4' }],
      ],
    ],
    [
      'bad row after a multi-line field (CRLF)',
      'pk,n\r\n"a\r\nx",1\r\nb,2,3\r\nc,3\r\n',
      [
        [2, '"a\r\nx",1', { pk: 'a\r\nx', n: '1' }],
        [4, 'unparsable', 'CSV_SYNTAX', 'b,2,3'],
        [5, 'c,3', { pk: 'c', n: '3' }],
      ],
    ],
    [
      'a multi-line bad row is reported at its first line',
      'pk,n\na,1\n"b\nx",2,3\nc,3\n',
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'unparsable', 'CSV_SYNTAX', '"b\nx",2,3'],
        [5, 'c,3', { pk: 'c', n: '3' }],
      ],
    ],
    [
      'an unclosed quote at the end of the file',
      'pk,n\na,1\nb,"open',
      [
        [2, 'a,1', { pk: 'a', n: '1' }],
        [3, 'unparsable', 'CSV_SYNTAX', 'b,"open'],
      ],
    ],
  ])('%s', async (_label, input, expected) => {
    expect((await csvOf(input)).map(view)).toEqual(expected);
  });
});

describe('readCsv: header problems stop the read', () => {
  it.each<[string, string, { line: number; field?: string }]>([
    ['duplicate header name', 'pk,n,pk\na,1,2\n', { line: 1, field: 'pk' }],
    ['empty header name', 'pk,,n\na,1,2\n', { line: 1 }],
    ['blank header name', 'pk, ,n\na,1,2\n', { line: 1 }],
  ])('%s -> INPUT_HEADER', async (_label, text, context) => {
    const error = await rejection(csvOf(text));
    expect(error.code).toBe('INPUT_HEADER');
    expect(error.file).toBe('in.csv');
    expect(error.line).toBe(context.line);
    expect(error.field).toBe(context.field);
  });

  it('a stream error -> INPUT_UNREADABLE naming the file', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('disk on fire'));
      },
    });
    const error = await rejection(collect(readCsv(broken, 'in.csv', CSV_DEFAULTS)));
    expect(error.code).toBe('INPUT_UNREADABLE');
    expect(error.file).toBe('in.csv');
  });
});

describe('readJsonLines', () => {
  it.each<[string, string, unknown[][]]>([
    [
      'one record per line',
      '{"a":1}\n{"a":2}\n',
      [
        [1, '{"a":1}'],
        [2, '{"a":2}'],
      ],
    ],
    [
      'CRLF',
      '{"a":1}\r\n{"a":2}\r\n',
      [
        [1, '{"a":1}'],
        [2, '{"a":2}'],
      ],
    ],
    [
      'blank and whitespace-only lines are skipped, numbers kept',
      '\n{"a":1}\n   \n\t\n{"a":2}\n\n',
      [
        [2, '{"a":1}'],
        [5, '{"a":2}'],
      ],
    ],
    [
      'blank CRLF lines',
      '{"a":1}\r\n\r\n{"a":2}\r\n',
      [
        [1, '{"a":1}'],
        [3, '{"a":2}'],
      ],
    ],
    [
      'UTF-8 BOM',
      '\uFEFF{"a":1}\n{"a":2}\n',
      [
        [1, '{"a":1}'],
        [2, '{"a":2}'],
      ],
    ],
    ['BOM on a file with one line and no line break', '\uFEFF{"a":1}', [[1, '{"a":1}']]],
    [
      'last line without a line break',
      '{"a":1}\n{"a":2}',
      [
        [1, '{"a":1}'],
        [2, '{"a":2}'],
      ],
    ],
    [
      'last line without a line break, CRLF file',
      '{"a":1}\r\n{"a":2}',
      [
        [1, '{"a":1}'],
        [2, '{"a":2}'],
      ],
    ],
    [
      'invalid JSON still comes out (the planner rejects it)',
      'not json\n{"a":1}\n',
      [
        [1, 'not json'],
        [2, '{"a":1}'],
      ],
    ],
    ['inner whitespace is kept', '  {"a": 1}  \n', [[1, '  {"a": 1}  ']]],
    ['empty file', '', []],
    ['only blank lines', '\n\r\n  \n', []],
  ])('%s', async (_label, text, expected) => {
    const records = await jsonlOf(text);
    expect(records.map(view)).toEqual(expected);
    expect(records.every((r) => r.kind === 'json' && r.origin.file === 'in.jsonl')).toBe(true);
  });

  it.each([1, 2, 3, 5])('multi-byte characters split across %i-byte chunks are decoded intact', async (size) => {
    const text = '\uFEFF{"s":"日本😀"}\r\n\n{"s":"é"}\n{"s":"𝄞"}';
    expect((await jsonlOf(chunked(text, size))).map(view)).toEqual([
      [1, '{"s":"日本😀"}'],
      [3, '{"s":"é"}'],
      [4, '{"s":"𝄞"}'],
    ]);
  });

  it('string chunks work too', async () => {
    expect((await jsonlOf(['{"a":', '1}\n{"a"', ':2}'])).map(view)).toEqual([
      [1, '{"a":1}'],
      [2, '{"a":2}'],
    ]);
  });

  it('with firstByte, each record says where its line starts in the file, a BOM, CRLF, blank and oversized lines before it', async () => {
    const lines = ['\uFEFF{"a":1}\r', '', '{"s":"日本"}', `{"big":"${'x'.repeat(300)}"}`, '\r', '{"a":2}', '{"a":3}'];
    const text = lines.join('\n');
    const bytes = Buffer.from(text, 'utf8');
    const starts = [0];
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) starts.push(i + 1);
    for (const size of [1, 3, 1000]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
      for (const firstByte of [0, 500]) {
        const records = await collect(readJsonLines(Readable.from(chunks), 'in.jsonl', { firstByte, maxRecordBytes: 100 }));
        expect(records.map((r) => [r.origin.line, r.origin.offset])).toEqual([1, 3, 4, 6, 7].map((line) => [line, firstByte + starts[line - 1]!]));
      }
    }
    // Without firstByte, no offsets.
    expect((await jsonlOf(['{"a":1}\n'])).map((r) => r.origin.offset)).toEqual([undefined]);
  });

  it('a stream error -> INPUT_UNREADABLE naming the file', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('disk on fire'));
      },
    });
    const error = await rejection(collect(readJsonLines(broken, 'in.jsonl')));
    expect(error.code).toBe('INPUT_UNREADABLE');
    expect(error.file).toBe('in.jsonl');
  });
});

describe('openInput', () => {
  let dir: string;
  const CSV = 'pk,n\na,1\nb,2\n';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ddb-spread-readers-'));
    await writeFile(join(dir, 'plain.csv'), CSV);
    await writeFile(join(dir, 'data.csv.gz'), gzipSync(CSV));
    await writeFile(join(dir, 'no-extension'), gzipSync(CSV));
    await writeFile(join(dir, 'empty.csv'), '');
    await writeFile(join(dir, 'corrupt.csv.gz'), Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from('definitely not deflate')]));
    await mkdir(join(dir, 'a-directory.csv'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function text(stream: Readable): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  }

  it('reads a plain file, with its size and byte count', async () => {
    const path = join(dir, 'plain.csv');
    const input = await openInput(path);
    expect(await text(input.stream)).toBe(CSV);
    expect(input.name).toBe(path);
    expect(input.totalBytes).toBe(Buffer.byteLength(CSV));
    expect(input.bytesRead()).toBe(Buffer.byteLength(CSV));
  });

  it.each(['data.csv.gz', 'no-extension'])('decompresses gzip by its magic bytes: %s', async (name) => {
    const input = await openInput(join(dir, name));
    expect(await text(input.stream)).toBe(CSV);
    expect(input.totalBytes).toBe(gzipSync(CSV).length);
  });

  it('decompresses gzipped stdin', async () => {
    const input = await openInput('-', Readable.from([gzipSync(CSV)]));
    expect(input.name).toBe('stdin');
    expect(input.totalBytes).toBeUndefined();
    expect(await text(input.stream)).toBe(CSV);
  });

  it('decompresses gzipped stdin whose first chunk is a single byte', async () => {
    const gz = gzipSync(CSV);
    const input = await openInput('-', Readable.from([gz.subarray(0, 1), gz.subarray(1, 5), gz.subarray(5)]));
    expect(await text(input.stream)).toBe(CSV);
  });

  it('passes plain stdin through', async () => {
    const input = await openInput('-', Readable.from([Buffer.from(CSV)]));
    expect(await text(input.stream)).toBe(CSV);
    expect(input.bytesRead()).toBe(Buffer.byteLength(CSV));
  });

  it('an empty file gives an empty stream', async () => {
    expect(await text((await openInput(join(dir, 'empty.csv'))).stream)).toBe('');
  });

  it('a gzipped file feeds readCsv with correct line numbers', async () => {
    const input = await openInput(join(dir, 'data.csv.gz'));
    expect((await collect(readCsv(input.stream, input.name, CSV_DEFAULTS))).map(view)).toEqual([
      [2, 'a,1', { pk: 'a', n: '1' }],
      [3, 'b,2', { pk: 'b', n: '2' }],
    ]);
  });

  it('corrupt gzip fails the read instead of yielding garbage', async () => {
    const input = await openInput(join(dir, 'corrupt.csv.gz'));
    await expect(text(input.stream)).rejects.toThrow();
  });

  it('a missing file -> INPUT_NOT_FOUND naming the file', async () => {
    const path = join(dir, 'nope.csv');
    const error = await rejection(openInput(path));
    expect(error.code).toBe('INPUT_NOT_FOUND');
    expect(error.file).toBe(path);
  });

  it('a directory -> INPUT_UNREADABLE naming it', async () => {
    const path = join(dir, 'a-directory.csv');
    const error = await rejection(openInput(path));
    expect(error.code).toBe('INPUT_UNREADABLE');
    expect(error.file).toBe(path);
  });
});

describe('readCsv: a column whose name is the __proto__ stand-in itself', () => {
  // `__proto__` goes through csv-parse as "\0__proto__"; a header that really names a column
  // "\0__proto__" was renamed to `__proto__`, and with a `__proto__` column too one of the cells was lost.
  it('keeps both names and both cells, with a header and with --columns', async () => {
    for (const [text, columns] of [
      ['pk,\u0000__proto__,__proto__\nk1,nul,proto\n', undefined],
      ['k1,nul,proto\n', ['pk', '\u0000__proto__', '__proto__']],
    ] as const) {
      const [row] = await csvOf(text, columns ? { columns: [...columns] } : {});
      expect(row?.kind).toBe('csv');
      const cells = (row as { cells: Record<string, string> }).cells;
      expect(Object.keys(cells).sort()).toEqual(['\u0000__proto__', '__proto__', 'pk']);
      expect(Object.hasOwn(cells, '__proto__') && cells['__proto__']).toBe('proto');
      expect(cells['\u0000__proto__']).toBe('nul');
    }
  });
  it('likewise when a cell holds non-ASCII text (the decoding path)', async () => {
    const [row] = await csvOf('pk,\u0000__proto__,__proto__\nk1,n\u00e9,pr\u00f6to\n');
    const cells = (row as { cells: Record<string, string> }).cells;
    expect(Object.keys(cells).sort()).toEqual(['\u0000__proto__', '__proto__', 'pk']);
    expect(cells['\u0000__proto__']).toBe('n\u00e9');
    expect(Object.hasOwn(cells, '__proto__') && cells['__proto__']).toBe('pr\u00f6to');
  });
});
