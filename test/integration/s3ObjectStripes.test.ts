/**
 * Large S3 objects cut into ranges where records start, end to end against DynamoDB Local and s3rver: one
 * sorted object (s3://bucket/key) and a prefix of two are read in stripes inside each object, by ranged GETs
 * that ask for the ETag listed; quoted fields with CRLF line breaks never split; every reject names the
 * object and the line its row starts on; an object replaced after the cut gives no row of its new version
 * (read from the local copy of what the cut read, or stopped at the next GET); a gzip object is
 * never cut; kill -9 mid-load and the same command resumes to the same table. Stripes are shrunk by the test
 * seam (16 KB) so that objects of ~200 KB are cut.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LoadDependencies, LoadEvent, LoaderError } from '../../src/index.js';
import type { PlannedWrite } from '../../src/shared/types.js';
import { killableCli } from '../support/checkpoint.js';
import { assertCliBuilt } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad, type LocalLoadOptions } from '../support/localLoad.js';
import { readRejects } from '../support/rejects.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 's3objectstripes', processCredentials: true, keys: KEYS });
const { client, newTable, dropTable } = aws;
const STRIPE_BYTES = 16 * 1024;
const { path, run, runFailing } = localLoad(aws, { types: { v: 'N' } }, { testSeams: { stripeBytes: STRIPE_BYTES } });
const s3run = (options: LocalLoadOptions, deps?: LoadDependencies) => run({ s3Endpoint: s3Endpoint(), s3PathStyle: true, ...options }, deps);

beforeAll(assertCliBuilt);

interface Row {
  pk: string;
  sk: string;
  v: string;
  note: string;
}

const key = (j: number) => `k${String(j).padStart(5, '0')}`;
/** ~90 bytes of text; every 5th a quoted field with CRLF line breaks (a cut must not fall inside it). */
const note = (i: number) => (i % 5 === 0 ? `one ${i}\r\ntwo, "quoted"\r\nthree ${'x'.repeat(40)}` : `note ${i} ${'y'.repeat(70)}`);
const cell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** Keys `from` … `to - 1`, 2-9 rows each, every 4th with one primary key twice (the later value wins). */
function keyRows(from: number, to: number): Row[] {
  const rows: Row[] = [];
  for (let j = from; j < to; j++) {
    for (let r = 0; r < 2 + (j % 8); r++) rows.push({ pk: key(j), sk: `s${r}`, v: String(rows.length), note: note(rows.length) });
    if (j % 4 === 0) rows.push({ pk: key(j), sk: 's0', v: String(rows.length), note: note(rows.length) });
  }
  return rows;
}

const csv = (rows: Row[]) => `pk,sk,v,note\r\n${rows.map((r) => [r.pk, r.sk, r.v, cell(r.note)].join(',')).join('\r\n')}\r\n`;
/** The physical line `line` (1-based) of a text. */
const lineOf = (text: string, line: number) => text.split(/\r\n|\n/)[line - 1];

async function expectTable(table: string, rows: Row[]): Promise<void> {
  const expected = new Map<string, Row>();
  for (const r of rows) expected.set(`${r.pk}|${r.sk}`, r);
  const items = await scanAll(client(), table);
  expect(items.length).toBe(expected.size);
  for (const item of items) {
    const want = expected.get(`${item['pk']!.S}|${item['sk']!.S}`);
    expect(want).toBeDefined();
    expect(item['v']!.N).toBe(want!.v);
    expect(item['note']!.S).toBe(want!.note);
  }
}

/** The partition keys of each batch a dry run hands over. */
function batchKeys(): { deps: LoadDependencies; batches: string[][] } {
  const batches: string[][] = [];
  return {
    deps: { dryRun: { onPlanned: (w: PlannedWrite) => w, record: (writes: readonly PlannedWrite[]) => void batches.push(writes.map((w) => w.partitionId)) } },
    batches,
  };
}

