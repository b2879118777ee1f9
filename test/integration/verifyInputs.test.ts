/**
 * verify() after loads of the harder inputs, against DynamoDB Local: a DynamoDB export chain (a full
 * export and incrementals with updates, deletes and re-inserts) and a sharded load. Clean, every key is as
 * the input leaves it; then a delete undone, an item changed and a shard suffix moved are each named.
 */
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { scanAll } from '../support/ddb.js';
import { chainExports, simulateChain, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({ name: 'verify-inputs', processCredentials: true });
const { endpoint, client, dir, newTable } = aws;
const loads = localLoad(aws);

describe('verify after an export chain and a sharded load', () => {
  it('an export chain with deletes: all matched; a delete undone and an update lost are named', async () => {
    const chain = simulateChain(7, { items: 300, windows: 3, changesPerWindow: 90 });
    const folders: string[] = [];
    for (const [i, fixture] of chainExports(chain, 'src').entries()) folders.push(await writeExport(join(dir(), `chain-${i}`), fixture));
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    await loads.run({ input: folders, table });
    expect((await scanAll(client(), table)).length).toBe(chain.final.size);

    const base = { input: folders, table, endpoint, region: 'us-east-1', differencesPath: loads.path('chain.diff.jsonl') };
    const clean = await verify(base);
    expect(clean.differing, JSON.stringify(clean.examples)).toBe(0);
    expect(clean.outcomes.matched).toBe(chain.final.size);
    expect(clean.outcomes.absent).toBeGreaterThan(0);
    expect(clean.writes.superseded).toBeGreaterThan(0);

    // A key the chain deleted last, put back; a key it updated, set back to its full export's value.
    const deleted = [...Array(390).keys()].find((i) => !chain.final.has(`p${i % 97}/${i}`) && i < 300)!;
    await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: `p${deleted % 97}` }, sk: { N: String(deleted) }, v: { S: 'undead' } } }));
    const updated = [...chain.final.values()].find((item) => !item['v']!.S!.startsWith('v0-'))!;
    const sk = Number(updated['sk']!.N);
    await client().send(
      new PutItemCommand({
        TableName: table,
        Item: { pk: { S: updated['pk']!.S! }, sk: { N: updated['sk']!.N! }, v: { S: `v0-${sk}` }, n: { N: String(sk) } },
      }),
    );
    const tampered = await verify(base);
    expect(tampered.outcomes).toMatchObject({ deletedButPresent: 1, different: 1 });
    expect(tampered.examples.map((e) => [e.outcome, e.key])).toEqual(
      expect.arrayContaining([
        ['deletedButPresent', { pk: `p${deleted % 97}`, sk: String(deleted) }],
        ['different', { pk: updated['pk']!.S, sk: updated['sk']!.N }],
      ]),
    );
  });

  it('a sharded load (hash:4): all matched; an item moved to another suffix is missing under its own', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } });
    const rows = ['pk,sk,v', ...Array.from({ length: 200 }, (_, i) => `hot,s${i},${i}`), ...Array.from({ length: 20 }, (_, i) => `cold-${i},s0,${i}`)];
    const input = await loads.inputFile('sharded.csv', `${rows.join('\n')}\n`);
    const options = { input, table, shard: ['hash:4'], shardKeys: ['hot'], types: { v: 'N' as const } };
    await loads.run(options);
    const items = await scanAll(client(), table);
    expect(new Set(items.filter((i) => i['pk']!.S!.startsWith('hot')).map((i) => i['pk']!.S)).size).toBe(4);

    const base = { ...options, endpoint, region: 'us-east-1', differencesPath: loads.path('sharded.diff.jsonl') };
    const clean = await verify(base);
    expect(clean.differing, JSON.stringify(clean.examples)).toBe(0);
    expect(clean.outcomes.matched).toBe(220);

    // s7 moved from its suffix to the next one.
    const moved = items.find((i) => i['sk']!.S === 's7' && i['pk']!.S!.startsWith('hot#'))!;
    const suffix = Number(moved['pk']!.S!.split('#')[1]);
    await client().send(new DeleteItemCommand({ TableName: table, Key: { pk: moved['pk']!, sk: moved['sk']! } }));
    await client().send(new PutItemCommand({ TableName: table, Item: { ...moved, pk: { S: `hot#${(suffix + 1) % 4}` } } }));
    const tampered = await verify(base);
    expect(tampered.outcomes.missing).toBe(1);
    expect(tampered.examples[0]).toMatchObject({ outcome: 'missing', key: { pk: moved['pk']!.S, sk: 's7' } });
  });
});
