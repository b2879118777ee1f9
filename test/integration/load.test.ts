/**
 * load() against the real DynamoDB Local (started once by test/support/globalSetup.ts). Every test uses its
 * own table and reads back what was stored with a low-level Scan, so numbers, sets and binaries are
 * compared in their wire form. Faults DynamoDB Local never produces come from test/support/faultProxy.ts.
 */
import { CreateTableCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LoadEvent, LoadResult } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { faults, startFaultProxy, type FaultAction, type FaultPolicy } from '../support/faultProxy.js';
import { GENERATED_TYPES, generatedItem, generatedRow, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { canonicalItem, plainItem, type PlainValue } from '../support/plainItem.js';
import { rejectsOf } from '../support/rejects.js';

const SAMPLES = new URL('../../samples/', import.meta.url);
const sample = (name: string) => new URL(name, SAMPLES).pathname;

const PK_S: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };
const ORDERS_KEYS: TableKeys = { partitionKey: { name: 'customerId', type: 'S' }, sortKey: { name: 'orderId', type: 'S' } };
const ORDER_TYPES = { total: 'N', gift: 'BOOL', items: 'JSON' } as const;

const aws = useLocalAws({ name: 'load', processCredentials: true, keys: PK_S });
const { endpoint, client, dir, newTable, dropTable, trackTable } = aws;
const { inputFile, run, runFailing } = localLoad(aws);
let seq = 0;

/** The table's items as plain DynamoDB JSON, keyed by the primary key's text ("pk" or "pk|sk"). */
async function itemsOf(table: string, keys: TableKeys = PK_S): Promise<Map<string, Record<string, PlainValue>>> {
  const out = new Map<string, Record<string, PlainValue>>();
  for (const raw of await scanAll(client(), table)) {
    const item = plainItem(raw);
    const text = (name: string) => Object.values(item[name] ?? {})[0] as string;
    out.set(keys.sortKey ? `${text(keys.partitionKey.name)}|${text(keys.sortKey.name)}` : text(keys.partitionKey.name), item);
  }
  return out;
}

