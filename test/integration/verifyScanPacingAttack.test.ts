/**
 * Attack on verify --scan's pacing: Scan pages are charged after the fact (a page's units are known only
 * once DynamoDB answers), so unless the pages are kept small and the last page's units are waited for,
 * a parallel Scan of a table a little over the rate reads it all at once, far above --rcu. Against
 * DynamoDB Local, which reports the units each Scan page consumed.
 */
import { describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-scan-pacing', processCredentials: true });
const { endpoint, newTable } = aws;
const loads = localLoad(aws);

describe('verify --scan --rcu', () => {
  it('scans the table at no more than --rcu read units a second (one second of burst), across parallel segments', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    // 300 items of about 3.5 KB the input does not write (about 1 MB: some 260 units to Scan strongly
    // consistent), and the one row the input does write.
    const pad = 'x'.repeat(3500);
    const others = await loads.inputFile('others.jsonl', `${Array.from({ length: 300 }, (_, i) => JSON.stringify({ pk: `o${i}`, pad })).join('\n')}\n`);
    await loads.run({ table, input: others });
    const input = await loads.inputFile('one.jsonl', `${JSON.stringify({ pk: 'mine' })}\n`);
    await loads.run({ table, input });

    const rcu = 50;
    const startedAt = performance.now();
    const result = await verify({ input, table, endpoint, region: 'us-east-1', differencesPath: loads.path('diff.jsonl'), rcu, scanSegments: 4 });
    const seconds = (performance.now() - startedAt) / 1000;
    expect(result.outcomes.matched).toBe(1);
    expect(result.outcomes.extra).toBe(300);
    expect(result.scan?.items).toBe(301);
    // Every item is charged (1 MB at 4 KB a unit), so the rate must show in the time taken.
    expect(result.reads.consumedRcu).toBeGreaterThan(200);
    expect((result.reads.consumedRcu - rcu) / seconds).toBeLessThanOrEqual(rcu);
  });
});
