/**
 * Holes found reviewing conditional writes (--if-not-exists, --if-newer, --condition), each a real load into
 * DynamoDB Local: a delete whose reply the partition proxy lost must count as written, not conditionFailed; a
 * PutItem refused with TransactionConflictException (a proxy answering as DynamoDB does) is resent, not a fatal
 * stop; and --if-newer on an untyped CSV column must not compare numbers as text and overwrite a newer item.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { startPartitionProxy } from '../support/partitionProxy.js';
import { createForwarder, errorBody, ownHeaders, reply, startProxyServer, TARGET_PREFIX } from '../support/httpForward.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };

const aws = useLocalAws({ name: 'conditional-holes', processCredentials: true });
const { client, newTable, endpoint } = aws;
const { inputFile, run } = localLoad(aws);

describe('conditional writes under lost replies', () => {
  it('deletes under --condition attribute_exists: a delete whose reply was lost is written (deleted), not conditionFailed', async () => {
    const table = await newTable(KEYS);
    const N = 40;
    for (let k = 0; k < N; k++) await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: `k${k}` }, v: { S: 'old' } } }));
    const input = await inputFile('deletes.csv', `pk,op\n${Array.from({ length: N }, (_, k) => `k${k},delete`).join('\n')}\n`);
    const proxy = await startPartitionProxy(endpoint, {
      model: { tableWcu: 1_000_000 },
      partitionKeyName: 'pk',
      singleWriteFaults: true,
      seed: 7,
      faults: { lostReply: 0.5 },
    });
    try {
      const result = await run({
        input,
        table,
        endpoint: proxy.url,
        operationColumn: 'op',
        conditionExpression: 'attribute_exists(#p)',
        conditionNames: { '#p': 'pk' },
        maxAttempts: 100,
      });
      expect(proxy.stats().faults.lostReply).toBeGreaterThan(0);
      // Every item existed when its delete was first sent, and every delete went through: none failed its condition.
      expect(await scanAll(client(), table)).toEqual([]);
      expect(result).toMatchObject({ rowsRead: N, written: N, deleted: N, conditionFailed: 0, rejected: 0, notWritten: 0, complete: true });
    } finally {
      await proxy.close();
    }
  });
});

describe('conditional writes meeting a transaction', () => {
  it("a PutItem refused with TransactionConflictException (the item is in another writer's transaction) is resent, not a fatal stop", async () => {
    const table = await newTable(KEYS);
    const N = 30;
    const input = await inputFile('rows.csv', `pk,v\n${Array.from({ length: N }, (_, k) => `k${k},new`).join('\n')}\n`);
    // Every key's first PutItem meets a transaction on its item (400, as DynamoDB answers it); its next one goes through.
    const upstream = createForwarder(endpoint);
    const seen = new Set<string>();
    let conflicts = 0;
    const server = await startProxyServer('transactionConflict', async (req, res, body) => {
      if (req.headers['x-amz-target'] === `${TARGET_PREFIX}PutItem`) {
        const key = (JSON.parse(body.toString('utf8')) as { Item: { pk: { S: string } } }).Item.pk.S;
        if (!seen.has(key)) {
          seen.add(key);
          conflicts++;
          const type = 'com.amazonaws.dynamodb.v20120810#TransactionConflictException';
          return reply(res, 400, ownHeaders(`CONFLICT${conflicts}`), errorBody(type, 'Transaction is ongoing for the item'));
        }
      }
      const answer = await upstream.forward(req, body);
      return reply(res, answer.status, answer.headers, answer.body);
    });
    try {
      const result = await run({ input, table, endpoint: server.url, ifNotExists: true, maxAttempts: 5 });
      expect(conflicts).toBe(N);
      expect(result).toMatchObject({ rowsRead: N, written: N, conditionFailed: 0, rejected: 0, notWritten: 0, complete: true });
      expect((await scanAll(client(), table)).length).toBe(N);
    } finally {
      await server.close();
      upstream.close();
    }
  });
});

describe('--if-newer on an untyped CSV column', () => {
  it('numbers read as text would compare as text ("9" after "10") and overwrite a newer item: such rows are rejected before any write', async () => {
    const table = await newTable(KEYS);
    // The stored item of a earlier load of the same untyped CSV: version "10", as text.
    await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'a' }, v: { S: 'newer' }, ver: { S: '10' } } }));
    const input = await inputFile('rows.csv', 'pk,v,ver\na,older,9\nb,fresh,3\nc,dated,2026-01-01T00:00:00Z\n');
    const result = await run({ input, table, ifNewer: 'ver' });
    const items = new Map((await scanAll(client(), table)).map((i) => [i.pk!.S!, i.v!.S!]));
    expect(items.get('a')).toBe('newer');
    expect(items.has('b')).toBe(false);
    // A text that is no number (an ISO time) compares as text, as the docs say: written.
    expect(items.get('c')).toBe('dated');
    expect(result).toMatchObject({ rowsRead: 3, written: 1, rejected: 2, conditionFailed: 0, rejectedByReason: { IF_NEWER_VALUE: 2 } });
    // Typed, the numbers compare as numbers (a Number row against the stored text: not newer, kept), or as text on purpose.
    const numbers = await inputFile('numbers.csv', 'pk,v,ver\na,older,9\nb,fresh,3\n');
    const typed = await run({ input: numbers, table, ifNewer: 'ver', types: { ver: 'N' } });
    expect(typed).toMatchObject({ rowsRead: 2, written: 1, conditionFailed: 1, rejected: 0 });
    expect(new Map((await scanAll(client(), table)).map((i) => [i.pk!.S!, i.v!.S!])).get('a')).toBe('newer');
    const asText = await run({ input: numbers, table, ifNewer: 'ver', types: { ver: 'S' } });
    expect(asText).toMatchObject({ rowsRead: 2, rejected: 0 });
  });
});
