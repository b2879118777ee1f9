/**
 * verify() after loads of the harder inputs, against DynamoDB Local: a DynamoDB export chain (a full
 * export and incrementals with updates, deletes and re-inserts), a sharded load, a Parquet file (exact
 * decimals, a float, a timestamp, nulls) and a load through a --transform that renames, splits and filters. Clean, every key is as
 * the input leaves it; then a delete undone, an item changed and a shard suffix moved are each named.
 */
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verify } from '../../src/verifying/verify.js';
import { scanAll } from '../support/ddb.js';
import { chainExports, simulateChain, writeExport } from '../support/exportFixture.js';
import { writeParquet } from '../support/formatFixtures.js';
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

  it('a Parquet file (decimals, a double, a timestamp, a null): all matched; a number changed in the table is named', async () => {
    const path = join(dir(), 'typed.parquet');
    const n = 120;
    writeParquet(
      path,
      [
        { name: 'pk', data: Array.from({ length: n }, (_, i) => `k${i % 17}`) },
        { name: 'sk', data: Array.from({ length: n }, (_, i) => i) },
        { name: 'price', data: Array.from({ length: n }, (_, i) => BigInt(i * 1001)) },
        { name: 'ratio', data: Array.from({ length: n }, (_, i) => i / 7) },
        { name: 'at', data: Array.from({ length: n }, (_, i) => BigInt(1_700_000_000_000 + i * 1000)) },
        { name: 'note', data: Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : `n${i}`)) },
      ],
      [
        { name: 'schema', num_children: 6 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'sk', type: 'INT32', repetition_type: 'REQUIRED' },
        { name: 'price', type: 'INT64', converted_type: 'DECIMAL', scale: 2, precision: 18, repetition_type: 'REQUIRED' },
        { name: 'ratio', type: 'DOUBLE', repetition_type: 'REQUIRED' },
        { name: 'at', type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', repetition_type: 'REQUIRED' },
        { name: 'note', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      ],
      { rowGroupSize: 50 },
    );
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    await loads.run({ input: path, table });
    expect((await scanAll(client(), table)).length).toBe(n);

    const base = { input: path, table, endpoint, region: 'us-east-1', differencesPath: loads.path('parquet.diff.jsonl') };
    const clean = await verify(base);
    expect(clean.differing, JSON.stringify(clean.examples)).toBe(0);
    expect(clean.outcomes.matched).toBe(n);

    // One decimal's last digit changed in the table: named as different, on that attribute.
    const item = (await scanAll(client(), table)).find((i) => i['sk']!.N === '42')!;
    await client().send(new PutItemCommand({ TableName: table, Item: { ...item, price: { N: '420.43' } } }));
    const tampered = await verify(base);
    expect(tampered.outcomes).toMatchObject({ different: 1, matched: n - 1 });
  });

  it('a load through a transform (rename, split, filter): all matched; an item the transform split off, deleted, is missing', async () => {
    const transform = join(dir(), 'reshape.mjs');
    await writeFile(
      transform,
      [
        '// Renames qty to quantity, drops rows of status "void", and splits a row with a gift into a second item.',
        'export default function (item) {',
        "  if (item.status === 'void') return undefined;",
        '  const { qty, gift, ...rest } = item;',
        '  const out = { ...rest, quantity: qty };',
        '  return gift ? [out, { pk: item.pk, sk: `${item.sk}#gift`, gift }] : out;',
        '}',
        '',
      ].join('\n'),
    );
    const rows = [
      'pk,sk,status,qty,gift',
      ...Array.from({ length: 90 }, (_, i) => `c${i % 9},o${i},${i % 10 === 3 ? 'void' : 'ok'},${i},${i % 4 === 0 ? 'card' : ''}`),
    ];
    const input = await loads.inputFile('orders.csv', `${rows.join('\n')}\n`);
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } });
    const options = { input, table, transform, types: { qty: 'N' as const } };
    await loads.run(options);
    const items = await scanAll(client(), table);
    const kept = 90 - 9;
    const gifts = Array.from({ length: 90 }, (_, i) => i).filter((i) => i % 10 !== 3 && i % 4 === 0).length;
    expect(items.length).toBe(kept + gifts);
    expect(items.some((i) => 'qty' in i)).toBe(false);

    const base = { ...options, endpoint, region: 'us-east-1', differencesPath: loads.path('transform.diff.jsonl') };
    const clean = await verify(base);
    expect(clean.differing, JSON.stringify(clean.examples)).toBe(0);
    expect(clean.outcomes.matched).toBe(kept + gifts);

    await client().send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: 'c0' }, sk: { S: 'o0#gift' } } }));
    const tampered = await verify(base);
    expect(tampered.outcomes).toMatchObject({ missing: 1 });
    expect(tampered.examples.map((e) => [e.outcome, e.key])).toEqual([['missing', { pk: 'c0', sk: 'o0#gift' }]]);
  });
});
