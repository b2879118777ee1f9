/**
 * An attack on S3 reads in growing windows (reading/s3Part.ts objectBytes: 64 KB, then x4, then the rest):
 * servers and proxies that answer a window otherwise than asked, and sizes at the window edges. Every row
 * must come once, in order, with its own bytes: a window's bytes delivered twice or skipped would show as a
 * row read twice (more rows read than there are), a mangled row (rejected), or a wrong value in the table.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { load, LoaderError, type LoadOptions } from '../../src/index.js';
import { createS3Access } from '../../src/reading/s3Part.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';
import { startS3DropProxy } from '../support/s3DropProxy.js';
import { zstd } from '../support/formatFixtures.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 's3window', processCredentials: true });

/** A CSV object of exactly `size` bytes, its rows' values not compressible much (a gzip of it spans windows). */
function csvOfSize(size: number): { text: string; rows: number } {
  const header = 'pk,sk,v\n';
  const lines: string[] = [];
  let length = header.length;
  let seed = 7;
  const noise = () => {
    let s = '';
    for (let j = 0; j < 160; j++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed = (seed ^ (seed << 5)) >>> 0;
      s += String.fromCharCode(97 + (seed % 26));
    }
    return s;
  };
  for (let i = 0; ; i++) {
    const line = `p${i % 40},${i},${noise()}\n`;
    // Keep room for a last row of at least its key and a short value.
    if (length + line.length + 200 > size) {
      const stem = `p${i % 40},${i},`;
      const pad = size - length - stem.length - 1;
      lines.push(`${stem}${'z'.repeat(pad)}\n`);
      break;
    }
    lines.push(line);
    length += line.length;
  }
  const text = header + lines.join('');
  expect(Buffer.byteLength(text)).toBe(size);
  return { text, rows: lines.length };
}

/** The value column of every row, by sort key, as the object holds it. */
function valuesOf(text: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of text.split('\n').slice(1)) {
    if (line === '') continue;
    const [, sk, v] = line.split(',');
    out.set(Number(sk), v!);
  }
  return out;
}

/** What the proxy does with the n-th GET of the object (0-based), given its Range header ('' for none). */
type Plan = (
  n: number,
  range: string,
) => { range?: string | null; cutAfter?: number; stallAfter?: number; stallHeaders?: boolean; before?: () => Promise<void> } | undefined;

/**
 * A forward proxy in front of s3rver for one key's GETs: it may rewrite or strip the Range header (a
 * server that ignores Range answers 200 with the whole object; one asked a shorter range answers 206 with a
 * Content-Range ending before the asked end), cut the answer's body after some bytes, or leave it silent.
 */
async function windowProxy(key: string, plan: Plan) {
  const upstream = new URL(s3Endpoint());
  const asked: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const isGet = req.method === 'GET' && decodeURIComponent((req.url ?? '').split('?')[0]!).endsWith(`/${key}`);
    const headers = { ...req.headers };
    let step: ReturnType<Plan>;
    if (isGet) {
      const range = String(req.headers.range ?? '');
      step = plan(asked.length, range);
      asked.push(range);
      if (step?.range === null) delete headers.range;
      else if (step?.range !== undefined) headers.range = step.range;
      // No answer at all, not even its headers: the request timeout must give it up.
      if (step?.stallHeaders) return;
    }
    const forward = () => {
      const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const limit = step?.cutAfter ?? step?.stallAfter;
        if (limit === undefined) return void answer.pipe(res);
        let sent = 0;
        answer.on('data', (chunk: Buffer) => {
          if (sent >= limit) return;
          const piece = chunk.subarray(0, limit - sent);
          sent += piece.length;
          res.write(piece);
          if (sent >= limit && step?.cutAfter !== undefined) setTimeout(() => res.socket?.destroy(), 20);
        });
      });
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      req.pipe(out);
    };
    // Something done before the GET goes on (the object replaced).
    if (step?.before) void step.before().then(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxies: { close: () => Promise<void> } = {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  opened.push(proxies);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}
const opened: { close: () => Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(opened.map((p) => p.close()));
});

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({ endpoint, region: 'us-east-1', s3PathStyle: true, rejectsPath: join(dir(), `w-${++runs}.rejects.jsonl`), types: { v: 'S' }, ...options });

/** Every row once, with its own value. */
async function expectRows(table: string, text: string, result: { rowsRead: number; written: number; rejected: number }) {
  const want = valuesOf(text);
  expect(result).toMatchObject({ rowsRead: want.size, written: want.size, rejected: 0 });
  const items = await scanAll(client(), table);
  expect(items.length).toBe(want.size);
  for (const item of items) expect(item['v']!.S).toBe(want.get(Number(item['sk']!.N)));
}

