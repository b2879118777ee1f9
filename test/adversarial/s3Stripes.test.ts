/**
 * Adversarial property over the auto order's striped read of an S3 prefix: sorted CSV parts (a key may run
 * on from one part into the next, with its primary keys repeated across the boundary), markers and an
 * empty object beside them, read across parts by GETs that ask for each object's ETag, with stripes shrunk
 * by the test seam so that small parts are cut. Two real CLI workers share one listing in S3; an object
 * uploaded after the listing is loaded by neither; one worker reads through a proxy that drops one
 * object's connection mid-body and may answer the resumed ranged GET with the whole object (200).
 *
 * Oracle: the test's own model. Each worker reads every listed row; rows read = written + superseded +
 * rejected + not written + other segments; the good rows are written once across both workers; the table
 * equals writing the parts' rows one by one in key order; the markers are named as skipped.
 */
import { fc, it } from '@fast-check/vitest';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { beforeAll, describe, expect } from 'vitest';
import type { LoadResult } from '../../src/index.js';
import { fcParams, REPLAY } from '../support/adversarialPipeline.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';
import { startS3DropProxy } from '../support/s3DropProxy.js';

const FILE = 'test/adversarial/s3Stripes.test.ts';
const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-s3-stripes', keys: KEYS });

beforeAll(assertCliBuilt);

interface Row {
  pk: string;
  sk: number;
  v: string;
}

/** Partition keys in ascending code-unit order (as the striped read's check compares them), spaces and non-ASCII included. */
const KEY_NAMES = ['a', 'a b', 'b', 'b,c', 'c', 'c"d', 'd', 'é', 'ü z', '𝔸'];

/** Per key 1-12 rows of sort keys 0-3 (a primary key often repeated), cut into 2-5 parts anywhere, a key's rows running on across a cut. */
const partsArb = fc
  .tuple(
    fc.uniqueArray(fc.constantFrom(...KEY_NAMES), { minLength: 3, maxLength: KEY_NAMES.length }),
    fc.array(fc.array(fc.nat(3), { minLength: 1, maxLength: 12 }), { minLength: KEY_NAMES.length, maxLength: KEY_NAMES.length }),
    fc.array(fc.nat(10_000), { minLength: 1, maxLength: 4 }),
  )
  .map(([names, sortKeys, cuts]) => {
    const rows: Row[] = [];
    for (const [k, pk] of [...names].sort().entries()) for (const sk of sortKeys[k]!) rows.push({ pk, sk, v: `v${rows.length}` });
    // Cuts strictly inside the rows: every part holds at least one.
    const at = [...new Set(cuts.map((c) => 1 + (c % (rows.length - 1))))].sort((a, b) => a - b);
    const bounds = [0, ...at, rows.length];
    return bounds.slice(1).map((end, i) => rows.slice(bounds[i], end));
  });

const cell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
/** A wide pad, so that a part holds several of the seam's stripes. */
const csvOf = (rows: Row[]) => `pk,sk,v,pad\n${rows.map((r) => `${cell(r.pk)},${r.sk},${r.v},${'p'.repeat(40)}`).join('\n')}\n`;
const partKey = (p: number) => `in/part-${String(p).padStart(5, '0')}.csv`;
const JUNK = ['in/_SUCCESS', 'in/part-00000.csv.crc', 'in/sub/', 'in/_temporary/0/x.csv'];

let striped = 0;
let resumed = 0;

describe('adversarial: S3 prefixes read in stripes by two workers', () => {
  it.prop([partsArb, fc.nat(), fc.constantFrom<'drop' | 'whole-200'>('drop', 'whole-200')], {
    ...fcParams(3),
    interruptAfterTimeLimit: 60_000,
    markInterruptAsFailure: true,
  })(
    `sorted parts, markers, an object added after the listing, a dropped GET: every row once across workers (${REPLAY(FILE)})`,
    async (parts, pick, answer) => {
      const s3 = s3Client();
      const bucket = await newBucket(s3);
      const objects: Record<string, string> = { 'in/empty.csv': '' };
      for (const [p, rows] of parts.entries()) objects[partKey(p)] = csvOf(rows);
      for (const j of JUNK) objects[j] = j.endsWith('/') ? '' : 'pk,sk,v\njunk,0,junk\n';
      await putObjects(s3, bucket, objects);
      const dropped = partKey(pick % parts.length);
      const proxy = await startS3DropProxy(s3Endpoint(), {
        key: dropped,
        cutAfter: Math.max(1, Math.floor(objects[dropped]!.length / 2)),
        ...(answer === 'whole-200' ? { resumeAnswer: 'whole-200' as const } : {}),
      });
      const base = join(dir(), bucket);
      await mkdir(base);
      const table = await newTable();
      const worker = (i: number, s3Url: string) =>
        runCli(
          [
            'load',
            `s3://${bucket}/in/`,
            '--table',
            table,
            '--types',
            'sk:N',
            '--s3-path-style',
            '--segment',
            `${i}/2`,
            '--listing',
            `s3://${bucket}/state/listing.json`,
            '--json',
            '--no-progress',
            '--rejects',
            join(base, `w${i}.rejects.jsonl`),
          ],
          { cwd: base, env: { ...localEnv(endpoint), AWS_ENDPOINT_URL_S3: s3Url, DDB_SPREAD_TEST_STRIPE_BYTES: '256' }, timeoutMs: 45_000 },
        );
      try {
        const first = await worker(0, s3Endpoint());
        // Uploaded after the listing: neither worker loads it.
        await putObjects(s3, bucket, { 'in/part-00009.csv': csvOf([{ pk: '𝔸𝔸', sk: 0, v: 'late' }]) });
        const second = await worker(1, proxy.url);
        const all = parts.flat();
        for (const run of [first, second]) {
          expect(run.code, run.stderr).toBe(0);
          const r = JSON.parse(run.stdout) as LoadResult;
          expect(r).toMatchObject({ rowsRead: all.length, rejected: 0, notWritten: 0, complete: true });
          expect(r.written + r.superseded + r.rejected + r.notWritten + r.otherSegments).toBe(r.rowsRead);
          const skipped = new Set(r.skipped.map((s) => s.name));
          for (const j of JUNK.filter((k) => !k.startsWith('in/_temporary/'))) expect(skipped, j).toContain(`s3://${bucket}/${j}`);
          if (r.order === 'stripes') striped++;
        }
        const results = [first, second].map((run) => JSON.parse(run.stdout) as LoadResult);
        expect(
          results.reduce((n, r) => n + r.written + r.superseded, 0),
          'every row written once across the workers',
        ).toBe(all.length);
        if (proxy.ranges.some((r) => /^bytes=[1-9]\d*-$/.test(r))) resumed++;
        const want = new Map<string, string>();
        for (const r of all) want.set(`${r.pk}|${r.sk}`, r.v);
        const items = await scanAll(client(), table);
        const got = new Map(items.map((i) => [`${i['pk']!.S}|${i['sk']!.N}`, i['v']!.S!]));
        expect(got).toEqual(want);
      } finally {
        await proxy.close();
        s3.destroy();
        await dropTable(table);
      }
    },
    120_000,
  );

  it('the property read in stripes and resumed a dropped GET at least once', () => {
    expect(striped).toBeGreaterThan(0);
    expect(resumed).toBeGreaterThan(0);
  });
});
