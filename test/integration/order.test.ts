/**
 * Write order (--order, --window, --memory, --temp-dir) end to end against DynamoDB Local: every mode
 * loads a key-sorted, skewed input completely and correctly; the requests really leave in the promised
 * order (recorded on the wire by a small proxy); the temporary files of an order larger than --memory
 * are used and removed, also when the load stops; and writes to one primary key keep their input order.
 */
import { readdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { Agent, createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { orderAll } from '../../src/ordering/order.js';
import type { LoadEvent } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { faults, startFaultProxy, type FaultAction } from '../support/faultProxy.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad, type LocalLoadOptions } from '../support/localLoad.js';
import { plainItem, type PlainValue } from '../support/plainItem.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const TYPES = { v: 'N' } as const;

const aws = useLocalAws({ name: 'order', processCredentials: true, keys: KEYS });
const { endpoint, client, dir, newTable, dropTable } = aws;
const { inputFile, run, runFailing } = localLoad(aws);

async function newDir(name: string): Promise<string> {
  return mkdtemp(join(dir(), `${name}-`));
}

// ---------------------------------------------------------------------------------------------------
// Input: sorted by partition key, skewed (one key holds ~30% of the rows)
// ---------------------------------------------------------------------------------------------------

interface Row {
  pk: string;
  sk: string;
  v: number;
  note: string;
}

const HOT = 'cust-0007';
const keyName = (j: number) => `cust-${String(j).padStart(4, '0')}`;

/**
 * `keys` partition keys in sorted order; key j has 6 + (37·j mod 32) rows, except HOT, which has 30% of
 * all rows. With `dupEvery`, the sort key cycles through that many values, so each primary key repeats
 * far apart inside its partition key's block (still sorted by partition key). v is the row's 0-based index.
 */
function skewedRows(options: { keys?: number; dupEvery?: number } = {}): Row[] {
  const keys = options.keys ?? 40;
  const counts = Array.from({ length: keys }, (_, j) => 6 + ((37 * j) % 32));
  const others = counts.reduce((sum, c, j) => (keyName(j) === HOT ? sum : sum + c), 0);
  counts[7] = Math.round((others * 3) / 7);
  const rows: Row[] = [];
  counts.forEach((count, j) => {
    for (let r = 0; r < count; r++) {
      const n = options.dupEvery ? r % options.dupEvery : r;
      const i = rows.length;
      rows.push({ pk: keyName(j), sk: `o-${String(n).padStart(5, '0')}`, v: i, note: i % 101 === 0 ? `say "hi", row ${i}` : `row ${i}` });
    }
  });
  return rows;
}

function csvOf(rows: readonly Row[]): string {
  const cell = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return `pk,sk,v,note\n${rows.map((r) => `${r.pk},${r.sk},${r.v},${cell(r.note)}`).join('\n')}\n`;
}

const itemOf = (r: Row): Record<string, PlainValue> => ({ note: { S: r.note }, pk: { S: r.pk }, sk: { S: r.sk }, v: { N: String(r.v) } });

/** What the table must hold after writing `rows` top to bottom: the last row of each primary key. */
function expectedTable(rows: readonly Row[]): Map<string, Record<string, PlainValue>> {
  const out = new Map<string, Record<string, PlainValue>>();
  for (const r of rows) out.set(`${r.pk}|${r.sk}`, itemOf(r));
  return out;
}

async function tableItems(table: string): Promise<Map<string, Record<string, PlainValue>>> {
  const out = new Map<string, Record<string, PlainValue>>();
  for (const raw of await scanAll(client(), table)) {
    const item = plainItem(raw);
    out.set(`${(item['pk'] as { S: string }).S}|${(item['sk'] as { S: string }).S}`, item);
  }
  return out;
}

/** Compares maps key by key (a readable diff of at most 5 entries, then the sizes). */
function expectSameTable(actual: Map<string, unknown>, expected: Map<string, unknown>) {
  const wrong = [...expected].filter(([k, v]) => JSON.stringify(actual.get(k)) !== JSON.stringify(v)).slice(0, 5);
  expect(wrong.map(([key, v]) => ({ key, expected: v, actual: actual.get(key) }))).toEqual([]);
  expect(actual.size).toBe(expected.size);
}

// ---------------------------------------------------------------------------------------------------
// The expected round-robin order, built independently of src/ordering/order.ts from docs/REFERENCE.md's definition
// ---------------------------------------------------------------------------------------------------

/** round-robin: the first write of every key, then the second of every key, ... (keys by first appearance). */
function roundRobin<T>(writes: readonly T[], keyOf: (w: T) => string): T[] {
  const groups = new Map<string, T[]>();
  for (const w of writes) {
    const list = groups.get(keyOf(w));
    if (list) list.push(w);
    else groups.set(keyOf(w), [w]);
  }
  const out: T[] = [];
  const longest = Math.max(...[...groups.values()].map((g) => g.length));
  for (let round = 0; round < longest; round++) for (const g of groups.values()) if (round < g.length) out.push(g[round]!);
  return out;
}

const chunks = <T>(list: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, i * size + size));

// ---------------------------------------------------------------------------------------------------
// A proxy that records what every BatchWriteItem call carries, in arrival order
// ---------------------------------------------------------------------------------------------------

interface RecordedWrite {
  pk: string;
  sk: string;
  v: string;
}

interface Recorder {
  url: string;
  /** One entry per BatchWriteItem call, in arrival order. */
  batches: RecordedWrite[][];
  close(): Promise<void>;
}

async function startRecorder(target: string): Promise<Recorder> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const batches: RecordedWrite[][] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.headers['x-amz-target'] === 'DynamoDB_20120810.BatchWriteItem') {
        const parsed = JSON.parse(body.toString('utf8')) as {
          RequestItems: Record<string, Array<{ PutRequest: { Item: Record<string, Record<string, string>> } }>>;
        };
        batches.push(
          Object.values(parsed.RequestItems)
            .flat()
            .map(({ PutRequest: { Item } }) => ({ pk: Item['pk']!['S']!, sk: Item['sk']!['S']!, v: Item['v']?.['N'] ?? '' })),
        );
      }
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host }, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    batches,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

