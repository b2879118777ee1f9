/**
 * Conditional writes (--if-not-exists, --if-newer): each row one PutItem/DeleteItem with a condition, tried in
 * input order (nothing superseded), a false condition counted as conditionFailed (never a reject, never resent),
 * and every row accounted for: written + conditionFailed + rejected = rows read.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../src/reporting/result.js';
import { formatSummary } from '../../src/reporting/summary.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { readRejects } from '../support/rejects.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };

const aws = useLocalAws({ name: 'conditional', processCredentials: true });
const { client, newTable } = aws;
const { inputFile, run } = localLoad(aws);

/** The table as pk -> "v@version". */
async function stored(table: string): Promise<Map<string, string>> {
  const items = await scanAll(client(), table);
  return new Map(items.map((i) => [i.pk!.S!, `${i.v!.S}@${i.ver?.N ?? i.ver?.S ?? '-'}`]));
}

async function seed(table: string, items: Array<{ pk: string; v: string; ver: number }>): Promise<void> {
  for (const i of items) await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: i.pk }, v: { S: i.v }, ver: { N: String(i.ver) } } }));
}

interface Row {
  pk: string;
  v: string;
  ver: number;
}

/** The rows applied one by one, in input order, under the condition: what the table must hold after the load. */
function oneByOne(start: Map<string, Row>, rows: Row[], condition: 'ifNotExists' | 'ifNewer'): { table: Map<string, Row>; written: number; failed: number } {
  const table = new Map(start);
  let written = 0;
  let failed = 0;
  for (const row of rows) {
    const old = table.get(row.pk);
    const ok = condition === 'ifNotExists' ? old === undefined : old === undefined || old.ver < row.ver;
    if (ok) {
      table.set(row.pk, row);
      written++;
    } else failed++;
  }
  return { table, written, failed };
}

const csv = (rows: Row[]) => `pk,v,ver\n${rows.map((r) => `${r.pk},${r.v},${r.ver}`).join('\n')}\n`;
const asText = (m: Map<string, Row>) => new Map([...m].map(([k, r]) => [k, `${r.v}@${r.ver}`]));

