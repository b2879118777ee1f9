/**
 * Attack: one S3 object divided by byte range between three --segment workers, the listing and the
 * scans of the cuts in S3 too (s3rver). Quoted fields holding line breaks and row-shaped text sit around
 * the cuts; every row must land once, with the notes whole. Then the object is overwritten at the same
 * size (quotes moved) after the listing: a worker that has not started must stop before any write, not
 * read the new bytes with the old cuts. Real processes against DynamoDB Local and s3rver.
 */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack-s3' });

const env = () => ({ ...localEnv(endpoint), AWS_ENDPOINT_URL_S3: s3Endpoint(), DDB_SPREAD_TEST_RANGE_WAIT_MS: '30000' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 90_000 });

/** A key-sorted CSV, every third note quoted over three lines with text shaped like a row. */
function csv(rows: number, quote = '"'): string {
  const lines = ['pk,sk,note'];
  for (let i = 0; i < rows; i++) {
    const note = i % 3 === 0 ? `${quote}first ${i}\nu-x,${i},row-like\nlast ${'q'.repeat(i % 50)}${quote}` : `plain ${i} ${'p'.repeat(i % 60)}`;
    lines.push(`u${String(Math.floor(i / 6)).padStart(6, '0')},${i},${note}`);
  }
  return `${lines.join('\n')}\n`;
}

describe('one S3 object divided by byte range', () => {
  it('three workers, listing and scans in S3: every row once, notes whole; then an overwritten object stops a late worker before any write', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const rows = 5000;
    const text = csv(rows);
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 * 64 * 1024);
    await putObjects(s3, bucket, { 'in/big.csv': text });
    const table = await newTable(KEYS);
    const args = (i: number, listing: string, t: string) => [
      'load',
      `s3://${bucket}/in/big.csv`,
      '--table',
      t,
      '--types',
      'sk:N',
      '--segment',
      `${i}/3`,
      '--listing',
      `s3://${bucket}/state/${listing}`,
      '--parts-disjoint',
      '--json',
    ];
    const runs = await Promise.all([0, 1, 2].map((i) => run(args(i, 'listing.json', table))));
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    const results = runs.map((r) => JSON.parse(r.stdout) as LoadResult);
    for (const r of results) expect(r.division).toMatchObject({ by: 'ranges', parts: 1 });
    expect(results.reduce((n, r) => n + r.division!.bytes, 0)).toBe(Buffer.byteLength(text));
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(rows);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    expect(items.some((i) => i['pk']!.S === 'u-x')).toBe(false);
    expect(items.find((i) => i['sk']!.N === '3000')!['note']!.S).toBe(`first 3000\nu-x,3000,row-like\nlast ${'q'.repeat(3000 % 50)}`);
    // The scans beside the listing: two (the last segment's end is the object's), offsets and states only.
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'state/listing.json.range-scan-' }));
    expect(listed.Contents?.length).toBe(2);
    for (const o of listed.Contents ?? []) {
      const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }))).Body!.transformToString();
      expect(body).not.toMatch(/u0|plain|first/);
    }

    // A second load: workers 0 and 1 list and cut; the object is then overwritten at the same size, quotes moved.
    const second = await newTable(KEYS);
    const early = await Promise.all([0, 1].map((i) => run(args(i, 'again.json', second))));
    for (const r of early) expect(r.code, r.stderr).toBe(EXIT.OK);
    const written = (await scanAll(client(), second)).length;
    await putObjects(s3, bucket, { 'in/big.csv': csv(rows, "'") });
    const late = await run(args(2, 'again.json', second));
    expect(late.code, late.stderr).toBe(EXIT.NO_INPUT);
    expect(late.stderr).toMatch(/big\.csv/);
    expect((await scanAll(client(), second)).length).toBe(written);
  });
});
