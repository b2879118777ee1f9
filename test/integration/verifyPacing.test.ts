/**
 * verify's reads stay within --rcu: against DynamoDB Local (which reports the read units each
 * BatchGetItem consumed), the units read over the verify's time are no more than --rcu a second, and
 * eventually consistent reads cost half.
 */
import { describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-pacing', processCredentials: true });
const { endpoint, newTable } = aws;
const loads = localLoad(aws);

describe('verify --rcu', () => {
  it('reads at no more than --rcu read units a second', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    // 400 items of about 5 KB: 2 read units each strongly consistent, 1 eventually.
    const pad = 'x'.repeat(5000);
    const input = await loads.inputFile('rows.jsonl', `${Array.from({ length: 400 }, (_, i) => JSON.stringify({ pk: `p${i}`, pad })).join('\n')}\n`);
    await loads.run({ table, input });
    const base = { input, table, endpoint, region: 'us-east-1', differencesPath: loads.path('diff.jsonl') };

    const startedAt = performance.now();
    const paced = await verify({ ...base, rcu: 250 });
    const seconds = (performance.now() - startedAt) / 1000;
    expect(paced.differing).toBe(0);
    expect(paced.reads.consumedRcu).toBe(800);
    // 800 units at 250 a second, from an empty bucket: at least 3.2 s, at most 250 units a second overall.
    expect(seconds).toBeGreaterThan(3);
    expect(paced.reads.consumedRcu / seconds).toBeLessThanOrEqual(250);

    const eventual = await verify({ ...base, rcu: 250, consistentRead: false });
    expect(eventual.reads.consumedRcu).toBe(400);
    expect(eventual.reads.consistentRead).toBe(false);
  });
});
