/**
 * Attack on a verify that stops on a failure while other BatchGetItem calls are still under way: a call
 * answered after the stop must not settle its keys into the differences file or the checkpoint the stop
 * already saved (a write after the file was closed would reopen it truncated, zeroing the differences
 * listed before). A proxy in front of DynamoDB Local holds one BatchGetItem call back and fails the next
 * one while it is held. Found sound: the dry run drains the calls under way before the verify stops, so
 * the late call settles before the stop's save.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { createForwarder, delay, json, ownHeaders, reply, startProxyServer, TARGET_PREFIX, type ProxyServer } from '../support/httpForward.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-stop-race', processCredentials: true });
const { endpoint, newTable } = aws;
const loads = localLoad(aws);

let proxy: ProxyServer;
let gets = 0;
beforeAll(async () => {
  const upstream = createForwarder(endpoint);
  proxy = await startProxyServer('stopRace', async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    if (req.headers['x-amz-target'] === `${TARGET_PREFIX}BatchGetItem`) {
      const call = gets++;
      // The second call is answered late, the third fails at once (a fatal error: the verify stops).
      if (call === 1) await delay(1500);
      if (call === 2)
        return reply(res, 400, ownHeaders('RACE'), json({ __type: 'com.amazon.coral.validate#ValidationException', message: 'injected failure' }));
    }
    const answer = await upstream.forward(req, body);
    reply(res, answer.status, answer.headers, answer.body);
  });
});
afterAll(async () => proxy?.close());

describe('verify stopped by a failure while a read is under way', () => {
  it('leaves the differences file as its checkpoint recorded it, and resumes to every key listed once', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    // The table is empty: every one of the 600 keys is missing, 100 differences a call.
    const input = await loads.inputFile('rows.jsonl', `${Array.from({ length: 600 }, (_, i) => JSON.stringify({ pk: `k${i}`, v: i })).join('\n')}\n`);
    const differencesPath = loads.path('diff.jsonl');
    const checkpointPath = loads.path('load.checkpoint');
    const base = { input, table, region: 'us-east-1', differencesPath, checkpointPath, maxAttempts: 2 };

    await expect(verify({ ...base, endpoint: proxy.url })).rejects.toThrow(/injected failure/);
    // Long enough for the held-back call to be answered and anything it would do to happen.
    await delay(2500);
    expect(gets).toBeGreaterThanOrEqual(3);

    const saved = JSON.parse(await readFile(`${checkpointPath}.verify`, 'utf8')) as {
      status: string;
      differences: { bytes: number; count: number; sha256: string };
    };
    const text = await readFile(differencesPath).catch(() => Buffer.alloc(0));
    expect(text.includes(0)).toBe(false);
    expect(text.length).toBeGreaterThanOrEqual(saved.differences.bytes);
    expect(createHash('sha256').update(text.subarray(0, saved.differences.bytes)).digest('hex')).toBe(saved.differences.sha256);

    const resumed = await verify({ ...base, endpoint });
    expect(resumed.outcomes.missing).toBe(600);
    const lines = (await readFile(differencesPath, 'utf8')).trim().split('\n');
    const keys = lines.map((line) => (JSON.parse(line) as { key: { pk: string } }).key.pk);
    expect(new Set(keys).size).toBe(600);
    expect(keys).toHaveLength(600);
  });
});
