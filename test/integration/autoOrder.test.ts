/**
 * The default order decides from the data, into DynamoDB Local: keys already mixed stream through the
 * window whatever the input (a folder of parts, a gzip file, stdin), writing before the input is read
 * whole; keys that come in runs in an input that cannot be cut go over to round-robin, saying so before
 * anything is written; a mixed head with a grouped tail goes over mid-stream. In every case the table
 * holds exactly what writing the rows one by one would leave, and every row is accounted for.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { load, type LoadEvent, type LoadOptions } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { mulberry32 } from '../../tools/mulberry32.js';
import { buildExport, writeExport } from '../support/exportFixture.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'autoorder', processCredentials: true });

let n = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>, events: LoadEvent[], stdin?: Readable) =>
  load(
    { endpoint, region: 'us-east-1', types: { v: 'S' }, rejectsPath: join(dir(), `auto${++n}.rejects.jsonl`), ...options },
    // A progress event's counters are the load's own, still counting: kept as they were when told.
    { onEvent: (e) => events.push(e.type === 'progress' ? { ...e, counters: { ...e.counters } } : e), ...(stdin ? { stdin } : {}) },
  );

/** Rows (pk, sk, v): sk counts rows, and a primary key repeats now and then so later rows must win. */
type Row = [pk: string, sk: number, v: string];
function rowsOf(keys: readonly string[], seed: number): Row[] {
  const random = mulberry32(seed);
  return keys.map((pk, i) => [pk, random() < 0.05 && i > 0 ? i - 1 : i, `v${i}`]);
}
const mixedKeys = (count: number, pool: number, seed: number) => {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => `m${Math.floor(random() * pool)}`);
};
const sortedKeys = (count: number, run: number, prefix = 's') =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(Math.floor(i / run)).padStart(4, '0')}`);
const csv = (rows: readonly Row[]) => `pk,sk,v\n${rows.map((r) => r.join(',')).join('\n')}\n`;
const jsonl = (rows: readonly Row[]) => rows.map(([pk, sk, v]) => JSON.stringify({ pk, sk, v })).join('\n') + '\n';

/** What writing the rows one by one leaves: the last row of each primary key. */
function expectedTable(rows: readonly Row[]): Map<string, string> {
  const table = new Map<string, string>();
  for (const [pk, sk, v] of rows) table.set(`${pk}/${sk}`, v);
  return table;
}
async function expectTable(table: string, rows: readonly Row[]): Promise<void> {
  const items = await scanAll(client(), table);
  const got = new Map(items.map((i) => [`${i.pk!.S}/${i.sk!.N}`, i.v!.S!]));
  expect(got).toEqual(expectedTable(rows));
}

/** The rows read when the first batch was answered: progress events carry the counters. */
function readAtFirstWrite(events: readonly LoadEvent[]): number | undefined {
  const first = events.find((e) => e.type === 'progress' && e.counters.written > 0);
  return first?.type === 'progress' ? first.counters.rowsRead : undefined;
}

const warningIndex = (events: readonly LoadEvent[]) => events.findIndex((e) => e.type === 'warning' && e.message.includes('partition keys come in runs'));

describe('the auto order', () => {
  it('a folder of parts with mixed keys streams through the window: written while reading, nothing held whole, every row right', async () => {
    const rows = rowsOf(mixedKeys(8_000, 400, 1), 2);
    const root = join(dir(), 'mixed-parts');
    await mkdir(root, { recursive: true });
    for (let p = 0; p < 4; p++) await writeFile(join(root, `part-${p}.csv`), csv(rows.slice(p * 2000, (p + 1) * 2000)));
    const table = await newTable(KEYS);
    const events: LoadEvent[] = [];
    const result = await run({ input: root, table }, events);
    expect(result).toMatchObject({ order: 'window', rowsRead: 8_000, rejected: 0, complete: true });
    expect(result.written + result.superseded).toBe(8_000);
    expect(events.some((e) => e.type === 'ordering')).toBe(false);
    expect(warningIndex(events)).toBe(-1);
    expect(readAtFirstWrite(events)).toBeLessThan(4_000);
    await expectTable(table, rows);
  });

  it('a gzip file of mixed keys streams too', async () => {
    const rows = rowsOf(mixedKeys(5_000, 300, 3), 4);
    const path = join(dir(), 'mixed.csv.gz');
    await writeFile(path, gzipSync(csv(rows)));
    const table = await newTable(KEYS);
    const events: LoadEvent[] = [];
    const result = await run({ input: path, table }, events);
    expect(result).toMatchObject({ order: 'window', rowsRead: 5_000, complete: true });
    expect(readAtFirstWrite(events)).toBeLessThan(4_000);
    await expectTable(table, rows);
  });

  it('a gzip of a key-sorted file goes over to round-robin and says so before the first write; the table is exact', async () => {
    const rows = rowsOf(sortedKeys(7_500, 750), 5);
    const path = join(dir(), 'sorted.csv.gz');
    await writeFile(path, gzipSync(csv(rows)));
    const table = await newTable(KEYS);
    const events: LoadEvent[] = [];
    const result = await run({ input: path, table, window: 1_000 }, events);
    expect(result).toMatchObject({ order: 'round-robin', rowsRead: 7_500, complete: true });
    const warned = warningIndex(events);
    expect(warned).toBeGreaterThanOrEqual(0);
    const firstWrite = events.findIndex((e) => e.type === 'progress' && e.counters.written > 0);
    expect(warned).toBeLessThan(firstWrite);
    expect((events[warned] as { message: string }).message).toMatch(/line \d+ of .*sorted\.csv\.gz/);
    expect(events.some((e) => e.type === 'ordering' && e.mode === 'round-robin')).toBe(true);
    await expectTable(table, rows);
  });

  it('stdin with a mixed head and a grouped tail: streams the head, goes over in the tail, each key in order', async () => {
    // The tail's keys include the head's, so a key's rows straddle the change.
    const head = mixedKeys(4_000, 200, 6);
    const tail = sortedKeys(10_000, 1_000, 'm');
    const rows = rowsOf([...head, ...tail], 7);
    const table = await newTable(KEYS);
    const events: LoadEvent[] = [];
    const result = await run({ input: '-', inputFormat: 'jsonl', table, window: 1_000 }, events, Readable.from([jsonl(rows)]));
    expect(result).toMatchObject({ order: 'round-robin', rowsRead: rows.length, rejected: 0, complete: true });
    const warned = events[warningIndex(events)] as { message: string };
    const line = Number(/line (\d+) of/.exec(warned.message)![1]);
    expect(line).toBeGreaterThan(head.length);
    expect(readAtFirstWrite(events)).toBeLessThan(head.length + 1_000);
    await expectTable(table, rows);
  });

  it('a plain file whose keys are mixed streams; one sorted by key is read in stripes', async () => {
    const mixed = rowsOf(mixedKeys(8_000, 300, 8), 9);
    const sorted = rowsOf(sortedKeys(8_000, 200), 10);
    for (const [name, rows, order] of [
      ['mixed.csv', mixed, 'window'],
      ['sorted.csv', sorted, 'stripes'],
    ] as const) {
      const path = join(dir(), name);
      await writeFile(path, csv(rows));
      const table = await newTable(KEYS);
      const result = await run({ input: path, table }, []);
      expect(result).toMatchObject({ order, rowsRead: 8_000, complete: true });
      await expectTable(table, rows);
    }
  });

  it("a DynamoDB export of large item collections (each key's items together, file after file): its data files are read side by side and stream", async () => {
    // 8 data files of 6 keys each, every key's 400 items together as an export's scan writes them.
    const files = Array.from({ length: 8 }, (_, f) =>
      Array.from({ length: 6 * 400 }, (_, i) => ({ Item: { pk: { S: `k${f}-${Math.floor(i / 400)}` }, sk: { N: String(i % 400) }, v: { S: `f${f}r${i}` } } })),
    );
    const root = join(dir(), 'export');
    const folder = await writeExport(root, buildExport('exports', 'FULL_EXPORT', files));
    const table = await newTable(KEYS);
    const events: LoadEvent[] = [];
    const result = await run({ input: folder, table }, events);
    expect(result).toMatchObject({ order: 'window', rowsRead: 19_200, written: 19_200, rejected: 0, complete: true });
    expect(warningIndex(events)).toBe(-1);
    expect(events.some((e) => e.type === 'ordering')).toBe(false);
    expect(readAtFirstWrite(events)).toBeLessThan(10_000);
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(19_200);
    expect(items.find((i) => i.pk!.S === 'k3-2' && i.sk!.N === '7')!.v!.S).toBe('f3r807');
  });
});
