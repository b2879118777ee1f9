/**
 * The default order's striped read of a set of parts (a folder, a glob, an S3 prefix), end to end against
 * DynamoDB Local and s3rver: parts sorted by key (Spark's output) are read side by side and written as they
 * are read, the table ends as writing the parts' rows one by one in listing order would leave it (a key
 * running on from one part into the next, repeated primary keys across that boundary), rejects name their
 * own part and line, each CSV part is read by its own header; parts whose keys overlap stop the load before
 * a row goes out of order; a part changed during the load stops it.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoadDependencies, LoadEvent } from '../../src/index.js';
import type { PlannedWrite } from '../../src/shared/types.js';
import { killableCli } from '../support/checkpoint.js';
import { runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad, type LocalLoadOptions } from '../support/localLoad.js';
import { plainItem } from '../support/plainItem.js';
import { readRejects } from '../support/rejects.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 'partstripes', processCredentials: true, keys: KEYS });
const { client, newTable, dropTable } = aws;
// Local parts of ~100 KB cut into ranges of 16 KB and more: stripes inside parts as well as across them.
const { path, run, runFailing } = localLoad(aws, { types: { v: 'N' } }, { testSeams: { stripeBytes: 16 * 1024 } });

interface Row {
  pk: string;
  sk: string;
  v: string;
  note: string;
}

const key = (j: number) => `k${String(j).padStart(5, '0')}`;
/** ~90 bytes of text, with a quoted line break in every 7th row (a cut must not fall inside it). */
const note = (i: number) => (i % 7 === 0 ? `line one ${i}\r\nline two ${'x'.repeat(40)}` : `note ${i} ${'y'.repeat(70)}`);
const csvCell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** Keys `from` … `to - 1`, 3-14 rows each, every 5th with one primary key three times in a row (rising values). */
function keyRows(from: number, to: number, start: number): Row[] {
  const rows: Row[] = [];
  let i = start;
  for (let j = from; j < to; j++) {
    for (let r = 0; r < 3 + ((j * 7) % 12); r++) rows.push({ pk: key(j), sk: `s${r}`, v: String(i++), note: note(i) });
    if (j % 5 === 0) for (let d = 0; d < 3; d++) rows.push({ pk: key(j), sk: 'dup', v: String(i++), note: note(i) });
  }
  return rows;
}

/**
 * Eight parts sorted by key, keys ascending from part to part (~100 KB each). Key 399 runs on from part 3
 * into part 4, with its primary key `dup` in both: part 4's value must win, as in input order.
 */
function sortedParts(): Row[][] {
  const parts: Row[][] = [];
  let i = 0;
  for (let p = 0; p < 8; p++) {
    const rows = keyRows(p * 100, (p + 1) * 100, i);
    i += rows.length;
    parts.push(rows);
  }
  const running = parts[3]!.filter((r) => r.pk === key(399));
  parts[4]!.unshift(...running.map((r, n) => ({ ...r, v: String(i + n) })));
  return parts;
}

type Columns = (keyof Row)[];
const csv = (rows: Row[], columns: Columns = ['pk', 'sk', 'v', 'note']) =>
  `${columns.join(',')}\n${rows.map((r) => columns.map((c) => csvCell(r[c])).join(',')).join('\n')}\n`;

/** The parts in a fresh folder as part-0000N.csv; part 2 and 5 with their columns in another order. */
async function folderOf(parts: Row[][], text: (rows: Row[], p: number) => string = (rows, p) => csv(rows, columnsOf(p))): Promise<string> {
  const dir = path('parts');
  await mkdir(dir);
  for (const [p, rows] of parts.entries()) await writeFile(join(dir, `part-${String(p).padStart(5, '0')}.csv`), text(rows, p));
  return dir;
}
const columnsOf = (p: number): Columns => (p === 2 || p === 5 ? ['note', 'v', 'pk', 'sk'] : ['pk', 'sk', 'v', 'note']);

