/**
 * S3 inputs and DynamoDB export folders, against a real S3-compatible server (s3rver, started
 * by the global setup on loopback): objects and prefixes streamed, a dropped connection resumed with a
 * ranged GET from the byte where it broke, a changed object refused, exports checked against their
 * manifests (counts per file and in total, MD5), local and in S3.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { load, LoaderError, type LoadOptions } from '../../src/index.js';
import { runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { buildExport, writeExport, type ExportLine } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejects } from '../support/rejects.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';
import { startS3DropProxy } from '../support/s3DropProxy.js';
import { zstd } from '../support/formatFixtures.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 's3input', processCredentials: true });

const csvRows = (from: number, count: number) =>
  `pk,sk,v\n${Array.from({ length: count }, (_, i) => `p${(from + i) % 40},${from + i},v${from + i}`).join('\n')}\n`;

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({
    endpoint,
    region: 'us-east-1',
    s3Endpoint: s3Endpoint(),
    s3PathStyle: true,
    rejectsPath: join(dir(), `s3-${++runs}.rejects.jsonl`),
    ...options,
  });
const failure = (options: Parameters<typeof run>[0]) =>
  run(options).then(
    (r): LoaderError => {
      throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
    },
    (e: unknown) => e as LoaderError,
  );

/** Items as the source table held them: pk, sk, a nested map, a number set, binary. */
const exportItem = (i: number) => ({
  pk: { S: `k${i % 37}` },
  sk: { N: String(i) },
  n: { N: `12345678901234567890.${i}` },
  m: { M: { a: { L: [{ S: 'x' }, { BOOL: true }, { NULL: true }] } } },
  ns: { NS: ['1', String(i + 2)] },
  b: { B: Buffer.from([i % 256, 0, 255]).toString('base64') },
});

