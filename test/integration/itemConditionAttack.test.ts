/**
 * Attack on --item-conditions: every path a conditioned row takes between planning and its call (each order,
 * --memory small enough to spill to temporary files, --segment workers, deletes, --shard) must keep its condition.
 * The table already holds "guarded" items; every line of a guarded key carries a condition that is false on the
 * stored item, so a row sent without its condition would overwrite (or delete) an item the table must keep.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { batchesDone } from '../support/checkpoint.js';
import { buildExport, writeExport } from '../support/exportFixture.js';
import { LoaderError, verify } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };

const aws = useLocalAws({ name: 'item-cond-attack', processCredentials: true });
const { client, newTable } = aws;
const { inputFile, run, path } = localLoad(aws);

const GUARDED = 60;
/** Padding so that the writes of a file overflow --memory 64 KiB many times over. */
const PAD = 'x'.repeat(150);

/** Conditions false on a guarded item ({pk, v: "keep", n: 5, m: {t: "a"}}), each a shape of its own. */
const FALSE_CONDITIONS: Record<string, unknown>[] = [
  { ConditionExpression: 'attribute_not_exists(pk)' },
  { ConditionExpression: '#v <> :keep', ExpressionAttributeNames: { '#v': 'v' }, ExpressionAttributeValues: { ':keep': { S: 'keep' } } },
  { ConditionExpression: '#n > :big', ExpressionAttributeNames: { '#n': 'n' }, ExpressionAttributeValues: { ':big': { N: '123456789012345678901234567890' } } },
  { ConditionExpression: '#m.#t = :b', ExpressionAttributeNames: { '#m': 'm', '#t': 't' }, ExpressionAttributeValues: { ':b': { S: 'b' } } },
  { ConditionExpression: 'contains(#s, :x)', ExpressionAttributeNames: { '#s': 's' }, ExpressionAttributeValues: { ':x': { B: 'AAEC' } } },
];

interface Input {
  text: string;
  guardedRows: number;
  freeRows: number;
}

/** `rows` lines: every other one a guarded key's (a false condition, fields in varying order), the rest free keys, unconditioned or with a true one. */
function input(rows: number, op?: 'delete'): Input {
  const out: string[] = [];
  let guardedRows = 0;
  for (let i = 0; i < rows; i++) {
    if (i % 2 === 0) {
      const Item: Record<string, unknown> = { pk: { S: `g${(i / 2) % GUARDED}` }, v: { S: `overwritten-${i}` }, pad: { S: PAD } };
      if (op) Item['op'] = { S: 'delete' };
      const condition = FALSE_CONDITIONS[(i / 2) % FALSE_CONDITIONS.length]!;
      // The first line starts with Item (so the file reads as DynamoDB JSON); later ones put the condition first too.
      out.push(JSON.stringify(i > 0 && i % 4 === 0 ? { ...condition, Item } : { Item, ...condition }));
      guardedRows++;
    } else {
      const Item = { pk: { S: `f${i}` }, v: { S: `new-${i}` }, pad: { S: PAD } };
      out.push(JSON.stringify(i % 3 === 0 ? { Item, ConditionExpression: 'attribute_not_exists(pk)' } : { Item }));
    }
  }
  return { text: `${out.join('\n')}\n`, guardedRows, freeRows: rows - guardedRows };
}

async function seeded(keys: TableKeys = KEYS): Promise<string> {
  const table = await newTable(keys);
  for (let g = 0; g < GUARDED; g++)
    await client().send(
      new PutItemCommand({
        TableName: table,
        Item: { pk: { S: `g${g}` }, v: { S: 'keep' }, n: { N: '5' }, m: { M: { t: { S: 'a' } } }, s: { B: Buffer.from([9, 9]) } },
      }),
    );
  return table;
}

/** The guarded items as they are now: each must still say "keep". */
async function guarded(table: string): Promise<string[]> {
  const items = await scanAll(client(), table);
  return items
    .filter((i) => i['pk']!.S!.startsWith('g'))
    .map((i) => `${i['pk']!.S}=${i['v']?.S}`)
    .sort();
}