/** One segment of a parallel Scan (faster than scanAll for the 100k table). */
async function scanSegment(table: string, segment: number, totalSegments: number): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client().send(
      new ScanCommand({ TableName: table, Segment: segment, TotalSegments: totalSegments, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

function expectAccounting(result: LoadResult) {
  expect(result.written + result.superseded + result.rejected).toBe(result.rowsRead);
}

describe('CSV input', () => {
  it('loads a file with a header row, keeping every cell as a string unless typed', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    const input = await inputFile('plain.csv', 'pk,sk,name,qty\na,1,Anna,007\na,2,Ben,12\nb,10,Cleo,3.50\n');
    const result = await run({ input, table, types: { qty: 'N' } });
    expect(result).toMatchObject({ rowsRead: 3, written: 3, superseded: 0, rejected: 0, complete: true, rejectsPath: undefined });
    const items = await itemsOf(table, { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    expect(Object.fromEntries(items)).toEqual({
      'a|1': { pk: { S: 'a' }, sk: { N: '1' }, name: { S: 'Anna' }, qty: { N: '7' } },
      'a|2': { pk: { S: 'a' }, sk: { N: '2' }, name: { S: 'Ben' }, qty: { N: '12' } },
      'b|10': { pk: { S: 'b' }, sk: { N: '10' }, name: { S: 'Cleo' }, qty: { N: '3.5' } },
    });
  });

  it('reads a header-less file with --columns, numbering lines from 1', async () => {
    const table = await newTable();
    const input = await inputFile('noheader.csv', 'a,1\n,2\nc,3\n');
    const result = await run({ input, table, columns: ['pk', 'v'] });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1 });
    expect(Object.fromEntries(await itemsOf(table))).toEqual({ a: { pk: { S: 'a' }, v: { S: '1' } }, c: { pk: { S: 'c' }, v: { S: '3' } } });
    expect(await rejectsOf(result)).toMatchObject([{ line: 2, code: 'MISSING_KEY', raw: ',2' }]);
  });

  it.each([
    { name: 'semicolon.csv', delimiter: ';', text: 'pk;v;w\na;1,5;x\nb;"c;d";y\n' },
    { name: 'explicit-tab.csv', delimiter: '\t', text: 'pk\tv\tw\na\t1,5\tx\nb\t"c;d"\ty\n' },
    { name: 'implicit.tsv', delimiter: undefined, text: 'pk\tv\tw\na\t1,5\tx\nb\t"c;d"\ty\n' },
  ])('splits on the delimiter ($name)', async ({ name, delimiter, text }) => {
    const table = await newTable();
    const input = await inputFile(name, text);
    const result = await run({ input, table, ...(delimiter === undefined ? {} : { delimiter }) });
    expect(result).toMatchObject({ rowsRead: 2, written: 2, rejected: 0 });
    expect(Object.fromEntries(await itemsOf(table))).toEqual({
      a: { pk: { S: 'a' }, v: { S: '1,5' }, w: { S: 'x' } },
      b: { pk: { S: 'b' }, v: { S: 'c;d' }, w: { S: 'y' } },
    });
  });

  it('keeps quoted delimiters, doubled quotes and line breaks, and counts lines across them', async () => {
    const table = await newTable();
    const input = await inputFile(
      'quoted.csv',
      ['pk,text', '"a,1","say ""hi"", then go"', 'b,"line1', 'line2', 'line3"', '"c","""quoted"""', ',lost', 'd,""', ''].join('\n'),
    );
    const result = await run({ input, table, empty: 'string' });
    expect(result).toMatchObject({ rowsRead: 5, written: 4, rejected: 1 });
    expect(Object.fromEntries(await itemsOf(table))).toEqual({
      'a,1': { pk: { S: 'a,1' }, text: { S: 'say "hi", then go' } },
      b: { pk: { S: 'b' }, text: { S: 'line1\nline2\nline3' } },
      c: { pk: { S: 'c' }, text: { S: '"quoted"' } },
      d: { pk: { S: 'd' }, text: { S: '' } },
    });
    expect(await rejectsOf(result)).toMatchObject([{ line: 7, code: 'MISSING_KEY', raw: ',lost' }]);
  });

  it('reads CRLF files, with CRLF inside quoted fields, and keeps line numbers right', async () => {
    const table = await newTable();
    const input = await inputFile('crlf.csv', 'pk,text\r\na,"one\r\ntwo"\r\nb,plain\r\n,bad\r\nc,last\r\n');
    const result = await run({ input, table });
    expect(result).toMatchObject({ rowsRead: 4, written: 3, rejected: 1 });
    expect(Object.fromEntries(await itemsOf(table))).toEqual({
      a: { pk: { S: 'a' }, text: { S: 'one\r\ntwo' } },
      b: { pk: { S: 'b' }, text: { S: 'plain' } },
      c: { pk: { S: 'c' }, text: { S: 'last' } },
    });
    expect(await rejectsOf(result)).toMatchObject([{ line: 5, code: 'MISSING_KEY', raw: ',bad' }]);
  });

  it('strips a UTF-8 BOM from the header (CSV) and the first line (JSONL)', async () => {
    const csvTable = await newTable();
    const csv = await run({ input: await inputFile('bom.csv', '\uFEFFpk,v\r\nä,1\r\n'), table: csvTable });
    expect(csv).toMatchObject({ rowsRead: 1, written: 1, rejected: 0 });
    expect(Object.fromEntries(await itemsOf(csvTable))).toEqual({ ä: { pk: { S: 'ä' }, v: { S: '1' } } });

    const jsonTable = await newTable();
    const jsonl = await run({ input: await inputFile('bom.jsonl', '\uFEFF{"pk":"ö","v":1}\n'), table: jsonTable });
    expect(jsonl).toMatchObject({ rowsRead: 1, written: 1, rejected: 0 });
    expect(Object.fromEntries(await itemsOf(jsonTable))).toEqual({ ö: { pk: { S: 'ö' }, v: { N: '1' } } });
  });

  it.each(['orders.csv.gz', 'orders-gzipped-but-named.csv'])('reads a gzipped file (%s), detected by its magic bytes', async (name) => {
    const table = await newTable(ORDERS_KEYS);
    const input = await inputFile(name, gzipSync(readFileSync(sample('orders.csv'))));
    const plain = await newTable(ORDERS_KEYS);
    const expected = await run({ input: sample('orders.csv'), table: plain, types: ORDER_TYPES });
    const result = await run({ input, table, types: ORDER_TYPES });
    expect(result).toMatchObject({ rowsRead: expected.rowsRead, written: expected.written, rejected: 0 });
    expect(result.rowsRead).toBeGreaterThan(200);
    expect(await itemsOf(table, ORDERS_KEYS)).toEqual(await itemsOf(plain, ORDERS_KEYS));
  });
});

describe('stdin', () => {
  const csv = 'pk,v\na,1\nb,2\nc,3\n';

  it('reads CSV from deps.stdin for input "-", in several chunks', async () => {
    const table = await newTable();
    const stdin = Readable.from(csv.split(/(?<=\n)/).map((line) => Buffer.from(line)));
    const result = await run({ input: '-', inputFormat: 'csv', table }, { stdin });
    expect(result).toMatchObject({ input: '-', rowsRead: 3, written: 3, rejected: 0 });
    expect([...(await itemsOf(table)).keys()].sort()).toEqual(['a', 'b', 'c']);
  });

  it('reads JSONL from deps.stdin, and names stdin in the reject file', async () => {
    const table = await newTable();
    const stdin = Readable.from(['{"pk":"a"}\n', '{"pk":"b","n":2}\n', '{oops\n'].map((s) => Buffer.from(s)));
    const result = await run({ input: '-', inputFormat: 'jsonl', table }, { stdin });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1 });
    expect(Object.fromEntries(await itemsOf(table))).toEqual({ a: { pk: { S: 'a' } }, b: { pk: { S: 'b' }, n: { N: '2' } } });
    expect(await rejectsOf(result)).toMatchObject([{ file: 'stdin', line: 3, code: 'JSON_SYNTAX', raw: '{oops' }]);
  });

  // A small input often arrives as one chunk followed at once by the end of the stream. Regression: these
  // loaded 0 rows (unshift after 'end' in openInput) until 5bd6e67.
  it.each([
    { what: 'CSV', inputFormat: 'csv' as const, body: Buffer.from(csv) },
    { what: 'JSONL', inputFormat: 'jsonl' as const, body: Buffer.from('{"pk":"a"}\n{"pk":"b"}\n{"pk":"c"}\n') },
    { what: 'gzipped CSV', inputFormat: 'csv' as const, body: gzipSync(csv) },
  ])('reads $what from stdin that arrives as a single chunk', async ({ inputFormat, body }) => {
    const table = await newTable();
    const result = await run({ input: '-', inputFormat, table }, { stdin: Readable.from([body]) });
    expect(result).toMatchObject({ rowsRead: 3, written: 3, rejected: 0 });
    expect([...(await itemsOf(table)).keys()].sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('JSON input', () => {
  it('loads the same orders from CSV, JSONL and a DynamoDB S3 export (samples/)', async () => {
    const fromCsv = await newTable(ORDERS_KEYS);
    const fromJsonl = await newTable(ORDERS_KEYS);
    const fromExport = await newTable(ORDERS_KEYS);
    const csv = await run({ input: sample('orders.csv'), table: fromCsv, types: ORDER_TYPES });
    const jsonl = await run({ input: sample('orders.jsonl'), table: fromJsonl });
    const ddb = await run({ input: sample('orders.ddb.jsonl'), inputFormat: 'ddb-json', table: fromExport });
    for (const result of [csv, jsonl, ddb]) {
      expect(result).toMatchObject({ rejected: 0, complete: true });
      expectAccounting(result);
    }
    const csvItems = await itemsOf(fromCsv, ORDERS_KEYS);
    const jsonlItems = await itemsOf(fromJsonl, ORDERS_KEYS);
    const exportItems = await itemsOf(fromExport, ORDERS_KEYS);
    expect(csvItems.size).toBe(csv.written);
    expect(jsonlItems.size).toBe(jsonl.written);
    expect(exportItems.size).toBe(ddb.rowsRead);
    expect(exportItems.size).toBeGreaterThan(0);
    expect(jsonlItems).toEqual(csvItems);
    for (const [key, item] of exportItems) expect(item, key).toEqual(jsonlItems.get(key));
    expect(exportItems.values().next().value).toMatchObject({
      total: { N: expect.any(String) },
      gift: { BOOL: expect.any(Boolean) },
      items: { L: expect.any(Array) },
    });
  });

  it('warns once when plain JSONL looks like DynamoDB JSON, and rejects its lines (no key attribute)', async () => {
    const table = await newTable(ORDERS_KEYS);
    const warnings: string[] = [];
    const result = await run({ input: sample('orders.ddb.jsonl'), table }, { onEvent: (e) => void (e.type === 'warning' && warnings.push(e.message)) });
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toMatch(/line 1 .*ddb-json/);
    expect(result).toMatchObject({ written: 0, rejected: result.rowsRead, rejectedByReason: { MISSING_KEY: result.rowsRead } });
  });

  it('stores DynamoDB JSON of every type exactly, bare items and S3-export lines alike', async () => {
    const table = await newTable();
    const all: Record<string, PlainValue> = {
      pk: { S: 'all' },
      s: { S: 'text "q" ✓' },
      n: { N: '-0.000000000000000000000000000000000012345' },
      big: { N: '12345678901234567890123456789012345678' },
      b: { B: 'AAECAwQ=' },
      t: { BOOL: true },
      f: { BOOL: false },
      nul: { NULL: true },
      m: { M: { x: { N: '1' }, y: { L: [{ S: 'a' }, { NULL: true }] } } },
      l: { L: [{ N: '2' }, { M: {} }, { L: [] }] },
      ss: { SS: ['a', 'b'] },
      ns: { NS: ['1', '2.5'] },
      bs: { BS: ['AQ==', 'Ag=='] },
    };
    const lines = [JSON.stringify(all), JSON.stringify({ Item: { pk: { S: 'export' }, n: { N: '42' } } }), JSON.stringify({ pk: { S: 'bare' } })];
    const result = await run({ input: await inputFile('types.ddb.jsonl', `${lines.join('\n')}\n`), inputFormat: 'ddb-json', table });
    expect(result).toMatchObject({ rowsRead: 3, written: 3, rejected: 0 });
    const items = await itemsOf(table);
    expect(items.get('all')).toEqual(all);
    expect(items.get('export')).toEqual({ pk: { S: 'export' }, n: { N: '42' } });
    expect(items.get('bare')).toEqual({ pk: { S: 'bare' } });
  });
});

describe('typing', () => {
  it('applies --types N, BOOL, SS, NS, BS, B, JSON, M and L to CSV cells', async () => {
    const table = await newTable();
    const input = await inputFile(
      'types.csv',
      [
        'pk,n,flag,ss,ns,bs,bin,js,m,l',
        'k1,-12.50,TRUE,a|b|a,"[1, 2.0, 3]",AQI=|AwQ=,aGVsbG8=,"{""a"":[1,""x"",null,true]}","{""k"":{""n"":1.5}}","[1,""a""]"',
        'k2,0,0,x,7,AQI=,AA==,"""str""",{},[]',
        'k3,1,false,"[""p"",""q""]",1|1.0|2,AQI=,AA==,12,"{}","[]"',
      ].join('\n'),
    );
    const result = await run({ input, table, types: { n: 'N', flag: 'BOOL', ss: 'SS', ns: 'NS', bs: 'BS', bin: 'B', js: 'JSON', m: 'M', l: 'L' } });
    expect(result).toMatchObject({ rowsRead: 3, written: 3, rejected: 0 });
    const items = await itemsOf(table);
    expect(items.get('k1')).toEqual({
      pk: { S: 'k1' },
      n: { N: '-12.5' },
      flag: { BOOL: true },
      ss: { SS: ['a', 'b'] },
      ns: { NS: ['1', '2', '3'] },
      bs: { BS: ['AQI=', 'AwQ='] },
      bin: { B: 'aGVsbG8=' },
      js: { M: { a: { L: [{ N: '1' }, { S: 'x' }, { NULL: true }, { BOOL: true }] } } },
      m: { M: { k: { M: { n: { N: '1.5' } } } } },
      l: { L: [{ N: '1' }, { S: 'a' }] },
    });
    expect(items.get('k2')).toEqual({
      pk: { S: 'k2' },
      n: { N: '0' },
      flag: { BOOL: false },
      ss: { SS: ['x'] },
      ns: { NS: ['7'] },
      bs: { BS: ['AQI='] },
      bin: { B: 'AA==' },
      js: { S: 'str' },
      m: { M: {} },
      l: { L: [] },
    });
    expect(items.get('k3')).toMatchObject({ ss: { SS: ['p', 'q'] }, ns: { NS: ['1', '2'] }, js: { N: '12' } });
  });

  it('rejects cells that do not fit their --types with TYPE_ERROR naming the column', async () => {
    const table = await newTable();
    const input = await inputFile(
      'badtypes.csv',
      ['pk,n,flag,bin,m,ss', 'a,x,,,,', 'b,,maybe,,,', 'c,,,not base64!,,', 'd,,,,[1],', 'e,,,,,[]', 'ok,1,true,AA==,{},z'].join('\n'),
    );
    const result = await run({ input, table, types: { n: 'N', flag: 'BOOL', bin: 'B', m: 'M', ss: 'SS' } });
    expect(result).toMatchObject({ rowsRead: 6, written: 1, rejected: 5, rejectedByReason: { TYPE_ERROR: 5 } });
    expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field])).toEqual([
      [2, 'TYPE_ERROR', 'n'],
      [3, 'TYPE_ERROR', 'flag'],
      [4, 'TYPE_ERROR', 'bin'],
      [5, 'TYPE_ERROR', 'm'],
      [6, 'TYPE_ERROR', 'ss'],
    ]);
  });

  it('applies --types to JSONL values (strings to N/BOOL/B, arrays to sets) and passes values that already fit', async () => {
    const table = await newTable();
    const input = await inputFile(
      'types.jsonl',
      ['{"pk":"j1","n":"42","flag":"true","tags":["a","b"],"nums":[1,"2"],"bin":"aGk="}', '{"pk":"j2","n":7.25,"flag":false,"tags":["c"],"nums":[3]}'].join(
        '\n',
      ),
    );
    const result = await run({ input, table, types: { n: 'N', flag: 'BOOL', tags: 'SS', nums: 'NS', bin: 'B' } });
    expect(result).toMatchObject({ rowsRead: 2, written: 2, rejected: 0 });
    expect(Object.fromEntries(await itemsOf(table))).toEqual({
      j1: { pk: { S: 'j1' }, n: { N: '42' }, flag: { BOOL: true }, tags: { SS: ['a', 'b'] }, nums: { NS: ['1', '2'] }, bin: { B: 'aGk=' } },
      j2: { pk: { S: 'j2' }, n: { N: '7.25' }, flag: { BOOL: false }, tags: { SS: ['c'] }, nums: { NS: ['3'] } },
    });
  });

  it('--infer types only what round-trips: numbers without leading zeros, true/false, JSON objects and arrays', async () => {
    const table = await newTable();
    const cells: Array<[string, PlainValue]> = [
      ['007', { S: '007' }],
      ['12', { N: '12' }],
      ['-3.25', { N: '-3.25' }],
      ['1.50', { N: '1.5' }],
      ['1e5', { S: '1e5' }],
      ['+1', { S: '+1' }],
      ['-0', { S: '-0' }],
      ['true', { BOOL: true }],
      ['TRUE', { S: 'TRUE' }],
      ['{"a":1}', { M: { a: { N: '1' } } }],
      ['[1,"x"]', { L: [{ N: '1' }, { S: 'x' }] }],
      ['{bad', { S: '{bad' }],
      ['12345678901234567890123456789012345678', { N: '12345678901234567890123456789012345678' }],
      ['123456789012345678901234567890123456789', { S: '123456789012345678901234567890123456789' }],
      ['NaN', { S: 'NaN' }],
    ];
    const header = ['pk', ...cells.map((_, i) => `c${i}`)].join(',');
    const row = ['r', ...cells.map(([text]) => `"${text.replace(/"/g, '""')}"`)].join(',');
    const result = await run({ input: await inputFile('infer.csv', `${header}\n${row}\n`), table, infer: true });
    expect(result).toMatchObject({ written: 1, rejected: 0 });
    const item = (await itemsOf(table)).get('r');
    expect(item).toEqual({ pk: { S: 'r' }, ...Object.fromEntries(cells.map(([, value], i) => [`c${i}`, value])) });
  });

  it('stores 38-digit numbers and 20-digit ids exactly (no trip through a double)', async () => {
    const keys: TableKeys = { partitionKey: { name: 'id', type: 'N' } };
    const csvTable = await newTable(keys);
    const csv = await run({
      input: await inputFile(
        'bignum.csv',
        'id,n,small\n98765432109876543210,12345678901234567890123456789012345678,-0.12345678901234567890123456789012345678\n98765432109876543211,99999999999999999999999999999999999999E88,1E-129\n',
      ),
      table: csvTable,
      types: { n: 'N', small: 'N' },
    });
    // The two ids differ only in the 20th digit: as doubles they would be one key.
    expect(csv).toMatchObject({ rowsRead: 2, written: 2, superseded: 0, rejected: 0 });
    const csvItems = await itemsOf(csvTable, keys);
    expect(csvItems.get('98765432109876543210')).toEqual({
      id: { N: '98765432109876543210' },
      n: { N: '12345678901234567890123456789012345678' },
      small: { N: '-0.12345678901234567890123456789012345678' },
    });
    expect(csvItems.get('98765432109876543211')?.['id']).toEqual({ N: '98765432109876543211' });

    const jsonTable = await newTable(keys);
    const jsonl = await run({
      input: await inputFile(
        'bignum.jsonl',
        '{"id":12345678901234567890,"x":9007199254740993,"d":0.1000000000000000055511151231257827,"list":[12345678901234567890123]}\n{"id":12345678901234567891}\n',
      ),
      table: jsonTable,
    });
    expect(jsonl).toMatchObject({ rowsRead: 2, written: 2, rejected: 0 });
    expect(Object.fromEntries(await itemsOf(jsonTable, keys))).toEqual({
      '12345678901234567890': {
        id: { N: '12345678901234567890' },
        x: { N: '9007199254740993' },
        d: { N: '0.1000000000000000055511151231257827' },
        list: { L: [{ N: '12345678901234567890123' }] },
      },
      '12345678901234567891': { id: { N: '12345678901234567891' } },
    });
  });

  it('rejects numbers DynamoDB cannot hold (39 digits, out of range) instead of rounding them', async () => {
    const table = await newTable();
    const result = await run({
      input: await inputFile('toobig.csv', 'pk,n\na,123456789012345678901234567890123456789\nb,1E126\nc,1E-131\nd,1\n'),
      table,
      types: { n: 'N' },
    });
    expect(result).toMatchObject({ rowsRead: 4, written: 1, rejected: 3 });
    expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field])).toEqual([
      [2, 'TYPE_ERROR', 'n'],
      [3, 'TYPE_ERROR', 'n'],
      [4, 'TYPE_ERROR', 'n'],
    ]);
  });

  it.each([
    { empty: 'omit' as const, expected: { pk: { S: 'k' }, b: { S: 'x' } } },
    { empty: 'null' as const, expected: { pk: { S: 'k' }, a: { NULL: true }, b: { S: 'x' } } },
    { empty: 'string' as const, expected: { pk: { S: 'k' }, a: { S: '' }, b: { S: 'x' } } },
  ])('empty cells with --empty $empty', async ({ empty, expected }) => {
    const table = await newTable();
    const result = await run({ input: await inputFile('empty.csv', 'pk,a,b\nk,,x\n'), table, empty });
    expect(result).toMatchObject({ written: 1, rejected: 0 });
    expect((await itemsOf(table)).get('k')).toEqual(expected);
  });
});