const distinctKeys = (batch: readonly { pk: string }[]) => new Set(batch.map((w) => w.pk)).size;
/** A batch as text, for comparing the batches sent with the batches expected. */
const batchText = (batch: readonly { pk: string; sk: string }[]) => batch.map((w) => `${w.pk}|${w.sk}`).join(' ');

// ---------------------------------------------------------------------------------------------------

describe('every order mode loads a sorted, skewed input completely and correctly', () => {
  const rows = skewedRows();
  const csv = csvOf(rows);
  const countOf = (key: string) => rows.filter((r) => r.pk === key).length;
  const keys = [...new Set(rows.map((r) => r.pk))];
  const hotCount = countOf(HOT);
  const fewest = Math.min(...keys.map(countOf));
  const nextLargest = Math.max(...keys.filter((k) => k !== HOT).map(countOf));

  it('the input is what the tests claim: sorted by key, over a thousand rows, one key with ~30%', () => {
    expect(rows.length).toBeGreaterThan(1000);
    expect(rows.map((r) => r.pk)).toEqual([...rows.map((r) => r.pk)].sort());
    const hot = rows.filter((r) => r.pk === HOT).length / rows.length;
    expect(hot).toBeGreaterThan(0.29);
    expect(hot).toBeLessThan(0.31);
    // The bounds the round-robin and input checks derive from the counts are not vacuous.
    expect(Math.floor((fewest * 40) / 25)).toBeGreaterThanOrEqual(8);
    expect(Math.floor((hotCount - nextLargest) / 25) - 1).toBeGreaterThanOrEqual(8);
  });

  it.each([
    { order: 'round-robin' as const, expectedOrder: roundRobin(rows, (r) => r.pk) },
    // The spread formula is src's (its phase per key is an implementation choice); its properties are checked below.
    { order: 'spread' as const, expectedOrder: orderAll(rows, (r) => r.pk, 'spread') },
    { order: 'window' as const, window: 60, expectedOrder: undefined },
    { order: 'input' as const, expectedOrder: rows },
  ])('--order $order', async ({ order, window, expectedOrder }) => {
    const table = await newTable();
    const tempDir = await newDir(`temp-${order}`);
    const recorder = await startRecorder(endpoint);
    const events: LoadEvent[] = [];
    try {
      const result = await run(
        { input: await inputFile(`${order}.csv`, csv), table, types: TYPES, order, tempDir, endpoint: recorder.url, ...(window ? { window } : {}) },
        { onEvent: (e) => void (e.type === 'ordering' && events.push(e)) },
      );
      expect(result).toMatchObject({ rowsRead: rows.length, written: rows.length, superseded: 0, rejected: 0, complete: true, order, orderTempBytes: 0 });
      expectSameTable(await tableItems(table), expectedTable(rows));

      // What went over the wire: every row exactly once, in batches of 25 of one request per primary key.
      const sent = recorder.batches;
      expect(sent.flat().length).toBe(rows.length);
      expect(new Set(sent.flat().map((w) => w.v)).size).toBe(rows.length);
      // The batches are the 25-write stretches of the expected order (calls can overtake each other, so
      // they are compared as a set).
      if (expectedOrder) expect(sent.map(batchText).sort()).toEqual(chunks(expectedOrder, 25).map(batchText).sort());
      else
        expect(sent.map(batchText).sort()).toEqual(
          chunks(
            orderAll(rows, (r) => r.pk, 'window', window),
            25,
          )
            .map(batchText)
            .sort(),
        );

      const full = sent.filter((b) => b.length === 25);
      const hotShare = full.map((b) => b.filter((w) => w.pk === HOT).length);
      switch (order) {
        case 'round-robin':
          // Every key has at least `fewest` rows: the first `fewest` rounds fill batches of 25 distinct keys.
          expect(full.filter((b) => distinctKeys(b) === 25).length).toBeGreaterThanOrEqual(Math.floor((fewest * 40) / 25));
          // ...and the hot key is left alone at the end for hot - nextLargest writes: what spread avoids.
          expect(full.filter((b) => distinctKeys(b) === 1 && b[0]!.pk === HOT).length).toBeGreaterThanOrEqual(Math.floor((hotCount - nextLargest) / 25) - 1);
          break;
        case 'spread':
          // The hot key gets about its 30% of every stretch of the load (7.5 of 25): in every batch, never
          // a batch to itself, and every batch spans many keys.
          expect(Math.min(...hotShare)).toBeGreaterThanOrEqual(3);
          expect(Math.max(...hotShare)).toBeLessThanOrEqual(12);
          expect(Math.min(...full.map(distinctKeys))).toBeGreaterThanOrEqual(12);
          // Whatever the formula, each key's writes keep their input order.
          for (const key of new Set(rows.map((r) => r.pk))) {
            const vs = expectedOrder!.filter((r) => r.pk === key).map((r) => r.v);
            expect(vs).toEqual([...vs].sort((a, b) => a - b));
          }
          break;
        case 'window':
          // A window of 60 rows holds several keys: every batch mixes keys, unlike input order.
          expect(Math.min(...full.filter((b) => !b.every((w) => w.pk === HOT)).map(distinctKeys))).toBeGreaterThanOrEqual(2);
          expect(full.filter((b) => distinctKeys(b) >= 3).length).toBeGreaterThan(full.length / 3);
          break;
        case 'input':
          // The hot key's rows are one stretch: batches of it alone.
          expect(full.filter((b) => distinctKeys(b) === 1 && b[0]!.pk === HOT).length).toBeGreaterThanOrEqual(Math.floor(hotCount / 25) - 1);
          break;
      }

      // Only round-robin and spread read the whole input first; this input fits the default memory.
      if (order === 'round-robin' || order === 'spread') expect(events).toEqual([{ type: 'ordering', mode: order, rows: rows.length, spilled: false }]);
      else expect(events).toEqual([]);
      expect(await readdir(tempDir)).toEqual([]);
    } finally {
      await recorder.close();
    }
    await dropTable(table);
  });
});

