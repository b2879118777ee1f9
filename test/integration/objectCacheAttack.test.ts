/**
 * Attacks on the local copy of the S3 bytes a striped read plans from (objectCache.ts), end to end against
 * s3rver and DynamoDB Local, with stripes shrunk by the test seam (16 KB) so that objects of ~200 KB of CSV
 * with CRLF and quoted line breaks are cut and their copied stretches end inside records: the --temp-dir
 * removed while the stripes read (a tmp reaper); the copy's privacy while it is there and its removal at the
 * end, on an aborted load and on SIGTERM; objects replaced after the plan (shorter, longer); a kill -9 (its
 * copy left behind, private) and the same command again; a dry run (no copy). Each must load every row
 * once, with its own values, or say why it did not.
 */
import { statSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimate } from '../../src/estimating/estimate.js';
import type { LoadEvent } from '../../src/index.js';
import type { PlannedWrite } from '../../src/shared/types.js';
import { batchesDone, killableCli } from '../support/checkpoint.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad, type LocalLoadOptions } from '../support/localLoad.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 'objectcacheattack', processCredentials: true, keys: KEYS });
const { client, newTable, dropTable } = aws;
const STRIPE_BYTES = 16 * 1024;
const { path, run, runFailing } = localLoad(aws, { types: { v: 'N' } }, { testSeams: { stripeBytes: STRIPE_BYTES } });
const s3 = (options: LocalLoadOptions): LocalLoadOptions => ({ s3Endpoint: s3Endpoint(), s3PathStyle: true, ...options });

let temps = '';
beforeAll(async () => {
  assertCliBuilt();
  temps = await mkdtemp(join(tmpdir(), 'object-cache-attack-'));
});
afterAll(async () => {
  await rm(temps, { recursive: true, force: true });
});
const tempDir = async () => mkdtemp(join(temps, 'temp-'));

interface Row {
  pk: string;
  sk: string;
  v: string;
  note: string;
}
const key = (j: number) => `k${String(j).padStart(5, '0')}`;
/** Every 3rd note a quoted field with CRLF and CR line breaks and a quote: a copied stretch may end inside it. */
const note = (i: number) => (i % 3 === 0 ? `a ${i}\r\nb, "q"\r\rc\n ${'x'.repeat(i % 50)}` : `n ${i} ${'y'.repeat(40 + (i % 37))}`);
const cell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
/** Keys in runs (sorted), 2-9 rows each, every 4th key with one primary key twice (the later wins). */
function keyRows(from: number, to: number): Row[] {
  const rows: Row[] = [];
  for (let j = from; j < to; j++) {
    for (let r = 0; r < 2 + (j % 8); r++) rows.push({ pk: key(j), sk: `s${r}`, v: String(rows.length), note: note(rows.length) });
    if (j % 4 === 0) rows.push({ pk: key(j), sk: 's0', v: String(rows.length), note: note(rows.length) });
  }
  return rows;
}
const csv = (rows: Row[]) => `\uFEFFpk,sk,v,note\r\n${rows.map((r) => [r.pk, r.sk, r.v, cell(r.note)].join(',')).join('\r\n')}\r\n`;

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

/** The copy's folders in `dir` and their modes, and their files' modes. */
function copiesIn(dir: string): { folder: number; files: number[] }[] {
  return readdirSync(dir).map((name) => ({
    folder: statSync(join(dir, name)).mode & 0o777,
    files: readdirSync(join(dir, name)).map((f) => statSync(join(dir, name, f)).mode & 0o777),
  }));
}

async function twoObjects(): Promise<{ bucket: string; rows: Row[] }> {
  const bucket = await newBucket(s3Client());
  const rows = keyRows(0, 400);
  const half = rows.findIndex((r) => r.pk === key(200));
  await putObjects(s3Client(), bucket, { 'out/part-0.csv': csv(rows.slice(0, half)), 'out/part-1.csv': csv(rows.slice(half)) });
  return { bucket, rows };
}

