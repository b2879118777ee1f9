/**
 * In process against DynamoDB Local: each mistake a header or first rows show stops load() and estimate()
 * before the first write (the table stays empty, the reject file is never made), names the part and the
 * fix; what is fine (a headerless file with --columns, a sparse GSI key, a rerun of a checkpointed load,
 * --segment workers, rows lacking a key one by one) still loads. The CLI's exit codes: test/cli/headerMistakes.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimate } from '../../src/estimating/estimate.js';
import { type LoaderError } from '../../src/index.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { expectedScan, rawScan } from '../support/rawScan.js';

const ORDERS = { partitionKey: { name: 'customerId', type: 'S' as const }, sortKey: { name: 'orderId', type: 'S' as const } };
const aws = useLocalAws({ name: 'headercheck', keys: ORDERS, processCredentials: true });
const { endpoint, newTable } = aws;
const { path, inputFile, run, runFailing } = localLoad(aws);

const rows = (sep: string, header = ['customerId', 'orderId', 'total']) =>
  `${header.join(sep)}\n${['c1', 'o1', '12.50'].join(sep)}\n${['c2', 'o2', '7'].join(sep)}\n`;

/** load() that must stop before its first write: the table empty, no reject file. */
async function stopped(input: string, more: Parameters<typeof run>[0] extends infer O ? Partial<O> : never = {}): Promise<LoaderError> {
  const table = await newTable();
  const rejectsPath = path('rejects.jsonl');
  const error = await runFailing({ input, table, rejectsPath, ...more });
  expect(await rawScan(endpoint, table)).toEqual([]);
  expect(existsSync(rejectsPath)).toBe(false);
  return error;
}

describe('stopped before the first write', () => {
  it.each([
    ['a key column that differs by case', rows(',', ['CustomerId', 'orderId', 'total']), 'customerId', '"CustomerId", which differs only by case'],
    ['a key column with a leading space', rows(',', ['customerId', ' orderId', 'total']), 'orderId', '" orderId", which has spaces around it'],
    ['a tab-separated file named .csv', rows('\t'), 'customerId', '--delimiter tab'],
    ['a header with the sort key left out', rows(',', ['customerId', 'amount', 'total']), 'orderId', 'needs "orderId"'],
  ])('%s: INPUT_HEADER naming the file, the column and the fix', async (_what, text, field, says) => {
    const input = await inputFile('orders.csv', text);
    const error = await stopped(input);
    expect(error).toMatchObject({ code: 'INPUT_HEADER', file: input, field });
    expect(error.message).toContain(says);
  });

  it('a set of parts: the part with the bad header is named, and no part is written', async () => {
    const folder = path('parts');
    await mkdir(folder);
    await writeFile(join(folder, 'a.csv'), rows(','));
    await writeFile(join(folder, 'b.csv'), rows(',', ['customerId', 'OrderId', 'total']));
    await writeFile(join(folder, 'c.csv'), rows(';'));
    const error = await stopped(folder);
    expect(error).toMatchObject({ code: 'INPUT_HEADER', file: join(folder, 'b.csv'), field: 'orderId' });
  });

  it('--columns over a file that has a header row, and --operation-column naming no column: INVALID_OPTION', async () => {
    const input = await inputFile('orders.csv', rows(','));
    expect(await stopped(input, { columns: ['customerId', 'orderId', 'total'] })).toMatchObject({ code: 'INVALID_OPTION', file: input });
    expect((await stopped(input, { operationColumn: 'op' })).message).toContain('"op"');
  });

  it('the estimate, a dry run and each --segment worker stop the same way', async () => {
    const table = await newTable();
    const input = await inputFile('orders.csv', rows(';'));
    const base = { input, table, endpoint, region: 'us-east-1' };
    await expect(estimate({ ...base, rejectsPath: path('e.rejects.jsonl') })).rejects.toMatchObject({ code: 'INPUT_HEADER' });
    for (const more of [{ dryRun: true }, { segment: { index: 0, count: 2 } }, { segment: { index: 1, count: 2 }, maxRejects: 1 }]) {
      await expect(run({ input, table, ...more })).rejects.toMatchObject({ code: 'INPUT_HEADER', field: 'customerId' });
    }
    expect(await rawScan(endpoint, table)).toEqual([]);
  });

  it('JSON Lines and a JSON array whose first rows spell the key otherwise', async () => {
    for (const [name, text] of [
      ['orders.jsonl', '{"CustomerId":"c1","orderId":"o1"}\n{"CustomerId":"c2","orderId":"o2"}\n'],
      ['orders.json', '[\n {"customerId ":"c1","orderId":"o1"}\n]\n'],
    ] as const) {
      const input = await inputFile(name, text);
      expect(await stopped(input)).toMatchObject({ code: 'INPUT_HEADER', file: input });
    }
  });
});

