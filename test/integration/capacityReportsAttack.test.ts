/**
 * Attacks on the sampled ConsumedCapacity of 18ec1e1 (src/pacing/capacityReports.ts), against DynamoDB
 * Local: deletes of large items (planned at 1 WCU) that fall only into calls that do not ask; overwrites
 * of larger items with rate control on (its cost ratio must still move); and throttling through the
 * partition proxy (UnprocessedItems answers are partial, retries are calls of their own).
 */
import { BatchWriteItemCommand, CreateTableCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load, type LoaderError, type LoadOptions } from '../../src/index.js';
import { formatSummary, summaryJson } from '../../src/reporting/summary.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';
import { startFaultProxy, faults } from '../support/faultProxy.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable, closeAfterAll, trackTable } = useLocalAws({ name: 'capattack', processCredentials: true });

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({ endpoint, region: 'us-east-1', rejectsPath: join(dir(), `a-${++runs}.rejects.jsonl`), types: { sk: 'N' }, ...options });

const BIG = 'x'.repeat(3000);
const pkOf = (i: number) => `p${String(Math.floor(i / 100)).padStart(2, '0')}`;

/** Puts a 3 KB item at each row's key, 25 to a call; returns what DynamoDB reports a delete of one of them costs. */
async function seedBigItems(table: string, rows: number[]): Promise<number> {
  for (let i = 0; i < rows.length; i += 25) {
    const requests = rows.slice(i, i + 25).map((r) => ({ PutRequest: { Item: { pk: { S: pkOf(r) }, sk: { N: String(r) }, big: { S: BIG } } } }));
    await client().send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
  }
  // A probe item of the same size, deleted with ReturnConsumedCapacity: DynamoDB's own price of such a delete.
  await client().send(
    new BatchWriteItemCommand({ RequestItems: { [table]: [{ PutRequest: { Item: { pk: { S: 'probe' }, sk: { N: '0' }, big: { S: BIG } } } }] } }),
  );
  const answer = await client().send(
    new BatchWriteItemCommand({
      RequestItems: { [table]: [{ DeleteRequest: { Key: { pk: { S: 'probe' }, sk: { N: '0' } } } }] },
      ReturnConsumedCapacity: 'INDEXES',
    }),
  );
  return answer.ConsumedCapacity?.[0]?.CapacityUnits ?? NaN;
}

/** The 0-based calls of a 120-call load (64 first, one in 16 after) that do not ask: 64..78, 80..94, ... */
const unasked = (call: number) => call >= 64 && (call - 64) % 16 !== 15;

