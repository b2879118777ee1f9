/**
 * verify with --skip-expired: an item whose TTL passes after the load may have been deleted by DynamoDB's
 * TTL, so its absence is the outcome `expired`, not `missing`; present, it is compared as any item. With
 * --scan, an item no row writes whose TTL has passed is DynamoDB's to delete, not extra. A real deletion
 * of a live item is still missing, and a stranger without a TTL still extra.
 */
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-expired', processCredentials: true });
const { endpoint, newTable } = aws;
const loads = localLoad(aws);

describe('verify --skip-expired', () => {
  it('an item whose TTL passed since the load is expired when absent, compared when present; a scan does not call it extra', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const loadTime = Math.floor(Date.now() / 1000);
    const soon = loadTime + 2;
    const later = loadTime + 86_400;
    // s0..s3 live at the load and expired two seconds later; l0..l5 live for a day; e0 already expired (skipped by the load).
    const rows = [
      ...Array.from({ length: 4 }, (_, i) => ({ pk: `s${i}`, exp: soon, v: i })),
      ...Array.from({ length: 6 }, (_, i) => ({ pk: `l${i}`, exp: later, v: i })),
      { pk: 'e0', exp: loadTime - 60, v: 0 },
    ];
    const input = await loads.inputFile('ttl.jsonl', `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const loaded = await loads.run({ table, input, skipExpired: 'exp', skipExpiredAt: loadTime });
    expect(loaded.skippedExpired).toBe(1);
    await sleep(3500);
    const c = aws.client();
    // DynamoDB's TTL took s0 and s1; someone deleted l0 (a real loss); s2 is still there, but changed.
    for (const pk of ['s0', 's1', 'l0']) await c.send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: pk } } }));
    await c.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 's2' }, exp: { N: String(soon) }, v: { N: '99' } } }));
    // Not written by any row: one past its TTL (DynamoDB's to delete), one with none (extra).
    await c.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'old' }, exp: { N: String(loadTime - 3600) } } }));
    await c.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'stranger' } } }));

    const result = await verify({
      input,
      table,
      endpoint,
      region: 'us-east-1',
      skipExpired: 'exp',
      skipExpiredAt: loadTime,
      scanSegments: 2,
      differencesPath: loads.path('ttl.diff.jsonl'),
    });
    expect(result.outcomes).toEqual({
      matched: 6,
      absent: 0,
      missing: 1,
      different: 1,
      deletedButPresent: 0,
      rejectedButPresent: 0,
      extra: 1,
      expired: 2,
      conditionKept: 0,
    });
    expect(result.examples.map((e) => `${e.outcome} ${e.key?.['pk']}`).sort()).toEqual(['different s2', 'extra stranger', 'missing l0']);
    expect(result.scan).toEqual({ segments: 2, items: 9, expired: 1 });
    expect(result.writes).toEqual({ planned: 10, checked: 10, superseded: 0, notSampled: 0 });

    // Without --skip-expired the TTL is unknown: the expired items are missing (e0 too, which the load skipped).
    const blind = await verify({ input, table, endpoint, region: 'us-east-1', scanSegments: 2, differencesPath: loads.path('blind.diff.jsonl') });
    expect(blind.outcomes).toMatchObject({ missing: 4, expired: 0, extra: 2 });
  }, 60_000);
});