describe('conditional writes', () => {
  it('two rows per key: each row is tried in input order (none superseded), as applying them one by one leaves the table', async () => {
    // Keys k0..k59, each twice or three times, their versions out of order; k0..k9 already in the table.
    const rows: Row[] = [];
    for (let round = 0; round < 3; round++)
      for (let k = 0; k < 60; k++) if (round < 2 || k % 3 === 0) rows.push({ pk: `k${k}`, v: `r${round}`, ver: ((k * 7 + round * 13) % 5) + 1 });
    const start = new Map(Array.from({ length: 10 }, (_, k): [string, Row] => [`k${k}`, { pk: `k${k}`, v: 'old', ver: 3 }]));
    for (const condition of ['ifNotExists', 'ifNewer'] as const) {
      for (const order of ['input', 'round-robin'] as const) {
        const table = await newTable(KEYS);
        await seed(table, [...start.values()]);
        const input = await inputFile('rows.csv', csv(rows));
        const result = await run({ input, table, order, types: { ver: 'N' }, ...(condition === 'ifNotExists' ? { ifNotExists: true } : { ifNewer: 'ver' }) });
        const want = oneByOne(start, rows, condition);
        expect(asText(want.table).size).toBe(60);
        expect(await stored(table), `${condition} ${order}`).toEqual(asText(want.table));
        expect(result, `${condition} ${order}`).toMatchObject({
          rowsRead: rows.length,
          superseded: 0,
          rejected: 0,
          written: want.written,
          conditionFailed: want.failed,
          notWritten: 0,
          complete: true,
        });
        // Superseding the first row of a key by its second would have written the second under --if-not-exists.
        if (condition === 'ifNotExists') expect(want.failed).toBe(rows.length - 50);
        expect(formatSummary(result)).toMatch(new RegExp(`condition failed ${want.failed}\\b`));
      }
    }
  });

  it('--if-newer: a row without the attribute, or of another type, is rejected before any write, with its line and field', async () => {
    const table = await newTable(KEYS);
    await seed(table, [{ pk: 'b', v: 'kept', ver: 1 }]);
    const input = await inputFile(
      'rows.jsonl',
      ['{"pk":"a","v":"x","ver":5}', '{"pk":"b","v":"x"}', '{"pk":"c","v":"x","ver":true}', '{"pk":"d","v":"x","ver":"2026-01-01T00:00:00Z"}'].join('\n') +
        '\n',
    );
    const result = await run({ input, table, ifNewer: 'ver' });
    expect(result).toMatchObject({ rowsRead: 4, written: 2, rejected: 2, conditionFailed: 0, rejectedByReason: { IF_NEWER_VALUE: 2 } });
    const rejects = await readRejects(result.rejectsPath!);
    expect(rejects.map((r) => [r.line, r.code, r.field])).toEqual([
      [2, 'IF_NEWER_VALUE', 'ver'],
      [3, 'IF_NEWER_VALUE', 'ver'],
    ]);
    expect(rejects[1]!.message).toMatch(/a Boolean/);
    expect((await stored(table)).get('b')).toBe('kept@1');
  });

  it('--if-newer: ISO-8601 strings compare as strings; a stored item of the other type keeps its value', async () => {
    const table = await newTable(KEYS);
    await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'a' }, v: { S: 'old' }, ver: { S: '2026-03-01T00:00:00Z' } } }));
    await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'b' }, v: { S: 'old' }, ver: { S: '2026-03-01T00:00:00Z' } } }));
    await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'c' }, v: { S: 'old' }, ver: { N: '5' } } }));
    const input = await inputFile(
      'rows.jsonl',
      ['{"pk":"a","v":"new","ver":"2026-04-01T00:00:00Z"}', '{"pk":"b","v":"new","ver":"2026-02-01T00:00:00Z"}', '{"pk":"c","v":"new","ver":"9"}'].join('\n') +
        '\n',
    );
    const result = await run({ input, table, ifNewer: 'ver' });
    expect(result).toMatchObject({ rowsRead: 3, written: 1, conditionFailed: 2, rejected: 0, complete: true });
    const now = await stored(table);
    expect(now.get('a')).toBe('new@2026-04-01T00:00:00Z');
    expect(now.get('b')).toBe('old@2026-03-01T00:00:00Z');
    expect(now.get('c')).toBe('old@5');
  });

  it('--if-newer backfill while another writer updates the table: no newer item overwritten, every row accounted for', async () => {
    const table = await newTable(KEYS);
    const KEYS_N = 300;
    // The backfill: three versions of each key (1..3), in an order that is not by version.
    const rows: Row[] = [];
    for (const ver of [2, 1, 3]) for (let k = 0; k < KEYS_N; k++) rows.push({ pk: `k${k}`, v: `backfill-${ver}`, ver });
    const input = await inputFile('backfill.csv', csv(rows));
    // The application: writes version 100 + n of keys while the load runs, through the SDK, unconditionally.
    const live = new Map<string, number>();
    let loading = true;
    let writesDuringLoad = 0;
    const writer = (async () => {
      for (let n = 0; loading; n++) {
        const pk = `k${(n * 37) % KEYS_N}`;
        const ver = 100 + n;
        await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk }, v: { S: `live-${ver}` }, ver: { N: String(ver) } } }));
        live.set(pk, ver);
        if (loading) writesDuringLoad++;
      }
    })();
    const result = await run({ input, table, types: { ver: 'N' }, ifNewer: 'ver', wcu: 400, concurrency: 4 }).finally(() => (loading = false));
    await writer;
    expect(writesDuringLoad).toBeGreaterThan(20);
    const now = await stored(table);
    for (let k = 0; k < KEYS_N; k++) {
      const pk = `k${k}`;
      const liveVer = live.get(pk);
      // The application's last write of a key is newer than any backfill row: it stays, whenever it came.
      expect(now.get(pk), pk).toBe(liveVer === undefined ? 'backfill-3@3' : `live-${liveVer}@${liveVer}`);
    }
    expect(result.superseded).toBe(0);
    expect(result.rejected).toBe(0);
    expect(result.written + result.conditionFailed! + result.rejected).toBe(rows.length);
    // Version 1 comes after version 2 of every key: each fails at least there.
    expect(result.conditionFailed!).toBeGreaterThanOrEqual(KEYS_N);
    expect(result).toMatchObject({ rowsRead: rows.length, notWritten: 0, complete: true });
  });

  it('deletes under --if-newer are rejected (a delete row carries no version); under --if-not-exists they remove nothing', async () => {
    const table = await newTable(KEYS);
    await seed(table, [{ pk: 'a', v: 'kept', ver: 1 }]);
    const input = await inputFile('ops.csv', 'pk,op,v,ver\na,delete,,\nb,delete,,\n');
    const notExists = await run({ input, table, operationColumn: 'op', ifNotExists: true });
    // a exists: its delete's condition fails; b is absent: the delete succeeds and removes nothing.
    expect(notExists).toMatchObject({ rowsRead: 2, written: 1, deleted: 1, conditionFailed: 1, rejected: 0 });
    const newer = await run({ input, table, operationColumn: 'op', ifNewer: 'ver' });
    expect(newer).toMatchObject({ rowsRead: 2, written: 0, rejected: 2, rejectedByReason: { IF_NEWER_VALUE: 2 } });
    expect((await stored(table)).get('a')).toBe('kept@1');
  });
});

