/**
 * Workers of one load that list at different times: with --segment over a folder, glob
 * or S3 prefix, every worker loads one listing, written once to a place they share (--listing), or the
 * load is refused before any write. Each worker is a real process of the built CLI.
 */
import { mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'shared-listing' });

/** A CSV part of `rows` rows whose keys are its own: `<name>-<k>`, sort keys 0..9. */
function partCsv(name: string, rows: number): string {
  const lines = ['pk,sk,v'];
  for (let i = 0; i < rows; i++) lines.push(`${name}-${Math.floor(i / 10)},${i % 10},${name}:${i}`);
  return `${lines.join('\n')}\n`;
}

const run = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessRun> =>
  runCli(args, { cwd: dir(), env: { ...localEnv(endpoint), AWS_ENDPOINT_URL_S3: s3Endpoint(), ...env } });

const keysOf = (items: Array<Record<string, { S?: string; N?: string }>>) => new Set(items.map((i) => `${i['pk']!.S}|${i['sk']!.N}`));

describe('--listing: one listing for every worker of a load', () => {
  it('--segment over a folder without --listing is refused before any write (64), naming the fix', async () => {
    const folder = join(dir(), 'unshared');
    await mkdir(folder);
    await writeFile(join(folder, 'a.csv'), partCsv('a', 100));
    const table = await newTable(KEYS);
    const result = await run(['load', folder, '--table', table, '--types', 'sk:N', '--segment', '0/2']);
    expect(result.code, result.stderr).toBe(EXIT.USAGE);
    expect(result.stderr).toContain('--listing');
    expect((await scanAll(client(), table)).length).toBe(0);
    // One worker (N = 1) and named files are not listed: no listing is needed.
    const whole = await run(['load', folder, '--table', table, '--types', 'sk:N', '--segment', '0/1']);
    expect(whole.code, whole.stderr).toBe(0);
  });

  it('an S3 prefix: worker 0 lists 2 parts, a third is uploaded, workers 1-3 load the same 2 parts', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'in/p1.csv': partCsv('p1', 3000), 'in/p2.csv': partCsv('p2', 3000) });
    const table = await newTable(KEYS);
    const listing = `s3://${bucket}/state/listing.json`;
    const worker = (i: number) =>
      run([
        'load',
        `s3://${bucket}/in/`,
        '--table',
        table,
        '--types',
        'sk:N',
        '--s3-path-style',
        '--segment',
        `${i}/4`,
        '--listing',
        listing,
        '--json',
        '--rejects',
        join(dir(), `s3w${i}.rejects.jsonl`),
      ]);
    const first = await worker(0);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('wrote the listing');
    await putObjects(s3, bucket, { 'in/p3.csv': partCsv('p3', 3000) });
    const others = await Promise.all([1, 2, 3].map((i) => worker(i)));
    for (const o of others) {
      expect(o.code, o.stderr).toBe(0);
      expect(o.stderr).toContain('reading the 2 parts of the listing');
    }
    const results = [first, ...others].map((r) => JSON.parse(r.stdout) as { rowsRead: number; written: number; complete: boolean });
    for (const r of results) expect(r).toMatchObject({ rowsRead: 6000, complete: true });
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(6000);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(6000);
    expect([...keysOf(items as never)].some((k) => k.startsWith('p3-'))).toBe(false);
    // Each worker left its state in S3 beside the listing: one answer for the four (divided by key, so
    // each row is counted once, by the worker of its segment).
    const status = await run(['status', listing, '--s3-path-style', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ complete: true, rows: 6000, written: 6000 });
  });

  it('four workers started at once on a folder: one writes the listing, all load its parts, every row once', async () => {
    const folder = join(dir(), 'race');
    await mkdir(folder);
    for (const name of ['a', 'b', 'c']) await writeFile(join(folder, `${name}.csv`), partCsv(name, 1500));
    const table = await newTable(KEYS);
    // The listing lies inside the folder read: it is the load's own file, never an input.
    const listing = join(folder, 'listing.json');
    const runs = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        run([
          'load',
          folder,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/4`,
          '--listing',
          listing,
          '--json',
          '--rejects',
          join(dir(), `r${i}.jsonl`),
        ]),
      ),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(runs.filter((r) => r.stderr.includes('wrote the listing')).length).toBe(1);
    const results = runs.map((r) => JSON.parse(r.stdout) as { rowsRead: number; written: number; rejected: number });
    for (const r of results) expect(r).toMatchObject({ rowsRead: 4500, rejected: 0 });
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(4500);
    expect((await scanAll(client(), table)).length).toBe(4500);
    const doc = JSON.parse(await readFile(listing, 'utf8')) as { parts: Array<{ name: string }> };
    expect(doc.parts.map((p) => p.name.slice(p.name.lastIndexOf('/') + 1))).toEqual(['a.csv', 'b.csv', 'c.csv']);
    expect((await stat(listing)).mode & 0o777).toBe(0o600);
  });

  it('a part changed since it was listed, or a listing of other inputs, is refused before any write', async () => {
    const folder = join(dir(), 'changed');
    await mkdir(folder);
    await writeFile(join(folder, 'a.csv'), partCsv('a', 200));
    await writeFile(join(folder, 'b.csv'), partCsv('b', 200));
    const table = await newTable(KEYS);
    const listing = join(dir(), 'changed.listing.json');
    const args = (i: number) => [
      'load',
      folder,
      '--table',
      table,
      '--types',
      'sk:N',
      '--segment',
      `${i}/2`,
      '--listing',
      listing,
      '--rejects',
      join(dir(), `c${i}.jsonl`),
    ];
    const first = await run(args(0));
    expect(first.code, first.stderr).toBe(0);
    const written = (await scanAll(client(), table)).length;
    // One row of a.csv corrected in place, same size; its time moves on.
    const text = await readFile(join(folder, 'a.csv'), 'utf8');
    await writeFile(join(folder, 'a.csv'), text.replace('a:0\n', 'A:0\n'));
    const later = new Date(Date.now() + 5000);
    await utimes(join(folder, 'a.csv'), later, later);
    const second = await run(args(1));
    expect(second.code, second.stderr).toBe(EXIT.NO_INPUT);
    expect(second.stderr).toContain('since it was listed');
    expect((await scanAll(client(), table)).length).toBe(written);
    const other = await run(['load', join(folder, 'b.csv'), '--table', table, '--types', 'sk:N', '--listing', listing, '--rejects', join(dir(), 'o.jsonl')]);
    expect(other.code, other.stderr).toBe(EXIT.USAGE);
    expect(other.stderr).toContain('listing of another load');
  });

  it('a worker told another count of workers than the listing was made for is refused before any write: its segment would leave keys to no worker', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'in/a.csv': partCsv('a', 300), 'in/b.csv': partCsv('b', 300) });
    const table = await newTable(KEYS);
    const listing = `s3://${bucket}/state/listing.json`;
    const worker = (segment: string) =>
      run(['load', `s3://${bucket}/in/`, '--table', table, '--types', 'sk:N', '--s3-path-style', '--segment', segment, '--listing', listing, '--json']);
    const first = await worker('0/3');
    expect(first.code, first.stderr).toBe(0);
    const written = (await scanAll(client(), table)).length;
    // Keys in segment 1 of 3 or 2 of 3 but in neither 0 of 3 nor 1 of 2 would be loaded by no worker, and both would end complete.
    const other = await worker('1/2');
    expect(other.code, other.stderr).toBe(EXIT.USAGE);
    expect(other.stderr).toContain('--segment 1/2');
    expect(other.stderr).toContain('3 workers');
    expect((await scanAll(client(), table)).length).toBe(written);
    const same = await worker('1/3');
    expect(same.code, same.stderr).toBe(0);
  });

  it("another worker's checkpoint, report and listing in the folder read are the load's own files, named, never rows", async () => {
    const folder = join(dir(), 'withState');
    await mkdir(folder);
    await writeFile(join(folder, 'a.csv'), partCsv('a', 300));
    await writeFile(join(folder, 'b.csv'), partCsv('b', 300));
    const table = await newTable(KEYS);
    // Worker 1 of 2 keeps its state in the folder the load reads (as a careless recipe would).
    const worker = (i: number) =>
      run([
        'load',
        folder,
        '--table',
        table,
        '--types',
        'sk:N',
        '--segment',
        `${i}/2`,
        '--listing',
        join(dir(), 'withState.listing.json'),
        '--checkpoint',
        join(folder, `ck-${i}.json`),
        '--report',
        join(folder, `report-${i}.json`),
        '--json',
        '--rejects',
        join(dir(), `ws${i}.rejects.jsonl`),
      ]);
    const first = await worker(1);
    expect(first.code, first.stderr).toBe(0);
    // A later, separate load of the folder (its own checkpoint elsewhere) sees worker 1's files.
    const again = await run([
      'load',
      folder,
      '--table',
      table,
      '--types',
      'sk:N',
      '--json',
      '--checkpoint',
      join(dir(), 'again.json'),
      '--rejects',
      join(dir(), 'again.rejects.jsonl'),
    ]);
    expect(again.code, again.stderr).toBe(0);
    const result = JSON.parse(again.stdout) as { rowsRead: number; rejected: number; skipped: Array<{ name: string; reason: string }> };
    expect(result).toMatchObject({ rowsRead: 600, rejected: 0 });
    const skipped = new Map(result.skipped.map((s) => [s.name.slice(s.name.lastIndexOf('/') + 1), s.reason]));
    expect(skipped.get('ck-1.json')).toBe('own-file');
    expect(skipped.get('report-1.json')).toBe('own-file');
    expect((await scanAll(client(), table)).length).toBe(600);
  });
});
