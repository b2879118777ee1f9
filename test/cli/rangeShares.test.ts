/**
 * Workers that divide one large file by byte range (--segment i/N --listing L --parts-disjoint on fewer
 * plain parts than workers): each worker reads only its range, found with the others at record starts, so
 * the file is read about once by all of them together, not N times. Attacks: quoted fields holding line
 * breaks (and text that looks like rows) across the cuts, CRLF, blank lines; a bad row in two ranges (its
 * reject must name the file's own line, not the range's); a worker killed mid-way and started again (it
 * reads only the rest of its range); every row must be loaded once. Each worker is a real process against
 * DynamoDB Local.
 */
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { killableCli } from '../support/checkpoint.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-shares' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '200' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env() });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;

/**
 * A key-sorted CSV of `rows` rows (each primary key once), a third with a note over three lines that holds
 * text shaped like a row; bad sort keys at rows `bad`. Returns the text and each bad row's line.
 */
function bigCsv(rows: number, bad: readonly number[]): { text: string; badLines: number[] } {
  const lines: string[] = ['pk,sk,note'];
  let line = 2;
  const badLines: number[] = [];
  for (let i = 0; i < rows; i++) {
    const sk = bad.includes(i) ? 'not-a-number' : String(i);
    if (bad.includes(i)) badLines.push(line);
    const pk = `user-${String(Math.floor(i / 10)).padStart(5, '0')}`;
    if (i % 3 === 0) {
      lines.push(`${pk},${sk},"first line of ${i}\r\nuser-99999,${i},looks like a row\r\nlast ""line"", ${'x'.repeat(i % 40)}"`);
      line += 3;
    } else {
      lines.push(`${pk},${sk},plain note ${i} ${'y'.repeat(i % 60)}`);
      line += 1;
    }
  }
  return { text: `${lines.join('\r\n')}\r\n`, badLines };
}