describe('the local copy of S3 bytes a striped read plans from, attacked', () => {
  it('private while there (0700, files 0600), gone at the end; the --temp-dir removed while the stripes read: every row once', async () => {
    const { bucket, rows } = await twoObjects();
    expect(csv(rows).length).toBeGreaterThan(8 * STRIPE_BYTES);

    const kept = await tempDir();
    const table = await newTable();
    let seen: ReturnType<typeof copiesIn> | undefined;
    const result = await run(s3({ input: `s3://${bucket}/out/`, table, tempDir: kept, concurrency: 4 }), {
      onEvent: (e: LoadEvent) => void (e.type === 'reading' && !seen && (seen = copiesIn(kept))),
    });
    expect(result).toMatchObject({ order: 'stripes', rowsRead: rows.length, rejected: 0 });
    // One private folder holding the two objects' copies (the plan read them), each private.
    expect(seen).toEqual([{ folder: 0o700, files: [0o600, 0o600] }]);
    expect(await readdir(kept)).toEqual([]);
    await expectTable(table, rows);
    await dropTable(table);

    // Removed as the stripes start: what the plan copied is still read (through the open copy), the rest from S3.
    const removed = await tempDir();
    const second = await newTable();
    const warnings: string[] = [];
    let gone = false;
    const again = await run(s3({ input: `s3://${bucket}/out/`, table: second, tempDir: removed, concurrency: 4 }), {
      onEvent: (e: LoadEvent) => {
        if (e.type === 'warning') warnings.push(e.message);
        if (e.type === 'reading' && !gone) {
          gone = true;
          expect(copiesIn(removed)[0]?.files.length).toBe(2);
          void rm(removed, { recursive: true, force: true });
        }
      },
    });
    expect(gone).toBe(true);
    expect(again).toMatchObject({ order: 'stripes', rowsRead: rows.length, rejected: 0 });
    await expectTable(second, rows);
    await dropTable(second);
  });

  it('objects replaced after the plan by a shorter and a longer version: rows only of the listed versions, or INPUT_CHANGED', async () => {
    for (const size of [150, 260]) {
      const { bucket, rows } = await twoObjects();
      const newer = keyRows(200, 200 + size).map((r) => ({ ...r, v: String(9_000_000 + Number(r.v)) }));
      const table = await newTable();
      let replaced: Promise<unknown> | undefined;
      const outcome = await run(s3({ input: `s3://${bucket}/out/`, table, tempDir: await tempDir(), concurrency: 2 }), {
        onEvent: (e: LoadEvent) => {
          if (e.type === 'reading' && !replaced) replaced = putObjects(s3Client(), bucket, { 'out/part-1.csv': csv(newer) });
        },
      }).then(
        (result) => ({ result, code: undefined }),
        (error: unknown) => ({ result: undefined, code: (error as { code?: string }).code }),
      );
      await replaced;
      const items = await scanAll(client(), table);
      expect(items.filter((i) => Number(i['v']!.N) >= 9_000_000)).toEqual([]);
      if (outcome.code !== undefined) expect(outcome.code).toBe('INPUT_CHANGED');
      else await expectTable(table, rows);
      // Whatever landed is the listed version's, under its own key.
      const listed = new Map(rows.map((r) => [`${r.pk}|${r.sk}`, r]));
      for (const item of items) expect(listed.get(`${item['pk']!.S}|${item['sk']!.S}`)?.note).toBe(item['note']!.S);
      await dropTable(table);
    }
  });

  it('an aborted load removes its copy; --dry-run (estimate) makes none, a dry run hook removes its own', async () => {
    const { bucket, rows } = await twoObjects();
    const aborted = await tempDir();
    const table = await newTable();
    const stop = new AbortController();
    let had = 0;
    // Planned (the copy made), the stripes about to be read: stopped there.
    const error = await runFailing(s3({ input: `s3://${bucket}/out/`, table, tempDir: aborted, concurrency: 2 }), {
      signal: stop.signal,
      onEvent: (e: LoadEvent) => {
        if (e.type !== 'reading' || stop.signal.aborted) return;
        had = copiesIn(aborted).length;
        stop.abort();
      },
    });
    expect(error.code).toBe('ABORTED');
    expect(had).toBe(1);
    expect(await readdir(aborted)).toEqual([]);

    // --dry-run (estimate()): it reads the input whole after its plan, so nothing is copied.
    const dry = await tempDir();
    const estimated = await estimate(
      { ...s3({ input: `s3://${bucket}/out/`, table, tempDir: dry }), endpoint: aws.endpoint, region: 'us-east-1', types: { v: 'N' } },
      { testSeams: { stripeBytes: STRIPE_BYTES }, onEvent: () => expect(readdirSync(dry)).toEqual([]) },
    );
    expect(estimated.input.rows).toBe(rows.length);
    expect(await readdir(dry)).toEqual([]);
    // The library's dry run hook reads in stripes as a load does: a copy while it runs, gone at its end.
    const hooked = await tempDir();
    let during = 0;
    const batches: number[] = [];
    const planned = await run(s3({ input: `s3://${bucket}/out/`, table, tempDir: hooked }), {
      dryRun: { onPlanned: (w: PlannedWrite) => w, record: (w: readonly PlannedWrite[]) => void batches.push(w.length) },
      onEvent: () => void (during = Math.max(during, readdirSync(hooked).length)),
    });
    expect(planned).toMatchObject({ order: 'stripes', rowsRead: rows.length });
    expect(batches.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(during).toBe(1);
    expect(await readdir(hooked)).toEqual([]);
    await dropTable(table);
  });

  it('SIGTERM mid-load removes the copy; kill -9 (its copy left, private) and the same command again: every row once', async () => {
    const { bucket, rows } = await twoObjects();
    const table = await newTable();
    const checkpoint = path('c.checkpoint.json');
    const dir = await tempDir();
    const args = ['load', `s3://${bucket}/out/`, '--table', table, '--types', 'v:N', '--checkpoint', checkpoint, '--concurrency', '2'];
    args.push('--rejects', path('c.rejects.jsonl'), '--s3-path-style', '--temp-dir', dir);
    const env = {
      ...localEnv(aws.endpoint),
      AWS_ENDPOINT_URL_S3: s3Endpoint(),
      DDB_SPREAD_TEST_STRIPE_BYTES: String(STRIPE_BYTES),
      DDB_SPREAD_TEST_RESTART_ROWS: '200',
    };
    let copied = 0;
    const termed = await runCli(args, {
      cwd: aws.dir(),
      env,
      stdout: 'ignore',
      timeoutMs: 60_000,
      kill: {
        signal: 'SIGTERM',
        when: () => {
          copied = Math.max(copied, readdirSync(dir).length);
          return batchesDone(checkpoint) >= 10;
        },
      },
    });
    expect(termed.code, termed.stderr).not.toBe(0);
    expect(copied).toBe(1);
    expect(readdirSync(dir)).toEqual([]);

    // kill -9 of a fresh run of the same load (its own checkpoint: it plans, so it copies), then the same command again.
    const fresh = path('k.checkpoint.json');
    const again = args.map((a) => (a === checkpoint ? fresh : a));
    const cli = killableCli(again, fresh, { cwd: aws.dir(), env });
    const killed = await cli(25);
    expect(killed.signal, `${killed.code} ${killed.stderr}`).toBe('SIGKILL');
    // What a SIGKILL leaves (no code runs then): the killed run's copy, still private.
    const left = copiesIn(dir);
    expect(left.length).toBe(1);
    expect(left[0]).toEqual({ folder: 0o700, files: [0o600, 0o600] });
    const resumed = await cli();
    expect(resumed.code, resumed.stderr).toBe(0);
    // The resumed run reads by the plan kept in the checkpoint (nothing to copy) and leaves the other run's folder alone.
    expect(readdirSync(dir).length).toBe(1);
    await expectTable(table, rows);
    await dropTable(table);
  });
});
