/**
 * Hostile input end to end: load() against DynamoDB Local reads every key exactly, or rejects
 * the row with its line and reason; nothing is merged or lost silently, and the accounting adds up.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { rejectsOf } from '../support/rejects.js';

const PK_S: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };
const aws = useLocalAws({ name: 'hostile', processCredentials: true, keys: PK_S });
const { client, newTable } = aws;
const { path: freshPath, inputFile, run } = localLoad(aws);

/** A file of `before`, then `size` bytes of `fill`, then `after`, written in 1 MiB blocks. */
async function hugeFile(name: string, before: string, size: number, fill: string, after: string): Promise<string> {
  const path = freshPath(name);
  const out = createWriteStream(path);
  const block = Buffer.alloc(1024 * 1024, fill);
  out.write(before);
  for (let sent = 0; sent < size; sent += block.length) {
    if (!out.write(block.subarray(0, Math.min(block.length, size - sent)))) await once(out, 'drain');
  }
  out.end(after);
  await once(out, 'finish');
  return path;
}

async function keysOf(table: string): Promise<string[]> {
  return (await scanAll(client(), table)).map((item) => item['pk']!.S!).sort();
}

function expectAccounting(result: LoadResult) {
  expect(result.written + result.superseded + result.rejected).toBe(result.rowsRead);
}

/** Samples heap + array buffers while `work` runs; the peak growth in bytes. */
async function peakGrowth(work: () => Promise<LoadResult>): Promise<{ result: LoadResult; peak: number }> {
  const base = process.memoryUsage();
  let peak = 0;
  const timer = setInterval(() => {
    const now = process.memoryUsage();
    peak = Math.max(peak, now.heapUsed - base.heapUsed + now.arrayBuffers - base.arrayBuffers);
  }, 20);
  try {
    return { result: await work(), peak };
  } finally {
    clearInterval(timer);
  }
}

describe('bytes that are not UTF-8', () => {
  it('CSV keys B\\xff and B\\xfe are both rejected with their line and column, not merged; the rest loads', async () => {
    const table = await newTable();
    const input = await inputFile(
      'latin1.csv',
      Buffer.concat([Buffer.from('pk,n\nB'), Buffer.from([0xff]), Buffer.from(',1\nB'), Buffer.from([0xfe]), Buffer.from(',2\nok,3\n')]),
    );
    const result = await run({ input, table });
    expect(result).toMatchObject({ rowsRead: 3, written: 1, superseded: 0, rejected: 2, rejectedByReason: { INVALID_UTF8: 2 } });
    expectAccounting(result);
    expect(await keysOf(table)).toEqual(['ok']);
    expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field])).toEqual([
      [2, 'INVALID_UTF8', 'pk'],
      [3, 'INVALID_UTF8', 'pk'],
    ]);
  });

  it('JSONL and DynamoDB JSON likewise', async () => {
    for (const [format, line] of [
      ['jsonl', (b: number) => Buffer.concat([Buffer.from('{"pk":"B'), Buffer.from([b]), Buffer.from('"}\n')])],
      ['ddb-json', (b: number) => Buffer.concat([Buffer.from('{"pk":{"S":"B'), Buffer.from([b]), Buffer.from('"}}\n')])],
    ] as const) {
      const table = await newTable();
      const good = format === 'jsonl' ? '{"pk":"ok"}\n' : '{"pk":{"S":"ok"}}\n';
      const input = await inputFile(`latin1.${format}`, Buffer.concat([line(0xff), line(0xfe), Buffer.from(good)]));
      const result = await run({ input, table, inputFormat: format });
      expect(result).toMatchObject({ rowsRead: 3, written: 1, superseded: 0, rejected: 2 });
      expect(await keysOf(table)).toEqual(['ok']);
      expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field])).toEqual([
        [1, 'INVALID_UTF8', 'pk'],
        [2, 'INVALID_UTF8', 'pk'],
      ]);
    }
  });
});

describe('JSON \\u escapes of lone UTF-16 surrogates', () => {
  // "\ud800" is ASCII in the file, so the byte check passes it, but no UTF-8 holds a lone
  // surrogate: it was sent, and stored as something else than the row says (or merged with another key).
  it('JSONL, DynamoDB JSON and a CSV cell typed JSON: rejected naming the attribute; a surrogate pair loads', async () => {
    const table = await newTable();
    const jsonl = [
      '{"pk":"a\\ud800"}',
      '{"pk":"b","v":"x\\udc00y"}',
      '{"pk":"c","\\ud83d":"1"}',
      '{"pk":"d","v":"\\ud83d\\ude00"}',
      '{"pk":"e","m":{"l":["ok","\\udfff"]}}',
    ].join('\n');
    const result = await run({ input: await inputFile('surrogates.jsonl', `${jsonl}\n`), table });
    expect(result).toMatchObject({ rowsRead: 5, written: 1, rejected: 4, rejectedByReason: { INVALID_UTF8: 4 } });
    expectAccounting(result);
    const items = await scanAll(client(), table);
    expect(items.map((i) => [i['pk']!.S, i['v']?.S])).toEqual([['d', '\u{1F600}']]);
    expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field])).toEqual([
      [1, 'INVALID_UTF8', 'pk'],
      [2, 'INVALID_UTF8', 'v'],
      [3, 'INVALID_UTF8', '\ud83d'],
      [5, 'INVALID_UTF8', 'm'],
    ]);

    const ddbTable = await newTable();
    const ddb = await run({
      input: await inputFile('surrogates.ddb.jsonl', '{"pk":{"S":"a\\udbff"}}\n{"pk":{"S":"ok"},"s":{"SS":["x","\\udc01"]}}\n{"pk":{"S":"good"}}\n'),
      table: ddbTable,
      inputFormat: 'ddb-json',
    });
    expect(ddb).toMatchObject({ rowsRead: 3, written: 1, rejected: 2 });
    expect(await keysOf(ddbTable)).toEqual(['good']);

    const csvTable = await newTable();
    const csv = await run({
      input: await inputFile('surrogates.csv', 'pk,doc\nk1,"{""a"":""\\ud800""}"\nk2,"{""a"":""b""}"\n'),
      table: csvTable,
      types: { doc: 'JSON' },
    });
    expect(csv).toMatchObject({ rowsRead: 2, written: 1, rejected: 1 });
    expect(await keysOf(csvTable)).toEqual(['k2']);
    expect((await rejectsOf(csv)).map((r) => [r.line, r.code, r.field])).toEqual([[2, 'INVALID_UTF8', 'doc']]);
  });
});

