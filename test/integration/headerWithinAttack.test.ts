/**
 * Attacks on an S3 CSV part's header looked for in its first 16 KB (partHeads.ts headerWithin), end to end
 * against s3rver and DynamoDB Local: a header that the window cuts (mid-name, right before its line break,
 * with a BOM and blank lines before it, CR-only line ends), a header whose line break is the window's last
 * byte or the one before, a gzip object named .csv, a header with a name twice, --columns on headerless
 * objects, and a server that ignores Range (a 200 with the whole object). Each must load every row once under
 * the header's whole names, or refuse before any write, as the whole read did.
 */
import { gzipSync } from 'node:zlib';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { listInputs } from '../../src/reading/inputSet.js';
import { readPartHeads } from '../../src/reading/partHeads.js';
import { createS3Access } from '../../src/reading/s3Part.js';
import { killableCli } from '../support/checkpoint.js';
import { assertCliBuilt } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad, type LocalLoadOptions } from '../support/localLoad.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 'headerwithinattack', processCredentials: true, keys: KEYS });
const { client, newTable, dropTable } = aws;
const { path, run, runFailing } = localLoad(aws, { types: { v: 'N' } });
const s3run = (options: LocalLoadOptions, endpoint = s3Endpoint()) => run({ s3Endpoint: endpoint, s3PathStyle: true, ...options });
const WINDOW = 16 * 1024;
const ROWS = 400;

beforeAll(assertCliBuilt);

/** Rows `pk,sk,v,<fill…>,<last>` of ~70 bytes, `fill` empty cells between v and the last column. */
function body(fill: number, eol: string, rows = ROWS): string {
  let text = '';
  for (let i = 0; i < rows; i++) text += `k${i},s,${i},${','.repeat(fill)}tail-${i}-${'z'.repeat(40)}${eol}`;
  return text;
}

/** A header `pk,sk,v,<fillers>,<last>` whose line, `lead` before it, is `length` bytes (line break excluded). */
function header(lead: string, length: number, last: string): { text: string; fill: number } {
  const base = `pk,sk,v,`;
  const room = length - Buffer.byteLength(lead) - base.length - Buffer.byteLength(last);
  // Fillers `f0001,` (6 bytes each), the remainder padded into the first filler's name.
  const fill = Math.floor(room / 6);
  const pad = room - fill * 6;
  const names = Array.from({ length: fill }, (_, i) => `f${String(i).padStart(4, '0')}${i === 0 ? 'x'.repeat(pad) : ''},`).join('');
  const text = `${lead}${base}${names}${last}`;
  expect(Buffer.byteLength(text)).toBe(length);
  return { text, fill };
}

async function expectRows(table: string, last: string, rows = ROWS): Promise<void> {
  const items = await scanAll(client(), table);
  expect(items.length).toBe(rows);
  const seen = new Set<string>();
  for (const item of items) {
    const i = Number(item['v']!.N);
    expect(item['pk']!.S).toBe(`k${i}`);
    expect(item[last]?.S, `${last} of row ${i}: ${Object.keys(item).join(',')}`).toBe(`tail-${i}-${'z'.repeat(40)}`);
    seen.add(item['pk']!.S!);
  }
  expect(seen.size).toBe(rows);
}

const BOM = '\uFEFF';

