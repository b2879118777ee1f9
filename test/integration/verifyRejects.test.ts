/**
 * verify() in-process against DynamoDB Local, with the load's reject file: rows DynamoDB refused did
 * not land, so a key is compared against its last row that did (as load writes a refused row's
 * predecessor in its place), and a key all of whose rows were refused is expected absent. The refusals
 * come from the fault proxy (a ValidationException nothing predicted), as in supersededRefused.test.ts.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { faults, startFaultProxy, type FaultPolicy } from '../support/faultProxy.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { readRejects } from '../support/rejects.js';

const aws = useLocalAws({ name: 'verify-rejects', processCredentials: true });
const { endpoint, client, newTable, closeAfterAll } = aws;
const loads = localLoad(aws);

const rows = [
  { cust: 'a', status: 'first' },
  { cust: 'b', status: 'other' },
  { cust: 'a', status: 'second' },
  { cust: 'a', status: 'third' },
];

const refusal = {
  kind: 'error',
  status: 400,
  type: 'com.amazon.coral.validate#ValidationException',
  message: 'One or more parameter values were invalid',
} as const;

describe("verify with the load's reject file", () => {
  it('compares a key against its last row that landed (a refused row did not)', async () => {
    const table = await newTable({ partitionKey: { name: 'cust', type: 'S' } });
    const input = await loads.inputFile('rows.jsonl', `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    // One batch [a@4 (in a@1's place), b@2]: the call and its first half are refused (supersededRefused.test.ts).
    const policy: FaultPolicy = (index) => (index === 0 || index === 1 ? refusal : faults.forward());
    const proxy = closeAfterAll(await startFaultProxy(endpoint, policy));
    const rejectsPath = loads.path('load.rejects.jsonl');
    await loads.run({ table, input, order: 'input', endpoint: proxy.url, rejectsPath });
    expect((await readRejects(rejectsPath)).map((r) => r.line)).toEqual([4]);

    const base = { input, table, endpoint, region: 'us-east-1', rejectsPath, differencesPath: loads.path('diff.jsonl') };
    const result = await verify(base);
    // a: line 4 refused, so line 3 ("second") is what the table must hold.
    expect(result.differing, JSON.stringify(result.examples)).toBe(0);
    expect(result.outcomes).toMatchObject({ matched: 2 });
    expect(result.writes).toEqual({ planned: 4, checked: 2, superseded: 2, notSampled: 0 });
    expect(result.loadRejects).toEqual({ path: rejectsPath, rows: 1 });

    // Without the reject file, the last row is expected, and a's item differs from it.
    const blind = await verify({ ...base, rejectsPath: loads.path('none.jsonl') });
    expect(blind.outcomes.different).toBe(1);
    expect(blind.examples[0]).toMatchObject({ line: 4, attributes: ['status'], values: { status: { expected: { S: 'third' }, stored: { S: 'second' } } } });
  });

  it('expects a key whose every row was refused absent, and names it when present', async () => {
    const table = await newTable({ partitionKey: { name: 'cust', type: 'S' } });
    const input = await loads.inputFile('refused.jsonl', `${JSON.stringify({ cust: 'c', status: 'refused' })}\n`);
    const proxy = closeAfterAll(await startFaultProxy(endpoint, () => refusal));
    const rejectsPath = loads.path('refused.rejects.jsonl');
    await loads.run({ table, input, endpoint: proxy.url, rejectsPath });
    expect((await readRejects(rejectsPath)).map((r) => [r.line, r.code])).toEqual([[1, 'WRITE_REJECTED']]);

    const base = { input, table, endpoint, region: 'us-east-1', rejectsPath, differencesPath: loads.path('refused.diff.jsonl') };
    expect((await verify(base)).outcomes).toMatchObject({ absent: 1, rejectedButPresent: 0 });
    await client().send(new PutItemCommand({ TableName: table, Item: { cust: { S: 'c' }, status: { S: 'from elsewhere' } } }));
    const present = await verify(base);
    expect(present.outcomes.rejectedButPresent).toBe(1);
    expect(present.differing).toBe(1);
  });
});
