/**
 * --item-conditions: each DynamoDB JSON line's own condition (ConditionExpression, ExpressionAttributeNames,
 * ExpressionAttributeValues beside Item) goes with its row's PutItem; rows are tried in input order, a false
 * condition is counted as conditionFailed (and listed in --condition-failures with the row's own expression),
 * and without the flag a line that carries a condition is rejected, never written without it.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { readRejects } from '../support/rejects.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };

const aws = useLocalAws({ name: 'item-conditions', processCredentials: true });
const { client, newTable, endpoint } = aws;
const { inputFile, run, path } = localLoad(aws);

interface Row {
  pk: string;
  v: string;
  ver: number;
  /** The line's own condition: none, absent key, or a newer version than the stored one. */
  when: 'none' | 'absent' | 'newer';
}

function lineOf(row: Row): string {
  const Item = { pk: { S: row.pk }, v: { S: row.v }, ver: { N: String(row.ver) } };
  if (row.when === 'none') return JSON.stringify({ Item });
  if (row.when === 'absent') return JSON.stringify({ Item, ConditionExpression: 'attribute_not_exists(pk)' });
  return JSON.stringify({
    Item,
    ConditionExpression: 'attribute_not_exists(pk) OR #ver < :ver',
    ExpressionAttributeNames: { '#ver': 'ver' },
    ExpressionAttributeValues: { ':ver': { N: String(row.ver) } },
  });
}

/** The rows applied one by one in input order, each under its own condition. */
function oneByOne(start: Map<string, Row>, rows: Row[]): { table: Map<string, string>; written: number; failed: Row[] } {
  const table = new Map(start);
  let written = 0;
  const failed: Row[] = [];
  for (const row of rows) {
    const old = table.get(row.pk);
    const ok = row.when === 'none' || old === undefined || (row.when === 'newer' && old.ver < row.ver);
    if (ok) {
      table.set(row.pk, row);
      written++;
    } else failed.push(row);
  }
  return { table: new Map([...table].map(([k, r]) => [k, `${r.v}@${r.ver}`])), written, failed };
}

async function stored(table: string): Promise<Map<string, string>> {
  const items = await scanAll(client(), table);
  return new Map(items.map((i) => [i.pk!.S!, `${i.v!.S}@${i.ver!.N}`]));
}