describe('S3 inputs', () => {
  it('a prefix of CSV parts, and one object by its key: every row; rejects name the object', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, {
      'out/part-00000.csv': csvRows(0, 500),
      'out/part-00001.csv.gz': gzipSync(csvRows(500, 500)),
      'out/part-00002.csv': 'pk,sk,v\np1,notanumber,x\n',
      'out/_SUCCESS': '',
      'other/x.csv': csvRows(5000, 3),
    });
    const table = await newTable(KEYS);
    const result = await run({ input: `s3://${bucket}/out/`, table, types: { v: 'S' } });
    expect(result).toMatchObject({ rowsRead: 1001, written: 1000, rejected: 1 });
    expect((await readRejects(result.rejectsPath!)).map((r) => [r.file, r.line])).toEqual([[`s3://${bucket}/out/part-00002.csv`, 2]]);
    expect((await scanAll(client(), table)).length).toBe(1000);

    const single = await run({ input: `s3://${bucket}/other/x.csv`, table });
    expect(single).toMatchObject({ rowsRead: 3, written: 3 });
  });

  it('a missing object or bucket is a clear error before any write', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const table = await newTable(KEYS);
    expect((await failure({ input: `s3://${bucket}/nothing/here.csv`, table })).code).toBe('INPUT_NOT_FOUND');
    expect((await failure({ input: `s3://no-such-bucket-${runs}/x.csv`, table })).code).toBe('INPUT_NOT_FOUND');
  });

  // These read one object as one stream (--order window) and count its GETs: by default a large sorted object
  // is cut into ranges first (s3ObjectStripes.test.ts), and a small one has its first bytes read to see whether it can be.
  // The load's look at the object's header row before its first write (inputPreflight.ts) is a GET of its own,
  // passed by the proxy untouched (passFirst) so that the read is what each test cuts.
  it('a connection dropped mid-object resumes with a ranged GET from the byte where it broke, not from 0', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const body = csvRows(0, 10_000);
    await putObjects(s3, bucket, { 'big.csv': body });
    const proxy = await startS3DropProxy(s3Endpoint(), { key: 'big.csv', cutAfter: 50_000, drops: 2, passFirst: 1 });
    closeAfterAll(proxy);
    const table = await newTable(KEYS);
    const result = await run({ input: `s3://${bucket}/big.csv`, table, s3Endpoint: proxy.url, types: { v: 'S' }, order: 'window' });
    expect(result).toMatchObject({ rowsRead: 10_000, written: 10_000, rejected: 0 });
    // Its first window (64 KB) cut at 50,000 bytes, resumed to the window's end, the rest cut 50,000 bytes
    // in and resumed: no GET starts at a byte already received.
    expect(proxy.ranges.length).toBe(4);
    expect(proxy.ranges[0]).toBe(`bytes=0-${64 * 1024 - 1}`);
    const startsAt = proxy.ranges.map((r) => Number(/^bytes=(\d+)-/.exec(r)?.[1]));
    expect(startsAt[1]).toBeGreaterThanOrEqual(50_000);
    expect(startsAt[2]).toBe(64 * 1024);
    expect(startsAt[3]).toBeGreaterThanOrEqual(64 * 1024 + 50_000);
    expect((await scanAll(client(), table)).length).toBe(10_000);
  });

  it('an object is read by GETs of growing windows from 64 KB, so that a look at its head fetches little; a drop inside a window resumes within it', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const body = csvRows(0, 40_000);
    expect(body.length).toBeGreaterThan(2 * 256 * 1024);
    await putObjects(s3, bucket, { 'large.csv': body });
    const proxy = await startS3DropProxy(s3Endpoint(), { key: 'large.csv', cutAfter: 30_000, drops: 1, passFirst: 1 });
    closeAfterAll(proxy);
    const table = await newTable(KEYS);
    const result = await run({ input: `s3://${bucket}/large.csv`, table, s3Endpoint: proxy.url, types: { v: 'S' }, order: 'window' });
    expect(result).toMatchObject({ rowsRead: 40_000, written: 40_000, rejected: 0 });
    // A look at the object's head, given up after its first bytes, has asked for no more than the window.
    expect(proxy.ranges[0]).toBe(`bytes=0-${64 * 1024 - 1}`);
    const resumed = /^bytes=(\d+)-(\d+)$/.exec(proxy.ranges[1]!);
    expect(Number(resumed?.[1])).toBeGreaterThanOrEqual(30_000);
    expect(Number(resumed?.[2])).toBe(64 * 1024 - 1);
    // Then windows four times as large: 256 KB, 1 MB, then the rest.
    expect(proxy.ranges.slice(2)).toEqual([`bytes=${64 * 1024}-${5 * 64 * 1024 - 1}`, `bytes=${5 * 64 * 1024}-`]);
    expect((await scanAll(client(), table)).length).toBe(40_000);
  });

  it('a GET that goes silent mid-body, or before any answer, is given up after --request-timeout and read on from the byte where it stopped', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'silent.csv': csvRows(0, 2_000), 'mute.csv': csvRows(2_000, 2_000) });
    const silent = await startS3DropProxy(s3Endpoint(), { key: 'silent.csv', cutAfter: 10_000, stall: 'body', passFirst: 1 });
    const mute = await startS3DropProxy(s3Endpoint(), { key: 'mute.csv', cutAfter: 0, stall: 'headers', passFirst: 1 });
    closeAfterAll(silent);
    closeAfterAll(mute);
    const table = await newTable(KEYS);
    const first = await run({ input: `s3://${bucket}/silent.csv`, table, s3Endpoint: silent.url, types: { v: 'S' }, requestTimeoutMs: 1_000, order: 'window' });
    expect(first).toMatchObject({ rowsRead: 2_000, written: 2_000, rejected: 0 });
    expect(silent.ranges.length).toBe(2);
    expect(Number(/^bytes=(\d+)-$/.exec(silent.ranges[1]!)?.[1])).toBeGreaterThanOrEqual(10_000);
    const second = await run({ input: `s3://${bucket}/mute.csv`, table, s3Endpoint: mute.url, types: { v: 'S' }, requestTimeoutMs: 1_000, order: 'window' });
    expect(second).toMatchObject({ rowsRead: 2_000, written: 2_000, rejected: 0 });
    expect(mute.ranges).toEqual(['', '']);
    expect((await scanAll(client(), table)).length).toBe(4_000);
  }, 30_000);

  it('a resumed GET answered 200 with the whole object (Range ignored) skips the bytes already read: every row once, no header row as an item', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'whole.csv': csvRows(0, 2_000) });
    const proxy = await startS3DropProxy(s3Endpoint(), { key: 'whole.csv', cutAfter: 9_000, drops: 1, resumeAnswer: 'whole-200', passFirst: 1 });
    closeAfterAll(proxy);
    const table = await newTable(KEYS);
    const result = await run({ input: `s3://${bucket}/whole.csv`, table, s3Endpoint: proxy.url, types: { v: 'S' }, order: 'window' });
    expect(proxy.ranges.length).toBe(2);
    expect(proxy.ranges[1]).toMatch(/^bytes=\d+-$/);
    expect(result).toMatchObject({ rowsRead: 2_000, written: 2_000, rejected: 0 });
    const items = await scanAll(client(), table);
    const got = items.map((i) => `${i.pk!.S},${i.sk!.N},${i.v!.S}`).sort();
    const want = csvRows(0, 2_000).trim().split('\n').slice(1).sort();
    expect(got).toEqual(want);
  });

  it('a resumed GET answered 206 from another byte than asked is refused naming the object, never read twice', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'shifted.csv': csvRows(0, 2_000) });
    const proxy = await startS3DropProxy(s3Endpoint(), { key: 'shifted.csv', cutAfter: 9_000, drops: 1, resumeAnswer: 'whole-206', passFirst: 1 });
    closeAfterAll(proxy);
    const table = await newTable(KEYS);
    const error = await failure({ input: `s3://${bucket}/shifted.csv`, table, s3Endpoint: proxy.url, types: { v: 'S' } });
    expect(error.code).toBe('INPUT_UNREADABLE');
    expect(error.message).toMatch(/shifted\.csv.*bytes 0-/);
    expect(error.result?.rejected ?? 0).toBe(0);
  });

  it('an object replaced during the load is an error naming it, not a mix of two versions', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'big.csv': csvRows(0, 20_000) });
    const proxy = await startS3DropProxy(s3Endpoint(), {
      key: 'big.csv',
      cutAfter: 100_000,
      beforeResume: async () => void (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.csv', Body: csvRows(1, 20_000) }))),
    });
    closeAfterAll(proxy);
    const table = await newTable(KEYS);
    const error = await failure({ input: `s3://${bucket}/big.csv`, table, s3Endpoint: proxy.url, types: { v: 'S' } });
    expect(error).toBeInstanceOf(LoaderError);
    expect(error.message).toMatch(/big\.csv changed during the load \(ETag/);
  });

  it('zstd and no-extension JSON objects are read (decompressed, format from the first bytes); a Parquet object is refused before any write', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, {
      'z/1.csv.zst': zstd('pk,sk\na,1\nb,2\n'),
      'z/2-noext': '{"pk":"c","sk":3}\n',
    });
    const table = await newTable(KEYS);
    expect(await run({ input: `s3://${bucket}/z/`, table })).toMatchObject({ rowsRead: 3, written: 3, rejected: 0 });
    await putObjects(s3, bucket, { 'p/rows.parquet': Buffer.from('PAR1 not really') });
    const other = await newTable(KEYS);
    const refused = await failure({ input: [`s3://${bucket}/z/`, `s3://${bucket}/p/rows.parquet`], table: other });
    expect(refused.message).toMatch(/rows\.parquet is Parquet, which ddb-spread reads from local files only/);
    expect((await scanAll(client(), other)).length).toBe(0);
  });

  it('the CLI takes AWS_ENDPOINT_URL_S3 and --s3-path-style', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'a/1.jsonl': '{"pk":"a","sk":1}\n{"pk":"b","sk":2}\n', 'a/2.jsonl': '{"pk":"c","sk":3}\n' });
    const table = await newTable(KEYS);
    const cli = await runCli(['load', `s3://${bucket}/a`, '--table', table, '--s3-path-style', '--json', '--rejects', join(dir(), 'cli.rejects.jsonl')], {
      cwd: dir(),
      env: { ...localEnv(endpoint), AWS_ENDPOINT_URL_S3: s3Endpoint() },
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect((await scanAll(client(), table)).length).toBe(3);
  });
});