/** What the table holds after writing `rows` one by one: the last row of each primary key. */
async function expectTable(table: string, rows: Row[]): Promise<void> {
  const expected = new Map<string, Row>();
  for (const r of rows) expected.set(`${r.pk}|${r.sk}`, r);
  const items = await scanAll(client(), table);
  expect(items.length).toBe(expected.size);
  for (const item of items) {
    const want = expected.get(`${item['pk']!.S}|${item['sk']!.S}`);
    expect(want, JSON.stringify(plainItem(item))).toBeDefined();
    expect(item['v']!.N).toBe(want!.v);
    expect(item['note']!.S).toBe(want!.note);
  }
}

/** A dry run's count of rows planned when the first batch is handed over, and of all of them. */
function firstBatchWatch(): { deps: LoadDependencies; planned: () => number; atFirst: () => number | undefined } {
  let planned = 0;
  let atFirst: number | undefined;
  return {
    deps: { dryRun: { onPlanned: (w: PlannedWrite) => (planned++, w), record: () => void (atFirst ??= planned) } },
    planned: () => planned,
    atFirst: () => atFirst,
  };
}

/** The physical line `line` (1-based) of a text. */
const lineOf = (text: string, line: number) => text.split(/\r\n|\n/)[line - 1];

describe('--order stripes over a set of parts', () => {
  it('a folder of sorted CSV parts: read side by side, written as read; the table as input order leaves it; rejects by part and line', async () => {
    const parts = sortedParts();
    // Bad numbers in several parts, one in a part's first row and one in its last.
    const bad = new Set(['0:10', '2:0', '4:1', '6:300', `7:${parts[7]!.length - 1}`]);
    const texts = parts.map((rows, p) =>
      csv(
        rows.map((r, n) => (bad.has(`${p}:${n}`) ? { ...r, v: 'not-a-number' } : r)),
        columnsOf(p),
      ),
    );
    const dir = await folderOf(parts, (_, p) => texts[p]!);
    const all = parts.flat().filter((_, n) => !isBad(parts, bad, n));
    const table = await newTable();

    const watch = firstBatchWatch();
    expect((await run({ input: dir, table, concurrency: 4 }, watch.deps)).order).toBe('stripes');
    expect(watch.planned()).toBe(parts.flat().length - bad.size);
    expect(watch.atFirst()).toBeGreaterThan(0);
    expect(watch.atFirst()!).toBeLessThan(watch.planned() / 4);

    const reading: string[] = [];
    const result = await run({ input: dir, table, concurrency: 4 }, { onEvent: (e: LoadEvent) => void (e.type === 'reading' && reading.push(e.order)) });
    expect(reading).toEqual(['stripes']);
    expect(result).toMatchObject({ order: 'stripes', rowsRead: parts.flat().length, rejected: bad.size });
    expect(result.written + result.superseded).toBe(all.length);
    await expectTable(table, all);
    // Each reject names its own part and the line the row starts on there.
    const rejects = await readRejects(result.rejectsPath!);
    expect(rejects.length).toBe(bad.size);
    for (const r of rejects) {
      const p = Number(/part-(\d+)\.csv$/.exec(r.file)![1]);
      expect(lineOf(texts[p]!, r.line)).toBe(r.raw.split(/\r\n|\n/)[0]);
      expect(r.raw).toContain('not-a-number');
    }
    expect(new Set(rejects.map((r) => r.file)).size).toBe(5);
    await dropTable(table);
  });

  it('consecutive writes come from keys all over the set, not from one part after another', async () => {
    const dir = await folderOf(sortedParts());
    const table = await newTable();
    const batches: string[][] = [];
    const result = await run(
      { input: dir, table },
      { dryRun: { onPlanned: (w: PlannedWrite) => w, record: (writes: readonly PlannedWrite[]) => void batches.push(writes.map((w) => w.partitionId)) } },
    );
    expect(result.order).toBe('stripes');
    await dropTable(table);
    // Input order gives one or two keys a batch; stripes a key per stripe in most.
    expect(batches.slice(0, 50).every((b) => new Set(b).size >= 8)).toBe(true);
    // The first batches already hold keys of every part (keys 0-99 are part 0's, 700-799 part 7's).
    const partsSeen = new Set(batches.slice(0, 10).flatMap((b) => b.map((k) => Math.floor(Number(/k(\d+)/.exec(k)![1]) / 100))));
    expect(partsSeen.size).toBe(8);
  });

  it('parts whose keys overlap the next part: asked for by name, stops before a row goes out of order', async () => {
    // Part 3 holds keys 300-449 and part 4 keys 400-499: the heads (keys 300…, 400…) ascend, the parts do not.
    const parts = sortedParts().map((rows) => rows.filter((r) => r.pk !== key(399)));
    parts[3] = keyRows(300, 450, 100_000);
    // Each part one range: the probe reads the parts' heads only.
    const dir = await folderOf(parts);
    const table = await newTable();
    const error = await runFailing({ input: dir, table, order: 'stripes' }, { testSeams: { stripeBytes: 1 << 30 } });
    expect(error.code).toBe('ORDER_NOT_GROUPED');
    expect(error.message).toMatch(/part-0000[34]\.csv/);
    // Nothing written out of order. Part 4's head (key 400) is read by stripe 3 after part 3's rows, so part
    // 3's rows of key 400 may go; stripe 4 starts at key 401 at once, so stripe 3 stops when it reaches key
    // 401: a row of part 3 with a later key in the table would have gone over part 4's (later in input order).
    const part3 = new Set(parts[3]!.filter((r) => r.pk > key(400)).map((r) => r.v));
    const items = await scanAll(client(), table);
    expect(items.filter((i) => part3.has(i['v']!.N!)).map((i) => plainItem(i))).toEqual([]);
    // By default the load starts over in another order, and the table is input order's.
    const other = await newTable();
    const result = await run({ input: dir, table: other }, { testSeams: { stripeBytes: 1 << 30 } });
    expect(result.order).not.toBe('stripes');
    await expectTable(other, parts.flat());
    await dropTable(table);
    await dropTable(other);
  });

  it('parts whose keys overlap, with --checkpoint: the default order still starts over through the window, and ends with the table and a complete checkpoint', async () => {
    const parts = sortedParts().map((rows) => rows.filter((r) => r.pk !== key(399)));
    parts[3] = keyRows(300, 450, 100_000);
    const dir = await folderOf(parts);
    const table = await newTable();
    const checkpointPath = path('overlap.checkpoint.json');
    const result = await run({ input: dir, table, checkpointPath }, { testSeams: { stripeBytes: 1 << 30 } });
    expect(result.order).not.toBe('stripes');
    expect(result.complete).toBe(true);
    await expectTable(table, parts.flat());
    const saved = JSON.parse(await readFile(checkpointPath, 'utf8')) as { status: string };
    expect(saved.status).toBe('complete');
    await dropTable(table);
  });

  it('parts whose keys overlap, with --checkpoint: kill -9 after the start over and the same command resumes the window, every key at its last row', async () => {
    const parts = sortedParts().map((rows) => rows.filter((r) => r.pk !== key(399)));
    parts[3] = keyRows(300, 450, 100_000);
    const dir = await folderOf(parts);
    const table = await newTable();
    const checkpoint = path('overlap-kill.checkpoint.json');
    const args = [
      'load',
      dir,
      '--table',
      table,
      '--types',
      'v:N',
      '--checkpoint',
      checkpoint,
      '--rejects',
      path('overlap-kill.rejects.jsonl'),
      '--concurrency',
      '2',
    ];
    const env = localEnv(aws.endpoint);
    // Killed once the checkpoint of the second pass (started over, read as it comes) has batches done.
    const secondPass = () => {
      try {
        const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { notGrouped?: boolean; batchesDone: number };
        return saved.notGrouped === true && saved.batchesDone >= 30;
      } catch {
        return false;
      }
    };
    const killed = await runCli(args, { cwd: aws.dir(), env, stdout: 'ignore', timeoutMs: 120_000, kill: { signal: 'SIGKILL', when: secondPass } });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const resumed = await runCli(args, { cwd: aws.dir(), env, stdout: 'ignore', timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    await expectTable(table, parts.flat());
    await dropTable(table);
  });

  it('kill -9 mid-load of a folder and resume with the same command: the same stripes are replayed, every key ends at its last row', async () => {
    const parts = sortedParts();
    const dir = await folderOf(parts);
    const table = await newTable();
    // The CLI cuts with the default minimum stripe (64 KB): each part is one range, and the set is still striped.
    const dryRun = { onPlanned: (w: PlannedWrite) => w, record: () => undefined };
    expect((await run({ input: dir, table }, { dryRun, testSeams: {} })).order).toBe('stripes');
    const checkpoint = path('resume.checkpoint.json');
    const args = ['load', dir, '--table', table, '--types', 'v:N', '--checkpoint', checkpoint, '--rejects', path('resume.rejects.jsonl'), '--concurrency', '2'];
    const cli = killableCli(args, checkpoint, { cwd: aws.dir(), env: localEnv(aws.endpoint) });
    const killed = await cli(40);
    expect(killed.signal).toBe('SIGKILL');
    const resumed = await cli();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    await expectTable(table, parts.flat());
    await dropTable(table);
  });

  it('a glob of JSON Lines parts', async () => {
    const parts = sortedParts();
    const dir = path('jsonl');
    await mkdir(dir);
    for (const [p, rows] of parts.entries())
      await writeFile(join(dir, `p${p}.jsonl`), rows.map((r) => `${JSON.stringify({ ...r, v: Number(r.v) })}\n`).join(''));
    const table = await newTable();
    const result = await run({ input: `${dir}/*.jsonl`, table });
    expect(result).toMatchObject({ order: 'stripes', rowsRead: parts.flat().length, rejected: 0 });
    await expectTable(table, parts.flat());
    await dropTable(table);
  });

  it('a gzip part among plain ones: the set is read whole, as before', async () => {
    const { gzipSync } = await import('node:zlib');
    const parts = sortedParts();
    const dir = await folderOf(parts);
    await writeFile(join(dir, 'part-00008.csv.gz'), gzipSync(csv(keyRows(900, 910, 500_000))));
    const table = await newTable();
    const result = await run({ input: dir, table });
    expect(result.order).not.toBe('stripes');
    await expectTable(table, [...parts.flat(), ...keyRows(900, 910, 500_000)]);
    await dropTable(table);
  });

  it('a part rewritten during the load stops it: nothing of the new version is written', async () => {
    const parts = sortedParts();
    const dir = await folderOf(parts);
    const file = join(dir, 'part-00005.csv');
    const original = await readFile(file, 'utf8');
    const table = await newTable();
    let changed = false;
    const error = await runFailing(
      { input: dir, table, concurrency: 2 },
      {
        onEvent: (e) => {
          if (!changed && e.type === 'progress' && e.counters.written >= 500) {
            changed = true;
            // Same size, other values.
            void writeFile(file, original.replace(/,(\d)/g, ',9'));
          }
        },
        testSeams: { stripeBytes: 16 * 1024 },
      },
    );
    expect(changed).toBe(true);
    expect(error.code).toBe('INPUT_CHANGED');
    expect(error.message).toContain('part-00005.csv');
    await dropTable(table);
  });
});

/** Whether the n-th row of the flattened parts is one of the bad ones. */
function isBad(parts: Row[][], bad: Set<string>, n: number): boolean {
  let at = n;
  for (const [p, rows] of parts.entries()) {
    if (at < rows.length) return bad.has(`${p}:${at}`);
    at -= rows.length;
  }
  return false;
}

describe('--order stripes over an S3 prefix', () => {
  const s3run = (options: LocalLoadOptions, deps?: LoadDependencies) => run({ s3Endpoint: s3Endpoint(), s3PathStyle: true, ...options }, deps);

  /** Sixteen small sorted parts (each a stripe of its own), key 349 running on from part 6 into part 7. */
  function s3Parts(): Row[][] {
    const parts: Row[][] = [];
    let i = 0;
    for (let p = 0; p < 16; p++) {
      const rows = keyRows(p * 50, (p + 1) * 50, i);
      i += rows.length;
      parts.push(rows);
    }
    const running = parts[6]!.filter((r) => r.pk === key(349));
    parts[7]!.unshift(...running.map((r, n) => ({ ...r, v: String(i + n) })));
    return parts;
  }

  it('a prefix of sorted CSV parts: read by ranged GETs side by side; the table as input order; rejects by object and line', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const parts = s3Parts();
    const bad = new Set(['0:3', '7:0', '7:1', '15:20']);
    const texts = parts.map((rows, p) =>
      csv(
        rows.map((r, n) => (bad.has(`${p}:${n}`) ? { ...r, v: 'x' } : r)),
        columnsOf(p),
      ),
    );
    await putObjects(s3, bucket, { ...Object.fromEntries(texts.map((t, p) => [`out/part-${String(p).padStart(5, '0')}.csv`, t])), 'out/_SUCCESS': '' });
    const all = parts.flat().filter((_, n) => !isBad(parts, bad, n));
    const table = await newTable();

    const watch = firstBatchWatch();
    expect((await s3run({ input: `s3://${bucket}/out/`, table }, watch.deps)).order).toBe('stripes');
    expect(watch.atFirst()!).toBeLessThan(watch.planned() / 4);

    const result = await s3run({ input: `s3://${bucket}/out/`, table, concurrency: 4 });
    expect(result).toMatchObject({ order: 'stripes', rowsRead: parts.flat().length, rejected: bad.size });
    await expectTable(table, all);
    const rejects = await readRejects(result.rejectsPath!);
    expect(rejects.map((r) => r.file).sort()).toEqual(
      [...bad].map((b) => `s3://${bucket}/out/part-${String(Number(b.split(':')[0])).padStart(5, '0')}.csv`).sort(),
    );
    for (const r of rejects) {
      const p = Number(/part-(\d+)\.csv$/.exec(r.file)![1]);
      expect(lineOf(texts[p]!, r.line)).toBe(r.raw.split(/\r\n|\n/)[0]);
    }
    await dropTable(table);
  });

  // Without the local copy of what the plan read (objectCache.ts: here a --temp-dir it cannot be made in), so
  // that the head is fetched again; with it, the head is read from the copy, of the version listed.
  it('an object replaced during the load stops it (its next ranged GET asks for the ETag listed)', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const parts = s3Parts();
    await putObjects(s3, bucket, Object.fromEntries(parts.map((rows, p) => [`out/part-${String(p).padStart(5, '0')}.csv`, csv(rows)])));
    const table = await newTable();
    let changed = false;
    // Part 7's head (key 349's rows) is read by the stripe before it once that stripe's own rows are done: a
    // GET made after the change.
    const error = await runFailing(
      {
        input: `s3://${bucket}/out/`,
        table,
        s3Endpoint: s3Endpoint(),
        s3PathStyle: true,
        concurrency: 1,
        tempDir: join(tmpdir(), `no-such-folder-${process.pid}`),
      },
      {
        onEvent: (e) => {
          if (!changed && e.type === 'progress' && e.counters.written >= 200) {
            changed = true;
            void s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'out/part-00007.csv', Body: csv(parts[7]!.map((r) => ({ ...r, v: '1' }))) }));
          }
        },
      },
    );
    expect(changed).toBe(true);
    expect(error.code).toBe('INPUT_CHANGED');
    expect(error.message).toContain('part-00007.csv');
    // No row of the new version was written.
    const items = await scanAll(client(), table);
    expect(items.filter((i) => i['pk']!.S! >= key(349) && i['pk']!.S! < key(400) && i['v']!.N === '1').length).toBe(0);
    await dropTable(table);
  });
});