describe('key types and limits', () => {
  it('loads into a table with N partition and N sort keys; 1 and 1.0 are one key', async () => {
    const keys: TableKeys = { partitionKey: { name: 'id', type: 'N' }, sortKey: { name: 'ver', type: 'N' } };
    const table = await newTable(keys);
    const result = await run({ input: await inputFile('nkey.csv', 'id,ver,v\n1,1,first\n1.0,1.00,second\n2,-5,x\n0010,3,leading\n'), table });
    expect(result).toMatchObject({ rowsRead: 4, written: 3, superseded: 1, rejected: 0 });
    expect(Object.fromEntries(await itemsOf(table, keys))).toEqual({
      '1|1': { id: { N: '1' }, ver: { N: '1' }, v: { S: 'second' } },
      '2|-5': { id: { N: '2' }, ver: { N: '-5' }, v: { S: 'x' } },
      '10|3': { id: { N: '10' }, ver: { N: '3' }, v: { S: 'leading' } },
    });
  });

  it('rejects a JSON string in an N key with KEY_TYPE_MISMATCH, and converts it when --types says so', async () => {
    const keys: TableKeys = { partitionKey: { name: 'id', type: 'N' } };
    const text = '{"id":"123","v":1}\n{"id":7}\n';
    const strict = await run({ input: await inputFile('nkey.jsonl', text), table: await newTable(keys) });
    expect(strict).toMatchObject({ written: 1, rejected: 1 });
    const [reject] = await rejectsOf(strict);
    expect(reject).toMatchObject({ line: 1, code: 'KEY_TYPE_MISMATCH', field: 'id', key: { id: '123' }, raw: '{"id":"123","v":1}' });
    expect(reject!.message).toContain('--types id:N');

    const table = await newTable(keys);
    const typed = await run({ input: await inputFile('nkey.jsonl', text), table, types: { id: 'N' } });
    expect(typed).toMatchObject({ written: 2, rejected: 0 });
    expect([...(await itemsOf(table, keys)).keys()].sort()).toEqual(['123', '7']);
  });

  it('loads into a table with a B partition key (base64 cells)', async () => {
    const keys: TableKeys = { partitionKey: { name: 'id', type: 'B' } };
    const table = await newTable(keys);
    const result = await run({ input: await inputFile('bkey.csv', 'id,v\nAQID,a\nBAUG,b\nnot base64,c\n'), table });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1 });
    expect(Object.fromEntries(await itemsOf(table, keys))).toEqual({
      AQID: { id: { B: 'AQID' }, v: { S: 'a' } },
      BAUG: { id: { B: 'BAUG' }, v: { S: 'b' } },
    });
    expect(await rejectsOf(result)).toMatchObject([{ line: 4, field: 'id' }]);
  });

  it('stores an item of exactly 400 KB and rejects one byte more as ITEM_TOO_LARGE', async () => {
    const table = await newTable();
    // Size = name and value bytes: "pk" + "fits"/"over" (6) + "data" (4) + the string.
    const limit = 400 * 1024;
    const fits = 'x'.repeat(limit - 10);
    const lines = [`{"pk":"fits","data":"${fits}"}`, `{"pk":"over","data":"${fits}y"}`, `{"pk":"small","data":"z"}`];
    const result = await run({ input: await inputFile('size.jsonl', lines.join('\n')), table });
    expect(result).toMatchObject({ rowsRead: 3, written: 2, rejected: 1, rejectedByReason: { ITEM_TOO_LARGE: 1 } });
    const items = await itemsOf(table);
    expect((items.get('fits')?.['data'] as { S: string }).S.length).toBe(limit - 10);
    expect(items.has('small')).toBe(true);
    const [reject] = await rejectsOf(result);
    expect(reject).toMatchObject({ line: 2, code: 'ITEM_TOO_LARGE', key: { pk: 'over' } });
    expect(reject!.raw).toBe(lines[1]);
  });

  it('stores keys at the length limits (2048-byte partition key, 1024-byte sort key) and rejects longer ones as KEY_TOO_LONG', async () => {
    const keys: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
    const table = await newTable(keys);
    const pk2048 = 'é'.repeat(1024);
    const sk1024 = 's'.repeat(1024);
    const rows = [`${pk2048},a`, `${pk2048}x,b`, `p,${sk1024}`, `q,${sk1024}é`];
    const result = await run({ input: await inputFile('keylen.csv', `pk,sk\n${rows.join('\n')}\n`), table });
    expect(result).toMatchObject({ rowsRead: 4, written: 2, rejected: 2, rejectedByReason: { KEY_TOO_LONG: 2 } });
    const stored = await itemsOf(table, keys);
    expect(stored.has(`${pk2048}|a`)).toBe(true);
    expect(stored.has(`p|${sk1024}`)).toBe(true);
    expect((await rejectsOf(result)).map((r) => [r.line, r.code, r.field, r.key])).toEqual([
      [3, 'KEY_TOO_LONG', 'pk', { pk: `${pk2048}x`, sk: 'b' }],
      [5, 'KEY_TOO_LONG', 'sk', { pk: 'q', sk: `${sk1024}é` }],
    ]);
  });
});