describe('sampled ConsumedCapacity under attack', () => {
  it('deletes of 3 KB items that fall only into calls that do not ask: consumedWcu is what DynamoDB charged, not 1 WCU a delete', async () => {
    const table = await newTable(KEYS);
    // 3,000 rows, 120 calls of 25 in input order (concurrency 1): every call from 80 on that would go
    // unasked holds 25 deletes of existing 3 KB items; the calls that ask hold fresh 1-unit puts.
    const deleteRows: number[] = [];
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const call = Math.floor(i / 25);
      const del = call >= 80 && unasked(call);
      if (del) deleteRows.push(i);
      lines.push(`${pkOf(i)},${i},${del ? 'delete' : 'put'},${'v'.repeat(20)}`);
    }
    const perDelete = await seedBigItems(table, deleteRows);
    expect(perDelete).toBeGreaterThan(1); // DynamoDB charges the deleted item's size
    const input = join(dir(), 'deletes.csv');
    await writeFile(input, `pk,sk,op,payload\n${lines.join('\n')}\n`);

    const result = await run({ input, table, order: 'input', concurrency: 1, operationColumn: 'op' });
    expect(result.written).toBe(3000);
    expect(result.deleted).toBe(deleteRows.length);
    const charged = (3000 - deleteRows.length) * 1 + deleteRows.length * perDelete;
    // The documented slack is the unasked calls before the first answer that differs (at most 15, none in
    // flight at concurrency 1); 18ec1e1 counted every delete as 1 unit here and never saw one (3,000
    // consumed for 4,900 charged). A call holding a delete asks: call 80 finds the mismatch, all ask after.
    const slack = 15 * 25 * (perDelete - 1);
    expect(result.consumedWcu).toBeGreaterThanOrEqual(charged - slack);
    expect(result.consumedWcu).toBe(charged);
    expect(result.capacityReports?.everyCall).toBe(true);
    expect(formatSummary(result)).not.toContain('as every answer matched');
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(3000 - deleteRows.length);
  });

  it('overwrites of 3 KB items with rate control on: the cost ratio moves toward the 3x DynamoDB charges once every call asks', async () => {
    const table = await newTable(KEYS);
    const rows = Array.from({ length: 1000 }, (_, i) => 2000 + i);
    await seedBigItems(table, rows);
    const lines = Array.from({ length: 3000 }, (_, i) => `${pkOf(i)},${i},${'v'.repeat(20)}`);
    const input = join(dir(), 'overwrites.csv');
    await writeFile(input, `pk,sk,payload\n${lines.join('\n')}\n`);
    const result = await run({ input, table, order: 'input', concurrency: 1, wcu: 100_000 });
    expect(result.capacityReports?.everyCall).toBe(true);
    // 24 answers of 3x after the mismatch, each moving the ratio a tenth of the way: 1 + 2(1 - 0.9^24) = 2.84.
    expect(result.rate.costRatio).toBeGreaterThan(2.5);
    expect(formatSummary(result)).toMatch(/DynamoDB charged 2\.\d\dx the planned units/);
  });

  it('throttled through the partition proxy: retries of UnprocessedItems are calls of their own, partial answers match the plan, and consumed units equal planned for fresh keys', async () => {
    const table = await newTable(KEYS);
    const proxy = closeAfterAll(await startPartitionProxy(endpoint, { model: { tableWcu: 400, partitionMaxWcu: 100 } }));
    const lines = Array.from({ length: 3000 }, (_, i) => `${pkOf(i)},${i},${'v'.repeat(20)}`);
    const input = join(dir(), 'throttled.csv');
    await writeFile(input, `pk,sk,payload\n${lines.join('\n')}\n`);
    const result = await load({
      endpoint: proxy.url,
      region: 'us-east-1',
      rejectsPath: join(dir(), 'throttled.rejects.jsonl'),
      types: { sk: 'N' },
      input,
      table,
      concurrency: 4,
      wcu: 2000,
      maxAttempts: 50,
    });
    expect(result.written).toBe(3000);
    expect(result.throttledItems).toBeGreaterThan(0);
    const reports = result.capacityReports!;
    expect(reports.calls).toBe(proxy.stats().calls);
    expect(reports.calls).toBeGreaterThan(result.batches);
    expect(reports.everyCall).toBe(false);
    expect(reports.asked).toBeLessThan(reports.calls);
    expect(result.plannedWcu).toBe(3000);
    expect(result.consumedWcu).toBe(3000);
    expect(await scanAll(client(), table)).toHaveLength(3000);
  });

  it("a resumed load whose earlier run counted units as planned: the summary does not call them all DynamoDB's", async () => {
    const table = await newTable(KEYS);
    const lines = Array.from({ length: 3000 }, (_, i) => `${pkOf(i)},${i},${'v'.repeat(20)}`);
    const input = join(dir(), 'resumed.csv');
    await writeFile(input, `pk,sk,payload\n${lines.join('\n')}\n`);
    const options = { input, table, order: 'input', concurrency: 1, wcu: 300, checkpointPath: join(dir(), 'resumed.checkpoint.json') } as const;
    // The first run is stopped after some 96 calls: 30-odd of them did not ask, their units counted as planned.
    const abort = new AbortController();
    const stopped = await load(
      { endpoint, region: 'us-east-1', rejectsPath: join(dir(), 'resumed.rejects.jsonl'), types: { sk: 'N' }, ...options },
      { signal: abort.signal, onEvent: (e) => (e.type === 'progress' && e.counters.written >= 2400 ? abort.abort() : undefined) },
    ).then(
      () => undefined,
      (error: LoaderError) => error.result,
    );
    expect(stopped?.capacityReports?.inferredUnits).toBeGreaterThan(0);
    expect(stopped!.written).toBeLessThan(3000 - 25);
    const result = await load({ endpoint, region: 'us-east-1', rejectsPath: join(dir(), 'resumed.rejects.jsonl'), types: { sk: 'N' }, ...options });
    expect(result.written).toBe(3000);
    expect(result.resumedFromBatch).toBeGreaterThan(64);
    expect(result.consumedWcu).toBe(3000);
    // This run's calls all asked (fewer than 64): the summary must still say part of the units were counted then as planned.
    expect(result.capacityReports).toMatchObject({ inferredUnits: 0 });
    expect(result.capacityReports!.asked).toBe(result.capacityReports!.calls);
    const text = formatSummary(result);
    expect(text).not.toMatch(/3,000 consumed \(DynamoDB\), /);
    expect(text).toContain('3,000 consumed (DynamoDB; every unit of this run reported; the batches done before as their run counted them), 3,000 planned');
    expect(JSON.parse(summaryJson(result))).toMatchObject({
      consumedWcu: 3000,
      resumedFromBatch: result.resumedFromBatch,
      capacityReports: result.capacityReports,
    });
    // The checkpoint's sum over every done batch says the same.
    expect(JSON.parse(await readFile(options.checkpointPath, 'utf8'))).toMatchObject({ consumedWcu: 3000, plannedWcu: 3000 });
  });

  it('ValidationException halving, a revived predecessor and UnprocessedItems on unasked calls: consumed units equal planned, every call counted', async () => {
    const table = await newTable(KEYS);
    // From row 2,000 on, every tenth row's key comes again right after it (a later row superseding it), so
    // every batch there holds superseding writes whose refusal revives the earlier row.
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      lines.push(`${pkOf(i)},${i},${'v'.repeat(20)}`);
      if (i >= 2000 && i % 10 === 0) lines.push(`${pkOf(i)},${i},${'w'.repeat(20)}`);
    }
    const input = join(dir(), 'halved.csv');
    await writeFile(input, `pk,sk,payload\n${lines.join('\n')}\n`);
    // Calls 90-138 refused (a ValidationException names no row): the batch of call 90 and each of its
    // halves down to single writes (2 x 25 - 1 calls), so all its writes are rejected and the rows they
    // superseded revived, on unasked calls; calls 150 and 151 (unasked) store 10 of their writes, the rest
    // in UnprocessedItems. (A batch in flight that turns slow lets another go beside it, so which batch
    // call 90 is may vary: the counts must add up whatever it is.)
    const proxy = closeAfterAll(
      await startFaultProxy(endpoint, (index) =>
        index >= 90 && index < 139
          ? { kind: 'error', status: 400, type: 'com.amazon.coral.validate#ValidationException', message: 'One or more parameter values were invalid' }
          : index === 150 || index === 151
            ? { kind: 'unprocessed', process: 10 }
            : faults.forward(),
      ),
    );
    const result = await run({ input, table, order: 'input', concurrency: 1, endpoint: proxy.url });
    expect(result.rowsRead).toBe(lines.length);
    expect(result.written + result.superseded + result.rejected).toBe(result.rowsRead);
    expect(result.rejected).toBeGreaterThanOrEqual(1);
    expect(result.revived).toBeGreaterThanOrEqual(1);
    expect(result.rejectedByReason).toEqual({ WRITE_REJECTED: result.rejected });
    const reports = result.capacityReports!;
    expect(reports.calls).toBe(proxy.calls.length);
    expect(reports.everyCall).toBe(false);
    expect(reports.inferredUnits).toBeGreaterThan(0);
    // Fresh keys, 1 unit a write: DynamoDB charged one unit per stored write, asked or not.
    expect(result.plannedWcu).toBe(result.written);
    expect(result.consumedWcu).toBe(result.written);
    expect(await scanAll(client(), table)).toHaveLength(result.written);
  });

  it('sparse KEYS_ONLY and INCLUDE GSIs, items across KB boundaries: consumedWcu equals what DynamoDB charges for the same items put fresh', async () => {
    const create = async (name: string) => {
      await client().send(
        new CreateTableCommand({
          TableName: trackTable(name),
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'N' },
            { AttributeName: 'g', AttributeType: 'S' },
            { AttributeName: 'h', AttributeType: 'S' },
          ],
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: [
            { IndexName: 'byG', KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
            {
              IndexName: 'byH',
              KeySchema: [{ AttributeName: 'h', KeyType: 'HASH' }],
              Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['note'] },
            },
          ],
        }),
      );
      return name;
    };
    const stamp = Date.now().toString(36);
    const table = await create(`capgsi_${stamp}`);
    const twin = await create(`capgsi_twin_${stamp}`);
    // 2,400 rows: payloads of 0-2,999 bytes; g on every third row, h and a note of 0-1,499 bytes on every second.
    const lines = Array.from({ length: 2400 }, (_, i) => {
      const payload = 'p'.repeat((i * 137) % 3000);
      const g = i % 3 === 0 ? `g${i % 7}` : '';
      const h = i % 2 === 0 ? `h${i % 5}` : '';
      const note = i % 2 === 0 ? 'n'.repeat((i * 71) % 1500) : '';
      return `${pkOf(i)},${i},${payload},${g},${h},${note}`;
    });
    const input = join(dir(), 'gsi.csv');
    await writeFile(input, `pk,sk,payload,g,h,note\n${lines.join('\n')}\n`);
    const result = await run({ input, table, order: 'input', concurrency: 1 });
    expect(result.written).toBe(2400);
    // DynamoDB's own price of the same items, put fresh into the twin with every call asking.
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(2400);
    let charged = 0;
    for (let i = 0; i < items.length; i += 25) {
      const answer = await client().send(
        new BatchWriteItemCommand({
          RequestItems: { [twin]: items.slice(i, i + 25).map((item) => ({ PutRequest: { Item: item as Record<string, AttributeValue> } })) },
          ReturnConsumedCapacity: 'INDEXES',
        }),
      );
      for (const c of answer.ConsumedCapacity ?? []) charged += c.CapacityUnits ?? 0;
    }
    expect(result.consumedWcu).toBe(charged);
    // The plan is exact for these puts into fresh keys: the calls were sampled (96 calls, 66 asked) and still right.
    expect(result.capacityReports).toMatchObject({ everyCall: false });
    expect(result.capacityReports!.asked).toBeLessThan(result.capacityReports!.calls);
    expect(result.plannedWcu).toBe(charged);
  });

  it('--no-pacing samples the same way and counts the same: the summary and the JSON say how', async () => {
    const table = await newTable(KEYS);
    const lines = Array.from({ length: 3000 }, (_, i) => `${pkOf(i)},${i},${'v'.repeat(20)}`);
    const input = join(dir(), 'nopacing.csv');
    await writeFile(input, `pk,sk,payload\n${lines.join('\n')}\n`);
    const result = await run({ input, table, order: 'input', concurrency: 1, pacing: false });
    expect(result.capacityReports).toEqual({ calls: 120, asked: 67, inferredUnits: 53 * 25, everyCall: false });
    expect(result.consumedWcu).toBe(3000);
    expect(formatSummary(result)).toContain(
      '3,000 consumed (DynamoDB; reported on 67 of 120 calls, the rest as planned, as every answer matched), 3,000 planned',
    );
    expect(JSON.parse(summaryJson(result))).toMatchObject({
      consumedWcu: 3000,
      plannedWcu: 3000,
      capacityReports: { calls: 120, asked: 67, everyCall: false },
    });
  });

  it('calls throttled whole (no answer) are not counted as reported: the summary names the calls DynamoDB reported on', async () => {
    const table = await newTable(KEYS);
    const lines = Array.from({ length: 3000 }, (_, i) => `${pkOf(i)},${i},${'v'.repeat(20)}`);
    const input = join(dir(), 'throttledwhole.csv');
    await writeFile(input, `pk,sk,payload\n${lines.join('\n')}\n`);
    // Calls 0, 2, ..., 18 come back ProvisionedThroughputExceededException (nothing stored, nothing
    // reported); each batch is stored by its next call.
    const proxy = closeAfterAll(await startFaultProxy(endpoint, (index) => (index < 20 && index % 2 === 0 ? faults.throttled() : faults.forward())));
    const result = await run({ input, table, order: 'input', concurrency: 1, endpoint: proxy.url, maxAttempts: 20 });
    expect(result.written).toBe(3000);
    expect(result.consumedWcu).toBe(3000);
    // 130 calls: 0-63 ask (10 of them throttled, 54 answered), then 79, 95, 111 and 127.
    expect(proxy.calls).toHaveLength(130);
    expect(result.capacityReports).toMatchObject({ calls: 130, asked: 58, inferredUnits: 62 * 25, everyCall: false });
    expect(formatSummary(result)).toContain('3,000 consumed (DynamoDB; reported on 58 of 130 calls, the rest as planned, as every answer matched)');
  });

  it('overwrites of 3 KB items at concurrency 8 in spread order: consumedWcu misses at most the unasked calls before the mismatch and those in flight', async () => {
    const table = await newTable(KEYS);
    const rows = Array.from({ length: 1000 }, (_, i) => 2000 + i);
    await seedBigItems(table, rows);
    const lines = Array.from({ length: 3000 }, (_, i) => `${pkOf(i)},${i},${'v'.repeat(20)}`);
    const input = join(dir(), 'spread.csv');
    await writeFile(input, `pk,sk,payload\n${lines.join('\n')}\n`);
    const result = await run({ input, table, concurrency: 8 });
    expect(result.written).toBe(3000);
    const charged = 2000 + 1000 * 3;
    // Only writes of calls that did not ask can be short (2 units each: 3 charged, 1 planned), and those
    // are the up to 15 unasked calls before the asked one that differed and the ones in flight then.
    const reports = result.capacityReports!;
    expect(reports.everyCall).toBe(true);
    expect(result.consumedWcu).toBeLessThanOrEqual(charged);
    expect(result.consumedWcu).toBeGreaterThanOrEqual(charged - 2 * reports.inferredUnits);
    expect(reports.calls - reports.asked).toBeLessThanOrEqual(64);
  });
});