describe('the requests leave in the promised order (sorted input of 40 keys, one call at a time)', () => {
  // cust-0000 has 25 rows, the 39 other keys 10 each: 415 rows, 17 batches.
  const rows: Row[] = [];
  for (let j = 0; j < 40; j++)
    for (let r = 0; r < (j === 0 ? 25 : 10); r++) rows.push({ pk: keyName(j), sk: `o-${String(r).padStart(5, '0')}`, v: rows.length, note: `n${rows.length}` });
  const csv = csvOf(rows);

  async function sentBatches(order: 'round-robin' | 'window' | 'input', window?: number): Promise<RecordedWrite[][]> {
    const table = await newTable();
    const recorder = await startRecorder(endpoint);
    try {
      const result = await run({
        input: await inputFile(`wire-${order}.csv`, csv),
        table,
        types: TYPES,
        order,
        concurrency: 1,
        endpoint: recorder.url,
        ...(window ? { window } : {}),
      });
      expect(result).toMatchObject({ rowsRead: 415, written: 415, rejected: 0, order });
      expectSameTable(await tableItems(table), expectedTable(rows));
      expect(recorder.batches.map((b) => b.length)).toEqual([...Array(16).fill(25), 15]);
      return recorder.batches;
    } finally {
      await recorder.close();
      await dropTable(table);
    }
  }

  it('round-robin: each batch holds 25 distinct partition keys while 25 keys have rows left', async () => {
    const batches = await sentBatches('round-robin');
    expect(batches.map(distinctKeys)).toEqual([...Array(16).fill(25), 1]);
    expect(batches[0]!.map((w) => w.pk)).toEqual(Array.from({ length: 25 }, (_, j) => keyName(j)));
    expect(batches[1]!.map((w) => w.pk)).toEqual([
      ...Array.from({ length: 15 }, (_, j) => keyName(25 + j)),
      ...Array.from({ length: 10 }, (_, j) => keyName(j)),
    ]);
    // Round 0 writes every key's first row, round 1 every key's second row, ...
    expect(batches[0]!.every((w) => w.sk === 'o-00000')).toBe(true);
    expect(batches.map(batchText)).toEqual(
      chunks(
        roundRobin(rows, (r) => r.pk),
        25,
      ).map(batchText),
    );
  });

  it('window 40: every batch mixes the keys the window holds; each key keeps its input order', async () => {
    const batches = await sentBatches('window', 40);
    expect(batches.map(batchText)).toEqual(
      chunks(
        orderAll(rows, (r) => r.pk, 'window', 40),
        25,
      ).map(batchText),
    );
    for (const batch of batches.slice(1, -1)) expect(distinctKeys(batch)).toBeGreaterThanOrEqual(3);
    const sent = batches.flat();
    for (let j = 0; j < 40; j++)
      expect(sent.filter((w) => w.pk === keyName(j)).map((w) => w.sk)).toEqual(rows.filter((r) => r.pk === keyName(j)).map((r) => r.sk));
  });

  it('input: the first batch holds one partition key, as read', async () => {
    const batches = await sentBatches('input');
    expect(distinctKeys(batches[0]!)).toBe(1);
    expect(batches.map(batchText)).toEqual(chunks(rows, 25).map(batchText));
  });

  it('stdin with --order round-robin and 64 KB goes through temporary files too (input size unknown)', async () => {
    const table = await newTable();
    const tempDir = await newDir('stdin-spill');
    const recorder = await startRecorder(endpoint);
    try {
      const result = await run(
        { input: '-', inputFormat: 'csv', table, types: TYPES, order: 'round-robin', memoryBytes: 64 * 1024, tempDir, endpoint: recorder.url, concurrency: 1 },
        { stdin: Readable.from(csv.split(/(?<=\n)/).map((line) => Buffer.from(line))) },
      );
      expect(result).toMatchObject({ order: 'round-robin', rowsRead: 415, written: 415, rejected: 0 });
      expect(result.orderTempBytes).toBeGreaterThan(0);
      expect(recorder.batches.map(batchText)).toEqual(
        chunks(
          roundRobin(rows, (r) => r.pk),
          25,
        ).map(batchText),
      );
      expect(await readdir(tempDir)).toEqual([]);
      expectSameTable(await tableItems(table), expectedTable(rows));
    } finally {
      await recorder.close();
    }
    await dropTable(table);
  });

  it('stdin defaults to window order', async () => {
    const table = await newTable();
    const result = await run({ input: '-', inputFormat: 'csv', table, types: TYPES }, { stdin: Readable.from([Buffer.from(csv)]) });
    expect(result).toMatchObject({ input: '-', order: 'window', rowsRead: 415, written: 415, rejected: 0 });
    expectSameTable(await tableItems(table), expectedTable(rows));
    await dropTable(table);
  });
});

