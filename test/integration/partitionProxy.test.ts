/**
 * test/support/partitionProxy.ts against DynamoDB Local, through the plain AWS SDK (no retries), so what
 * is checked is what a client sees: the partition model's refusals as UnprocessedItems or as a parsed
 * ProvisionedThroughputExceededException, each fault kind, and the table's contents behind them. The
 * proxy's clock is injected, so which writes are throttled is decided by the test, not by timing.
 */
import {
  BatchWriteItemCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type AttributeValue,
  type BatchWriteItemCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTable, deleteTable, localClient, scanAll, type TableKeys } from '../support/ddb.js';
import { startPartitionProxy, type PartitionProxy, type PartitionProxyOptions } from '../support/partitionProxy.js';

const endpoint = inject('ddbEndpoint');
// A composite key whose partition key is not called "pk": the proxy must find it with DescribeTable.
const KEYS: TableKeys = { partitionKey: { name: 'customerId', type: 'S' }, sortKey: { name: 'orderId', type: 'N' } };
const THROTTLED_MESSAGE =
  'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.';

let direct: DynamoDBClient;
const tables: string[] = [];
const open: Array<{ proxy: PartitionProxy; client: DynamoDBClient }> = [];

beforeAll(() => {
  direct = localClient(endpoint);
});

afterEach(async () => {
  for (const { proxy, client } of open.splice(0)) {
    client.destroy();
    await proxy.close();
  }
});

afterAll(async () => {
  for (const table of tables) await deleteTable(direct, table).catch(() => undefined);
  direct?.destroy();
});

async function newTable(): Promise<string> {
  const table = await createTable(direct, KEYS);
  tables.push(table);
  return table;
}