describe('mixed line endings', () => {
  const rows = (from: number, to: number, eol: string) =>
    Array.from({ length: to - from }, (_, i) => `${from + i},k${String(from + i).padStart(5, '0')}${eol}`).join('');
  const allKeys = Array.from({ length: 2000 }, (_, i) => `k${String(i).padStart(5, '0')}`);

  it.each([
    ['LF then CRLF', `n,pk\n${rows(0, 1000, '\n')}${rows(1000, 2000, '\r\n')}`],
    ['CRLF then LF', `n,pk\r\n${rows(0, 1000, '\r\n')}${rows(1000, 2000, '\n')}`],
  ])('%s: every key exact in the table (the key is the last column)', async (_label, text) => {
    const table = await newTable();
    const result = await run({ input: await inputFile('mixed.csv', text), table });
    expect(result).toMatchObject({ rowsRead: 2000, written: 2000, rejected: 0 });
    expect(await keysOf(table)).toEqual(allKeys);
  });
});

describe('deep nesting', () => {
  it('a JSONL row nested 3,000 deep between good rows is rejected with its line; the rest loads', async () => {
    const table = await newTable();
    const deep = `{"pk":"deep","doc":${'['.repeat(3000)}1${']'.repeat(3000)}}`;
    const result = await run({ input: await inputFile('deep.jsonl', `{"pk":"a"}\n${deep}\n{"pk":"b"}\n`), table, inputFormat: 'jsonl' });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1, rejectedByReason: { TOO_DEEP: 1 } });
    expect(await keysOf(table)).toEqual(['a', 'b']);
    expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field])).toEqual([[2, 'TOO_DEEP', 'doc']]);
  });

  it('a CSV cell typed JSON nested 3,000 deep likewise', async () => {
    const table = await newTable();
    const cell = `"${'['.repeat(3000)}1${']'.repeat(3000)}"`;
    const result = await run({ input: await inputFile('deep.csv', `pk,doc\na,[1]\nb,${cell}\nc,{}\n`), table, types: { doc: 'JSON' } });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1 });
    expect(await keysOf(table)).toEqual(['a', 'c']);
    expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field])).toEqual([[3, 'TOO_DEEP', 'doc']]);
  });
});

describe('records far over any item', () => {
  it('a 50 MB JSONL line is rejected with its line number, the rest loads, memory stays bounded', async () => {
    const table = await newTable();
    const input = await hugeFile('long.jsonl', '{"pk":"a"}\n{"pk":"huge","s":"', 50 * 1024 * 1024, 'x', '"}\n{"pk":"b"}\n');
    const { result, peak } = await peakGrowth(() => run({ input, table, inputFormat: 'jsonl' }));
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1, rejectedByReason: { RECORD_TOO_LARGE: 1 } });
    expect(await keysOf(table)).toEqual(['a', 'b']);
    const [reject] = await rejectsOf(result);
    expect(reject).toMatchObject({ line: 2, code: 'RECORD_TOO_LARGE' });
    expect(reject!.raw.length).toBeLessThanOrEqual(1024);
    expect(peak).toBeLessThan(128 * 1024 * 1024);
  }, 120_000);

  it('a ~100 MB quoted CSV field is rejected with its lines, the rows after it load with their keys', async () => {
    const table = await newTable();
    const input = await hugeFile('long.csv', 'pk,doc\na,1\nhuge,"', 100 * 1024 * 1024, 'y', '"\nb,2\n');
    const { result, peak } = await peakGrowth(() => run({ input, table }));
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1, rejectedByReason: { RECORD_TOO_LARGE: 1 } });
    expect(await keysOf(table)).toEqual(['a', 'b']);
    expect((await rejectsOf(result)).map((r) => [r.line, r.code])).toEqual([[3, 'RECORD_TOO_LARGE']]);
    expect(peak).toBeLessThan(128 * 1024 * 1024);
  }, 120_000);
});

describe('an unterminated quote', () => {
  it('the reject says how many lines the open quote swallowed', async () => {
    const table = await newTable();
    const body = Array.from({ length: 200 }, (_, i) => `k${i},${i}\n`).join('');
    const result = await run({ input: await inputFile('open.csv', `pk,n\na,1\nb,"open\n${body}`), table });
    expect(result).toMatchObject({ rowsRead: 2, written: 1, rejected: 1 });
    expectAccounting(result);
    const [reject] = await rejectsOf(result);
    expect(reject).toMatchObject({ line: 3, code: 'CSV_SYNTAX' });
    expect(reject!.message).toContain('lines 3-203 (201 lines)');
  });
});