const KEPT = Array.from({ length: GUARDED }, (_, g) => `g${g}=keep`).sort();

describe('--item-conditions: no path drops a row condition', () => {
  const ROWS = 1200;
  for (const order of ['auto', 'stripes', 'input', 'window', 'round-robin', 'spread'] as const) {
    it(`--order ${order} --memory 64 KiB: every guarded item kept, every row counted`, async () => {
      const table = await seeded();
      const rows = input(ROWS);
      const file = await inputFile(`rows-${order}.jsonl`, rows.text);
      const result = await run({
        input: file,
        table,
        order,
        ...(order === 'window' ? { windowRows: 16 } : {}),
        memoryBytes: 64 * 1024,
        inputFormat: 'ddb-json',
        itemConditions: true,
        concurrency: 4,
      });
      expect(await guarded(table), order).toEqual(KEPT);
      expect(result, order).toMatchObject({
        rowsRead: ROWS,
        written: rows.freeRows,
        conditionFailed: rows.guardedRows,
        superseded: 0,
        rejected: 0,
        notWritten: 0,
        complete: true,
      });
    });
  }

  it('--delete rows each with a false condition: the guarded items stay', async () => {
    const table = await seeded();
    const rows = input(400);
    const file = await inputFile('deletes.jsonl', rows.text);
    const result = await run({ input: file, table, inputFormat: 'ddb-json', itemConditions: true, delete: true, memoryBytes: 64 * 1024, order: 'round-robin' });
    expect(await guarded(table)).toEqual(KEPT);
    expect(result).toMatchObject({ rowsRead: 400, conditionFailed: rows.guardedRows, written: rows.freeRows, rejected: 0, complete: true });
  });

  it('--operation-column delete rows each with a false condition: the guarded items stay', async () => {
    const table = await seeded();
    const rows = input(400, 'delete');
    const file = await inputFile('opcol.jsonl', rows.text);
    const result = await run({
      input: file,
      table,
      inputFormat: 'ddb-json',
      itemConditions: true,
      operationColumn: 'op',
      order: 'spread',
      memoryBytes: 64 * 1024,
    });
    expect(await guarded(table)).toEqual(KEPT);
    expect(result).toMatchObject({ rowsRead: 400, conditionFailed: rows.guardedRows, written: rows.freeRows, rejected: 0, complete: true });
  });

  it('--segment workers, two at once: the guarded items stay, every row on one worker', async () => {
    const table = await seeded();
    const rows = input(800);
    const file = await inputFile('segments.jsonl', rows.text);
    const results = await Promise.all(
      ['0/2', '1/2'].map((segment) =>
        run({ input: file, table, inputFormat: 'ddb-json', itemConditions: true, segment, order: 'round-robin', memoryBytes: 64 * 1024 }),
      ),
    );
    expect(await guarded(table)).toEqual(KEPT);
    expect(results.reduce((n, r) => n + r.conditionFailed!, 0)).toBe(rows.guardedRows);
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(rows.freeRows);
    for (const r of results) expect(r.rejected).toBe(0);
  });
});

