/**
 * Rows `cust1,order1,shipped` then `cust1,order1,404` where DynamoDB refuses the second. The
 * batcher lets the second supersede the first; when DynamoDB then refuses it, the first must be written in
 * its place, so the table ends as writing the rows one by one in input order would leave it, and the
 * reject file and the counters say what happened. Against DynamoDB Local, with a real GSI, and through
 * the fault proxy for refusals nothing could predict.
 */
import { describe, expect, it } from 'vitest';
import { load, type LoadResult } from '../../src/index.js';
import { formatSummary } from '../../src/reporting/summary.js';
import { scanAll } from '../support/ddb.js';
import { dynamoErrors } from '../support/httpForward.js';
import { faults, startFaultProxy, type FaultPolicy } from '../support/faultProxy.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad, type LocalLoadOptions } from '../support/localLoad.js';
import { readRejects, readRejectsIfAny, type RejectRecord } from '../support/rejects.js';

const aws = useLocalAws({ name: 'superseded', processCredentials: true });
const { endpoint, client, newTable, closeAfterAll } = aws;
const loads = localLoad(aws);

const jsonl = (rows: object[]) => loads.inputFile('rows.jsonl', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

async function run(options: Omit<LocalLoadOptions, 'rejectsPath'>): Promise<{ result: LoadResult; rejects: RejectRecord[] }> {
  const rejectsPath = loads.path('run.rejects.jsonl');
  const result = await loads.run({ ...options, rejectsPath });
  return { result, rejects: await readRejectsIfAny(rejectsPath) };
}

const plainRows = async (table: string) =>
  (await scanAll(client(), table))
    .map((item) => Object.fromEntries(Object.entries(item).map(([k, v]) => [k, v.S ?? v.N])))
    .sort((a, b) => String(a['cust']).localeCompare(String(b['cust'])));

describe('a superseded row whose successor DynamoDB refuses', () => {
  it('GSI key of the wrong type: rejected in planning naming the field; the earlier row is stored', async () => {
    const table = await newTable({
      partitionKey: { name: 'cust', type: 'S' },
      sortKey: { name: 'order', type: 'S' },
      gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' } }],
    });
    const input = await jsonl([
      { cust: 'cust1', order: 'order1', status: 'shipped' },
      { cust: 'cust1', order: 'order1', status: 404 },
      { cust: 'cust2', order: 'order1', status: 'new' },
    ]);
    const { result, rejects } = await run({ table, input, order: 'input' });
    expect(await plainRows(table)).toEqual([
      { cust: 'cust1', order: 'order1', status: 'shipped' },
      { cust: 'cust2', order: 'order1', status: 'new' },
    ]);
    expect(rejects.map((r) => [r.line, r.code, r.field])).toEqual([[2, 'KEY_TYPE_MISMATCH', 'status']]);
    expect(rejects[0]!.message).toContain('byStatus');
    expect({ read: result.rowsRead, written: result.written, superseded: result.superseded, rejected: result.rejected }).toEqual({
      read: 3,
      written: 2,
      superseded: 0,
      rejected: 1,
    });
  });

  const pkTable = () => newTable({ partitionKey: { name: 'cust', type: 'S' } });
  const rows = [
    { cust: 'a', status: 'first' },
    { cust: 'b', status: 'other' },
    { cust: 'a', status: 'second' },
    { cust: 'a', status: 'third' },
  ];

  it("a ValidationException nothing predicted: the row superseded last is written in the refused row's place", async () => {
    const table = await pkTable();
    // One batch of two requests, [a@4 (in a@1's place), b@2]: the call and its first half are refused.
    const validation: FaultPolicy = (index) =>
      index === 0 || index === 1
        ? { kind: 'error', status: 400, type: 'com.amazon.coral.validate#ValidationException', message: 'One or more parameter values were invalid' }
        : faults.forward();
    const proxy = closeAfterAll(await startFaultProxy(endpoint, validation));
    const { result, rejects } = await run({ table, input: await jsonl(rows), order: 'input', endpoint: proxy.url });
    // Call 0: [a@4, b] refused and halved; call 1: a@4 refused; call 2: b stored; call 3: a@3, revived, stored.
    expect(await plainRows(table)).toEqual([
      { cust: 'a', status: 'second' },
      { cust: 'b', status: 'other' },
    ]);
    expect(rejects.map((r) => [r.line, r.code])).toEqual([[4, 'WRITE_REJECTED']]);
    expect({ written: result.written, superseded: result.superseded, rejected: result.rejected, revived: result.revived }).toEqual({
      written: 2,
      superseded: 1,
      rejected: 1,
      revived: 1,
    });
    expect(result.written + result.superseded + result.rejected).toBe(result.rowsRead);
    expect(formatSummary(result)).toMatch(/revived\s+1 /);
  });

  it('RETRIES_EXHAUSTED on the survivor: the earlier row lands, as it would have one by one', async () => {
    const table = await pkTable();
    // Throttled: a 500 is the endpoint's failure, which never makes a reject.
    const proxy = closeAfterAll(
      await startFaultProxy(endpoint, (index) => (index < 2 ? { kind: 'error', ...dynamoErrors.provisionedThroughputExceeded } : faults.forward())),
    );
    const input = await jsonl([
      { cust: 'a', status: 'first' },
      { cust: 'a', status: 'second' },
    ]);
    const { result, rejects } = await run({ table, input, order: 'input', endpoint: proxy.url, maxAttempts: 2, pacing: false });
    expect(await plainRows(table)).toEqual([{ cust: 'a', status: 'first' }]);
    expect(rejects.map((r) => [r.line, r.code])).toEqual([[2, 'RETRIES_EXHAUSTED']]);
    expect({ written: result.written, superseded: result.superseded, rejected: result.rejected }).toEqual({ written: 1, superseded: 0, rejected: 1 });
  });
});

describe('revived rows across a resume', () => {
  it('a resumed load does not count the revived row as superseded again: the counts add up', async () => {
    const table = await newTable({ partitionKey: { name: 'cust', type: 'S' } });
    // Batch 0: a@1 superseded by a@2 (refused, a@1 revived) plus 24 other keys; then 8 more batches.
    const rows: object[] = [
      { cust: 'a', status: 'first' },
      { cust: 'a', status: 'second' },
    ];
    for (let i = 0; i < 224; i++) rows.push({ cust: `k${String(i).padStart(3, '0')}`, status: 'x' });
    const input = await jsonl(rows);
    const checkpointPath = loads.path('resume.checkpoint.json');
    const rejectsPath = loads.path('resume.rejects.jsonl');
    // Batch 0's call and the halves holding a@2 are refused (calls 0-5: 25, 13, 7, 4, 2 writes, then a@2
    // alone); calls 6-10 store the other halves and call 11 the revived a@1. The load is stopped when
    // the next batch arrives (call 12), so the resume starts after batch 0 at least.
    const stop = new AbortController();
    const proxy = closeAfterAll(
      await startFaultProxy(endpoint, (index) => {
        if (index >= 12) stop.abort();
        return index <= 5
          ? { kind: 'error', status: 400, type: 'com.amazon.coral.validate#ValidationException', message: 'One or more parameter values were invalid' }
          : faults.forward();
      }),
    );
    const first = await load(
      { endpoint: proxy.url, region: 'us-east-1', table, input, rejectsPath, checkpointPath, order: 'input', concurrency: 1 },
      { random: () => 0, signal: stop.signal },
    ).then(
      () => undefined,
      (error: { result?: LoadResult }) => error.result,
    );
    expect(first?.revived).toBe(1);
    const resumed = await load(
      { endpoint, region: 'us-east-1', table, input, rejectsPath, checkpointPath, order: 'input', concurrency: 1 },
      { random: () => 0 },
    );
    expect(first!.rowsRead).toBeLessThan(226);
    expect(resumed.resumedFromBatch).toBeGreaterThanOrEqual(1);
    expect({
      rowsRead: resumed.rowsRead,
      written: resumed.written,
      superseded: resumed.superseded,
      rejected: resumed.rejected,
      revived: resumed.revived,
    }).toEqual({ rowsRead: 226, written: 225, superseded: 0, rejected: 1, revived: 1 });
    expect(await plainRows(table)).toContainEqual({ cust: 'a', status: 'first' });
    expect(await plainRows(table)).toHaveLength(225);
  });
});

describe('a revived row that DynamoDB refuses too, across a resume', () => {
  // The revived predecessor is not in its batch's writes, so a resume skipping the
  // batch must still put its write reject back in the reject file (and count it).
  it('the resumed reject file holds both refused rows once, and the counts add up', async () => {
    const table = await newTable({ partitionKey: { name: 'cust', type: 'S' } });
    const rows: object[] = [
      { cust: 'a', status: 'first' },
      { cust: 'a', status: 'second' },
    ];
    for (let i = 0; i < 224; i++) rows.push({ cust: `k${String(i).padStart(3, '0')}`, status: 'x' });
    const input = await jsonl(rows);
    const checkpointPath = loads.path('resume.checkpoint.json');
    const rejectsPath = loads.path('resume.rejects.jsonl');
    // As above, and call 11 (the revived a@1 alone) is refused as well: both rows of key a are rejected.
    const stop = new AbortController();
    const proxy = closeAfterAll(
      await startFaultProxy(endpoint, (index) => {
        if (index >= 12) stop.abort();
        return index <= 5 || index === 11
          ? { kind: 'error', status: 400, type: 'com.amazon.coral.validate#ValidationException', message: 'One or more parameter values were invalid' }
          : faults.forward();
      }),
    );
    const first = await load(
      { endpoint: proxy.url, region: 'us-east-1', table, input, rejectsPath, checkpointPath, order: 'input', concurrency: 1 },
      { random: () => 0, signal: stop.signal },
    ).then(
      () => undefined,
      (error: { result?: LoadResult }) => error.result,
    );
    expect(first?.revived).toBe(1);
    expect(first?.rejected).toBe(2);
    const resumed = await load(
      { endpoint, region: 'us-east-1', table, input, rejectsPath, checkpointPath, order: 'input', concurrency: 1 },
      { random: () => 0 },
    ).catch((error: { message: string; result?: LoadResult }) => {
      throw new Error(`resume failed: ${error.message}`);
    });
    expect(resumed.resumedFromBatch).toBeGreaterThanOrEqual(1);
    expect({ rowsRead: resumed.rowsRead, written: resumed.written, superseded: resumed.superseded, rejected: resumed.rejected }).toEqual({
      rowsRead: 226,
      written: 224,
      superseded: 0,
      rejected: 2,
    });
    const lines = (await readRejects(rejectsPath)).map((r) => r.line).sort((x, y) => x - y);
    expect(lines).toEqual([1, 2]);
    expect((await plainRows(table)).some((row) => row['cust'] === 'a')).toBe(false);
  });
});