describe('duplicate primary keys', () => {
  it('keeps the later of adjacent duplicates and counts the earlier ones as superseded', async () => {
    const table = await newTable();
    const result = await run({ input: await inputFile('dups.csv', 'pk,v\na,1\na,2\nb,1\na,3\n'), table });
    expect(result).toMatchObject({ rowsRead: 4, written: 2, superseded: 2, rejected: 0, complete: true });
    expect(Object.fromEntries(await itemsOf(table))).toEqual({ a: { pk: { S: 'a' }, v: { S: '3' } }, b: { pk: { S: 'b' }, v: { S: '1' } } });
  });

  it('stores the later row when duplicates are far apart (rows 10.. and 5000.., concurrency 8)', async () => {
    const table = await newTable();
    const lines = ['pk,v'];
    for (let i = 0; i < 6000; i++) {
      const dup = (i >= 10 && i < 60) || (i >= 5000 && i < 5050);
      lines.push(dup ? `dup-${i < 5000 ? i - 10 : i - 5000},${i < 5000 ? 'early' : 'late'}` : `k${i},x`);
    }
    const result = await run({ input: await inputFile('fardups.csv', `${lines.join('\n')}\n`), table, concurrency: 8 });
    expect(result).toMatchObject({ rowsRead: 6000, rejected: 0 });
    expectAccounting(result);
    const items = await itemsOf(table);
    const dups = [...items.entries()].filter(([k]) => k.startsWith('dup-'));
    expect(dups.length).toBe(50);
    expect(dups.filter(([, item]) => (item['v'] as { S: string }).S !== 'late').map(([k]) => k)).toEqual([]);
  });

  it('keeps the later row when the earlier batch with the same keys is still being retried', async () => {
    const proxy = await startFaultProxy(endpoint, (i) => (i === 0 ? ({ ...faults.internal(), delayMs: 300 } as FaultAction) : faults.forward()));
    try {
      const table = await newTable();
      const first = Array.from({ length: 25 }, (_, i) => `k${i},first`);
      const second = Array.from({ length: 25 }, (_, i) => `k${i},second`);
      const result = await run({
        input: await inputFile('inflight.csv', `pk,v\n${[...first, ...second].join('\n')}\n`),
        table,
        endpoint: proxy.url,
        concurrency: 8,
        maxAttempts: 3,
      });
      expect(result).toMatchObject({ rowsRead: 50, written: 50, superseded: 0, rejected: 0, retries: 1 });
      const items = await itemsOf(table);
      expect([...items.values()].filter((item) => (item['v'] as { S: string }).S !== 'second').length).toBe(0);
      expect(items.size).toBe(25);
    } finally {
      await proxy.close();
    }
  });
});