describe('DynamoDB export folders', () => {
  const partitions = (): ExportLine[][] => [
    Array.from({ length: 300 }, (_, i) => ({ Item: exportItem(i) })),
    [],
    Array.from({ length: 200 }, (_, i) => ({ Item: exportItem(300 + i) })),
  ];

  it('a full export in S3 and on disk: every item exactly as exported (numbers, sets, binary, maps)', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const fixture = buildExport('exports/2026', 'FULL_EXPORT', partitions());
    await putObjects(s3, bucket, fixture.files);
    const table = await newTable(KEYS);
    const result = await run({ input: `s3://${bucket}/${fixture.folder}/`, table });
    expect(result).toMatchObject({ rowsRead: 500, written: 500, rejected: 0 });
    const items = await scanAll(client(), table);
    expect(items.length).toBe(500);
    const item = items.find((i) => i.sk!.N === '301')!;
    expect(item).toMatchObject({ n: { N: '12345678901234567890.301' }, m: { M: { a: { L: [{ S: 'x' }, { BOOL: true }, { NULL: true }] } } } });
    expect(item.ns!.NS!.sort()).toEqual(['1', '303']);
    expect(Buffer.from(item.b!.B!)).toEqual(Buffer.from([301 % 256, 0, 255]));

    const local = await writeExport(dir(), buildExport('local', 'FULL_EXPORT', partitions()));
    const table2 = await newTable(KEYS);
    expect(await run({ input: local, table: table2 })).toMatchObject({ rowsRead: 500, written: 500 });
  });

  it('a data file whose count or MD5 differs from the manifest is a clear error', async () => {
    const counted = await writeExport(dir(), buildExport('c', 'FULL_EXPORT', partitions(), { countOf: (f, n) => (f === 2 ? n + 1 : n) }));
    const table = await newTable(KEYS);
    const countError = await failure({ input: counted, table });
    expect(countError.message).toMatch(/holds 200 records, but the export's manifest-files.json says 201/);
    const hashed = await writeExport(
      dir(),
      buildExport('h', 'FULL_EXPORT', partitions(), { md5Of: (f, md5) => (f === 0 ? Buffer.alloc(16).toString('base64') : md5) }),
    );
    expect((await failure({ input: hashed, table })).message).toMatch(/does not match the MD5/);
  });

  it('an ION export, full and incremental, loads as DYNAMODB_JSON does; a missing data file or manifest is a clear error', async () => {
    const { readFile, rm } = await import('node:fs/promises');
    const table = await newTable(KEYS);
    const ionItem = (i: number) => `{pk:"k${i % 37}",sk:${i},n:12345678901234567890.${i},m:{a:["x",true,null]},ss:$dynamodb_SS::["a","b"],b:{{AQID}}}`;
    const full = Array.from({ length: 60 }, (_, i) => `$ion_1_0 {Item:${ionItem(i)}}`);
    const ion = await writeExport(dir(), buildExport('ion', 'FULL_EXPORT', [full.slice(0, 40), [], full.slice(40)], { ion: true }));
    expect(await run({ input: ion, table })).toMatchObject({ rowsRead: 60, written: 60, rejected: 0 });
    const items = await scanAll(client(), table);
    expect(items.length).toBe(60);
    const seven = items.find((item) => item.sk!.N === '7')!;
    expect(seven).toEqual({
      pk: { S: 'k7' },
      sk: { N: '7' },
      n: { N: '12345678901234567890.7' },
      m: { M: { a: { L: [{ S: 'x' }, { BOOL: true }, { NULL: true }] } } },
      ss: { SS: ['a', 'b'] },
      b: { B: new Uint8Array([1, 2, 3]) },
    });
    // Incremental: NewImage is a put, Keys alone a delete.
    const changes = [
      `$ion_1_0 {Metadata:{WriteTimestampMicros:10},Keys:{pk:"k1",sk:1},NewImage:{pk:"k1",sk:1,v:"new1"},OldImage:${ionItem(1)}}`,
      `$ion_1_0 {Metadata:{WriteTimestampMicros:20},Keys:{pk:"k2",sk:2},OldImage:${ionItem(2)}}`,
    ];
    const inc = await writeExport(dir(), buildExport('ioninc', 'INCREMENTAL_EXPORT', [changes], { ion: true }));
    expect(await run({ input: inc, table })).toMatchObject({ rowsRead: 2, written: 2, deleted: 1, rejected: 0 });
    const after = await scanAll(client(), table);
    expect(after.length).toBe(59);
    expect(after.find((item) => item.sk!.N === '1')).toEqual({ pk: { S: 'k1' }, sk: { N: '1' }, v: { S: 'new1' } });
    expect(after.some((item) => item.sk!.N === '2')).toBe(false);
    const gone = await writeExport(dir(), buildExport('gone', 'FULL_EXPORT', partitions()));
    const files = (await readFile(join(gone, 'manifest-files.json'), 'utf8')).split('\n').filter(Boolean);
    const firstData = (JSON.parse(files[0]!) as { dataFileS3Key: string }).dataFileS3Key;
    await rm(join(dir(), firstData));
    const other = await newTable(KEYS);
    expect((await failure({ input: gone, table: other })).code).toBe('INPUT_NOT_FOUND');
    await rm(join(gone, 'manifest-files.json'));
    expect((await failure({ input: gone, table: other })).message).toMatch(/manifest-files.json is missing/);
    expect((await scanAll(client(), other)).length).toBe(0);
  });

  it('an incremental export: a record with NewImage is a put', async () => {
    const change = (i: number, micros: number) => ({
      Metadata: { WriteTimestampMicros: { N: String(micros) } },
      Keys: { pk: exportItem(i).pk, sk: exportItem(i).sk },
      NewImage: { ...exportItem(i), v: { S: `new${i}` } },
      OldImage: exportItem(i),
    });
    const folder = await writeExport(dir(), buildExport('inc', 'INCREMENTAL_EXPORT', [[change(1, 10), change(2, 20)], [change(3, 30)]]));
    const table = await newTable(KEYS);
    expect(await run({ input: folder, table })).toMatchObject({ rowsRead: 3, written: 3 });
    const items = await scanAll(client(), table);
    expect(items.map((i) => i.v!.S).sort()).toEqual(['new1', 'new2', 'new3']);
  });
});