describe('S3 reads in growing windows', () => {
  it('a server that ignores Range (200, the whole object, to every GET): objects of 64 KB, 64 KB + 1, 320 KB, and a gzip over three windows: each read once', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const objects = { 'a.csv': csvOfSize(65_536), 'b.csv': csvOfSize(65_537), 'c.csv': csvOfSize(327_680) };
    const gz = csvOfSize(600_000);
    const gzBytes = gzipSync(gz.text);
    expect(gzBytes.length).toBeGreaterThan(64 * 1024 + 64 * 1024 * 4 + 1);
    await putObjects(s3, bucket, { ...Object.fromEntries(Object.entries(objects).map(([k, v]) => [k, v.text])), 'd.csv.gz': gzBytes });
    for (const [key, { text }] of [...Object.entries(objects), ['d.csv.gz', gz] as const]) {
      const proxy = await windowProxy(key, () => ({ range: null }));
      const table = await newTable(KEYS);
      const result = await run({ input: `s3://${bucket}/${key}`, table, s3Endpoint: proxy.url, order: 'window' });
      await expectRows(table, text, result);
      // Windows were asked for, and answered whole: the reader kept only each window's bytes.
      expect(proxy.asked.some((r) => r.startsWith('bytes=65536-'))).toBe(Buffer.byteLength(text) > 65_536 || key.endsWith('.gz'));
    }
  });

  it('a 206 whose Content-Range ends before the asked end, or runs on to the object end: the window is finished from where it stopped, nothing twice', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const { text } = csvOfSize(400_000);
    await putObjects(s3, bucket, { 'short.csv': text, 'long.csv': text });
    const halve = (range: string) => {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range);
      if (!m || m[2] === '') return undefined;
      const [from, to] = [Number(m[1]), Number(m[2])];
      return { range: `bytes=${from}-${from + Math.floor((to - from) / 2)}` };
    };
    const short = await windowProxy('short.csv', (_n, range) => halve(range));
    const table = await newTable(KEYS);
    await expectRows(table, text, await run({ input: `s3://${bucket}/short.csv`, table, s3Endpoint: short.url, order: 'window' }));
    // The reader asked again from where each short answer stopped.
    expect(short.asked).toContain('bytes=32768-65535');

    const long = await windowProxy('long.csv', (_n, range) => {
      const m = /^bytes=(\d+)-\d+$/.exec(range);
      return m ? { range: `bytes=${m[1]}-` } : undefined;
    });
    const table2 = await newTable(KEYS);
    await expectRows(table2, text, await run({ input: `s3://${bucket}/long.csv`, table: table2, s3Endpoint: long.url, order: 'window' }));
  });

  it('drops exactly at a window edge and a byte either side, and a GET silent inside a later window (mid-body, or before its headers): resumed, every row once', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const { text } = csvOfSize(400_000);
    await putObjects(s3, bucket, { 'x.csv': text });
    for (const cut of [65_535, 65_536, 65_537]) {
      // The whole read is the load's second GET of the object at the least (the first a look at its head);
      // every GET from byte 0 is cut, so the look and the first window both break.
      const proxy = await windowProxy('x.csv', (_n, range) => (range === '' || range.startsWith('bytes=0-') ? { cutAfter: Math.min(cut, 60_000) } : undefined));
      const table = await newTable(KEYS);
      await expectRows(table, text, await run({ input: `s3://${bucket}/x.csv`, table, s3Endpoint: proxy.url, order: 'window' }));
    }
    // The window after the first (from 64 KB): cut at its own edge less a byte, at its edge, and silent.
    for (const step of [{ cutAfter: 262_143 }, { cutAfter: 262_144 }, { stallAfter: 100_000 }, { stallHeaders: true }]) {
      let hit = false;
      const proxy = await windowProxy('x.csv', (_n, range) => {
        if (hit || range !== 'bytes=65536-327679') return undefined;
        hit = true;
        return step;
      });
      const table = await newTable(KEYS);
      await expectRows(table, text, await run({ input: `s3://${bucket}/x.csv`, table, s3Endpoint: proxy.url, order: 'window', requestTimeoutMs: 1_000 }));
      expect(hit).toBe(true);
    }
  });

  it('a zstd object read through a server that ignores Range, and one cut mid-window: decompressed across window seams', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const { text } = csvOfSize(600_000);
    const bytes = zstd(text);
    expect(bytes.length).toBeGreaterThan(64 * 1024);
    await putObjects(s3, bucket, { 'z.csv.zst': bytes });
    const whole = await windowProxy('z.csv.zst', () => ({ range: null }));
    const table = await newTable(KEYS);
    await expectRows(table, text, await run({ input: `s3://${bucket}/z.csv.zst`, table, s3Endpoint: whole.url, order: 'window' }));
    let hit = false;
    const cut = await windowProxy('z.csv.zst', (_n, range) => {
      if (hit || !range.startsWith('bytes=65536-')) return undefined;
      hit = true;
      return { cutAfter: 1_000 };
    });
    const table2 = await newTable(KEYS);
    await expectRows(table2, text, await run({ input: `s3://${bucket}/z.csv.zst`, table: table2, s3Endpoint: cut.url, order: 'window' }));
    expect(hit).toBe(true);
  });

  it('the object replaced (same size) between two windows of one read: INPUT_CHANGED, never a row of the new version', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const { text } = csvOfSize(400_000);
    // The same size, every value changed.
    const fresh = text.replace(/,([a-z]{160})\n/g, (_m, v: string) => `,${v.toUpperCase()}\n`);
    expect(fresh.length).toBe(text.length);
    expect(fresh).not.toBe(text);
    await putObjects(s3, bucket, { 'swap.csv': text });
    let replaced = false;
    const proxy = await windowProxy('swap.csv', (_n, range) => {
      if (replaced || !range.startsWith('bytes=65536-')) return undefined;
      replaced = true;
      return { before: () => s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'swap.csv', Body: fresh })).then(() => undefined) };
    });
    const table = await newTable(KEYS);
    const error = await run({ input: `s3://${bucket}/swap.csv`, table, s3Endpoint: proxy.url, order: 'window' }).then(
      (r) => {
        throw new Error(`expected INPUT_CHANGED, got ${JSON.stringify(r)}`);
      },
      (e: unknown) => e as LoaderError,
    );
    expect(replaced).toBe(true);
    expect(error).toBeInstanceOf(LoaderError);
    expect(error.code).toBe('INPUT_CHANGED');
    const want = valuesOf(text);
    for (const item of await scanAll(client(), table)) expect(item['v']!.S).toBe(want.get(Number(item['sk']!.N)));
  });
  it('a reader that stops inside a window (a for-await break over a stream of the object: an AbortError thrown in) makes no GET again', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'head.csv': csvOfSize(600_000).text });
    const proxy = await startS3DropProxy(s3Endpoint(), { key: 'head.csv', cutAfter: 0, drops: 0 });
    const access = createS3Access({ endpoint: proxy.url, forcePathStyle: true, region: 'us-east-1', requestTimeoutMs: 5_000 });
    try {
      const [listed] = await access.list(`s3://${bucket}/head.csv`, []);
      // The object's stream inside another, as a part copied in segments reads the head it does not hold (segmentCopy.ts).
      async function* outer(): AsyncGenerator<Buffer> {
        yield* (await listed!.part.open(0)) as AsyncIterable<Buffer>;
      }
      let got = 0;
      for await (const chunk of Readable.from(outer(), { objectMode: false })) {
        got += (chunk as Buffer).length;
        if (got > 80 * 1024) break;
      }
      // A resume would come after its 200 ms back-off.
      await sleep(800);
      // Its first window and the second, which the reader went into: no GET from a byte inside either.
      expect(proxy.ranges).toEqual([`bytes=0-${64 * 1024 - 1}`, `bytes=${64 * 1024}-${5 * 64 * 1024 - 1}`]);
    } finally {
      access.destroy();
      await proxy.close();
    }
  });
  it('header rows at the edge of the first 16 KB an S3 CSV header is looked for in (ending on it, a byte either side, a quoted name over it, 20 KB): each read with its own names', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const EDGE = 16 * 1024;
    // A header row `pk,<name>,sk` whose line break is its byte `end` (1-based): cut short, its last name
    // would not be the table's sort key (and a range read from inside the object would take the wrong columns).
    const headerEnding = (end: number, quoted = false) => {
      const pad = end - 'pk,,sk\n'.length - (quoted ? 4 : 0);
      return quoted ? `pk,"x\n${'n'.repeat(pad)}",sk\n` : `pk,${'n'.repeat(pad)},sk\n`;
    };
    const headers = [
      headerEnding(EDGE - 1),
      headerEnding(EDGE),
      headerEnding(EDGE + 1),
      headerEnding(EDGE + 2),
      headerEnding(EDGE + 1, true),
      headerEnding(20_000),
    ];
    for (const [i, header] of headers.entries()) {
      expect(Buffer.byteLength(header)).toBe([EDGE - 1, EDGE, EDGE + 1, EDGE + 2, EDGE + 1, 20_000][i]);
      const name = header.slice(3, -4).replace(/^"|"$/g, '');
      const body = `${header}${Array.from({ length: 60 }, (_, r) => `p${r % 7},value ${r},${r}`).join('\n')}\n`;
      await putObjects(s3, bucket, { [`h${i}.csv`]: body });
      const table = await newTable(KEYS);
      const result = await run({ input: `s3://${bucket}/h${i}.csv`, table, s3Endpoint: s3Endpoint(), types: {} });
      expect(result).toMatchObject({ rowsRead: 60, written: 60, rejected: 0 });
      const items = await scanAll(client(), table);
      expect(items.length).toBe(60);
      for (const item of items) expect(item[name]!.S).toBe(`value ${item['sk']!.N}`);
    }
  });
});