describe('an order larger than --memory goes through temporary files', () => {
  const rows = skewedRows();
  const csv = csvOf(rows);
  const MEMORY = 64 * 1024;

  it.each(['round-robin', 'spread'] as const)('%s with 64 KB: complete, correct, in the same order, temp dir empty afterwards', async (order) => {
    const table = await newTable();
    const tempDir = await newDir(`spill-${order}`);
    const recorder = await startRecorder(endpoint);
    let duringOrdering: string[] = [];
    const events: LoadEvent[] = [];
    try {
      const result = await run(
        { input: await inputFile(`spill-${order}.csv`, csv), table, types: TYPES, order, memoryBytes: MEMORY, tempDir, endpoint: recorder.url },
        {
          onEvent: (e) => {
            if (e.type !== 'ordering') return;
            events.push(e);
            duringOrdering = readdirSync(tempDir);
          },
        },
      );
      expect(result).toMatchObject({ rowsRead: rows.length, written: rows.length, rejected: 0, complete: true, order });
      expect(result.orderTempBytes).toBeGreaterThan(0);
      expect(events).toEqual([{ type: 'ordering', mode: order, rows: rows.length, spilled: true }]);
      // The temporary folder was made in --temp-dir, and is gone.
      expect(duringOrdering).toEqual([expect.stringMatching(/^ddb-spread-/)]);
      expect(await readdir(tempDir)).toEqual([]);
      expectSameTable(await tableItems(table), expectedTable(rows));
      // The merge of sorted runs gives exactly the order of the in-memory path.
      const expected = order === 'round-robin' ? roundRobin(rows, (r) => r.pk) : orderAll(rows, (r) => r.pk, 'spread');
      expect(recorder.batches.map(batchText).sort()).toEqual(chunks(expected, 25).map(batchText).sort());
    } finally {
      await recorder.close();
    }
    await dropTable(table);
  });

  it('stopping at --max-rejects while reading leaves the temp dir empty and writes nothing', async () => {
    const table = await newTable();
    const tempDir = await newDir('spill-maxrejects');
    // Bad numbers late in the input, long after the order went to temporary files.
    const lines = csv.split('\n');
    for (const at of [700, 900, 1100]) lines[at] = lines[at]!.replace(/^([^,]*,[^,]*),\d+,/, '$1,notanumber,');
    const error = await runFailing({
      input: await inputFile('spill-maxrejects.csv', lines.join('\n')),
      table,
      types: TYPES,
      order: 'round-robin',
      memoryBytes: MEMORY,
      tempDir,
      maxRejects: 2,
    });
    expect(error.code).toBe('MAX_REJECTS_REACHED');
    expect(error.result).toMatchObject({ rejected: 2, written: 0, order: 'round-robin' });
    expect(error.result!.rowsRead).toBe(900);
    expect(await readdir(tempDir)).toEqual([]);
    expect((await scanAll(client(), table)).length).toBe(0);
    await dropTable(table);
  });

  it('an abort while writing (AbortSignal) leaves the temp dir empty; what was written is correct', async () => {
    const table = await newTable();
    const tempDir = await newDir('spill-abort');
    const controller = new AbortController();
    // The stop lands while the ninth BatchWriteItem call is in flight (8 done: 200 rows), however fast
    // the machine: a stop on a progress event could come only after the last write.
    const proxy = await startFaultProxy(endpoint, (i) => {
      if (i === 8) controller.abort();
      return faults.forward();
    });
    const error = await runFailing(
      {
        input: await inputFile('spill-abort.csv', csv),
        table,
        types: TYPES,
        order: 'spread',
        memoryBytes: MEMORY,
        tempDir,
        concurrency: 2,
        endpoint: proxy.url,
      },
      { signal: controller.signal },
    ).finally(() => proxy.close());
    expect(error.code).toBe('ABORTED');
    const result = error.result!;
    expect(result.written).toBeGreaterThanOrEqual(200);
    expect(result.written).toBeLessThan(rows.length);
    expect(await readdir(tempDir)).toEqual([]);
    const items = await tableItems(table);
    expect(items.size).toBe(result.written);
    const expected = expectedTable(rows);
    for (const [key, item] of items) expect(item, key).toEqual(expected.get(key));
    await dropTable(table);
  });

  it('an abort as soon as the order starts leaves the temp dir empty and writes nothing', async () => {
    const table = await newTable();
    const tempDir = await newDir('spill-abort-early');
    const controller = new AbortController();
    const error = await runFailing(
      { input: await inputFile('spill-abort-early.csv', csv), table, types: TYPES, order: 'round-robin', memoryBytes: MEMORY, tempDir },
      { signal: controller.signal, onEvent: (e) => void (e.type === 'ordering' && controller.abort()) },
    );
    expect(error.code).toBe('ABORTED');
    expect(error.result).toMatchObject({ rowsRead: rows.length, written: 0 });
    expect(await readdir(tempDir)).toEqual([]);
    expect((await scanAll(client(), table)).length).toBe(0);
    await dropTable(table);
  });

  it('failing writes that reach --max-rejects during the merge leave the temp dir empty', async () => {
    // Throttled for good: rows rejected RETRIES_EXHAUSTED (a 503 for good is an outage: no rejects).
    const proxy = await startFaultProxy(endpoint, (i) => (i < 4 ? faults.forward() : faults.throttled()));
    try {
      const table = await newTable();
      const tempDir = await newDir('spill-writefail');
      const error = await runFailing({
        input: await inputFile('spill-writefail.csv', csv),
        table,
        types: TYPES,
        memoryBytes: MEMORY,
        tempDir,
        endpoint: proxy.url,
        maxAttempts: 2,
        maxRejects: 30,
        concurrency: 2,
      });
      expect(error.code).toBe('MAX_REJECTS_REACHED');
      expect(error.result!.rejectedByReason).toMatchObject({ RETRIES_EXHAUSTED: expect.any(Number) });
      expect(error.result!.written).toBe(100);
      expect(await readdir(tempDir)).toEqual([]);
      expect((await scanAll(client(), table)).length).toBe(100);
      await dropTable(table);
    } finally {
      await proxy.close();
    }
  });
});

