/**
 * A local file changed while a load reads it. A CSV truncated during a striped load ended with
 * exit 0 and rows missing; one rewritten in place left a table of both versions. Each input's identity is
 * pinned when it is listed and checked as it is read: the load stops with INPUT_CHANGED naming the file,
 * its checkpoint is not complete and holds no row of the other version, and once the file is restored the
 * same load resumes to a table equal to the file. The same for a whole read (JSON Lines, gzip) and Parquet.
 */
import { closeSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LoadDependencies, LoadOptions } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { writeParquet } from '../support/formatFixtures.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const aws = useLocalAws({ name: 'inputchanged', processCredentials: true });
const { client, newTable } = aws;
// Three stripes of the striped files (not 6 of 64 KB): each stripe's read-ahead is then well under half of
// its bytes, so the change lands while most of the file is still to be read.
const { path, run, runFailing } = localLoad(aws, {}, { testSeams: { stripeBytes: 128 * 1024 } });

const ROWS = 20_000;
const pk = (i: number) => `k${String(Math.floor(i / 10)).padStart(5, '0')}`;
/** Grouped by partition key (so the default order reads it in stripes); `tag` marks the version, same length. */
const csv = (tag: string) => `pk,sk,v\n${Array.from({ length: ROWS }, (_, i) => `${pk(i)},${i},${tag}-${i}`).join('\n')}\n`;
/** JSON Lines with a padding attribute, so the file is many times larger than what a load reads ahead. */
const jsonl = (tag: string, pad: () => string) =>
  Array.from({ length: ROWS }, (_, i) => `{"pk":"${pk(i)}","sk":${i},"v":"${tag}-${i}","pad":"${pad()}"}\n`).join('');
/** Padding of `length` characters, random (gzip cannot shrink it much) from a fixed seed. */
function padding(length: number): () => string {
  let seed = 7;
  return () => {
    let text = '';
    while (text.length < length) text += (seed = (seed * 48271) % 2147483647).toString(36);
    return text.slice(0, length);
  };
}

/** A change made once the table holds `after` rows (from the load's progress events), at most once. */
function changeAfter(after: number, change: () => void): Pick<LoadDependencies, 'onEvent'> & { done: () => boolean } {
  let changed = false;
  return {
    onEvent: (e) => {
      if (!changed && e.type === 'progress' && e.counters.written >= after) {
        changed = true;
        change();
      }
    },
    done: () => changed,
  };
}

/** The table as `pk,sk,v` lines, sorted. */
async function tableRows(table: string): Promise<string[]> {
  return (await scanAll(client(), table)).map((i) => `${i.pk!.S},${i.sk!.N},${i.v!.S}`).sort();
}
const fileRows = (tag: string) => Array.from({ length: ROWS }, (_, i) => `${pk(i)},${i},${tag}-${i}`).sort();
const statusOf = (checkpoint: string) => (JSON.parse(readFileSync(checkpoint, 'utf8')) as { status: string }).status;

/** Writes `text` over the start of the file without truncating it: the same size, other bytes. */
function rewriteInPlace(file: string, text: string | Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, typeof text === 'string' ? Buffer.from(text) : text, 0, Buffer.byteLength(text), 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * The scenario: load with a checkpoint, change the file mid-load, expect the stop; every item in the table
 * is the original's; restore, resume, and the table is the original file.
 */
async function changedMidLoad(args: {
  file: string;
  original: string | Buffer;
  change: (file: string) => void;
  options?: Partial<LoadOptions>;
  order?: string;
}): Promise<void> {
  const table = await newTable(KEYS);
  const checkpoint = path('ck.json');
  const options = { input: args.file, table, checkpointPath: checkpoint, wcu: 3_000, types: { v: 'S' as const }, ...args.options };
  const change = changeAfter(2_000, () => args.change(args.file));
  const error = await runFailing(options, change);
  expect(change.done(), `${error.code}: ${error.message}`).toBe(true);
  expect(error.code).toBe('INPUT_CHANGED');
  expect(error.message).toContain(`${args.file} changed while it was being read`);
  expect(error.result!.written).toBeLessThan(ROWS);
  if (args.order) expect(error.result!.order).toBe(args.order);
  expect(statusOf(checkpoint)).not.toBe('complete');
  // Nothing of another version: every item is the original row of its key.
  const original = new Set(fileRows('old'));
  const before = await tableRows(table);
  expect(before.filter((row) => !original.has(row))).toEqual([]);

  writeFileSync(args.file, args.original);
  const resumed = await run(options);
  expect(resumed).toMatchObject({ rejected: 0, complete: true });
  if (args.order) expect(resumed.order).toBe(args.order);
  expect(await tableRows(table)).toEqual(fileRows('old'));
  expect(statusOf(checkpoint)).toBe('complete');
}

describe('a local file changed during the load', () => {
  it('a CSV truncated during a striped load stops the load; restored, the load resumes to the whole file', async () => {
    const original = csv('old');
    const file = path('truncated.csv');
    writeFileSync(file, original);
    await changedMidLoad({ file, original, change: (f) => truncateSync(f, 1_000), order: 'stripes' });
  }, 240_000);

  it('a CSV rewritten in place (same size) during a striped load stops it before a row of the new version is written', async () => {
    const original = csv('old');
    const file = path('rewritten.csv');
    writeFileSync(file, original);
    await changedMidLoad({ file, original, change: (f) => rewriteInPlace(f, csv('new')), order: 'stripes' });
  }, 240_000);

  // Read whole, in input order (round-robin would read the whole file before the first write).
  it('a JSON Lines file read whole (--order input) truncated mid-load', async () => {
    const original = jsonl('old', () => 'x'.repeat(200));
    const file = path('whole.jsonl');
    writeFileSync(file, original);
    await changedMidLoad({ file, original, change: (f) => truncateSync(f, 100), options: { order: 'input' } });
  }, 240_000);

  it('a gzip file (it cannot be cut into stripes) rewritten in place mid-load', async () => {
    const original = gzipSync(jsonl('old', padding(120)));
    const file = path('rows.jsonl.gz');
    writeFileSync(file, original);
    await changedMidLoad({ file, original, change: (f) => rewriteInPlace(f, Buffer.alloc(original.length, 0x20)), options: { order: 'input' } });
  }, 240_000);

  it('a Parquet file rewritten mid-load: its row groups read after the change are refused', async () => {
    const file = path('rows.parquet');
    const columns = (tag: string) => [
      { name: 'pk', data: Array.from({ length: ROWS }, (_, i) => pk(i)) },
      { name: 'sk', data: Array.from({ length: ROWS }, (_, i) => i) },
      { name: 'v', data: Array.from({ length: ROWS }, (_, i) => `${tag}-${i}`) },
    ];
    const schema = [
      { name: 'root', num_children: 3 },
      { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      { name: 'sk', type: 'INT32', repetition_type: 'REQUIRED' },
      { name: 'v', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
    ];
    writeParquet(file, columns('old'), schema as never, { rowGroupSize: 500 });
    const original = readFileSync(file);
    const other = path('other.parquet');
    writeParquet(other, columns('new'), schema as never, { rowGroupSize: 500 });
    await changedMidLoad({ file, original, change: (f) => rewriteInPlace(f, readFileSync(other)), options: { order: 'input' } });
  }, 240_000);
});