/** A proxy with a hand-moved clock (starting at 0), and an SDK client through it that never retries. */
async function proxied(options: Omit<PartitionProxyOptions, 'now'>) {
  const clock = { ms: 0 };
  const proxy = await startPartitionProxy(endpoint, { now: () => clock.ms, ...options });
  const client = new DynamoDBClient({
    endpoint: proxy.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  open.push({ proxy, client });
  return { proxy, client, clock };
}

function put(customerId: string, orderId: number, extra: Record<string, AttributeValue> = {}): WriteRequest {
  return { PutRequest: { Item: { customerId: { S: customerId }, orderId: { N: String(orderId) }, ...extra } } };
}

const batch = (table: string, requests: WriteRequest[], extra: { ReturnConsumedCapacity?: 'TOTAL' | 'INDEXES' } = {}) =>
  new BatchWriteItemCommand({ RequestItems: { [table]: requests }, ...extra });

/** The error a call fails with. */
async function failure(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  const outcome = await promise.then(
    (value) => new Error(`expected the call to fail, it answered ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  expect((outcome as Error).message).not.toMatch(/^expected the call to fail/);
  return outcome as Error & Record<string, unknown>;
}

const orderIds = async (table: string): Promise<number[]> => (await scanAll(direct, table)).map((item) => Number(item['orderId']?.N)).sort((a, b) => a - b);

const httpStatus = (error: Record<string, unknown>) => (error['$metadata'] as { httpStatusCode?: number } | undefined)?.httpStatusCode;

describe('partitionProxy: throttling by the model', () => {
  it('returns over-budget writes in UnprocessedItems and writes only the accepted ones', async () => {
    const table = await newTable();
    // One partition of 10 WCU/s with 1 s of tokens at time 0.
    const { proxy, client, clock } = await proxied({ model: { tableWcu: 10, partitionMaxWcu: 10 } });
    const requests = Array.from({ length: 25 }, (_, i) => put(`c${i % 5}`, i));

    const first = await client.send(batch(table, requests));
    expect(first.UnprocessedItems?.[table]).toEqual(requests.slice(10));
    expect(await orderIds(table)).toEqual([...Array(10).keys()]);

    // Same instant: nothing left, and the 15 resent are refused again (all of them: an error, below).
    const again = await failure(client.send(batch(table, requests.slice(10))));
    expect(again.name).toBe('ProvisionedThroughputExceededException');

    // One second later the partition has 10 WCU again.
    clock.ms = 1000;
    const second = await client.send(batch(table, requests.slice(10)));
    expect(second.UnprocessedItems?.[table]).toEqual(requests.slice(20));
    expect(await orderIds(table)).toEqual([...Array(20).keys()]);

    const stats = proxy.stats();
    expect(stats).toMatchObject({ calls: 3, acceptedItems: 20, throttledItems: 15 + 15 + 5, throttledCalls: 1 });
    const model = stats.tables[table]!;
    expect(model.partitions).toBe(1);
    expect(model.perSecond.map((s) => s.acceptedWcu[0])).toEqual([10, 10]);
    expect(model.perSecond.map((s) => s.throttledWcu[0])).toEqual([30, 5]);
  });

  it('charges each put its write units by DynamoDB size rules (binary counted as bytes, not base64)', async () => {
    const table = await newTable();
    const { client } = await proxied({ model: { tableWcu: 10, partitionMaxWcu: 10 } });
    // 2,900 raw bytes (+ names and key) is 3 WCU; its base64 text (3,868 chars) would be 4.
    const blob = { blob: { B: new Uint8Array(2900).fill(7) } };
    const requests = [put('a', 1, blob), put('b', 2, blob), put('c', 3, blob), put('d', 4, blob), put('e', 5)];
    const result = await client.send(batch(table, requests));
    // 3 + 3 + 3 = 9 of 10 WCU; the fourth 3 WCU item does not fit, the 1 WCU item after it does.
    expect(result.UnprocessedItems?.[table]?.map((r) => r.PutRequest?.Item?.['orderId'])).toEqual([{ N: '4' }]);
    expect(await orderIds(table)).toEqual([1, 2, 3, 5]);
  });

  it('fails an all-throttled call with a ProvisionedThroughputExceededException the SDK parses (partition scope)', async () => {
    const table = await newTable();
    const { proxy, client } = await proxied({ model: { tableWcu: 4, partitionMaxWcu: 10, initialSeconds: 1 } });
    await client.send(batch(table, [put('hot', 1), put('hot', 2), put('hot', 3), put('hot', 4)]));

    const error = await failure(client.send(batch(table, [put('hot', 5), put('hot', 6)])));
    expect(error.name).toBe('ProvisionedThroughputExceededException');
    expect(error.message).toBe(THROTTLED_MESSAGE);
    expect(httpStatus(error)).toBe(400);
    expect(error['ThrottlingReasons']).toEqual([
      { reason: 'TableWriteKeyRangeThroughputExceeded', resource: `arn:aws:dynamodb:us-east-1:000000000000:table/${table}` },
    ]);
    expect(await orderIds(table)).toEqual([1, 2, 3, 4]);
    expect(proxy.stats()).toMatchObject({ acceptedItems: 4, throttledItems: 2, throttledCalls: 1 });
  });

  it('names the table limit when the table bucket refused (adaptive capacity)', async () => {
    const table = await newTable();
    const { proxy, client } = await proxied({ model: { tableWcu: 3, partitionMaxWcu: 100, partitions: 4, adaptiveCapacity: true } });
    const first = await client.send(batch(table, [put('a', 1), put('b', 2), put('c', 3), put('d', 4)]));
    expect(first.UnprocessedItems?.[table]).toHaveLength(1);

    const error = await failure(client.send(batch(table, [put('e', 5)])));
    expect(error.name).toBe('ProvisionedThroughputExceededException');
    expect(error['ThrottlingReasons']).toEqual([
      { reason: 'TableWriteProvisionedThroughputExceeded', resource: `arn:aws:dynamodb:us-east-1:000000000000:table/${table}` },
    ]);
    expect(proxy.stats().tables[table]!.throttledByScope).toEqual({ partition: { items: 0, wcu: 0 }, table: { items: 2, wcu: 2 } });
  });

  it('still returns ConsumedCapacity for the accepted items when asked', async () => {
    const table = await newTable();
    const { client } = await proxied({ model: { tableWcu: 3, partitionMaxWcu: 10 } });
    const requests = Array.from({ length: 5 }, (_, i) => put('x', i));
    const result: BatchWriteItemCommandOutput = await client.send(batch(table, requests, { ReturnConsumedCapacity: 'TOTAL' }));
    expect(result.UnprocessedItems?.[table]).toHaveLength(2);
    expect(result.ConsumedCapacity).toEqual([expect.objectContaining({ TableName: table, CapacityUnits: 3 })]);
  });

  it('passes every other call through unchanged and spends no capacity on it', async () => {
    const table = await newTable();
    const { proxy, client } = await proxied({ model: { tableWcu: 1, partitionMaxWcu: 10 }, partitionKeyName: 'customerId' });
    for (let i = 0; i < 5; i++) await client.send(new PutItemCommand({ TableName: table, Item: { customerId: { S: 'p' }, orderId: { N: String(i) } } }));
    const got = await client.send(new GetItemCommand({ TableName: table, Key: { customerId: { S: 'p' }, orderId: { N: '3' } }, ConsistentRead: true }));
    expect(got.Item).toEqual({ customerId: { S: 'p' }, orderId: { N: '3' } });
    const described = await client.send(new DescribeTableCommand({ TableName: table }));
    expect(described.Table?.TableName).toBe(table);
    // The model's one token is still there for a BatchWriteItem.
    expect((await client.send(batch(table, [put('p', 10)]))).UnprocessedItems ?? {}).toEqual({});
    expect(proxy.stats()).toMatchObject({ calls: 1, otherCalls: 7, acceptedItems: 1, throttledItems: 0 });
  });

  it("passes Local's own errors through for a call it cannot plan (unknown table)", async () => {
    const { proxy, client } = await proxied({ model: { tableWcu: 10 } });
    const error = await failure(client.send(batch('no_such_table_here', [put('a', 1)])));
    expect(error.name).toBe('ResourceNotFoundException');
    expect(proxy.stats().throttledItems).toBe(0);
  });
});

describe('partitionProxy: faults', () => {
  it('answers each fault kind the way DynamoDB would, and writes nothing for the failed ones', async () => {
    const table = await newTable();
    const { proxy, client } = await proxied({ model: { tableWcu: 1000, partitionMaxWcu: 1000 }, faults: { internal: 1 } });

    const internal = await failure(client.send(batch(table, [put('a', 1)])));
    expect(internal.name).toBe('InternalServerError');
    expect(httpStatus(internal)).toBe(500);

    proxy.setFaults({ unavailable: 1 });
    const unavailable = await failure(client.send(batch(table, [put('a', 2)])));
    expect(unavailable.name).toBe('ServiceUnavailableException');
    expect(httpStatus(unavailable)).toBe(503);

    proxy.setFaults({ throttling: 1 });
    const throttling = await failure(client.send(batch(table, [put('a', 3)])));
    expect(throttling.name).toBe('ThrottlingException');
    expect(httpStatus(throttling)).toBe(400);

    proxy.setFaults({ drop: 1 });
    const dropped = await failure(client.send(batch(table, [put('a', 4)])));
    expect(`${String(dropped['code'])} ${dropped.message}`).toMatch(/ECONNRESET|socket hang up|EPIPE/);
    expect(httpStatus(dropped)).toBeUndefined();

    expect(await orderIds(table)).toEqual([]);
    // Faulted calls spent no capacity.
    expect(proxy.model(table)).toBeUndefined();

    // A lost reply: the write happened, the client got a socket error.
    proxy.setFaults({ lostReply: 1 });
    const lost = await failure(client.send(batch(table, [put('a', 5), put('a', 6)])));
    expect(`${String(lost['code'])} ${lost.message}`).toMatch(/ECONNRESET|socket hang up|EPIPE/);
    expect(await orderIds(table)).toEqual([5, 6]);
    expect(proxy.stats().tables[table]?.acceptedItems).toBe(2);

    proxy.setFaults({});
    await client.send(batch(table, [put('a', 7)]));
    expect(await orderIds(table)).toEqual([5, 6, 7]);
    expect(proxy.stats()).toMatchObject({
      calls: 6,
      acceptedItems: 3,
      faults: { internal: 1, unavailable: 1, throttling: 1, drop: 1, lostReply: 1, slow: 0 },
    });
  });

  it('delays a slow reply and still answers it', async () => {
    const table = await newTable();
    // Held 1.5 s: a call that is not held stays under that on any machine (at 300 ms, a one-item call
    // on a busy machine could take as long as the held one and fail the second bound).
    const { proxy, client } = await proxied({ model: { tableWcu: 100 }, faults: { slow: { rate: 1, ms: 1500 } } });
    const started = performance.now();
    await client.send(batch(table, [put('s', 1)]));
    expect(performance.now() - started).toBeGreaterThanOrEqual(1490);
    expect(await orderIds(table)).toEqual([1]);
    proxy.setFaults({});
    const quick = performance.now();
    await client.send(batch(table, [put('s', 2)]));
    expect(performance.now() - quick).toBeLessThan(1490);
    expect(proxy.stats().faults.slow).toBe(1);
  });

  it('picks faults with the seeded PRNG: the same seed gives the same sequence', async () => {
    const table = await newTable();
    const outcomes = async (seed: number) => {
      const { client } = await proxied({ model: { tableWcu: 10_000 }, seed, faults: { internal: 0.3, throttling: 0.3 } });
      const seen: string[] = [];
      for (let i = 0; i < 16; i++) {
        seen.push(
          await client.send(batch(table, [put('seq', i)])).then(
            () => 'ok',
            (e: Error) => e.name,
          ),
        );
      }
      return seen;
    };
    const a = await outcomes(42);
    expect(await outcomes(42)).toEqual(a);
    expect(new Set(a)).toEqual(new Set(['ok', 'InternalServerError', 'ThrottlingException']));
    expect(await outcomes(43)).not.toEqual(a);
  });

  it('rejects impossible fault rates', async () => {
    await expect(startPartitionProxy(endpoint, { model: { tableWcu: 1 }, faults: { internal: 0.6, drop: 0.6 } })).rejects.toThrow(RangeError);
    await expect(startPartitionProxy(endpoint, { model: { tableWcu: 1 }, faults: { slow: { rate: 2, ms: 1 } } })).rejects.toThrow(RangeError);
    await expect(startPartitionProxy(endpoint, { model: { tableWcu: 0 } })).rejects.toThrow(RangeError);
  });
});