describe('writes to one primary key keep their input order', () => {
  // 20 keys whose sort keys cycle through 6 values: every primary key repeats many times, far apart.
  const rows = skewedRows({ keys: 20, dupEvery: 6 });
  const csv = csvOf(rows);
  const expected = expectedTable(rows);

  it('the input repeats keys far apart', () => {
    const hotRows = rows.filter((r) => r.pk === HOT && r.sk === 'o-00000');
    expect(hotRows.length).toBeGreaterThan(20);
    expect(hotRows[1]!.v - hotRows[0]!.v).toBe(6);
    expect(expected.size).toBe(20 * 6);
  });

  it.each([
    { order: 'round-robin' as const },
    { order: 'spread' as const },
    { order: 'round-robin' as const, memoryBytes: 64 * 1024 },
    { order: 'spread' as const, memoryBytes: 64 * 1024 },
  ])('--order $order (memory $memoryBytes), with calls delayed and retried: the table holds the last row of every key', async ({ order, memoryBytes }) => {
    // Some early calls fail after a delay and are resent, so later batches overtake them; a later write to
    // the same key must still land last.
    const slow = { ...faults.internal(), delayMs: 25 } as FaultAction;
    const proxy = await startFaultProxy(endpoint, (i) => (i < 20 && i % 3 === 1 ? slow : faults.forward()));
    try {
      const table = await newTable();
      const tempDir = await newDir('dups');
      const result = await run({
        input: await inputFile(`dups-${order}.csv`, csv),
        table,
        types: TYPES,
        order,
        tempDir,
        endpoint: proxy.url,
        concurrency: 8,
        ...(memoryBytes ? { memoryBytes } : {}),
      });
      expect(result).toMatchObject({ rowsRead: rows.length, rejected: 0, complete: true });
      expect(result.written + result.superseded).toBe(rows.length);
      expect(result.retries).toBeGreaterThan(0);
      if (memoryBytes) expect(result.orderTempBytes).toBeGreaterThan(0);
      expectSameTable(await tableItems(table), expected);
      expect(await readdir(tempDir)).toEqual([]);
      await dropTable(table);
    } finally {
      await proxy.close();
    }
  });

  it('--order window with a small window also ends with the last row of every key', async () => {
    const table = await newTable();
    const result = await run({ input: await inputFile('dups-window.csv', csv), table, types: TYPES, order: 'window', window: 30 });
    expect(result).toMatchObject({ rowsRead: rows.length, rejected: 0, complete: true, order: 'window' });
    expectSameTable(await tableItems(table), expected);
    await dropTable(table);
  });
});