describe('--parts-disjoint on one large file: each worker reads its byte range', () => {
  it('4 workers, one killed and resumed: every row once, each reject once at its own line, the file read about once in all', async () => {
    const rows = 6000;
    const { text, badLines } = bigCsv(rows, [700, 5100]);
    const path = join(dir(), 'big.csv');
    await writeFile(path, text);
    const size = (await stat(path)).size;
    expect(size).toBeGreaterThan(4 * 64 * 1024);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'big.listing.json');
    const args = (i: number) => [
      'load',
      path,
      '--table',
      table,
      '--types',
      'sk:N',
      '--segment',
      `${i}/4`,
      '--listing',
      listing,
      '--parts-disjoint',
      '--rejects',
      join(dir(), `big${i}.rejects.jsonl`),
      '--checkpoint',
      join(dir(), `big${i}.checkpoint.json`),
      '--json',
    ];
    // Worker 2 is paced slowly so that it is killed mid-way; the others run at once.
    const slow = killableCli([...args(2), '--wcu', '150'], join(dir(), 'big2.checkpoint.json'), { cwd: dir(), env: env() });
    const [killed, ...others] = await Promise.all([slow(12), run(args(0)), run(args(1)), run(args(3))]);
    expect(killed.signal).toBe('SIGKILL');
    for (const r of others) expect([EXIT.OK, EXIT.REJECTED], r.stderr).toContain(r.code);
    const resumed = await run(args(2));
    expect([EXIT.OK, EXIT.REJECTED], resumed.stderr).toContain(resumed.code);
    expect(resumed.stderr).toMatch(/reading on from a restart point/);
    const results = [resultOf(others[0]!), resultOf(others[1]!), resultOf(resumed), resultOf(others[2]!)];
    for (const r of results) {
      expect(r.division).toMatchObject({ by: 'ranges', parts: 1, otherParts: 3 });
      // This worker read its range, not the others'; the range is about a quarter of the file.
      expect(r.bytesRead).toBeLessThanOrEqual(r.division!.bytes);
      expect(r.division!.bytes).toBeGreaterThan(size / 8);
    }
    // The resume opened its range at its restart point (bytes before it count as read, for progress).
    expect(results[2]!.resumedFromBatch).toBeGreaterThan(0);
    expect(resumed.stderr).toMatch(/past the first [\d,]+ rows of the input, which are not read again/);
    expect(results.reduce((n, r) => n + r.division!.bytes, 0)).toBe(size);
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(rows);
    // Each bad row rejected once, by the worker whose range holds it, at the file's line.
    const rejects = (await Promise.all([0, 1, 2, 3].map((i) => readFile(join(dir(), `big${i}.rejects.jsonl`), 'utf8').catch(() => ''))))
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { file: string; line: number });
    expect(rejects.map((r) => r.line).sort((a, b) => a - b)).toEqual(badLines);
    for (const r of rejects) expect(r.file).toBe(path);
    // Every good row once, none of the row-shaped text inside the notes.
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows - 2);
    expect(new Set(items.map((i) => `${i['pk']!.S}|${i['sk']!.N}`)).size).toBe(rows - 2);
    expect(items.some((i) => i['pk']!.S === 'user-99999')).toBe(false);
    // The notes came through whole, line breaks and quotes included.
    const one = items.find((i) => i['sk']!.N === '3000')!;
    expect(one['note']!.S).toBe(`first line of 3000\r\nuser-99999,3000,looks like a row\r\nlast "line", ${'x'.repeat(3000 % 40)}`);
    // Beside the listing: each cut's scan, private, without row data.
    const scans = (await readdir(dir())).filter((f) => f.startsWith('big.listing.json.range-scan-'));
    expect(scans).toHaveLength(3);
    for (const f of scans) {
      expect((await stat(join(dir(), f))).mode & 0o777).toBe(0o600);
      expect(await readFile(join(dir(), f), 'utf8')).not.toMatch(/user-|note/);
    }
    // One answer: finished, with the two rejected rows.
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stderr).toBe(EXIT.REJECTED);
    expect(JSON.parse(status.stdout)).toMatchObject({ finished: true, complete: false, rows, rejected: 2 });
  });

  it('one S3 object, 3 workers with the listing and the scans in S3: every row once, rejects at their lines, each byte fetched once (the scanned segments copied, then read from the copies)', async () => {
    const rows = 3000;
    const { text, badLines } = bigCsv(rows, [40, 2950]);
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'dump/big.csv': text });
    const size = Buffer.byteLength(text);
    const table = await newTable(KEYS);
    const listing = `s3://${bucket}/state/big.listing.json`;
    const temp = join(dir(), 's3big-temp');
    await mkdir(temp);
    // Worker 0 first makes the listing: s3rver ignores If-None-Match, so two workers could each write their own (S3 refuses the second).
    const worker = (i: number) =>
      runCli(
        [
          'load',
          `s3://${bucket}/dump/big.csv`,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/3`,
          '--listing',
          listing,
          '--parts-disjoint',
          '--rejects',
          join(dir(), `s3big${i}.rejects.jsonl`),
          '--temp-dir',
          temp,
          '--json',
        ],
        { cwd: dir(), env: { ...env(), AWS_ENDPOINT_URL_S3: s3Endpoint() } },
      );
    const first = worker(0);
    const listed = async () =>
      await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'state/big.listing.json' })).then(
        () => true,
        () => false,
      );
    for (let i = 0; i < 300 && !(await listed()); i++) await new Promise((r) => setTimeout(r, 50));
    const others = Promise.all([worker(1), worker(2)]);
    const runs = [await first, ...(await others)];
    for (const r of runs) expect([EXIT.OK, EXIT.REJECTED], r.stderr).toContain(r.code);
    const results = runs.map(resultOf);
    for (const r of results) expect(r.division).toMatchObject({ by: 'ranges', parts: 1, otherParts: 2 });
    expect(results.reduce((n, r) => n + r.division!.bytes, 0)).toBe(size);
    expect(results.reduce((n, r) => n + r.bytesRead, 0)).toBe(size);
    // The scans: two segments whole (the last is never scanned for the others), and a first window (4 KB)
    // past the header and each cut a worker needs: less than the object once more.
    const scanned = results.reduce((n, r) => n + r.division!.scannedBytes!, 0);
    expect(scanned).toBeGreaterThan((size * 2) / 3 - 10);
    expect(scanned).toBeLessThan(size);
    // Workers 0 and 1 copied the segment each scanned and read their ranges from the copies, but for the
    // few bytes past a segment's end to the next cut (the last worker's segment is read once, uncopied).
    const copied = results.map((r) => r.division!.copiedBytes ?? 0);
    expect(copied[2]).toBe(0);
    for (const i of [0, 1]) expect(copied[i]).toBeGreaterThan(results[i]!.bytesRead - 2000);
    const fetched = results.reduce((n, r) => n + r.division!.scannedBytes! + r.bytesRead - (r.division!.copiedBytes ?? 0), 0);
    // Each byte once, but for 4 KB windows: the header row's by each worker (its names go with its range, so
    // nothing else reads the head: inputPreflight.ts), and each cut's first record after a segment's start.
    expect(fetched).toBeGreaterThanOrEqual(size);
    expect(fetched).toBeLessThan(size + 7 * 4096);
    // The copies hold rows: removed at the end.
    expect(await readdir(temp)).toEqual([]);
    const rejects = (await Promise.all([0, 1, 2].map((i) => readFile(join(dir(), `s3big${i}.rejects.jsonl`), 'utf8').catch(() => ''))))
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { line: number });
    expect(rejects.map((r) => r.line).sort((a, b) => a - b)).toEqual(badLines);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows - 2);
    expect(items.some((i) => i['pk']!.S === 'user-99999')).toBe(false);
  });

  it('a range of a key-sorted file with runs longer than the window streams through it: never read whole first, nothing held on disk', async () => {
    // 3 partition keys of 1,000 rows each: runs far longer than --window 100.
    const lines = ['pk,sk,note'];
    for (let i = 0; i < 3000; i++) lines.push(`key-${Math.floor(i / 1000)},${i},${'n'.repeat(90)}`);
    const path = join(dir(), 'runs.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'runs.listing.json');
    const runs = await Promise.all(
      [0, 1].map((i) =>
        run([
          'load',
          path,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/2`,
          '--listing',
          listing,
          '--parts-disjoint',
          '--window',
          '100',
          '--json',
          '--rejects',
          join(dir(), `runs${i}.jsonl`),
        ]),
      ),
    );
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(EXIT.OK);
      expect(r.stderr).not.toMatch(/read whole first/);
      const result = resultOf(r);
      expect(result.division?.by).toBe('ranges');
      expect(result).toMatchObject({ order: 'window', orderTempBytes: 0 });
    }
    expect((await scanAll(client(), table)).length).toBe(3000);
  });

  it('without --parts-disjoint every worker reads the whole file, and the summary says how to divide it', async () => {
    const { text } = bigCsv(1200, []);
    const path = join(dir(), 'small.csv');
    await writeFile(path, text);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'small.listing.json');
    const runs = await Promise.all(
      [0, 1].map((i) =>
        run([
          'load',
          path,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/2`,
          '--listing',
          listing,
          '--json',
          '--rejects',
          join(dir(), `s${i}.jsonl`),
        ]),
      ),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    for (const r of runs.map(resultOf)) {
      expect(r.division?.by).toBe('keys');
      expect(r.division?.why).toContain('--parts-disjoint');
    }
    expect((await scanAll(client(), table)).length).toBe(1200);
  });
});
