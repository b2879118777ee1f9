/**
 * An attack on the local copies of scanned segments (load/segmentCopy.ts) of an S3 object divided by byte
 * range: the object replaced (same size, new ETag) after a worker copied its segment, so that its range is
 * read from old bytes in the copy and new ones past it; a server that ignores Range under the copy's seams. Every row must come once with its own value, never a mix of two versions, and nothing with
 * rows may stay in --temp-dir on any way out.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdir, readdir } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { load, LoaderError, type LoadOptions } from '../../src/index.js';
import { rangeLayout } from '../../src/load/shares.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'copyattack', processCredentials: true });

/** A CSV of `rows` rows whose values carry `version`, CRLF line ends, every third row a quoted note over lines. */
function csv(rows: number, version: string): string {
  const lines = ['pk,sk,v'];
  for (let i = 0; i < rows; i++)
    lines.push(
      i % 3 === 0 ? `p${i % 50},${i},"${version} ${i}\r\np${i},${i},not a row ${'q'.repeat(i % 30)}"` : `p${i % 50},${i},${version} ${i} ${'w'.repeat(i % 60)}`,
    );
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * csv(rows, 'v4') with row 0's note padded until 2 workers' segment edge (byte floor(size / 2)) is a record
 * start (`before` 0), or the LF of the CRLF before one (1). ASCII only: string offsets are byte offsets.
 */
function paddedToEdge(rows: number, before: 0 | 1): string {
  for (let pad = 0; pad < 2000; pad++) {
    const records = csv(rows, 'v4').replace('v4 0\r\n', `v4 0${'x'.repeat(pad)}\r\n`);
    const edge = Math.floor(records.length / 2);
    // A record start: after CRLF, a row's key (p<n>,<n>,v4), not a note's second line.
    if (/^\r\np\d+,\d+,v4 /.test(records.slice(edge - 2 + before))) return records;
  }
  throw new Error('no padding puts a record start at the edge');
}

/** A forward proxy to s3rver; `onGet` sees each GET of `key` (its Range) before it is forwarded, and may rewrite its headers. */
async function proxyTo(key: string, onGet: (range: string, headers: IncomingMessage['headers']) => Promise<void> | void) {
  const upstream = new URL(s3Endpoint());
  const asked: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const headers = { ...req.headers };
    const forward = () => {
      const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      req.pipe(out);
    };
    if (req.method === 'GET' && decodeURIComponent((req.url ?? '').split('?')[0]!).endsWith(`/${key}`)) {
      const range = String(req.headers.range ?? '');
      asked.push(range);
      void Promise.resolve(onGet(range, headers)).then(forward);
    } else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
});

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({
    endpoint,
    region: 'us-east-1',
    s3PathStyle: true,
    s3Endpoint: s3Endpoint(),
    rejectsPath: join(dir(), `c-${++runs}.rejects.jsonl`),
    types: { v: 'S' },
    ...options,
  });

async function tempDir(name: string): Promise<string> {
  const path = join(dir(), name);
  await mkdir(path);
  return path;
}

/** The `v` of every item, by sort key. */
async function valuesIn(table: string): Promise<Map<number, string>> {
  return new Map((await scanAll(client(), table)).map((item) => [Number(item['sk']!.N), item['v']!.S!]));
}

