/**
 * Attribute names that are members of Object.prototype (constructor, toString, valueOf,
 * hasOwnProperty, __proto__, ...) round-trip like any other name: in CSV and JSON values, in --types
 * and --columns, as the table's key attributes, and as --keep-original-key. Each load is scanned back and
 * compared exactly.
 */
import { describe, expect, it } from 'vitest';
import type { LoadOptions } from '../../src/index.js';
import { scanAll } from '../support/ddb.js';
import { startFaultProxy } from '../support/faultProxy.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { plainItem } from '../support/plainItem.js';
import { rawScan as rawScanOf, sortedJson } from '../support/rawScan.js';
import { readRejects } from '../support/rejects.js';

const aws = useLocalAws({ name: 'protonames', processCredentials: true });
const { endpoint, client, newTable } = aws;
const { path, inputFile, run } = localLoad(aws, { order: 'input' });

/** Names a plain object answers without owning them. */
const NAMES = [
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
];

/** An input file with this extension (the loader reads the format from it). */
const file = (ext: string, text: string) => inputFile(`input.${ext}`, text);

const scanned = async (table: string) => (await scanAll(client(), table)).map(plainItem).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('Object.prototype member names as attribute names', () => {
  it('CSV columns, typed with --types and untyped, round-trip', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('csv', `pk,${NAMES.join(',')}\nk1,${NAMES.map((_, i) => `${i + 1}`).join(',')}\n`);
    const types = Object.fromEntries([
      ['constructor', 'N'],
      ['valueOf', 'N'],
    ]) as LoadOptions['types'];
    const result = await run({ table, input, types });
    expect([result.written, result.rejected]).toEqual([1, 0]);
    const expected: Record<string, unknown> = { pk: { S: 'k1' } };
    NAMES.forEach((name, i) => (expected[name] = name === 'constructor' || name === 'valueOf' ? { N: String(i + 1) } : { S: String(i + 1) }));
    expect(await scanned(table)).toEqual([expected]);
  });

  it('CSV with --infer and --empty null: the names still hold their own values', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('csv', `pk,constructor,toString,hasOwnProperty\nk1,12,,true\n`);
    await run({ table, input, infer: true, empty: 'null' });
    expect(await scanned(table)).toEqual([{ pk: { S: 'k1' }, constructor: { N: '12' }, toString: { NULL: true }, hasOwnProperty: { BOOL: true } }]);
  });

  it('--columns names a header-less CSV with such names', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('csv', `k1,a,b\n`);
    await run({ table, input, columns: ['pk', 'toString', 'constructor'] });
    expect(await scanned(table)).toEqual([{ pk: { S: 'k1' }, toString: { S: 'a' }, constructor: { S: 'b' } }]);
  });

  it('JSON lines: top-level and nested names, typed by --types', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('jsonl', `${JSON.stringify({ pk: 'k1', constructor: '5', toString: 'x', valueOf: { hasOwnProperty: 1, constructor: 'c' } })}\n`);
    await run({ table, input, types: Object.fromEntries([['constructor', 'N']]) as LoadOptions['types'] });
    expect(await scanned(table)).toEqual([
      { pk: { S: 'k1' }, constructor: { N: '5' }, toString: { S: 'x' }, valueOf: { M: { hasOwnProperty: { N: '1' }, constructor: { S: 'c' } } } },
    ]);
  });

  it('DynamoDB JSON lines', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('json', `${JSON.stringify({ Item: { pk: { S: 'k1' }, constructor: { N: '7' }, toString: { M: { valueOf: { S: 'v' } } } } })}\n`);
    await run({ table, input, inputFormat: 'ddb-json' });
    expect(await scanned(table)).toEqual([{ pk: { S: 'k1' }, constructor: { N: '7' }, toString: { M: { valueOf: { S: 'v' } } } }]);
  });

  it('as the table key attributes (constructor:S, toString:N), from CSV and JSON', async () => {
    const table = await newTable({ partitionKey: { name: 'constructor', type: 'S' }, sortKey: { name: 'toString', type: 'N' } });
    const csv = await file('csv', `constructor,toString,valueOf\nc1,1,v\nc1,1,w\nc2,2,x\n`);
    const result = await run({ table, input: csv });
    expect([result.written, result.superseded, result.rejected]).toEqual([2, 1, 0]);
    const json = await file('jsonl', `${JSON.stringify({ constructor: 'c3', toString: 3 })}\n`);
    await run({ table, input: json });
    expect(await scanned(table)).toEqual<unknown[]>([
      { constructor: { S: 'c1' }, toString: { N: '1' }, valueOf: { S: 'w' } },
      { constructor: { S: 'c2' }, toString: { N: '2' }, valueOf: { S: 'x' } },
      { constructor: { S: 'c3' }, toString: { N: '3' } },
    ]);
  });

  it('--shard with --keep-original-key valueOf keeps the unsharded key in that attribute', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } });
    const input = await file('csv', `pk,sk\nk1,a\n`);
    await run({ table, input, shard: ['hash:2'], keepOriginalKey: 'valueOf', shardManifestPath: path('keep.shards.json') });
    const items = await scanned(table);
    expect(items).toHaveLength(1);
    expect(items[0]!['valueOf']).toEqual({ S: 'k1' });
    expect((items[0]!['pk'] as { S: string }).S).toMatch(/^k1#[01]$/);
  });
});

