/**
 * verify's reads stay within --rcu: against DynamoDB Local (which reports the read units each
 * BatchGetItem consumed), the units read over the verify's time are no more than --rcu a second, and
 * eventually consistent reads cost half.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
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

  it('--rcu auto:P% reads at P% of the provisioned read capacity, and says so; on demand, of what a new table takes', async () => {
    const table = `verify_auto_${Date.now()}`;
    await aws.client().send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        ProvisionedThroughput: { ReadCapacityUnits: 100, WriteCapacityUnits: 1000 },
      }),
    );
    const input = await loads.inputFile('auto.jsonl', `${Array.from({ length: 150 }, (_, i) => JSON.stringify({ pk: `a${i}` })).join('\n')}\n`);
    await loads.run({ table, input });
    const startedAt = performance.now();
    const paced = await verify({ input, table, endpoint, region: 'us-east-1', differencesPath: loads.path('auto.jsonl.diff'), rcu: 'auto:50%' });
    const seconds = (performance.now() - startedAt) / 1000;
    expect(paced.differing).toBe(0);
    expect(paced.reads.rcu).toBe(50);
    expect(paced.reads.rcuReason).toBe("--rcu auto: 50% of the table's provisioned 100 RCU = 50 RCU/s");
    // 150 units at 50 a second from an empty bucket: about 3 s, never faster.
    expect(seconds).toBeGreaterThan(2.5);
    expect(paced.reads.consumedRcu / seconds).toBeLessThanOrEqual(50);

    const onDemand = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    await loads.run({ table: onDemand, input });
    const fast = await verify({ input, table: onDemand, endpoint, region: 'us-east-1', differencesPath: loads.path('auto2.diff'), rcu: 'auto' });
    expect(fast.reads.rcu).toBe(9600);
    expect(fast.reads.rcuReason).toContain('on-demand table; 80% of 12,000 RCU/s');
  });

  it('--key-rcu holds any one partition key to its rate: the items of one large collection are read no faster', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    const input = await loads.inputFile('hot.jsonl', `${Array.from({ length: 600 }, (_, i) => JSON.stringify({ pk: 'hot', sk: i })).join('\n')}\n`);
    await loads.run({ table, input, types: { sk: 'N' } });
    const startedAt = performance.now();
    const held = await verify({ input, table, endpoint, region: 'us-east-1', differencesPath: loads.path('hot.diff'), keyRcu: 200 });
    const seconds = (performance.now() - startedAt) / 1000;
    expect(held.differing).toBe(0);
    expect(held.reads.keyRcu).toBe(200);
    // 600 units of one key at 200 a second, with one second of burst: at least 2 s.
    expect(seconds).toBeGreaterThan(1.9);
    expect((held.reads.consumedRcu - 200) / seconds).toBeLessThanOrEqual(200);
  });
});