describe('--item-conditions', () => {
  // k0..k44, two or three rows a key with versions out of order and a mix of conditions; k0..k14 already stored at version 3.
  const rows: Row[] = [];
  const kinds: Row['when'][] = ['newer', 'absent', 'none'];
  for (let round = 0; round < 3; round++)
    for (let k = 0; k < 45; k++)
      if (round < 2 || k % 2 === 0) rows.push({ pk: `k${k}`, v: `r${round}`, ver: ((k * 7 + round * 11) % 5) + 1, when: kinds[(k + round) % 3]! });
  const start = new Map(Array.from({ length: 15 }, (_, k): [string, Row] => [`k${k}`, { pk: `k${k}`, v: 'old', ver: 3, when: 'none' }]));

  async function seeded(): Promise<string> {
    const table = await newTable(KEYS);
    for (const r of start.values())
      await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: r.pk }, v: { S: r.v }, ver: { N: String(r.ver) } } }));
    return table;
  }

  it('each row is written only where its own condition holds, in input order, as applying the lines one by one leaves the table; the failed ones are listed with their own expression', async () => {
    const want = oneByOne(start, rows);
    expect(want.failed.length).toBeGreaterThan(10);
    expect(want.written).toBeGreaterThan(30);
    for (const order of ['auto', 'round-robin'] as const) {
      const table = await seeded();
      const input = await inputFile(`rows-${order}.jsonl`, `${rows.map(lineOf).join('\n')}\n`);
      const failures = path(`failed-${order}.jsonl`);
      const result = await run({ input, table, order, inputFormat: 'ddb-json', itemConditions: true, conditionFailuresPath: failures });
      expect(await stored(table), order).toEqual(want.table);
      expect(result, order).toMatchObject({
        rowsRead: rows.length,
        written: want.written,
        conditionFailed: want.failed.length,
        superseded: 0,
        rejected: 0,
        notWritten: 0,
        complete: true,
      });
      const listed = (await readFile(failures, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { line: number; code: string; condition: string; key: string });
      const wantLines = want.failed.map((r) => rows.indexOf(r) + 1).sort((a, b) => a - b);
      expect(listed.map((l) => l.line).sort((a, b) => a - b)).toEqual(wantLines);
      for (const l of listed) {
        expect(l.code).toBe('CONDITION_FAILED');
        expect(l.condition).toBe(rows[l.line - 1]!.when === 'absent' ? 'attribute_not_exists(pk)' : 'attribute_not_exists(pk) OR #ver < :ver');
      }
    }
  });

  it("under injected faults (500, 503, throttling, dropped and lost replies): the same table and counts; a resend that finds the row's own item counts it written", async () => {
    const want = oneByOne(start, rows);
    let injected = 0;
    for (const seed of [11, 12]) {
      const table = await seeded();
      const proxy = await startPartitionProxy(endpoint, {
        model: { tableWcu: 1_000_000 },
        partitionKeyName: 'pk',
        singleWriteFaults: true,
        seed,
        faults: { internal: 0.1, unavailable: 0.1, throttling: 0.1, drop: 0.05, lostReply: 0.15 },
      });
      try {
        const input = await inputFile(`rows-faults-${seed}.jsonl`, `${rows.map(lineOf).join('\n')}\n`);
        const failures = path(`failed-faults-${seed}.jsonl`);
        const result = await run(
          {
            input,
            table,
            endpoint: proxy.url,
            inputFormat: 'ddb-json',
            itemConditions: true,
            conditionFailuresPath: failures,
            maxAttempts: 100,
            concurrency: 4,
          },
          { random: () => 0 },
        );
        expect(await stored(table), `seed ${seed}`).toEqual(want.table);
        expect(result, `seed ${seed}`).toMatchObject({
          rowsRead: rows.length,
          written: want.written,
          conditionFailed: want.failed.length,
          rejected: 0,
          complete: true,
        });
        const listed = (await readFile(failures, 'utf8')).trim().split('\n');
        expect(listed).toHaveLength(want.failed.length);
      } finally {
        const { internal, unavailable, throttling, drop, lostReply } = proxy.stats().faults;
        injected += internal + unavailable + throttling + drop + lostReply;
        await proxy.close();
      }
    }
    expect(injected).toBeGreaterThan(10);
  });

  it('without the flag a line that carries a condition is rejected (ITEM_CONDITION) and its item left as it was; lines without one load', async () => {
    const table = await seeded();
    const input = await inputFile('rows-noflag.jsonl', `${rows.map(lineOf).join('\n')}\n`);
    const rejectsPath = path('noflag.rejects.jsonl');
    const result = await run({ input, table, inputFormat: 'ddb-json', rejectsPath });
    const conditioned = rows.filter((r) => r.when !== 'none');
    expect(result).toMatchObject({ rowsRead: rows.length, rejected: conditioned.length, notWritten: 0 });
    expect(result.written + result.superseded).toBe(rows.length - conditioned.length);
    const rejects = await readRejects(rejectsPath);
    expect(rejects).toHaveLength(conditioned.length);
    expect(new Set(rejects.map((r) => r.code))).toEqual(new Set(['ITEM_CONDITION']));
    // The table holds only what the unconditioned lines say (their last row a key), else what was there.
    const want = new Map([...start].map(([k, r]) => [k, `${r.v}@${r.ver}`]));
    for (const r of rows) if (r.when === 'none') want.set(r.pk, `${r.v}@${r.ver}`);
    expect(await stored(table)).toEqual(want);
  });

  it('is refused with another condition or a transform, before any write', async () => {
    const table = await newTable(KEYS);
    const input = await inputFile('one.jsonl', `${lineOf({ pk: 'a', v: 'x', ver: 1, when: 'absent' })}\n`);
    for (const [extra, message] of [
      [{ ifNotExists: true }, /one kind of condition per load/],
      [{ ifNewer: 'ver' }, /one kind of condition per load/],
      [{ conditionExpression: 'attribute_not_exists(pk)' }, /one kind of condition per load/],
      [{ transform: (item: unknown) => item }, /not given with `transform`/],
    ] as const) {
      const error = await localLoad(aws).runFailing({ input, table, itemConditions: true, ...(extra as object) });
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toMatch(message);
    }
    expect(await scanAll(client(), table)).toEqual([]);
  });
});