describe('conditional writes with --segment', () => {
  it('two workers, each its keys: together they leave the table one by one leaves it, and their counts add up', async () => {
    const rows: Row[] = [];
    for (let round = 0; round < 3; round++) for (let k = 0; k < 80; k++) rows.push({ pk: `k${k}`, v: `r${round}`, ver: ((k * 5 + round * 7) % 4) + 1 });
    const start = new Map(Array.from({ length: 20 }, (_, k): [string, Row] => [`k${k * 4}`, { pk: `k${k * 4}`, v: 'old', ver: 2 }]));
    const table = await newTable(KEYS);
    await seed(table, [...start.values()]);
    const input = await inputFile('rows.csv', csv(rows));
    const workers: LoadResult[] = [];
    for (const segment of ['0/2', '1/2']) workers.push(await run({ input, table, types: { ver: 'N' }, ifNewer: 'ver', segment }));
    const want = oneByOne(start, rows, 'ifNewer');
    expect(await stored(table)).toEqual(asText(want.table));
    const sum = (field: 'written' | 'conditionFailed' | 'otherSegments' | 'superseded') => workers.reduce((n, w) => n + (w[field] ?? 0), 0);
    expect(sum('written')).toBe(want.written);
    expect(sum('conditionFailed')).toBe(want.failed);
    expect(sum('superseded')).toBe(0);
    // Each row is one worker's: the other counts it as another segment's.
    expect(sum('otherSegments')).toBe(rows.length);
    for (const w of workers) expect(w.complete).toBe(true);
  });
});

describe('--condition with names and values', () => {
  it('every row carries the expression: rows of locked items fail theirs, the others are written; a bad expression is refused before any write', async () => {
    const table = await newTable(KEYS);
    await seed(table, [{ pk: 'a', v: 'locked', ver: 1 }]);
    await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'b' }, v: { S: 'open' }, ver: { N: '1' } } }));
    const input = await inputFile(
      'rows.csv',
      csv([
        { pk: 'a', v: 'new', ver: 2 },
        { pk: 'b', v: 'new', ver: 2 },
        { pk: 'c', v: 'new', ver: 2 },
      ]),
    );
    const condition = {
      conditionExpression: 'attribute_not_exists(#v) OR #v <> :locked',
      conditionNames: { '#v': 'v' },
      conditionValues: { ':locked': { S: 'locked' } },
    };
    const result = await run({ input, table, types: { ver: 'N' }, ...condition });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, conditionFailed: 1, rejected: 0, complete: true });
    const now = await stored(table);
    expect([now.get('a'), now.get('b'), now.get('c')]).toEqual(['locked@1', 'new@2', 'new@2']);

    for (const [bad, message] of [
      [{ ...condition, conditionValues: {} }, /uses :locked, which --condition-values does not give/],
      [{ ...condition, conditionNames: { '#v': 'v', '#w': 'w' } }, /gives #w, which the expression does not use/],
      [{ ...condition, conditionValues: { ':locked': { X: 'y' } } }, /one DynamoDB JSON value/],
      [{ ...condition, ifNotExists: true }, /one condition per load/],
    ] as const) {
      const error = await localLoad(aws).runFailing({ input, table, ...(bad as object) });
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toMatch(message);
    }
    expect((await stored(table)).get('a')).toBe('locked@1');
  });
});