describe("an S3 CSV part's header in its first 16 KB, attacked", () => {
  const cases: { name: string; lead: string; length: number; eol: string; last: string }[] = [
    // The window cuts the last name: taken from the window it would be a prefix of it.
    { name: 'cut mid-name by the window', lead: '', length: WINDOW + 5, eol: '\n', last: 'lastname' },
    { name: 'cut mid-name, BOM and blank lines before it', lead: `${BOM}\n\r\n\n`, length: WINDOW + 2, eol: '\r\n', last: 'lästnäme' },
    { name: 'cut mid-name, CR-only line ends', lead: '\r\r', length: WINDOW + 3, eol: '\r', last: 'lastname' },
    // The window ends right before the line break: the names are whole, the row may not be.
    { name: 'ending right at the window, its break past it', lead: '', length: WINDOW, eol: '\n', last: 'lastname' },
    { name: 'ending right at the window, CRLF', lead: `${BOM}`, length: WINDOW, eol: '\r\n', last: 'lastname' },
    // CR then LF across the window's end.
    { name: 'CR the window’s last byte, LF past it', lead: '', length: WINDOW - 1, eol: '\r\n', last: 'lastname' },
    // Its line break the window's last byte, or the one before.
    { name: 'LF the window’s last byte', lead: '', length: WINDOW - 1, eol: '\n', last: 'lastname' },
    { name: 'LF the byte before the window’s last', lead: '', length: WINDOW - 2, eol: '\n', last: 'lastname' },
    { name: 'CR-only, the window’s last byte', lead: '', length: WINDOW - 1, eol: '\r', last: 'lastname' },
    { name: 'multi-byte names, BOM, blank lines, whole inside', lead: `${BOM}\r\n\r\n`, length: WINDOW - 700, eol: '\r\n', last: 'ñämé' },
  ];
  it('a header the window cuts or just holds: every row once, under the whole names', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const access = createS3Access({ endpoint: s3Endpoint(), forcePathStyle: true, region: 'us-east-1', requestTimeoutMs: 5_000 });
    for (const c of cases) {
      const h = header(c.lead, c.length, c.last);
      const text = `${h.text}${c.eol}${body(h.fill, c.eol)}`;
      await putObjects(s3, bucket, { 'h.csv': text });
      // The look before the first write (what a read resumed inside the part takes as its columns): the whole names.
      const set = await listInputs([`s3://${bucket}/h.csv`], { stdin: Readable.from([]), s3: () => Promise.resolve(access), outputs: [] });
      const heads = await readPartHeads(set, { format: undefined, csv: { delimiter: undefined, columns: undefined } });
      expect(heads.columns[0]?.names, c.name).toEqual(h.text.replace(/^[\uFEFF\r\n]+/, '').split(','));
      expect(heads.set.parts[0]?.header, c.name).toEqual(h.text.replace(/^[\uFEFF\r\n]+/, '').split(','));
      const table = await newTable();
      const result = await s3run({ input: `s3://${bucket}/h.csv`, table });
      expect(result, c.name).toMatchObject({ rowsRead: ROWS, rejected: 0 });
      await expectRows(table, c.last);
      await dropTable(table);
    }
    access.destroy();
  });

  it('a gzip object named .csv: decompressed, its header read whole', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const h = header('', 200, 'lastname');
    // Random-ish tails so the compressed object is past the window too.
    let rows = '';
    for (let i = 0; i < ROWS; i++) rows += `k${i},s,${i},${','.repeat(h.fill)}tail-${i}-${'z'.repeat(40)}\n`;
    const gz = gzipSync(`${h.text}\n${rows}`, { level: 0 });
    expect(gz.length).toBeGreaterThan(WINDOW);
    await putObjects(s3, bucket, { 'g.csv': gz });
    const table = await newTable();
    expect(await s3run({ input: `s3://${bucket}/g.csv`, table })).toMatchObject({ rowsRead: ROWS, rejected: 0 });
    await expectRows(table, 'lastname');
    await dropTable(table);
  });

  it('a header with a name twice: refused before any write, inside the window or cut by it', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    for (const length of [300, WINDOW + 10]) {
      const h = header('', length, 'v');
      await putObjects(s3, bucket, { 'd.csv': `${h.text}\n${body(h.fill, '\n')}` });
      const table = await newTable();
      const error = await runFailing({ input: `s3://${bucket}/d.csv`, table, s3Endpoint: s3Endpoint(), s3PathStyle: true });
      expect(error.code).toBe('INPUT_HEADER');
      expect(error.message).toContain('d.csv');
      expect(await scanAll(client(), table)).toEqual([]);
      await dropTable(table);
    }
  });

  it('--columns on headerless objects: the first row is a row, not a header', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const columns = ['pk', 'sk', 'v', 'lastname'];
    await putObjects(s3, bucket, { 'n.csv': body(0, '\n') });
    const table = await newTable();
    expect(await s3run({ input: `s3://${bucket}/n.csv`, table, columns })).toMatchObject({ rowsRead: ROWS, rejected: 0 });
    await expectRows(table, 'lastname');
    await dropTable(table);
  });

  it('a server that ignores Range (200 with the whole object): the header and every row once', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const ranged: string[] = [];
    const upstream = new URL(s3Endpoint());
    const proxy = createServer((req, res) => {
      const headers = { ...req.headers };
      if (headers.range) ranged.push(headers.range);
      delete headers.range;
      const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      for (const c of [cases[0]!, cases[6]!, cases[9]!]) {
        const h = header(c.lead, c.length, c.last);
        await putObjects(s3, bucket, { 'r.csv': `${h.text}${c.eol}${body(h.fill, c.eol)}` });
        const table = await newTable();
        const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
        expect(await s3run({ input: `s3://${bucket}/r.csv`, table }, endpoint), c.name).toMatchObject({ rowsRead: ROWS, rejected: 0 });
        await expectRows(table, c.last);
        await dropTable(table);
      }
      // The look asked for its window: the proxy did strip a Range.
      expect(ranged.some((r) => r === `bytes=0-${WINDOW - 1}`)).toBe(true);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('kill -9 mid-load and resume inside the part: the resumed rows take the header the window cut, whole', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = 1_500;
    // Cut mid-name by the window, and a BOM and blank lines before it: the look must read it whole.
    const h = header(`${BOM}\n\n`, WINDOW + 4, 'lastname');
    await putObjects(s3, bucket, { 'k.csv': `${h.text}\n${body(h.fill, '\n', rows)}` });
    const table = await newTable();
    const checkpoint = path('resume.checkpoint.json');
    const args = ['load', `s3://${bucket}/k.csv`, '--table', table, '--types', 'v:N', '--checkpoint', checkpoint, '--order', 'input'];
    args.push('--rejects', path('resume.rejects.jsonl'), '--s3-path-style');
    const env = { ...localEnv(aws.endpoint), AWS_ENDPOINT_URL_S3: s3Endpoint(), DDB_SPREAD_TEST_RESTART_ROWS: '100' };
    const cli = killableCli(args, checkpoint, { cwd: aws.dir(), env });
    const killed = await cli(12);
    expect(killed.signal, `${killed.code} ${killed.stderr}`).toBe('SIGKILL');
    const resumed = await cli();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/reading on from a restart point past the first [\d,]+ rows/);
    await expectRows(table, 'lastname', rows);
    await dropTable(table);
  });
});