describe('what is fine is not refused', () => {
  it('--columns for a headerless file, a GSI key column absent (a sparse index), a rerun of a checkpointed load', async () => {
    const table = await newTable({ ...ORDERS, gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' } }] });
    const headerless = await inputFile('headerless.csv', 'c9,o9,5\n');
    expect((await run({ input: headerless, table, columns: ['customerId', 'orderId', 'total'] })).rejected).toBe(0);
    const input = await inputFile('orders.csv', rows(','));
    const checkpointPath = path('load.checkpoint');
    expect((await run({ input, table, checkpointPath })).written).toBe(2);
    await expect(run({ input, table, checkpointPath })).rejects.toMatchObject({ code: 'CHECKPOINT_COMPLETE' });
    expect((await rawScan(endpoint, table)).length).toBe(3);
    // A delete list with the puts' --types (a shared job file): only keys are written, nothing to refuse.
    const deletes = await inputFile('deletes.csv', 'customerId,orderId\nc9,o9\n');
    expect(await run({ input: deletes, table, delete: true, types: { total: 'N' } })).toMatchObject({ written: 1, rejected: 0 });
    expect((await rawScan(endpoint, table)).length).toBe(2);
  });

  it('--segment workers of a good file load it between them; rows that lack the key one by one are rejected, the rest loaded', async () => {
    const table = await newTable();
    const input = await inputFile('orders.csv', rows(','));
    const written =
      (await run({ input, table, segment: { index: 0, count: 2 } })).written + (await run({ input, table, segment: { index: 1, count: 2 } })).written;
    expect(written).toBe(2);
    const sparse = await inputFile('sparse.jsonl', '{"orderId":"o0"}\n{"customerId":"c3","orderId":"o3"}\n');
    const result = await run({ input: sparse, table });
    expect(result).toMatchObject({ written: 1, rejected: 1 });
    expect(await rawScan(endpoint, table)).toEqual(
      expectedScan(
        '{"customerId":{"S":"c1"},"orderId":{"S":"o1"},"total":{"S":"12.50"}}',
        '{"customerId":{"S":"c2"},"orderId":{"S":"o2"},"total":{"S":"7"}}',
        '{"customerId":{"S":"c3"},"orderId":{"S":"o3"}}',
      ),
    );
  });

  it('scan output stopped half way resumes from its checkpoint: every item stored once, the counts adding up', async () => {
    const table = await newTable();
    // Enough batches (120, one call at a time) that the load is still writing when the abort lands.
    const items = Array.from({ length: 3_000 }, (_, i) => `    {"customerId": {"S": "c${i % 7}"}, "orderId": {"S": "o${i}"}, "n": {"N": "${i}"}}`);
    const input = await inputFile('scan.json', `{\n  "Items": [\n${items.join(',\n')}\n  ],\n  "Count": 3000\n}\n`);
    const checkpointPath = path('scan.checkpoint');
    const controller = new AbortController();
    let written = 0;
    const first = await run(
      { input, table, checkpointPath, concurrency: 1, order: 'input' },
      {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'progress' && event.counters.written > 0 && ++written === 1) controller.abort();
        },
      },
    ).catch((error: unknown) => error);
    expect(first).toMatchObject({ code: 'ABORTED' });
    const second = await run({ input, table, checkpointPath, concurrency: 1, order: 'input' });
    expect(second.resumedFromBatch).toBeGreaterThan(0);
    expect(second.rowsRead).toBe(3_000);
    expect(second.rejected).toBe(0);
    const stored = await rawScan(endpoint, table);
    expect(stored.length).toBe(3_000);
  });

  it('a JSON array loads element by element; a bad element is rejected with the line it starts on', async () => {
    const table = await newTable();
    const input = await inputFile('orders.json', '[\n  {"customerId": "c1", "orderId": "o1", "total": 5},\n  {"orderId": "o2"}\n]\n');
    const result = await run({ input, table });
    expect(result).toMatchObject({ written: 1, rejected: 1, rejectedByReason: { MISSING_KEY: 1 } });
    expect(await rawScan(endpoint, table)).toEqual(expectedScan('{"customerId":{"S":"c1"},"orderId":{"S":"o1"},"total":{"N":"5"}}'));
  });
});