describe('large S3 objects read in stripes', () => {
  it('one sorted CSV object: cut inside, written from keys all over it at once; the table as input order; rejects by line', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = keyRows(0, 400);
    const bad = new Set([0, 7, 500, 1201, rows.length - 1]);
    const text = csv(rows.map((r, n) => (bad.has(n) ? { ...r, v: 'x' } : r)));
    expect(text.length).toBeGreaterThan(8 * STRIPE_BYTES);
    await putObjects(s3, bucket, { 'big/one.csv': text });
    const table = await newTable();

    const watch = batchKeys();
    expect((await s3run({ input: `s3://${bucket}/big/one.csv`, table }, watch.deps)).order).toBe('stripes');
    // In input order a batch holds one or two keys; the first batches here hold keys from all over the object.
    const firstKeys = new Set(
      watch.batches
        .slice(0, 4)
        .flat()
        .map((k) => Number(/k(\d+)/.exec(k)![1])),
    );
    expect(Math.max(...firstKeys) - Math.min(...firstKeys)).toBeGreaterThan(300);

    const result = await s3run({ input: `s3://${bucket}/big/one.csv`, table, concurrency: 4 });
    expect(result).toMatchObject({ order: 'stripes', rowsRead: rows.length, rejected: bad.size });
    await expectTable(
      table,
      rows.filter((_, n) => !bad.has(n)),
    );
    const rejects = await readRejects(result.rejectsPath!);
    expect(rejects.map((r) => r.file)).toEqual([...bad].map(() => `s3://${bucket}/big/one.csv`));
    for (const r of rejects) expect(lineOf(text, r.line)).toBe(r.raw.split(/\r\n|\n/)[0]);
    await dropTable(table);
  });

  it('a prefix of two sorted JSON Lines objects: each cut inside; the table as input order', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = keyRows(0, 300);
    const half = rows.findIndex((r) => r.pk === key(150));
    const jsonl = (part: Row[]) => part.map((r) => `${JSON.stringify({ ...r, v: Number(r.v) })}\n`).join('');
    await putObjects(s3, bucket, { 'out/part-0.jsonl': jsonl(rows.slice(0, half)), 'out/part-1.jsonl': jsonl(rows.slice(half)) });
    const table = await newTable();
    const watch = batchKeys();
    await s3run({ input: `s3://${bucket}/out/`, table }, watch.deps);
    // Keys from inside both objects in the first batches, not the heads of two parts only.
    const firstKeys = [...new Set(watch.batches.slice(0, 4).flat())];
    expect(firstKeys.some((k) => k > `S${key(75)}` && k < `S${key(150)}`)).toBe(true);
    expect(firstKeys.some((k) => k > `S${key(225)}`)).toBe(true);
    const result = await s3run({ input: `s3://${bucket}/out/`, table });
    expect(result).toMatchObject({ order: 'stripes', rowsRead: rows.length, rejected: 0 });
    await expectTable(table, rows);
    await dropTable(table);
  });

  it('an object replaced after it was cut: its rows come from the version listed, from the local copy of what the cut read; with no copy, the next GET stops the load', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = keyRows(0, 400);
    const newer = rows.map((r) => ({ ...r, v: String(9_000_000 + Number(r.v)) }));
    const replacing = (key: string) => {
      let replaced: Promise<unknown> | undefined;
      return {
        // Cut, and its stripes' GETs not yet all made: the new version has the same size, other values.
        onEvent: (e: LoadEvent) => {
          if (e.type === 'reading' && !replaced) replaced = s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: csv(newer) }));
        },
        done: () => replaced,
      };
    };
    // The cut read every byte but the last segment's tail, and kept them on local disk (objectCache.ts): the
    // stripes read the listed version from there; a byte fetched again would ask for its ETag and stop the load.
    await putObjects(s3, bucket, { 'big/one.csv': csv(rows) });
    const table = await newTable();
    const first = replacing('big/one.csv');
    const outcome = await s3run({ input: `s3://${bucket}/big/one.csv`, table, concurrency: 1 }, { onEvent: first.onEvent }).then(
      (result) => ({ result, error: undefined }),
      (error: unknown) => ({ result: undefined, error: error as LoaderError }),
    );
    await first.done();
    if (outcome.error) expect(outcome.error.code).toBe('INPUT_CHANGED');
    else await expectTable(table, rows);
    expect((await scanAll(client(), table)).filter((i) => Number(i['v']!.N) >= 9_000_000)).toEqual([]);
    await dropTable(table);

    // No copy (a --temp-dir it cannot be made in): every stripe's GET asks for the listed ETag, and the first after the change stops the load.
    await putObjects(s3, bucket, { 'big/two.csv': csv(rows) });
    const second = await newTable();
    const replacement = replacing('big/two.csv');
    const warnings: string[] = [];
    const error = await runFailing(
      {
        input: `s3://${bucket}/big/two.csv`,
        table: second,
        s3Endpoint: s3Endpoint(),
        s3PathStyle: true,
        concurrency: 1,
        tempDir: join(tmpdir(), `no-such-folder-${process.pid}`),
      },
      {
        onEvent: (e) => {
          if (e.type === 'warning') warnings.push(e.message);
          replacement.onEvent(e);
        },
      },
    );
    await replacement.done();
    expect(warnings.some((w) => w.includes('cannot copy the bytes read to plan the stripes'))).toBe(true);
    expect(error.code).toBe('INPUT_CHANGED');
    expect(error.message).toContain('big/two.csv');
    expect((await scanAll(client(), second)).filter((i) => Number(i['v']!.N) >= 9_000_000)).toEqual([]);
    await dropTable(second);
  });

  it('a gzip object is never cut: read whole, as before', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = keyRows(0, 400);
    await putObjects(s3, bucket, { 'big/one.csv.gz': gzipSync(csv(rows)) });
    const table = await newTable();
    const result = await s3run({ input: `s3://${bucket}/big/one.csv.gz`, table });
    expect(result.order).not.toBe('stripes');
    await expectTable(table, rows);
    await dropTable(table);
  });

  it('kill -9 mid-load of one cut object and resume with the same command: every key ends at its last row', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = keyRows(0, 400);
    await putObjects(s3, bucket, { 'big/one.csv': csv(rows) });
    const table = await newTable();
    const checkpoint = path('resume.checkpoint.json');
    const args = ['load', `s3://${bucket}/big/one.csv`, '--table', table, '--types', 'v:N', '--checkpoint', checkpoint, '--concurrency', '2'];
    args.push('--rejects', path('resume.rejects.jsonl'), '--s3-path-style');
    // Restart points every 300 rows: the resume reopens each stripe of the object past its last row, by ranged GETs.
    const env = {
      ...localEnv(aws.endpoint),
      AWS_ENDPOINT_URL_S3: s3Endpoint(),
      DDB_SPREAD_TEST_STRIPE_BYTES: String(STRIPE_BYTES),
      DDB_SPREAD_TEST_RESTART_ROWS: '300',
    };
    const cli = killableCli(args, checkpoint, { cwd: aws.dir(), env });
    const killed = await cli(40);
    expect(killed.signal, `${killed.code} ${killed.stderr}`).toBe('SIGKILL');
    // The checkpoint keeps the stripes the load was planned in (numbers only), and the resume reads by them:
    // it does not read the object again to cut it. Stripes of another size now would cut it otherwise, which
    // a resume that cut again would refuse (its restart point's stripes would not be the plan's).
    const kept = JSON.parse(await readFile(checkpoint, 'utf8')) as { stripePlan?: { stripes: unknown[] }; restarts: { stripes?: unknown[] }[] };
    expect(kept.stripePlan?.stripes.length).toBeGreaterThan(2);
    expect(kept.restarts.some((point) => point.stripes?.length === kept.stripePlan?.stripes.length)).toBe(true);
    const resumed = await killableCli(args, checkpoint, { cwd: aws.dir(), env: { ...env, DDB_SPREAD_TEST_STRIPE_BYTES: String(3 * STRIPE_BYTES) } })();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/resuming from checkpoint .*reading on from a restart point past the first [\d,]+ rows/);
    await expectTable(table, rows);
    await dropTable(table);
  });
});