describe('reject file', () => {
  it('records CSV rejects with file, line, code, message, key and raw text', async () => {
    const table = await newTable();
    const longKey = 'k'.repeat(2049);
    const big = 'x'.repeat(410_000);
    const text = [
      'pk,n,flag,big', // 1
      'ok1,1,true,', // 2
      ',2,true,', // 3 MISSING_KEY
      'bad-n,x,true,', // 4 TYPE_ERROR
      '"multi', // 5
      'line",3,false,', // 6 ok
      'short,4', // 7 CSV_SYNTAX
      'long,5,true,,extra', // 8 CSV_SYNTAX
      `${longKey},6,true,`, // 9 KEY_TOO_LONG
      'bad-flag,7,maybe,', // 10 TYPE_ERROR
      `large,8,true,${big}`, // 11 ITEM_TOO_LARGE
      'ok2,9,false,', // 12
    ].join('\n');
    const input = await inputFile('rejects.csv', `${text}\n`);
    const result = await run({ input, table, types: { n: 'N', flag: 'BOOL' } });
    expect(result).toMatchObject({ rowsRead: 10, written: 3, superseded: 0, rejected: 7, complete: false });
    expect(result.rejectedByReason).toEqual({ MISSING_KEY: 1, TYPE_ERROR: 2, CSV_SYNTAX: 2, KEY_TOO_LONG: 1, ITEM_TOO_LARGE: 1 });
    expect([...(await itemsOf(table)).keys()].sort()).toEqual(['multi\nline', 'ok1', 'ok2']);
    const rejects = await rejectsOf(result);
    expect(rejects.map((r) => [r.line, r.code])).toEqual([
      [3, 'MISSING_KEY'],
      [4, 'TYPE_ERROR'],
      [7, 'CSV_SYNTAX'],
      [8, 'CSV_SYNTAX'],
      [9, 'KEY_TOO_LONG'],
      [10, 'TYPE_ERROR'],
      [11, 'ITEM_TOO_LARGE'],
    ]);
    for (const r of rejects) expect(r.file).toBe(input);
    const byLine = new Map(rejects.map((r) => [r.line, r]));
    expect(byLine.get(3)).toMatchObject({ raw: ',2,true,', field: 'pk' });
    expect(byLine.get(3)).not.toHaveProperty('key');
    expect(byLine.get(4)).toMatchObject({ raw: 'bad-n,x,true,', field: 'n' });
    expect(byLine.get(7)).toMatchObject({ raw: 'short,4' });
    expect(byLine.get(7)).not.toHaveProperty('key');
    expect(byLine.get(8)).toMatchObject({ raw: 'long,5,true,,extra' });
    expect(byLine.get(9)).toMatchObject({ raw: `${longKey},6,true,`, key: { pk: longKey }, field: 'pk' });
    expect(byLine.get(10)).toMatchObject({ raw: 'bad-flag,7,maybe,', field: 'flag' });
    expect(byLine.get(11)).toMatchObject({ raw: `large,8,true,${big}`, key: { pk: 'large' } });
  });

  // Regression: TYPE_ERROR rejects had no key until 5bd6e67.
  it('names the key of a row rejected for a non-key TYPE_ERROR (the key columns were fine)', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } });
    const result = await run({ input: await inputFile('typekey.csv', 'pk,sk,n\na,b,notanumber\n'), table, types: { n: 'N' } });
    expect(await rejectsOf(result)).toMatchObject([{ line: 2, code: 'TYPE_ERROR', field: 'n', key: { pk: 'a', sk: 'b' } }]);
  });

  it('records JSONL rejects: JSON_SYNTAX, NOT_AN_OBJECT, MISSING_KEY, KEY_TYPE_MISMATCH, TYPE_ERROR, ITEM_TOO_LARGE, KEY_TOO_LONG', async () => {
    const table = await newTable();
    const longKey = 'k'.repeat(2049);
    const lines = [
      '{"pk":"ok1","n":1}', // 1
      '{"pk":"broken",', // 2 JSON_SYNTAX
      '[1,2]', // 3 NOT_AN_OBJECT
      'null', // 4 NOT_AN_OBJECT
      '{"n":5}', // 5 MISSING_KEY
      '{"pk":42}', // 6 KEY_TYPE_MISMATCH
      '', // 7 blank: skipped
      '{"pk":"emptyset","tags":[]}', // 8 TYPE_ERROR (SS cannot be empty)
      `{"pk":"huge","big":"${'x'.repeat(410_000)}"}`, // 9 ITEM_TOO_LARGE
      `{"pk":"${longKey}"}`, // 10 KEY_TOO_LONG
      '{"pk":"ok2"}', // 11
    ];
    const input = await inputFile('rejects.jsonl', `${lines.join('\r\n')}\r\n`);
    const result = await run({ input, table, types: { tags: 'SS' } });
    expect(result).toMatchObject({ rowsRead: 10, written: 2, rejected: 8 });
    expectAccounting(result);
    const rejects = await rejectsOf(result);
    expect(rejects.map((r) => [r.line, r.code, r.raw])).toEqual([
      [2, 'JSON_SYNTAX', lines[1]],
      [3, 'NOT_AN_OBJECT', lines[2]],
      [4, 'NOT_AN_OBJECT', lines[3]],
      [5, 'MISSING_KEY', lines[4]],
      [6, 'KEY_TYPE_MISMATCH', lines[5]],
      [8, 'TYPE_ERROR', lines[7]],
      [9, 'ITEM_TOO_LARGE', lines[8]],
      [10, 'KEY_TOO_LONG', lines[9]],
    ]);
    const byLine = new Map(rejects.map((r) => [r.line, r]));
    for (const line of [2, 3, 4, 5]) expect(byLine.get(line)).not.toHaveProperty('key');
    expect(byLine.get(6)).toMatchObject({ key: { pk: '42' }, field: 'pk' });
    expect(byLine.get(9)).toMatchObject({ key: { pk: 'huge' } });
    expect(byLine.get(10)).toMatchObject({ key: { pk: longKey } });
    for (const r of rejects) expect(r.file).toBe(input);
  });

  it('rejects only the row whose GSI key type DynamoDB would refuse, before sending it, storing the other 24', async () => {
    const table = `t_gsi_${process.pid}_${++seq}`;
    await client().send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'score', AttributeType: 'N' },
        ],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          { IndexName: 'byScore', KeySchema: [{ AttributeName: 'score', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
        ],
      }),
    );
    trackTable(table);
    const lines = Array.from({ length: 25 }, (_, i) => (i === 17 ? `{"pk":"row${i}","score":"high"}` : `{"pk":"row${i}","score":${i}}`));
    const result = await run({ input: await inputFile('gsi.jsonl', `${lines.join('\n')}\n`), table });
    // Predicted from DescribeTable's AttributeDefinitions, with the field and the index named
    // (DynamoDB's ValidationException names neither; refusals nothing predicts are still WRITE_REJECTED).
    expect(result).toMatchObject({ rowsRead: 25, written: 24, rejected: 1, rejectedByReason: { KEY_TYPE_MISMATCH: 1 } });
    const items = await itemsOf(table);
    expect(items.size).toBe(24);
    expect(items.has('row17')).toBe(false);
    const [reject] = await rejectsOf(result);
    expect(reject).toMatchObject({ line: 18, code: 'KEY_TYPE_MISMATCH', field: 'score', key: { pk: 'row17' }, raw: lines[17] });
    expect(reject!.message).toMatch(/byScore/);
  });
});

