import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import type { RejectCode } from '../../../src/shared/errors.js';
import { MAX_ITEM_BYTES } from '../../../src/typing/itemSize.js';
import { keyIdOf } from '../../../src/typing/key.js';
import { createRowPlanner, isRejected, type JsonFlavor, type SourceRecord } from '../../../src/typing/planRow.js';
import type { ColumnType, TypeMapOptions } from '../../../src/typing/typeMap.js';
import type { KeySchema, PlannedWrite, RejectedRow, RowOrigin } from '../../../src/shared/types.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

function planner(over: Partial<TypeMapOptions> & { jsonFlavor?: JsonFlavor } = {}) {
  return createRowPlanner({ keySchema: SCHEMA, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json', ...over });
}

const origin = (line: number, raw: string): RowOrigin => ({ file: 'in.data', line, raw });
const csv = (line: number, cells: Record<string, string>): SourceRecord => ({ kind: 'csv', origin: origin(line, Object.values(cells).join(',')), cells });
const json = (line: number, raw: string): SourceRecord => ({ kind: 'json', origin: origin(line, raw) });

function planned(result: PlannedWrite | RejectedRow): PlannedWrite {
  if (isRejected(result)) throw new Error(`expected a planned write, got ${result.code}: ${result.message}`);
  return result;
}

function rejected(result: PlannedWrite | RejectedRow): RejectedRow {
  if (!isRejected(result)) throw new Error(`expected a rejection, got a write of ${JSON.stringify(result.keyId)}`);
  return result;
}

const marshalled = (w: PlannedWrite): Record<string, AttributeValue> => marshall(w.item, { removeUndefinedValues: true });

describe('createRowPlanner: planned writes', () => {
  it('a CSV row gets its key id, size and write units; the origin is kept', () => {
    const record = csv(2, { pk: 'a', sk: '1.0', name: 'x' });
    const result = planned(planner().plan(record));
    expect(result.origin).toBe(record.origin);
    expect(result.keyId).toBe(keyIdOf({ pk: 'a', sk: new NumberValue('1') }, SCHEMA));
    // pk: 2 + 1, sk: 2 + 2 (the number 1), name: 4 + 1
    expect(result.size).toBe(12);
    expect(result.wcu).toBe(1);
    expect(marshalled(result)).toEqual({ pk: { S: 'a' }, sk: { N: '1' }, name: { S: 'x' } });
  });

  it('a JSON line keeps a 20-digit sort key exactly', () => {
    const result = planned(planner().plan(json(1, '{"pk":"a","sk":12345678901234567890}')));
    expect(marshalled(result)).toEqual({ pk: { S: 'a' }, sk: { N: '12345678901234567890' } });
    expect(result.keyId).toBe(keyIdOf({ pk: 'a', sk: new NumberValue('12345678901234567890') }, SCHEMA));
  });

  it('a DynamoDB-JSON line and an S3 export line plan to the same item', () => {
    const p = planner({ jsonFlavor: 'ddb-json' });
    const bare = planned(p.plan(json(1, '{"pk":{"S":"a"},"sk":{"N":"2"},"tags":{"SS":["x"]}}')));
    const exported = planned(p.plan(json(2, '{"Item":{"pk":{"S":"a"},"sk":{"N":"2"},"tags":{"SS":["x"]}}}')));
    expect(marshalled(bare)).toEqual({ pk: { S: 'a' }, sk: { N: '2' }, tags: { SS: ['x'] } });
    expect(marshalled(exported)).toEqual(marshalled(bare));
    expect(exported.keyId).toBe(bare.keyId);
    expect(exported.size).toBe(bare.size);
  });

  it('--types converts JSON strings in a key', () => {
    const result = planned(planner({ types: { sk: 'N' } }).plan(json(1, '{"pk":"a","sk":"5"}')));
    expect(marshalled(result)).toEqual({ pk: { S: 'a' }, sk: { N: '5' } });
  });

  it('an item of exactly 400 KB is accepted at 400 WCU; one byte more is ITEM_TOO_LARGE', () => {
    // pk: 2 + 1, sk: 2 + 2, blob: 4 + data
    const fill = MAX_ITEM_BYTES - 3 - 4 - 4;
    const ok = planned(planner().plan(csv(2, { pk: 'a', sk: '1', blob: 'x'.repeat(fill) })));
    expect(ok.size).toBe(MAX_ITEM_BYTES);
    expect(ok.wcu).toBe(400);
    expect(rejected(planner().plan(csv(3, { pk: 'a', sk: '1', blob: 'x'.repeat(fill + 1) }))).code).toBe('ITEM_TOO_LARGE');
  });
});

describe('createRowPlanner: rejected rows', () => {
  const cases: [string, JsonFlavor, Record<string, ColumnType>, SourceRecord, RejectCode, string | undefined, Record<string, string> | undefined][] = [
    // The reject record names the key from the raw cells even when typing failed (review of #2).
    ['CSV: bad number in the N sort key', 'json', {}, csv(2, { pk: 'a', sk: 'abc' }), 'TYPE_ERROR', 'sk', { pk: 'a', sk: 'abc' }],
    ['CSV: bad number in a typed column', 'json', { price: 'N' }, csv(3, { pk: 'a', sk: '1', price: 'x' }), 'TYPE_ERROR', 'price', { pk: 'a', sk: '1' }],
    ['CSV: empty partition key', 'json', {}, csv(4, { pk: '', sk: '1' }), 'MISSING_KEY', 'pk', undefined],
    ['CSV: partition key too long', 'json', {}, csv(5, { pk: 'x'.repeat(2049), sk: '1' }), 'KEY_TOO_LONG', 'pk', { pk: 'x'.repeat(2049), sk: '1' }],
    ['CSV: 410 KB attribute', 'json', {}, csv(6, { pk: 'a', sk: '7', blob: 'x'.repeat(410 * 1024) }), 'ITEM_TOO_LARGE', undefined, { pk: 'a', sk: '7' }],
    ['JSON: syntax error', 'json', {}, json(7, '{"pk":'), 'JSON_SYNTAX', undefined, undefined],
    ['JSON: not an object', 'json', {}, json(8, '[1,2]'), 'NOT_AN_OBJECT', undefined, undefined],
    ['JSON: missing sort key', 'json', {}, json(9, '{"pk":"a"}'), 'MISSING_KEY', 'sk', undefined],
    ['JSON: string in the N sort key', 'json', {}, json(10, '{"pk":"a","sk":"5"}'), 'KEY_TYPE_MISMATCH', 'sk', { pk: 'a', sk: '5' }],
    ['JSON: number in the S partition key', 'json', {}, json(11, '{"pk":5,"sk":1}'), 'KEY_TYPE_MISMATCH', 'pk', { pk: '5', sk: '1' }],
    ['JSON: bad --types conversion', 'json', { price: 'N' }, json(12, '{"pk":"a","sk":1,"price":"x"}'), 'TYPE_ERROR', 'price', undefined],
    ['JSON: 410 KB attribute', 'json', {}, json(13, `{"pk":"a","sk":1,"blob":"${'x'.repeat(410 * 1024)}"}`), 'ITEM_TOO_LARGE', undefined, { pk: 'a', sk: '1' }],
    ['ddb-json: plain JSON line', 'ddb-json', {}, json(14, '{"pk":"a","sk":1}'), 'TYPE_ERROR', 'pk', undefined],
    ['ddb-json: empty set', 'ddb-json', {}, json(15, '{"pk":{"S":"a"},"sk":{"N":"1"},"t":{"SS":[]}}'), 'TYPE_ERROR', 't', undefined],
    ['ddb-json: syntax error', 'ddb-json', {}, json(16, '{"pk":{"S":"a"'), 'JSON_SYNTAX', undefined, undefined],
  ];

  it.each(cases)('%s', (_label, jsonFlavor, types, record, code, field, key) => {
    const result = rejected(planner({ jsonFlavor, types }).plan(record));
    expect(result.code).toBe(code);
    expect(result.field).toBe(field);
    expect(result.key).toEqual(key);
    expect(result.origin).toBe(record.origin);
    expect(result.message.length).toBeGreaterThan(0);
  });

  it('an unparsable record keeps its code, message and origin', () => {
    const record: SourceRecord = { kind: 'unparsable', origin: origin(42, 'a,"b'), code: 'CSV_SYNTAX', message: 'Quote Not Closed' };
    const result = rejected(planner().plan(record));
    expect(result).toEqual({ origin: record.origin, code: 'CSV_SYNTAX', message: 'Quote Not Closed' });
    expect(result.origin).toBe(record.origin);
  });

  it('KEY_TYPE_MISMATCH on a JSON line suggests the --types flag that fixes it', () => {
    expect(rejected(planner().plan(json(1, '{"pk":"a","sk":"5"}'))).message).toContain('--types sk:N');
    expect(rejected(planner().plan(json(1, '{"pk":5,"sk":1}'))).message).toContain('--types pk:S');
  });

  it('a 39-digit number names its own column in the --types hint, and that flag then stores it as a string', () => {
    const digits = '1'.repeat(39);
    const line = `{"pk":"a","sk":1,"total":${digits}}`;
    const result = rejected(planner().plan(json(1, line)));
    expect(result.field).toBe('total');
    expect(result.message).toContain('--types total:S');
    expect(result.message).not.toContain('<column>');
    // What the hint says works: every digit kept, as text.
    expect(marshalled(planned(planner({ types: { total: 'S' } }).plan(json(1, line)))).total).toEqual({ S: digits });
  });

  it('a 39-digit number inside a map is not sent to --types, which cannot name it', () => {
    const result = rejected(planner().plan(json(1, `{"pk":"a","sk":1,"m":{"x":${'2'.repeat(39)}}}`)));
    expect(result.message).not.toMatch(/--types \S+:S/);
    expect(result.message).toContain('quote it');
  });

  it('a 39-digit CSV cell typed N points to S for its own column', () => {
    const result = rejected(planner({ types: { total: 'N' } }).plan(csv(2, { pk: 'a', sk: '1', total: '9'.repeat(39) })));
    expect(result.message).toContain('--types total:S');
  });

  it('no --types hint when the user already declared the key type', () => {
    const result = rejected(planner({ types: { sk: 'N' } }).plan(json(1, '{"pk":"a","sk":true}')));
    expect(result.code).toBe('TYPE_ERROR');
    expect(result.field).toBe('sk');
    expect(result.message).not.toContain('--types');
  });
});

describe('createRowPlanner: DynamoDB-JSON suspicion', () => {
  it.each([
    ['a bare DynamoDB-JSON item', '{"pk":{"S":"a"},"sk":{"N":"1"}}'],
    ['an S3 export line', '{"Item":{"pk":{"S":"a"},"sk":{"N":"1"}}}'],
    ['a one-attribute item', '{"pk":{"S":"a"}}'],
  ])('plain-JSON planner flags %s with its line', (_label, raw) => {
    const p = planner();
    expect(p.suspectedDynamoJsonLine).toBeUndefined();
    const result = p.plan(json(7, raw));
    expect(isRejected(result)).toBe(true);
    expect(p.suspectedDynamoJsonLine).toBe(7);
  });

  it('plain JSON is not flagged', () => {
    const p = planner();
    planned(p.plan(json(1, '{"pk":"a","sk":1,"m":{"S":"looks like a descriptor"}}')));
    expect(p.suspectedDynamoJsonLine).toBeUndefined();
  });

  it('the ddb-json planner never flags', () => {
    const p = planner({ jsonFlavor: 'ddb-json' });
    planned(p.plan(json(1, '{"pk":{"S":"a"},"sk":{"N":"1"}}')));
    expect(p.suspectedDynamoJsonLine).toBeUndefined();
  });

  it('CSV rows are never flagged', () => {
    const p = planner();
    p.plan(csv(2, { pk: '{"S":"a"}', sk: '1' }));
    expect(p.suspectedDynamoJsonLine).toBeUndefined();
  });
});
