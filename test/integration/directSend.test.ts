/**
 * A load's BatchWriteItem calls after the first go below the SDK client's middleware chain
 * (src/writing/directSend.ts). Here they meet a partition model in front of DynamoDB Local that refuses
 * items (UnprocessedItems, ProvisionedThroughputExceededException) and injects faults (500, 503,
 * ThrottlingException, dropped sockets, replies lost after the write): every row must be stored once, with
 * binary partition keys (UnprocessedItems carry them as base64, the writer matches them as bytes), and the
 * calls must not have gone through the client's chain.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load } from '../../src/index.js';
import { createClient } from '../../src/aws/client.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'B' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'direct', processCredentials: true, keys: KEYS });

/** A client as load() builds one, counting the BatchWriteItem calls that go through its middleware chain. */
function countingClient(url: string) {
  const sdk = createClient({ region: 'us-east-1', endpoint: url, requestTimeoutMs: 3000, maxSockets: 16 });
  const counted = { chained: 0 };
  (sdk as unknown as { middlewareStack: DynamoDBClient['middlewareStack'] }).middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'BatchWriteItemCommand') counted.chained++;
      return next(args);
    },
    { step: 'initialize', name: 'countChainedBatchWrites' },
  );
  return { sdk, counted };
}

describe('BatchWriteItem below the client, against throttles and faults', () => {
  it('stores every row once, binary keys included, with one call through the client', async () => {
    const table = await newTable();
    const proxy = closeAfterAll(
      await startPartitionProxy(endpoint, {
        model: { tableWcu: 1000, partitions: 4, burstSeconds: 0, initialSeconds: 0 },
        seed: 7,
        faults: { internal: 0.05, unavailable: 0.05, throttling: 0.05, drop: 0.03, lostReply: 0.03 },
      }),
    );
    const lines = ['pk,sk,payload'];
    const expected = new Map<string, string>();
    for (let k = 0; k < 40; k++) {
      const pk = Buffer.from([k, 255 - k, 0, 42]).toString('base64');
      for (let sk = 0; sk < 50; sk++) {
        lines.push(`${pk},${sk},row ${k}/${sk}`);
        expected.set(`${pk}|${sk}`, `row ${k}/${sk}`);
      }
    }
    const input = join(dir(), 'binary.csv');
    await writeFile(input, `${lines.join('\n')}\n`);

    const { sdk, counted } = countingClient(proxy.url);
    const result = await load(
      { input, table, region: 'us-east-1', endpoint: proxy.url, types: { pk: 'B', sk: 'N' }, rejectsPath: join(dir(), 'rejects.jsonl'), maxAttempts: 30 },
      { client: sdk, directBatchWrites: true },
    );
    sdk.destroy();

    expect(result.rejected).toBe(0);
    expect(result.written).toBe(expected.size);
    const stats = proxy.stats();
    // The model and the faults were met: refused items, and faulted calls the writer sent again.
    const seen = JSON.stringify({ calls: stats.calls, throttledItems: stats.throttledItems, faults: stats.faults });
    expect(stats.throttledItems, seen).toBeGreaterThan(0);
    expect(
      Object.values(stats.faults).reduce((a, b) => a + b, 0),
      seen,
    ).toBeGreaterThan(0);
    expect(stats.calls, seen).toBeGreaterThan(80);
    // Only the first call (and its resends, should it fail before it is signed) went through the chain.
    expect(counted.chained).toBeLessThanOrEqual(3);
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(expected.size);
    for (const item of items) {
      const key = `${Buffer.from(item['pk']!.B!).toString('base64')}|${item['sk']!.N}`;
      expect(item['payload']!.S, key).toBe(expected.get(key));
    }
  });

  it('gives up on an answer that stalls past --request-timeout and sends the call again', async () => {
    const table = await newTable();
    // One call in four answers after 4 s; the client waits 400 ms.
    const proxy = closeAfterAll(await startPartitionProxy(endpoint, { model: { tableWcu: 100_000 }, seed: 3, faults: { slow: { rate: 0.25, ms: 4000 } } }));
    const lines = ['pk,sk,payload'];
    for (let i = 0; i < 500; i++) lines.push(`${Buffer.from([i % 13, 7]).toString('base64')},${i},x`);
    const input = join(dir(), 'stalled.csv');
    await writeFile(input, `${lines.join('\n')}\n`);
    const started = performance.now();
    const result = await load({
      input,
      table,
      region: 'us-east-1',
      endpoint: proxy.url,
      types: { pk: 'B', sk: 'N' },
      rejectsPath: join(dir(), 'stalled.rejects.jsonl'),
      requestTimeoutMs: 400,
      maxAttempts: 30,
    });
    expect(result.written).toBe(500);
    expect(result.rejected).toBe(0);
    expect(proxy.stats().faults.slow).toBeGreaterThan(0);
    // Each stalled call was given up on and sent again (before, the client only warned and waited 4 s).
    expect(result.retries).toBeGreaterThanOrEqual(proxy.stats().faults.slow);
    expect(performance.now() - started).toBeLessThan(proxy.stats().faults.slow * 4000);
    expect((await scanAll(client(), table)).length).toBe(500);
  });

  it("leaves a caller's own client alone unless asked: its middleware sees every call", async () => {
    const table = await newTable();
    const lines = ['pk,sk,payload'];
    for (let i = 0; i < 300; i++) lines.push(`${Buffer.from([i % 7, i % 11]).toString('base64')},${i},x`);
    const input = join(dir(), 'caller.csv');
    await writeFile(input, `${lines.join('\n')}\n`);
    const { sdk, counted } = countingClient(endpoint);
    const result = await load(
      { input, table, region: 'us-east-1', endpoint, types: { pk: 'B', sk: 'N' }, rejectsPath: join(dir(), 'caller.rejects.jsonl') },
      { client: sdk },
    );
    sdk.destroy();
    expect(result.written).toBe(300);
    expect(result.batches).toBeGreaterThan(1);
    expect(counted.chained).toBe(result.batches);
  });
});