describe('--item-conditions: inputs other than plain DynamoDB JSON lines', () => {
  const guardLine = (g: number) => ({ Item: { pk: { S: `g${g}` }, v: { S: 'overwritten' } }, ConditionExpression: 'attribute_not_exists(pk)' });

  for (const flag of [true, false]) {
    it(`a full export's line that carries a condition is not written without it (${flag ? 'with' : 'without'} the flag)`, async () => {
      const table = await seeded();
      const fixture = buildExport('t', 'FULL_EXPORT', [[{ Item: { pk: { S: 'f1' }, v: { S: 'new' } } }, guardLine(0), guardLine(1)]]);
      const folder = await writeExport(path(`export-${flag}`), fixture);
      const result = await run({ input: folder, table, ...(flag ? { itemConditions: true } : {}) });
      expect(await guarded(table)).toEqual(KEPT);
      expect(result).toMatchObject({ written: 1, rejected: 2, notWritten: 0 });
      expect(result.rejectedByReason).toEqual({ ITEM_CONDITION: 2 });
    });

    it(`an incremental export's change record that carries a condition is not written without it (${flag ? 'with' : 'without'} the flag)`, async () => {
      const table = await seeded();
      const full = buildExport('t', 'FULL_EXPORT', [[{ Item: { pk: { S: 'f1' }, v: { S: 'new' } } }]], { exportTime: '2026-11-01T00:00:00.000Z' });
      const change = (g: number) => ({
        Metadata: { WriteTimestampMicros: { N: '1761955300000000' } },
        Keys: { pk: { S: `g${g}` } },
        NewImage: { pk: { S: `g${g}` }, v: { S: 'overwritten' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      const incremental = buildExport('t', 'INCREMENTAL_EXPORT', [[change(0), change(1)]], {
        window: { from: '2026-11-01T00:00:00.000Z', to: '2026-11-01T01:00:00.000Z' },
      });
      const root = path(`chain-${flag}`);
      const folders = [await writeExport(root, full), await writeExport(root, incremental)];
      const result = await run({ input: folders, table, ...(flag ? { itemConditions: true } : {}) });
      expect(await guarded(table)).toEqual(KEPT);
      expect(result).toMatchObject({ written: 1, rejected: 2, notWritten: 0 });
      expect(result.rejectedByReason).toEqual({ ITEM_CONDITION: 2 });
    });
  }

  it('a gzip DynamoDB JSON file and a JSON array document of conditioned lines keep their conditions', async () => {
    const lines = [guardLine(0), guardLine(1), { Item: { pk: { S: 'f1' } } }];
    for (const [name, body] of [
      ['rows.jsonl.gz', gzipSync(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`)],
      ['rows.json', JSON.stringify(lines)],
    ] as const) {
      const table = await seeded();
      const file = await inputFile(name, body);
      const result = await run({ input: file, table, itemConditions: true, inputFormat: 'ddb-json' });
      expect(await guarded(table), name).toEqual(KEPT);
      expect(result, name).toMatchObject({ rowsRead: 3, written: 1, conditionFailed: 2, rejected: 0 });
    }
  });
});

describe('--item-conditions on lines read as plain JSON', () => {
  it('a .jsonl file (plain JSON Lines by its name) whose lines carry conditions is refused before any write, saying --input-format ddb-json', async () => {
    const table = await seeded();
    const lines = [
      { Item: { pk: { S: 'g0' }, v: { S: 'overwritten' } }, ConditionExpression: 'attribute_not_exists(pk)' },
      { Item: { pk: { S: 'f1' }, v: { S: 'new' } } },
    ];
    for (const name of ['rows.jsonl', 'rows.json']) {
      const file = await inputFile(name, name.endsWith('l') ? `${lines.map((l) => JSON.stringify(l)).join('\n')}\n` : JSON.stringify(lines));
      const error = await localLoad(aws).runFailing({ input: file, table, itemConditions: true });
      expect(error.code, name).toBe('INPUT_HEADER');
      expect(error.message, name).toMatch(/read as plain JSON.*--input-format ddb-json/s);
      expect(error.file, name).toBe(file);
    }
    expect(await guarded(table)).toEqual(KEPT);
    expect((await scanAll(client(), table)).length).toBe(GUARDED);
  });
});

describe('--item-conditions stopped and resumed from its checkpoint', () => {
  for (const [order, seams] of [
    ['window', { restartRows: 40 }],
    ['round-robin', {}],
  ] as const) {
    it(`--order ${order}${'restartRows' in seams ? ' with restart points' : ''}: the guarded items kept, every row counted once`, async () => {
      const table = await seeded();
      const rows = input(1000);
      const file = await inputFile(`resume-${order}.jsonl`, rows.text);
      const options = {
        input: file,
        table,
        order,
        memoryBytes: 64 * 1024,
        inputFormat: 'ddb-json' as const,
        itemConditions: true,
        concurrency: 2,
        checkpointPath: path(`resume-${order}.checkpoint.json`),
        rejectsPath: path(`resume-${order}.rejects.jsonl`),
      };
      const controller = new AbortController();
      // Stopped once the checkpoint records some batches done, the load paced slow enough to be stopped midway.
      const poll = setInterval(() => {
        if (batchesDone(options.checkpointPath) >= 8) controller.abort();
      }, 5);
      const stopped = await run({ ...options, wcu: 300 }, { signal: controller.signal, testSeams: seams })
        .then(
          () => undefined,
          (e: unknown) => e,
        )
        .finally(() => clearInterval(poll));
      expect((stopped as { code?: string } | undefined)?.code, order).toBe('ABORTED');
      expect(await guarded(table), order).toEqual(KEPT);
      let resumed = false;
      const result = await run(options, { testSeams: seams, onEvent: (event) => void (resumed ||= event.type === 'resumed') });
      expect(resumed, order).toBe(true);
      expect(await guarded(table), order).toEqual(KEPT);
      expect(result, order).toMatchObject({
        rowsRead: 1000,
        written: rows.freeRows,
        conditionFailed: rows.guardedRows,
        rejected: 0,
        notWritten: 0,
        complete: true,
      });
    });
  }
});

describe('verify after an --item-conditions load', () => {
  it('without the flag it refuses to call the table matched when the load applied conditions it cannot read; with it, matched', async () => {
    const table = await seeded();
    // Line 1 guarded (false, kept), line 2 a new key with a true condition (written), line 3 no condition.
    const lines = [
      { Item: { pk: { S: 'g0' }, v: { S: 'overwritten' } }, ConditionExpression: 'attribute_not_exists(pk)' },
      { Item: { pk: { S: 'f1' }, v: { S: 'new' } }, ConditionExpression: 'attribute_not_exists(pk)' },
      { Item: { pk: { S: 'f2' }, v: { S: 'new' } } },
    ];
    const file = await inputFile('verify.json', `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const rejectsPath = path('verify.rejects.jsonl');
    const conditionFailuresPath = path('verify.kept.jsonl');
    const options = { input: file, table, inputFormat: 'ddb-json' as const, rejectsPath, conditionFailuresPath };
    expect(await run({ ...options, itemConditions: true })).toMatchObject({ written: 2, conditionFailed: 1, rejected: 0 });
    const base = { ...options, endpoint: aws.endpoint, region: 'us-east-1', differencesPath: path('verify.diff.jsonl') };
    const matched = await verify({ ...base, itemConditions: true });
    expect(matched).toMatchObject({ differing: 0, outcomes: { matched: 2, conditionKept: 1 } });
    const error = await verify({ ...base, conditionFailuresPath: undefined }).then(
      (result) => result,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).message).toMatch(/line 1 of .*verify\.json.*pass --item-conditions to verify/s);
  });

  it('without the flag after a load without it (the lines rejected there too), verify goes on', async () => {
    const table = await seeded();
    const lines = [{ Item: { pk: { S: 'f1' } }, ConditionExpression: 'attribute_not_exists(pk)' }, { Item: { pk: { S: 'f2' } } }];
    const file = await inputFile('verify-noflag.json', `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const rejectsPath = path('verify-noflag.rejects.jsonl');
    expect(await run({ input: file, table, inputFormat: 'ddb-json', rejectsPath })).toMatchObject({ written: 1, rejected: 1 });
    const result = await verify({
      input: file,
      table,
      inputFormat: 'ddb-json',
      rejectsPath,
      endpoint: aws.endpoint,
      region: 'us-east-1',
      differencesPath: path('noflag.diff.jsonl'),
    });
    expect(result).toMatchObject({ differing: 0, outcomes: { matched: 1 } });
  });
});