describe('retries through a fault proxy', () => {
  const rows = (n: number) => `pk,v\n${Array.from({ length: n }, (_, i) => `k${String(i).padStart(4, '0')},${i}`).join('\n')}\n`;

  /** Rows a call actually stored: all of a forwarded call, the first `process` of an 'unprocessed' one. */
  const storedBy = (action: FaultAction, requestCount: number) =>
    action.kind === 'forward' ? requestCount : action.kind === 'unprocessed' ? Math.min(action.process, requestCount) : 0;

  it.each<{ name: string; fault: (n: number) => FaultAction; throttled: boolean }>([
    { name: 'UnprocessedItems', fault: (n) => ({ kind: 'unprocessed', process: Math.floor(n / 2) }), throttled: true },
    { name: '400 ProvisionedThroughputExceededException', fault: faults.throttled, throttled: true },
    { name: '400 ThrottlingException', fault: faults.throttling, throttled: true },
    { name: '500 InternalServerError', fault: faults.internal, throttled: false },
    { name: '503 ServiceUnavailable', fault: faults.unavailable, throttled: false },
    { name: 'dropped connection', fault: faults.drop, throttled: false },
  ])('stores every row after transient faults: $name', async ({ fault, throttled }) => {
    const FAULTS = 4;
    const decided: Array<{ action: FaultAction; requestCount: number }> = [];
    const policy: FaultPolicy = (i, n) => {
      const action = i < FAULTS ? fault(n) : faults.forward();
      decided.push({ action, requestCount: n });
      return action;
    };
    const proxy = await startFaultProxy(endpoint, policy);
    try {
      const table = await newTable();
      const result = await run({ input: await inputFile('transient.csv', rows(120)), table, endpoint: proxy.url, concurrency: 4, maxAttempts: FAULTS + 2 });
      expect(result).toMatchObject({ rowsRead: 120, written: 120, rejected: 0, complete: true });
      expect(result.retries).toBe(FAULTS);
      if (throttled) expect(result.throttledItems).toBeGreaterThan(0);
      else expect(result.throttledItems).toBe(0);
      expect(proxy.faultCount()).toBe(FAULTS);
      // Only what was not stored is sent again: the rows stored over all calls add up to the input exactly.
      expect(decided.reduce((sum, d) => sum + storedBy(d.action, d.requestCount), 0)).toBe(120);
      const items = await itemsOf(table);
      expect(items.size).toBe(120);
      expect(items.get('k0119')).toEqual({ pk: { S: 'k0119' }, v: { S: '119' } });
    } finally {
      await proxy.close();
    }
  });

  it('a 503 from every call is an outage, not bad data: the load stops (ENDPOINT_UNREACHABLE) after --outage-timeout, no row rejected', async () => {
    const proxy = await startFaultProxy(endpoint, () => faults.unavailable());
    try {
      const table = await newTable();
      const input = await inputFile('permanent.csv', rows(60));
      const events: LoadEvent[] = [];
      const error = await runFailing(
        { input, table, endpoint: proxy.url, concurrency: 2, maxAttempts: 3, outageTimeoutMs: 500 },
        { onEvent: (e) => events.push(e) },
      );
      expect(error.code).toBe('ENDPOINT_UNREACHABLE');
      expect(error.result).toMatchObject({ rowsRead: 60, written: 0, rejected: 0, notWritten: 60, complete: false });
      expect(events.filter((e) => e.type === 'endpointDown')).toEqual([expect.objectContaining({ reason: 'HTTP 503 ServiceUnavailableException' })]);
      expect((await itemsOf(table)).size).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('rejects every row as RETRIES_EXHAUSTED when throttled for good, after maxAttempts sends per batch', async () => {
    const proxy = await startFaultProxy(endpoint, () => faults.throttled());
    try {
      const table = await newTable();
      const input = await inputFile('permanent.csv', rows(60));
      const result = await run({ input, table, endpoint: proxy.url, concurrency: 2, maxAttempts: 3, pacing: false });
      expect(result).toMatchObject({ rowsRead: 60, written: 0, rejected: 60, rejectedByReason: { RETRIES_EXHAUSTED: 60 }, complete: false });
      expectAccounting(result);
      expect(result.retries).toBe(3 * 2); // 3 batches (25, 25, 10), 2 retries each
      expect(proxy.calls.length).toBe(3 * 3);
      expect((await itemsOf(table)).size).toBe(0);
      const rejects = await rejectsOf(result);
      expect(rejects.map((r) => r.line)).toEqual(Array.from({ length: 60 }, (_, i) => i + 2));
      expect(rejects[0]).toMatchObject({ file: input, code: 'RETRIES_EXHAUSTED', key: { pk: 'k0000' }, raw: 'k0000,0' });
      expect(rejects[0]!.message).toMatch(/3 attempts/);
    } finally {
      await proxy.close();
    }
  });

  it('rejects only the items that stay unprocessed, and the accounting adds up', async () => {
    // Every call leaves its last request unprocessed: each batch ends with exactly one row not stored.
    const proxy = await startFaultProxy(endpoint, (_, n) => ({ kind: 'unprocessed', process: n - 1 }));
    try {
      const table = await newTable();
      const result = await run({ input: await inputFile('partial.csv', rows(60)), table, endpoint: proxy.url, concurrency: 3, maxAttempts: 3 });
      expect(result).toMatchObject({ rowsRead: 60, written: 57, rejected: 3, rejectedByReason: { RETRIES_EXHAUSTED: 3 } });
      expectAccounting(result);
      expect((await rejectsOf(result)).map((r) => [r.line, r.key])).toEqual([
        [26, { pk: 'k0024' }],
        [51, { pk: 'k0049' }],
        [61, { pk: 'k0059' }],
      ]);
      const items = await itemsOf(table);
      expect(items.size).toBe(57);
      expect(items.has('k0024')).toBe(false);
    } finally {
      await proxy.close();
    }
  });
});

describe('stopping', () => {
  it('stops with MAX_REJECTS_REACHED once maxRejects rows are rejected, with the counters in error.result', async () => {
    const table = await newTable();
    const lines = ['pk,n'];
    for (let i = 0; i < 100; i++) lines.push(i % 10 === 5 ? `bad${i},x` : `ok${i},${i}`);
    const error = await runFailing({ input: await inputFile('maxrejects.csv', `${lines.join('\n')}\n`), table, types: { n: 'N' }, maxRejects: 3 });
    expect(error.code).toBe('MAX_REJECTS_REACHED');
    expect(error.message).toMatch(/3/);
    const result = error.result!;
    expect(result).toBeDefined();
    expect(result.rejected).toBe(3);
    expect(result.rowsRead).toBe(26); // the third bad row is row 26
    expect(result.written + result.superseded + result.rejected).toBeLessThanOrEqual(result.rowsRead);
    expect((await rejectsOf(result)).map((r) => r.line)).toEqual([7, 17, 27]);
  });

  it('fails with TABLE_NOT_FOUND naming a missing table', async () => {
    const error = await runFailing({ input: sample('orders.csv'), table: `missing_${process.pid}_table` });
    expect(error.code).toBe('TABLE_NOT_FOUND');
    expect(error.message).toContain(`missing_${process.pid}_table`);
    // A load that never started (no table) carries no counters, so the CLI prints one sentence only.
    expect(error.result).toBeUndefined();
  });
});

describe('a 100k-row export', () => {
  it('stores every row with the right attributes', async () => {
    // 40,000 rows (1,600 batches, every generated type and size), in 40% of the time 100,000 took alone on the
    // machine (CI runs near its limit); the bench loads more.
    const COUNT = 40_000;
    const keys: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
    const table = await newTable(keys);
    const input = join(dir(), 'export-40k.csv');
    await writeGeneratedCsv(input, COUNT);

    let started = performance.now();
    const result = await run({ input, table, types: GENERATED_TYPES });
    const loadMs = performance.now() - started;
    started = performance.now();
    expect(result).toMatchObject({ rowsRead: COUNT, written: COUNT, superseded: 0, rejected: 0, complete: true });

    const expected = new Map<string, string>();
    for (let i = 0; i < COUNT; i++) {
      const row = generatedRow(i);
      expected.set(`${row.pk}|${row.sk}`, canonicalItem(generatedItem(row)));
    }
    const scanned = (await Promise.all([0, 1, 2, 3].map((segment) => scanSegment(table, segment, 4)))).flat();
    expect(scanned.length).toBe(COUNT);
    const actual = new Map<string, string>();
    for (const item of scanned) actual.set(`${(item['pk'] as AttributeValue.SMember).S}|${(item['sk'] as AttributeValue.NMember).N}`, canonicalItem(item));
    const wrong = [...expected].filter(([key, text]) => actual.get(key) !== text).slice(0, 5);
    expect(wrong.map(([key, text]) => ({ key, expected: text, actual: actual.get(key) }))).toEqual([]);
    const digest = (texts: Iterable<string>) =>
      createHash('sha256')
        .update([...texts].sort().join('\n'))
        .digest('hex');
    expect(digest(actual.values())).toBe(digest(expected.values()));
    console.info(
      `40k rows: load ${Math.round(loadMs)} ms (${Math.round((COUNT * 1000) / loadMs)} items/s, ${result.batches} batches), scan and compare ${Math.round(performance.now() - started)} ms`,
    );
    await dropTable(table);
  }, 180_000);
});
