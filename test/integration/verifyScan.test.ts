/**
 * verify's Scan read (scanSegments) against DynamoDB Local, in process: its read rate stays within --rcu
 * (each page's units reserved before it is sent, DynamoDB's reported units trued up after); and a verify
 * stopped during the Scan, or after part of the keys were settled, resumes from its checkpoint: the Scan
 * reads the whole table again (the result says so), and every key and extra item is counted once, with
 * the same differences file as an uninterrupted verify; throttled Scan pages are sent again after a backoff.
 */
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { verify, type VerifyOptions, type VerifyProgressEvent } from '../../src/verifying/verify.js';
import { createForwarder, dynamoErrors, errorBody, ownHeaders, reply, startProxyServer, TARGET_PREFIX } from '../support/httpForward.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-scan-pacing', processCredentials: true });
const { endpoint, newTable } = aws;
const loads = localLoad(aws);

describe('verify, read by a Scan', () => {
  it('reads at no more than --rcu read units a second, in parallel segments', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    // 400 items of about 5 KB: about 2 MB, some 490 read units for a strongly consistent Scan.
    const pad = 'x'.repeat(5000);
    const input = await loads.inputFile('rows.jsonl', `${Array.from({ length: 400 }, (_, i) => JSON.stringify({ pk: `p${i}`, pad })).join('\n')}\n`);
    await loads.run({ table, input });
    const base = { input, table, endpoint, region: 'us-east-1', differencesPath: loads.path('diff.jsonl'), scanSegments: 3 };

    const startedAt = performance.now();
    const paced = await verify({ ...base, rcu: 200 });
    const seconds = (performance.now() - startedAt) / 1000;
    expect(paced.differing).toBe(0);
    expect(paced.outcomes.matched).toBe(400);
    expect(paced.tableRead.read).toBe('scan');
    expect(paced.scan).toEqual({ segments: 3, items: 400 });
    // The Scan alone: no key read again.
    expect(paced.reads.keys).toBe(0);
    expect(paced.reads.scanned).toBe(400);
    expect(paced.reads.consumedRcu).toBeGreaterThan(450);
    // Some 490 units at 200 a second, from an empty bucket: over 2 s, at most 200 units a second overall.
    expect(seconds).toBeGreaterThan(2);
    expect(paced.reads.consumedRcu / seconds).toBeLessThanOrEqual(200);

    // Unpaced it is much faster: the pacing, not DynamoDB Local, set the time above.
    const unpacedAt = performance.now();
    const unpaced = await verify({ ...base, differencesPath: loads.path('unpaced.jsonl') });
    expect(unpaced.outcomes.matched).toBe(400);
    expect((performance.now() - unpacedAt) / 1000).toBeLessThan(seconds / 2);
  }, 60_000);

  it('a throttled Scan page is sent again after a backoff, and every item still compared once', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await loads.inputFile('throttled.jsonl', `${Array.from({ length: 300 }, (_, i) => JSON.stringify({ pk: `t${i}`, n: i })).join('\n')}\n`);
    await loads.run({ table, input });
    // Every other Scan call is answered ProvisionedThroughputExceededException, as a hot partition would.
    const upstream = createForwarder(endpoint);
    let scans = 0;
    const server = await startProxyServer('verify-scan-throttle', async (req, res, body) => {
      const operation = String(req.headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, '');
      if (operation === 'Scan' && scans++ % 2 === 0) {
        const { status, type, message } = dynamoErrors.provisionedThroughputExceeded;
        reply(res, status, ownHeaders(`throttled-${scans}`), errorBody(type, message));
        return;
      }
      const answer = await upstream.forward(req, body);
      reply(res, answer.status, answer.headers, answer.body);
    });
    aws.closeAfterAll({ close: async () => (await server.close(), upstream.close()) });
    // Paced (each page reserved first) and throttled: each throttled page is sent again, its items read once.
    const result = await verify({
      input,
      table,
      endpoint: server.url,
      region: 'us-east-1',
      scanSegments: 2,
      rcu: 200,
      maxAttempts: 5,
      differencesPath: loads.path('t.jsonl'),
    });
    expect(result.outcomes.matched).toBe(300);
    expect(result.scan).toEqual({ segments: 2, items: 300 });
    expect(result.reads.throttled).toBeGreaterThanOrEqual(2);
    expect(result.reads.retries).toBe(result.reads.throttled);
  }, 60_000);

  it('stopped during the Scan or mid-keys, it resumes from its checkpoint: the table scanned again, nothing counted twice', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const rows = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ pk: `k${i}`, n: i, note: `n${i}` }));
    const input = await loads.inputFile('keys.jsonl', `${rows.join('\n')}\n`);
    await loads.run({ table, input });
    const c = aws.client();
    for (const pk of ['k3', 'k1500', 'k2999']) await c.send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: pk } } }));
    for (const pk of ['k10', 'k2000'])
      await c.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: pk } },
          UpdateExpression: 'SET note = :v',
          ExpressionAttributeValues: { ':v': { S: 'changed' } },
        }),
      );
    await c.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'stranger' } } }));

    const base: VerifyOptions = { input, table, endpoint, region: 'us-east-1', scanSegments: 2 };
    const wholePath = loads.path('whole.jsonl');
    const whole = await verify({ ...base, differencesPath: wholePath });
    expect(whole.outcomes).toMatchObject({ matched: 2995, missing: 3, different: 2, extra: 1 });

    // --sample with a Scan: the whole table read, only the sampled keys compared, the same outcomes as by key.
    const sampledByKeys = await verify({ ...base, scanSegments: undefined, sample: 0.5, differencesPath: loads.path('sample-keys.jsonl') });
    const sampledByScan = await verify({ ...base, sample: 0.5, differencesPath: loads.path('sample-scan.jsonl') });
    expect(sampledByScan.scan?.items).toBe(2998);
    expect(sampledByScan.checked).toBe(sampledByKeys.checked);
    expect(sampledByScan.checked).toBeLessThan(2000);
    expect(sampledByScan.writes).toEqual(sampledByKeys.writes);
    expect(sampledByScan.outcomes).toEqual({ ...sampledByKeys.outcomes, extra: 1 });

    for (const stopAt of ['scanning the table', 'checking keys'] as const) {
      const checkpointPath = loads.path(`${stopAt}.checkpoint.json`);
      const differencesPath = loads.path(`${stopAt}.jsonl`);
      const controller = new AbortController();
      const onProgress = (p: VerifyProgressEvent) => {
        if (p.phase === stopAt && (stopAt === 'scanning the table' || p.settled >= 900)) controller.abort(new Error('stop'));
      };
      // One chunk of keys at a time while it is stopped: several taken at once are all judged in one turn
      // (most send no call), and a stop seen after them found every key settled (a busy run failed so).
      const stopped = await verify({ ...base, checkpointPath, differencesPath, concurrency: 1 }, { signal: controller.signal, onProgress }).then(
        () => undefined,
        (error: unknown) => error as { code?: string },
      );
      expect(stopped?.code, stopAt).toBe('ABORTED');
      const saved = JSON.parse(await readFile(`${checkpointPath}.verify`, 'utf8')) as { status: string; done: number; outcomes: { extra: number } };
      expect(saved.status).toBe('stopped');
      expect(saved.outcomes.extra).toBe(0);
      if (stopAt === 'checking keys') {
        expect(saved.done).toBeGreaterThanOrEqual(900);
        expect(saved.done).toBeLessThan(3000);
      } else expect(saved.done).toBe(0);

      const resumed = await verify({ ...base, checkpointPath, differencesPath });
      expect(resumed.tableRead).toMatchObject({ read: 'scan', rescanned: true });
      expect(resumed.checkpoint!.resumedFrom).toBe(saved.done);
      expect(resumed.outcomes).toEqual(whole.outcomes);
      expect(resumed.writes).toEqual(whole.writes);
      expect(await readFile(differencesPath, 'utf8')).toBe(await readFile(wholePath, 'utf8'));
    }
  }, 120_000);
});