const rawScan = (table: string) => rawScanOf(endpoint, table);

/** JSON text with an own "__proto__" member, as a file would hold it. */
const withProto = (json: string) => json;

describe('__proto__ as an attribute name', () => {
  it('a CSV column __proto__, typed by --types __proto__:N', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('csv', `pk,__proto__,constructor\nk1,42,c\n`);
    const types = JSON.parse('{"__proto__":"N"}') as LoadOptions['types'];
    const result = await run({ table, input, types });
    expect([result.written, result.rejected]).toEqual([1, 0]);
    expect(await rawScan(table)).toEqual([sortedJson(JSON.parse('{"pk":{"S":"k1"},"__proto__":{"N":"42"},"constructor":{"S":"c"}}'))]);
  });

  it('JSON lines with __proto__ at the top and nested, and ddb-json', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('jsonl', withProto('{"pk":"k1","__proto__":"top","m":{"__proto__":{"constructor":1}}}\n'));
    await run({ table, input });
    const ddb = await file('json', withProto('{"Item":{"pk":{"S":"k2"},"__proto__":{"M":{"__proto__":{"S":"n"}}}}}\n'));
    await run({ table, input: ddb, inputFormat: 'ddb-json' });
    expect(await rawScan(table)).toEqual(
      [
        '{"pk":{"S":"k1"},"__proto__":{"S":"top"},"m":{"M":{"__proto__":{"M":{"constructor":{"N":"1"}}}}}}',
        '{"pk":{"S":"k2"},"__proto__":{"M":{"__proto__":{"S":"n"}}}}',
      ]
        .map((text) => sortedJson(JSON.parse(text)))
        .sort(),
    );
  });

  it('__proto__ as the partition key attribute', async () => {
    const table = await newTable({ partitionKey: { name: '__proto__', type: 'S' } });
    const input = await file('csv', `__proto__,v\na,1\nb,2\na,3\n`);
    const result = await run({ table, input });
    expect([result.written, result.superseded, result.rejected]).toEqual([2, 1, 0]);
    expect(await rawScan(table)).toEqual(
      ['{"__proto__":{"S":"a"},"v":{"S":"3"}}', '{"__proto__":{"S":"b"},"v":{"S":"2"}}'].map((t) => sortedJson(JSON.parse(t))).sort(),
    );
  });
});

describe('__proto__ as a key attribute when DynamoDB returns UnprocessedItems', () => {
  // The writer matches UnprocessedItems back to its writes by key; the SDK's answer has lost
  // an attribute named __proto__, so no write matched and every write of the call counted as unprocessed:
  // a row DynamoDB had stored was resent, and at --max-attempts reported as RETRIES_EXHAUSTED.
  it('the stored row counts as written, only the unprocessed one is rejected', async () => {
    const table = await newTable({ partitionKey: { name: '__proto__', type: 'S' }, sortKey: { name: 'constructor', type: 'N' } });
    const input = await file('csv', `__proto__,constructor,v\na,1.0,1\nb,2,2\n`);
    // The first call stores its first write and returns the other; every later call stores nothing.
    const proxy = await startFaultProxy(endpoint, (index) => ({ kind: 'unprocessed', process: index === 0 ? 1 : 0 }));
    try {
      const rejectsPath = path('proxy.rejects.jsonl');
      const result = await run({ endpoint: proxy.url, rejectsPath, table, input, maxAttempts: 3 });
      expect({ written: result.written, rejected: result.rejected, byReason: result.rejectedByReason }).toEqual({
        written: 1,
        rejected: 1,
        byReason: { RETRIES_EXHAUSTED: 1 },
      });
      expect((await readRejects(rejectsPath)).map((r) => r.line)).toEqual([3]);
      expect(await rawScan(table)).toEqual([sortedJson(JSON.parse('{"__proto__":{"S":"a"},"constructor":{"N":"1"},"v":{"S":"1"}}'))]);
      // Three calls: [a, b], then b alone twice.
      expect(proxy.calls.map((c) => c.requestCount)).toEqual([2, 1, 1]);
    } finally {
      await proxy.close();
    }
  });
});
