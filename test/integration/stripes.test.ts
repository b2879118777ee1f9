/**
 * The default write order for files, `--order stripes`, end to end against DynamoDB Local: a key-sorted
 * file is read at many points at once and written as it is read; every row lands exactly as writing the
 * rows one by one would leave it (repeated primary keys, a hot key over several stripes, quoted line
 * breaks at the cut points); rejects keep their true lines; a file in no key order is written in
 * round-robin order instead; a file whose disorder the probe cannot see stops before anything is written
 * out of order.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { LoadEvent } from '../../src/index.js';
import { estimate } from '../../src/estimating/estimate.js';
import { offlineTableInfo } from '../../src/estimating/offlineTable.js';
import type { PlannedWrite } from '../../src/shared/types.js';
import type { LoaderError } from '../../src/shared/errors.js';
import { killableCli } from '../support/checkpoint.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { plainItem } from '../support/plainItem.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 'stripes', processCredentials: true, keys: KEYS });
const { client, newTable, dropTable } = aws;
const { inputFile, run, runFailing } = localLoad(aws, { types: { v: 'N' } });

interface Row {
  pk: string;
  sk: string;
  v: string;
  note: string;
}

const key = (j: number) => `k${String(j).padStart(5, '0')}`;
/** ~90 bytes of text, with a quoted line break in every 7th row (a cut point must not fall inside it). */
const note = (i: number) => (i % 7 === 0 ? `line one ${i}\r\nline two ${'x'.repeat(40)}` : `note ${i} ${'y'.repeat(70)}`);

/**
 * Rows sorted by partition key (880 KB): 700 keys of 3-20 rows, and one hot key (k00200) with 8% of all rows,
 * so it spans several stripes. Every 5th key repeats one primary key three times in a row with rising
 * values, and a repeat of a primary key sits right where the hot key ends.
 */
function sortedRows(): Row[] {
  const rows: Row[] = [];
  let i = 0;
  for (let j = 0; j < 700; j++) {
    const count = j === 200 ? 900 : 3 + ((j * 7) % 18);
    for (let r = 0; r < count; r++) rows.push({ pk: key(j), sk: `s${r}`, v: String(i++), note: note(i) });
    if (j % 5 === 0) for (let d = 0; d < 3; d++) rows.push({ pk: key(j), sk: 'dup', v: String(i++), note: note(i) });
  }
  return rows;
}

/** Sorted rows with one row of an early key deep inside: a new value for an existing primary key. */
function disorderedFile(): { disordered: Row[]; text: string; lateLine: number } {
  const rows = sortedRows();
  const late: Row = { pk: key(3), sk: 's0', v: '999999', note: 'late' };
  const disordered = [...rows.slice(0, 6000), late, ...rows.slice(6000)];
  const text = csv(disordered);
  return { disordered, text, lateLine: text.slice(0, text.indexOf(',late\n')).split('\n').length };
}

const csvCell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const csv = (rows: Row[]) => `pk,sk,v,note\n${rows.map((r) => [r.pk, r.sk, r.v, r.note].map(csvCell).join(',')).join('\n')}\n`;

/** What the table holds after writing `rows` one by one: the last row of each primary key. */
function lastByKey(rows: Row[]): Map<string, Row> {
  const last = new Map<string, Row>();
  for (const r of rows) last.set(`${r.pk}|${r.sk}`, r);
  return last;
}

async function expectTable(table: string, rows: Row[]): Promise<void> {
  const expected = lastByKey(rows);
  const items = await scanAll(client(), table);
  expect(items.length).toBe(expected.size);
  for (const item of items) {
    const want = expected.get(`${item['pk']!.S}|${item['sk']!.S}`);
    expect(want, JSON.stringify(plainItem(item))).toBeDefined();
    expect(item['v']!.N).toBe(want!.v);
    expect(item['note']!.S).toBe(want!.note);
  }
}

