/**
 * describeTable() and the write-cost model against the real DynamoDB Local: the TableInfo of a provisioned
 * table with GSIs, and writeCostOf compared with the ConsumedCapacity Local reports per index
 * (ReturnConsumedCapacity INDEXES). Local reports whole units and applies the same rules as the
 * developer guide: per-item 1 KB rounding, sparse indexes cost nothing, a moved index key costs 2.
 */
import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, NumberValue, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LoaderError } from '../../src/shared/errors.js';
import { itemSize } from '../../src/typing/itemSize.js';
import type { TableInfo } from '../../src/shared/tableInfo.js';
import type { Item } from '../../src/shared/types.js';
import { consumedFromResponse, writeCostOf, type WriteCost } from '../../src/pacing/writeCost.js';
import { describeKeySchema } from '../../src/aws/describeKeySchema.js';
import { describeTable } from '../../src/aws/describeTable.js';
import { createTable, deleteTable, localClient } from '../support/ddb.js';

const endpoint = inject('ddbEndpoint');
const n = (text: string) => new NumberValue(text);
const x = (length: number) => 'x'.repeat(length);

let client: DynamoDBClient;
let doc: DynamoDBDocumentClient;
let table: string;
const tables: string[] = [];

/** A PROVISIONED table (50 RCU / 40 WCU) with a KEYS_ONLY, an INCLUDE and an ALL GSI. */
async function createIndexedTable(): Promise<string> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PROVISIONED',
      ProvisionedThroughput: { ReadCapacityUnits: 50, WriteCapacityUnits: 40 },
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'N' },
        { AttributeName: 'g1', AttributeType: 'S' },
        { AttributeName: 'g2', AttributeType: 'S' },
        { AttributeName: 'g2s', AttributeType: 'N' },
        { AttributeName: 'g3', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byG1',
          KeySchema: [{ AttributeName: 'g1', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
          ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 7 },
        },
        {
          IndexName: 'byG2',
          KeySchema: [
            { AttributeName: 'g2', KeyType: 'HASH' },
            { AttributeName: 'g2s', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['a', 'b'] },
          ProvisionedThroughput: { ReadCapacityUnits: 6, WriteCapacityUnits: 8 },
        },
        {
          IndexName: 'byG3',
          KeySchema: [{ AttributeName: 'g3', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
          ProvisionedThroughput: { ReadCapacityUnits: 3, WriteCapacityUnits: 4 },
        },
      ],
    }),
  );
  tables.push(name);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await client.send(new DescribeTableCommand({ TableName: name }));
    const indexesActive = (res.Table?.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE');
    if (res.Table?.TableStatus === 'ACTIVE' && indexesActive) return name;
    if (Date.now() > deadline) throw new Error(`table ${name} not ACTIVE after 30 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  client = localClient(endpoint);
  doc = DynamoDBDocumentClient.from(client, { unmarshallOptions: { wrapNumbers: true } });
  table = await createIndexedTable();
});

afterAll(async () => {
  for (const name of tables) await deleteTable(client, name).catch(() => undefined);
  client?.destroy();
});

const byName = (info: TableInfo) => ({ ...info, gsis: [...info.gsis].sort((a, b) => a.name.localeCompare(b.name)) });

describe('describeTable', () => {
  it('reads a provisioned table with GSIs (Local: no BillingModeSummary, no warm throughput)', async () => {
    const info = await describeTable(doc, { table, endpoint });
    expect(byName(info)).toEqual({
      name: table,
      keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } },
      billingMode: 'PROVISIONED',
      provisionedRcu: 50,
      provisionedWcu: 40,
      itemCount: expect.any(Number),
      sizeBytes: expect.any(Number),
      // Which table of that name (DynamoDB Local gives no TableId, so its creation time): a checkpoint of another is refused.
      identity: expect.stringMatching(/^created \d{4}-\d\d-\d\dT[\d:.]+Z$/),
      gsis: [
        { name: 'byG1', partitionKey: { name: 'g1', type: 'S' }, projection: 'KEYS_ONLY', nonKeyAttributes: [], provisionedWcu: 7, status: 'ACTIVE' },
        {
          name: 'byG2',
          partitionKey: { name: 'g2', type: 'S' },
          sortKey: { name: 'g2s', type: 'N' },
          projection: 'INCLUDE',
          nonKeyAttributes: ['a', 'b'],
          provisionedWcu: 8,
          status: 'ACTIVE',
        },
        { name: 'byG3', partitionKey: { name: 'g3', type: 'S' }, projection: 'ALL', nonKeyAttributes: [], provisionedWcu: 4, status: 'ACTIVE' },
      ],
    });
  });

  it('reads an on-demand table without GSIs', async () => {
    const name = await createTable(client, { partitionKey: { name: 'id', type: 'B' } });
    tables.push(name);
    const info = await describeTable(doc, { table: name, endpoint });
    expect(info).toMatchObject({ name, keySchema: { partitionKey: { name: 'id', type: 'B' } }, billingMode: 'PAY_PER_REQUEST', gsis: [] });
    expect(info.provisionedWcu).toBeUndefined();
    expect(info.keySchema.sortKey).toBeUndefined();
  });

  it('a missing table is TABLE_NOT_FOUND', async () => {
    const error = await describeTable(doc, { table: 'no_such_table', endpoint }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoaderError);
    expect(error).toMatchObject({ code: 'TABLE_NOT_FOUND', table: 'no_such_table' });
  });

  it('a call cut short by the load being stopped (SIGINT before the first write) is ABORTED, not an AWS error', async () => {
    const error = await describeTable(doc, { table, endpoint }, AbortSignal.abort()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoaderError);
    expect(error).toMatchObject({ code: 'ABORTED' });
  });

  it('describeKeySchema still returns the key schema', async () => {
    expect(await describeKeySchema(doc, { table, endpoint })).toEqual({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
  });
});

describe('writeCostOf agrees with the ConsumedCapacity DynamoDB Local reports', () => {
  let info: TableInfo;
  let seq = 0;
  // A fresh key per put: writeCostOf assumes a new item, as in a bulk load.
  const key = (): Item => ({ pk: `p${++seq}`, sk: n('1') });
  /** `base` plus attribute `name` filled so that `projected(item)` is exactly `bytes` long. */
  const filled = (base: Item, name: string, bytes: number, projected: (item: Item) => Item = (item) => item): Item => ({
    ...base,
    [name]: x(bytes - itemSize(projected({ ...base, [name]: '' }))),
  });
  const inG2 = (item: Item): Item => ({ pk: item['pk'], sk: item['sk'], g2: item['g2'], g2s: item['g2s'], a: item['a'], b: item['b'] });

  beforeAll(async () => {
    info = await describeTable(doc, { table, endpoint });
  });

  const cases: [string, (k: Item) => Item][] = [
    ['keys only', (k) => k],
    ['KEYS_ONLY index, large non-key attribute', (k) => ({ ...k, g1: 'k', c: x(3000) })],
    ['sparse: INCLUDE index without its sort key', (k) => ({ ...k, g2: 'q', a: x(500) })],
    ['INCLUDE entry of exactly 1024 bytes', (k) => filled({ ...k, g2: 'q', g2s: n('5'), c: x(2000) }, 'a', 1024, inG2)],
    ['INCLUDE entry of 1025 bytes', (k) => filled({ ...k, g2: 'q', g2s: n('5'), c: x(2000) }, 'a', 1025, inG2)],
    ['INCLUDE with both projected attributes', (k) => ({ ...k, g2: 'q', g2s: n('5'), a: x(700), b: x(700), c: x(100) })],
    ['table item of exactly 1024 bytes', (k) => filled(k, 'c', 1024)],
    ['table item of 1025 bytes', (k) => filled(k, 'c', 1025)],
    ['ALL entry of exactly 1024 bytes', (k) => filled({ ...k, g3: 'r' }, 'c', 1024)],
    ['ALL entry of 1025 bytes', (k) => filled({ ...k, g3: 'r' }, 'c', 1025)],
    ['ALL index: the whole item', (k) => ({ ...k, g3: 'r', c: x(2100) })],
    ['all three GSIs', (k) => ({ ...k, g1: 'k', g2: 'q', g2s: n('7'), g3: 'r', a: x(1500), c: x(1500), n: n('123.45'), m: { l: [true, null] } })],
  ];

  it('the boundary items have the sizes they are named after', () => {
    const k = { pk: 'p0', sk: n('1') };
    expect(itemSize(inG2(filled({ ...k, g2: 'q', g2s: n('5'), c: x(2000) }, 'a', 1024, inG2)))).toBe(1024);
    expect(itemSize(filled(k, 'c', 1025))).toBe(1025);
  });

  it.each(cases)('PutItem: %s', async (_label, build) => {
    const item = build(key());
    const res = await doc.send(new PutCommand({ TableName: table, Item: item, ReturnConsumedCapacity: 'INDEXES' }));
    const reported = consumedFromResponse(res.ConsumedCapacity ? [res.ConsumedCapacity] : undefined, table);
    expect(writeCostOf(item, itemSize(item), info)).toEqual(reported);
  });

  it('BatchWriteItem: the sum over a batch', async () => {
    const items = cases.map(([, build]) => build(key()));
    const res = await doc.send(
      new BatchWriteCommand({ RequestItems: { [table]: items.map((Item) => ({ PutRequest: { Item } })) }, ReturnConsumedCapacity: 'INDEXES' }),
    );
    expect(res.UnprocessedItems?.[table] ?? []).toHaveLength(0);
    const expected: WriteCost = { table: 0, indexes: {}, total: 0 };
    for (const item of items) {
      const cost = writeCostOf(item, itemSize(item), info);
      expected.table += cost.table;
      expected.total += cost.total;
      for (const [name, units] of Object.entries(cost.indexes)) expected.indexes[name] = (expected.indexes[name] ?? 0) + units;
    }
    expect(consumedFromResponse(res.ConsumedCapacity, table)).toEqual(expected);
  });

  // Outside writeCostOf's new-item assumption, recorded so the rules it documents stay checked.
  it('an overwrite that moves an index key costs 2 in that index, and nothing where the entry is unchanged', async () => {
    const k = key();
    const first: Item = { ...k, g1: 'before', g2: 'q', g2s: n('5'), a: x(10) };
    await doc.send(new PutCommand({ TableName: table, Item: first }));
    const second: Item = { ...first, g1: 'after' };
    const res = await doc.send(new PutCommand({ TableName: table, Item: second, ReturnConsumedCapacity: 'INDEXES' }));
    expect(consumedFromResponse(res.ConsumedCapacity ? [res.ConsumedCapacity] : undefined, table)).toEqual({ table: 1, indexes: { byG1: 2 }, total: 3 });
    // The new-item estimate: 1 in each index the item is in.
    expect(writeCostOf(second, itemSize(second), info)).toEqual({ table: 1, indexes: { byG1: 1, byG2: 1 }, total: 3 });
  });
});
