/**
 * Attack on verify's --rcu at a low rate: the rate over the whole verify may hold while single calls do
 * not. A BatchGetItem of 100 keys reads its units at once, so at --rcu 25 each call would read four
 * seconds' worth in one burst. A proxy in front of DynamoDB Local records when each BatchGetItem
 * answered and the units it consumed: no second of the verify may read more than --rcu, with one second
 * of burst besides.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { createForwarder, reply, startProxyServer, TARGET_PREFIX, type ProxyServer } from '../support/httpForward.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-burst', processCredentials: true });
const { endpoint, newTable } = aws;
const loads = localLoad(aws);

let proxy: ProxyServer;
const answered: Array<{ at: number; units: number }> = [];
beforeAll(async () => {
  const upstream = createForwarder(endpoint);
  proxy = await startProxyServer('burst', async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const answer = await upstream.forward(req, body);
    if (req.headers['x-amz-target'] === `${TARGET_PREFIX}BatchGetItem` && answer.status === 200) {
      const parsed = JSON.parse(answer.body.toString('utf8')) as { ConsumedCapacity?: Array<{ CapacityUnits?: number }> };
      answered.push({ at: performance.now(), units: (parsed.ConsumedCapacity ?? []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0) });
    }
    reply(res, answer.status, answer.headers, answer.body);
  });
});
afterAll(async () => proxy?.close());

/** The most units answered within any one second. */
function busiestSecond(calls: ReadonlyArray<{ at: number; units: number }>): number {
  let most = 0;
  for (const end of calls)
    most = Math.max(
      most,
      calls.filter((c) => c.at > end.at - 1000 && c.at <= end.at).reduce((sum, c) => sum + c.units, 0),
    );
  return most;
}

describe('verify --rcu below a call of 100 keys', () => {
  it('reads no more than --rcu in any second (one second of burst besides), not 100 keys at once', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await loads.inputFile('rows.jsonl', `${Array.from({ length: 150 }, (_, i) => JSON.stringify({ pk: `k${i}` })).join('\n')}\n`);
    await loads.run({ table, input });

    const rcu = 25;
    const result = await verify({ input, table, endpoint: proxy.url, region: 'us-east-1', differencesPath: loads.path('diff.jsonl'), rcu });
    expect(result.outcomes.matched).toBe(150);
    expect(result.reads.consumedRcu).toBe(150);
    expect(answered.reduce((sum, c) => sum + c.units, 0)).toBe(150);
    expect(busiestSecond(answered)).toBeLessThanOrEqual(2 * rcu);
  });
});