describe('invalid order options', () => {
  it.each<{ options: Partial<LocalLoadOptions>; message: RegExp }>([
    { options: { order: 'bogus' as never }, message: /order/ },
    { options: { order: 'round-robin', window: 100 }, message: /window/ },
    { options: { window: 1, order: 'window' }, message: /window/ },
    { options: { memoryBytes: 1000 }, message: /memoryBytes/ },
    { options: { tempDir: '' }, message: /tempDir/ },
  ])('$options is INVALID_OPTION', async ({ options, message }) => {
    const error = await runFailing({ input: await inputFile('x.csv', 'pk,sk\na,b\n'), table: 'never_created', ...options });
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toMatch(message);
  });

  it('an unusable --temp-dir fails with TEMP_FILES once the order spills, and nothing is written', async () => {
    const table = await newTable();
    const notADir = await inputFile('not-a-dir', 'x');
    const error = await runFailing({
      input: await inputFile('tempfail.csv', csvOf(skewedRows())),
      table,
      types: TYPES,
      order: 'round-robin',
      memoryBytes: 64 * 1024,
      tempDir: notADir,
    });
    expect(error.code).toBe('TEMP_FILES');
    expect(error.message).toContain(notADir);
    expect(await readFile(notADir, 'utf8')).toBe('x');
    expect((await scanAll(client(), table)).length).toBe(0);
    await dropTable(table);
  });
});