describe('segment copies of an S3 object divided by byte range', () => {
  it('the object replaced (same size) after worker 0 copied its segment: the load stops with INPUT_CHANGED, no row of the new version, the copy removed', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const old = csv(3000, 'old');
    const fresh = csv(3000, 'new');
    expect(Buffer.byteLength(fresh)).toBe(Buffer.byteLength(old));
    await putObjects(s3, bucket, { 'big.csv': old });
    const size = Buffer.byteLength(old);
    const [starts] = rangeLayout([size], 2).segments;
    expect(starts).toHaveLength(2);
    const edge = starts![1]!;
    // The first GET from the segment edge is the look for the next segment's first record (the range's end);
    // the second one is the range's bytes past the copy: the object is replaced just before it.
    let fromEdge = 0;
    let replaced = false;
    const proxy = await proxyTo('big.csv', async (range) => {
      if (!range.startsWith(`bytes=${edge}-`) || ++fromEdge !== 2) return;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.csv', Body: fresh }));
      replaced = true;
    });
    const table = await newTable(KEYS);
    const temp = await tempDir('changed-temp');
    const error = await run({
      input: `s3://${bucket}/big.csv`,
      table,
      s3Endpoint: proxy.url,
      segment: '0/2',
      listing: join(dir(), 'changed.listing.json'),
      partsDisjoint: true,
      tempDir: temp,
    }).then(
      (r) => {
        throw new Error(`expected INPUT_CHANGED, got ${JSON.stringify(r)}`);
      },
      (e: unknown) => e as LoaderError,
    );
    expect(replaced).toBe(true);
    expect(error).toBeInstanceOf(LoaderError);
    expect(error.code).toBe('INPUT_CHANGED');
    // What was written before the stop is of the version listed, never the new one.
    for (const v of (await valuesIn(table)).values()) expect(v).toMatch(/^old /);
    expect(await readdir(temp)).toEqual([]);
  });

  it('the object replaced while worker 0 scans and copies its segment: INPUT_CHANGED before any write, the half-written copy removed', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const old = csv(3000, 'old');
    await putObjects(s3, bucket, { 'mid.csv': old });
    // The scan's second window (from 64 KB) is asked after the object was replaced.
    let replaced = false;
    const proxy = await proxyTo('mid.csv', async (range) => {
      if (replaced || !range.startsWith('bytes=65536-')) return;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'mid.csv', Body: csv(3000, 'new') }));
      replaced = true;
    });
    const table = await newTable(KEYS);
    const temp = await tempDir('mid-temp');
    const error = await run({
      input: `s3://${bucket}/mid.csv`,
      table,
      s3Endpoint: proxy.url,
      segment: '0/2',
      listing: join(dir(), 'mid.listing.json'),
      partsDisjoint: true,
      tempDir: temp,
    }).then(
      (r) => {
        throw new Error(`expected INPUT_CHANGED, got ${JSON.stringify(r)}`);
      },
      (e: unknown) => e as LoaderError,
    );
    expect(replaced).toBe(true);
    expect(error.code).toBe('INPUT_CHANGED');
    expect((await scanAll(client(), table)).length).toBe(0);
    expect(await readdir(temp)).toEqual([]);
  });

  it.each(['auto', 'stripes', 'round-robin'] as const)(
    '--order %s: worker 0 with its copy behind a server that ignores Range: the copied bytes and the S3 bytes past them join exactly (CRLF, quoted line breaks at the seam)',
    async (order) => {
      const s3 = s3Client();
      const bucket = await newBucket(s3);
      const rows = 3000;
      const text = csv(rows, 'v2');
      await putObjects(s3, bucket, { 'seam.csv': text });
      const proxy = await proxyTo('seam.csv', (_range, headers) => {
        delete headers.range;
      });
      const table = await newTable(KEYS);
      const temp = await tempDir(`seam-${order}-temp`);
      const listing = join(dir(), `seam-${order}.listing.json`);
      const worker = (i: number) =>
        run({ input: `s3://${bucket}/seam.csv`, table, s3Endpoint: proxy.url, segment: `${i}/2`, listing, partsDisjoint: true, tempDir: temp, order });
      const [first, second] = await Promise.all([worker(0), worker(1)]);
      expect(first!.division!.copiedBytes).toBeGreaterThan(0);
      expect(first!.rowsRead + second!.rowsRead).toBe(rows);
      expect(first!.rejected + second!.rejected).toBe(0);
      const values = await valuesIn(table);
      expect(values.size).toBe(rows);
      for (let i = 0; i < rows; i++) {
        const v = values.get(i)!;
        expect(v.startsWith(`v2 ${i}`), `row ${i}: ${v}`).toBe(true);
        if (i % 3 === 0) expect(v).toBe(`v2 ${i}\r\np${i},${i},not a row ${'q'.repeat(i % 30)}`);
      }
      expect(await readdir(temp)).toEqual([]);
    },
  );

  it('the middle worker alone, its predecessor never come: it scans segment 0 uncopied, copies its own, reads its range from that copy; the others come later and every row is once, its own', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = 5000;
    const text = csv(rows, 'v3');
    await putObjects(s3, bucket, { 'late.csv': text });
    const size = Buffer.byteLength(text);
    const [starts] = rangeLayout([size], 3).segments;
    expect(starts).toHaveLength(3);
    const table = await newTable(KEYS);
    const temp = await tempDir('late-temp');
    const listing = join(dir(), 'late.listing.json');
    const worker = (i: number) =>
      load(
        {
          endpoint,
          region: 'us-east-1',
          s3PathStyle: true,
          s3Endpoint: s3Endpoint(),
          rejectsPath: join(dir(), `late-${i}.rejects.jsonl`),
          types: { v: 'S' },
          input: `s3://${bucket}/late.csv`,
          table,
          segment: `${i}/3`,
          listing,
          partsDisjoint: true,
          tempDir: temp,
        },
        { testSeams: { rangeWaitMs: 50 } },
      );
    const middle = await worker(1);
    // Its range was read from the copy of segment 1 (bytes starts[1]..starts[2]), all but the bytes past it to the next cut.
    const copied = middle.division!.copiedBytes!;
    expect(copied).toBeGreaterThan(0);
    expect(copied).toBeLessThanOrEqual(starts![2]! - starts![1]!);
    expect(copied).toBeGreaterThan(middle.division!.bytes - 2000);
    expect(await readdir(temp)).toEqual([]);
    const first = await worker(0);
    const last = await worker(2);
    // Worker 0 found its pass written by worker 1: nothing scanned, nothing copied; the last segment is never copied.
    expect(first.division!.copiedBytes ?? 0).toBe(0);
    expect(last.division!.copiedBytes ?? 0).toBe(0);
    expect(first.rowsRead + middle.rowsRead + last.rowsRead).toBe(rows);
    expect(first.division!.bytes + middle.division!.bytes + last.division!.bytes).toBe(size);
    const values = await valuesIn(table);
    expect(values.size).toBe(rows);
    for (let i = 0; i < rows; i++) expect(values.get(i)!.startsWith(`v3 ${i}`), `row ${i}`).toBe(true);
    expect(await readdir(temp)).toEqual([]);
  });

  it.each([
    ['a record starts exactly at the copy end', 0],
    ['the CRLF before a record split across the copy end', 1],
  ] as const)('%s: the ranges meet there, every row once, its own', async (_what, before) => {
    // Row 0 padded until byte floor(size / 2) (where 2 workers' segments meet) is a record start, or one past its CR.
    const rows = 3000;
    const text = paddedToEdge(rows, before);
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'edge.csv': text });
    const table = await newTable(KEYS);
    const temp = await tempDir(`edge-${before}-temp`);
    const listing = join(dir(), `edge-${before}.listing.json`);
    const worker = (i: number) => run({ input: `s3://${bucket}/edge.csv`, table, segment: `${i}/2`, listing, partsDisjoint: true, tempDir: temp });
    const [first, second] = await Promise.all([worker(0), worker(1)]);
    const edge = Math.floor(text.length / 2);
    // Worker 0's range ends at the record start: at the copy's end, or a byte past it.
    expect(first!.division!.bytes).toBe(edge + before);
    // The copy's bytes were read back (the look at the part's head reads some of them too: counted there as well).
    expect(first!.division!.copiedBytes).toBeGreaterThanOrEqual(edge);
    expect(first!.rowsRead + second!.rowsRead).toBe(rows);
    expect(first!.rejected + second!.rejected).toBe(0);
    const values = await valuesIn(table);
    expect(values.size).toBe(rows);
    for (let i = 1; i < rows; i++) {
      const v = values.get(i)!;
      expect(v === `v4 ${i}\r\np${i},${i},not a row ${'q'.repeat(i % 30)}` || v === `v4 ${i} ${'w'.repeat(i % 60)}`, `row ${i}: ${JSON.stringify(v)}`).toBe(
        true,
      );
    }
    expect(await readdir(temp)).toEqual([]);
  });

  it('a --temp-dir the copy cannot be made in (missing): the worker reads its range from S3 as without a copy, every row once', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = 3000;
    await putObjects(s3, bucket, { 'nowhere.csv': csv(rows, 'v5') });
    const table = await newTable(KEYS);
    const listing = join(dir(), 'nowhere.listing.json');
    const warnings: string[] = [];
    const worker = (i: number) =>
      load(
        {
          endpoint,
          region: 'us-east-1',
          s3PathStyle: true,
          s3Endpoint: s3Endpoint(),
          rejectsPath: join(dir(), `nowhere-${i}.rejects.jsonl`),
          types: { v: 'S' },
          input: `s3://${bucket}/nowhere.csv`,
          table,
          segment: `${i}/2`,
          listing,
          partsDisjoint: true,
          tempDir: join(dir(), 'no-such-folder'),
        },
        { onEvent: (event) => void (event.type === 'warning' && warnings.push(event.message)) },
      );
    const [first, second] = await Promise.all([worker(0), worker(1)]);
    expect(first!.division!.copiedBytes ?? 0).toBe(0);
    // Said, with the fix.
    expect(warnings.join('\n')).toMatch(/cannot copy segment .*fetches its range from S3 a second time; give --temp-dir a writable folder/);
    expect(first!.rowsRead + second!.rowsRead).toBe(rows);
    expect((await valuesIn(table)).size).toBe(rows);
  });
});