describe('--order stripes (the default for a file)', () => {
  it('writes a key-sorted file as it reads it, every row as one-by-one writing would leave it', async () => {
    const rows = sortedRows();
    const file = await inputFile('sorted.csv', csv(rows));
    expect((await readFile(file)).length).toBeGreaterThan(800 * 1024);
    const table = await newTable();
    // Reading overlaps writing: the first batch goes out while most of the file is still unread. Seen from a
    // dry run of the same file (the same stages; the sink records), counting rows planned when the first
    // batch is handed over: progress events (one per 200 ms) could all come after the last write on a fast
    // machine.
    let planned = 0;
    let plannedAtFirstBatch: number | undefined;
    const dryRun = {
      onPlanned: (w: PlannedWrite) => (planned++, w),
      record: () => void (plannedAtFirstBatch ??= planned),
    };
    expect((await run({ input: file, table, concurrency: 4 }, { dryRun })).order).toBe('stripes');
    expect(plannedAtFirstBatch).toBeGreaterThan(0);
    expect(plannedAtFirstBatch!).toBeLessThan(rows.length / 2);
    expect(planned).toBe(rows.length);
    const result = await run({ input: file, table, concurrency: 4 });
    expect(result.order).toBe('stripes');
    expect(result.rowsRead).toBe(rows.length);
    expect(result.written + result.superseded).toBe(rows.length);
    expect(result.rejected).toBe(0);
    await expectTable(table, rows);
    await dropTable(table);
  });

  it('consecutive writes come from keys spread over the file, not one key after another', async () => {
    const rows = sortedRows();
    const file = await inputFile('spread.csv', csv(rows));
    const table = await newTable();
    const batches: string[][] = [];
    const dryRun = { onPlanned: (w: PlannedWrite) => w, record: (writes: readonly PlannedWrite[]) => void batches.push(writes.map((w) => w.partitionId)) };
    const result = await run({ input: file, table }, { dryRun });
    expect(result.order).toBe('stripes');
    await dropTable(table);
    const keysPerBatch = batches.map((b) => new Set(b).size);
    // Input order would give one or two keys per batch; stripes give a key per stripe in most batches.
    expect(keysPerBatch.slice(0, 100).every((n) => n >= 8)).toBe(true);
    // No key takes over any stretch of the load (input order gives the hot key whole stretches), to the end.
    const maxShares: number[] = [];
    for (let from = 0; from + 10 <= batches.length; from += 10) {
      const part = batches.slice(from, from + 10).flat();
      const counts = new Map<string, number>();
      for (const k of part) counts.set(k, (counts.get(k) ?? 0) + 1);
      maxShares.push(Math.max(...counts.values()) / part.length);
    }
    expect(Math.max(...maxShares)).toBeLessThan(0.2);
  });

  it('names a rejected row by its true line, wherever the stripes cut', async () => {
    const rows = sortedRows();
    const bad = new Set([10, 3000, 6000, rows.length - 5]);
    const text = `pk,sk,v,note\n${rows.map((r, i) => [r.pk, r.sk, bad.has(i) ? 'not-a-number' : r.v, r.note].map(csvCell).join(',')).join('\n')}\n`;
    const file = await inputFile('bad.csv', text);
    const table = await newTable();
    const rejectsPath = aws.dir() + '/bad.rejects.jsonl';
    const result = await run({ input: file, table, rejectsPath });
    expect(result.order).toBe('stripes');
    expect(result.rejected).toBe(bad.size);
    const lines = text.split(/\r\n|\n/);
    const rejects = (await readFile(rejectsPath, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; raw: string });
    // Physical lines: a quoted line break makes a row take two.
    for (const r of rejects) expect(lines[r.line - 1]).toBe(r.raw.split(/\r\n|\n/)[0]);
    expect(new Set(rejects.map((r) => r.raw.split(',')[2])).size).toBe(1);
    await dropTable(table);
  });

  it('streams a file in no key order through the window (keys already mixed need no global order)', async () => {
    const rows = sortedRows();
    // A fixed shuffle: keys in no order.
    const shuffled = rows
      .map((r, i) => ({ r, k: (i * 7919) % 10007 }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.r);
    const file = await inputFile('shuffled.csv', csv(shuffled));
    const table = await newTable();
    const reading: string[] = [];
    const result = await run({ input: file, table }, { onEvent: (e) => void (e.type === 'reading' ? reading.push(e.order) : undefined) });
    expect(result.order).toBe('window');
    // The order in effect is told before any row is read (the CLI sets its heap growth by it).
    expect(reading).toEqual(['window']);
    await expectTable(table, shuffled);
    await dropTable(table);
  });

  it('asked for by name, stops before a row goes out of order when the disorder is where the probe does not look', async () => {
    const { disordered, text, lateLine } = disorderedFile();
    const file = await inputFile('disordered.csv', text);
    const table = await newTable();
    const error = await runFailing({ input: file, table, order: 'stripes' });
    expect(error.code).toBe('ORDER_NOT_GROUPED');
    expect(error.message).toContain(`line ${lateLine} of ${file}`);
    // Nothing written out of order: the key the late row would change holds its own last earlier value or nothing.
    const items = await scanAll(client(), table);
    const k3 = items.find((i) => i['pk']!.S === key(3) && i['sk']!.S === 's0');
    if (k3) expect(k3['v']!.N).toBe(disordered.find((r) => r.pk === key(3) && r.sk === 's0')!.v);
    await dropTable(table);
  });

  it('by default, starts over streamed through the window when the file turns out not grouped, and every row lands right', async () => {
    const { disordered, text, lateLine } = disorderedFile();
    const file = await inputFile('disordered-default.csv', text);
    const table = await newTable();
    const warnings: string[] = [];
    const reading: string[] = [];
    const result = await run(
      { input: file, table },
      {
        onEvent: (e) => {
          if (e.type === 'warning') warnings.push(e.message);
          if (e.type === 'reading') reading.push(e.order);
        },
      },
    );
    expect(result.order).toBe('window');
    expect(reading).toEqual(['stripes', 'window']);
    expect(result.rowsRead).toBe(disordered.length);
    expect(warnings.some((w) => w.includes(`line ${lateLine} of ${file}`) && w.includes('through the window order'))).toBe(true);
    await expectTable(table, disordered);
    await dropTable(table);
  });

  it('with random:N suffixes and no --shard-seed, stops instead of starting over (a second pass would use other suffixes)', async () => {
    const { text } = disorderedFile();
    const file = await inputFile('disordered-random.csv', text);
    const table = await newTable();
    const error = await runFailing({ input: file, table, shard: ['random:4'], shardManifestPath: aws.dir() + '/random.shards.json' });
    expect(error.code).toBe('ORDER_NOT_GROUPED');
    await dropTable(table);
  });

  it('cuts right after a blank CRLF line then a blank LF line ("\\r\\n\\n"), so no key is in two stripes', async () => {
    const rows = sortedRows();
    // A blank CRLF line then a blank LF line after every 7th row: readCsv's line count ran one short there
    // (fixed), and a head cut at that line would start one row early (the head's key then in two stripes:
    // the load would stop and start over in round-robin).
    const text = `pk,sk,v,note\n${rows.map((r, i) => [r.pk, r.sk, r.v, r.note].map(csvCell).join(',') + (i % 7 === 3 ? '\n\r\n' : '')).join('\n')}\n`;
    const file = await inputFile('blank-lines.csv', text);
    const table = await newTable();
    try {
      const result = await run({ input: file, table, concurrency: 4 });
      expect(result.order).toBe('stripes');
      expect(result.rowsRead).toBe(rows.length);
      await expectTable(table, rows);
    } finally {
      await dropTable(table);
    }
  });

  it('an estimate of a key-sorted file plans it in stripes, with no start over', async () => {
    const rows = sortedRows();
    const file = await inputFile('sorted-estimate.csv', csv(rows));
    const events: LoadEvent[] = [];
    const result = await estimate(
      {
        input: file,
        table: 'estimate',
        types: { v: 'N' },
        tableInfo: offlineTableInfo('estimate', { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' }, billing: 'on-demand' }),
      },
      { onEvent: (event) => events.push(event) },
    );
    // Before the fix the estimate's slim writes lost their stripe, so every stripe looked like the first one:
    // the sorted file was found "not grouped" and estimated again in round-robin.
    expect(events.filter((e) => e.type === 'warning').map((e) => (e as { message: string }).message)).toEqual([]);
    expect(result.simulations.planned.order).toBe('stripes');
    expect(result.input.rows).toBe(rows.length);
  });

  it('an estimate with a reject file named starts over through the window and writes that file anew', async () => {
    const { disordered, lateLine } = disorderedFile();
    const bad = disordered.map((r, i) => (i === 5 ? { ...r, v: 'not-a-number' } : r));
    const file = await inputFile('disordered-estimate.csv', csv(bad));
    const rejectsPath = aws.dir() + '/estimate-named.rejects.jsonl';
    const warnings: string[] = [];
    const result = await estimate(
      {
        input: file,
        table: 'estimate',
        types: { v: 'N' },
        rejectsPath,
        tableInfo: offlineTableInfo('estimate', { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' }, billing: 'on-demand' }),
      },
      { onEvent: (e) => void (e.type === 'warning' ? warnings.push(e.message) : undefined) },
    );
    // The disorder is past the probe's sight: the estimate's read from the start finds it at the late row.
    expect(result.simulations.planned.order).toBe('window');
    expect(warnings.some((w) => w.includes(`line ${lateLine} of ${file}`) && w.includes('through the window order'))).toBe(true);
    expect(result.input.rows).toBe(bad.length);
    const rejects = (await readFile(rejectsPath, 'utf8')).trim().split('\n');
    expect(rejects).toHaveLength(1);
  });

  it('an estimate asked for stripes by name stops on a file not grouped, as the load would', async () => {
    const { text, lateLine } = disorderedFile();
    const file = await inputFile('disordered-estimate-named.csv', text);
    const error = await estimate({
      input: file,
      table: 'estimate',
      types: { v: 'N' },
      order: 'stripes',
      rejectsPath: aws.dir() + '/estimate-by-name.rejects.jsonl',
      tableInfo: offlineTableInfo('estimate', { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' }, billing: 'on-demand' }),
    }).then(
      () => undefined,
      (e: unknown) => e as LoaderError,
    );
    expect(error?.code).toBe('ORDER_NOT_GROUPED');
    expect(error?.message).toContain(`line ${lateLine} of ${file}`);
  });

  it('kill -9 mid-load and resume with the same command: the same order is replayed, every key ends at its last row', async () => {
    const rows = sortedRows();
    const file = await inputFile('resume.csv', csv(rows));
    const table = await newTable();
    const checkpoint = aws.dir() + '/resume.checkpoint.json';
    const args = [
      'load',
      file,
      '--table',
      table,
      '--types',
      'v:N',
      '--checkpoint',
      checkpoint,
      '--rejects',
      aws.dir() + '/resume.rejects.jsonl',
      '--concurrency',
      '2',
    ];
    const env = localEnv(aws.endpoint);
    const run = killableCli(args, checkpoint, { cwd: aws.dir(), env });
    const killed = await run(60);
    expect(killed.signal).toBe('SIGKILL');
    const resumed = await run();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    await expectTable(table, rows);
    await dropTable(table);
  });

  it('reads JSON Lines in stripes too', async () => {
    const rows = sortedRows();
    const file = await inputFile('sorted.jsonl', rows.map((r) => JSON.stringify({ ...r, v: Number(r.v) })).join('\n') + '\n');
    const table = await newTable();
    const result = await run({ input: file, table, types: {} });
    expect(result.order).toBe('stripes');
    await expectTable(table, rows);
    await dropTable(table);
  });
});
