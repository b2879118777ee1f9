import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { marshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemFromJson, parseJsonPrecise } from '../../../src/typing/json.js';
import {
  coerceJsonItem,
  convertCell,
  effectiveTypes,
  inferCell,
  itemFromCells,
  type ColumnType,
  type EmptyPolicy,
  type TypeMapOptions,
} from '../../../src/typing/typeMap.js';
import type { Item, KeySchema } from '../../../src/shared/types.js';
import { rowErrorOf } from '../../support/thrown.js';

/** What the SDK would send for one native value. */
function av(value: unknown): AttributeValue | undefined {
  return marshall({ v: value } as Record<string, NativeAttributeValue>, { removeUndefinedValues: true }).v;
}

function marshalled(item: Item): Record<string, AttributeValue> {
  return marshall(item, { removeUndefinedValues: true });
}

const b = (...values: number[]) => new Uint8Array(values);
const digits20 = '12345678901234567890';
const digits38 = '12345678901234567890123456789012345678';
const digits39 = `${digits38}9`;

describe('convertCell: explicit types round-trip through marshall', () => {
  it.each<[string, ColumnType, AttributeValue]>([
    ['hello', 'S', { S: 'hello' }],
    ['  padded ', 'S', { S: '  padded ' }],
    ['007', 'S', { S: '007' }],
    ['12.50', 'N', { N: '12.5' }],
    ['007', 'N', { N: '7' }],
    ['-0.0', 'N', { N: '0' }],
    [' 42 ', 'N', { N: '42' }],
    ['1e3', 'N', { N: '1000' }],
    ['+5', 'N', { N: '5' }],
    [digits20, 'N', { N: digits20 }],
    [`-${digits20}.25`, 'N', { N: `-${digits20}.25` }],
    [digits38, 'N', { N: digits38 }],
    ['true', 'BOOL', { BOOL: true }],
    ['TRUE', 'BOOL', { BOOL: true }],
    [' True ', 'BOOL', { BOOL: true }],
    ['1', 'BOOL', { BOOL: true }],
    ['false', 'BOOL', { BOOL: false }],
    ['False', 'BOOL', { BOOL: false }],
    ['0', 'BOOL', { BOOL: false }],
    ['AQID', 'B', { B: b(1, 2, 3) }],
    ['aGk=', 'B', { B: b(0x68, 0x69) }],
    ['AA==', 'B', { B: b(0) }],
    ['a|b|a', 'SS', { SS: ['a', 'b'] }],
    ['single', 'SS', { SS: ['single'] }],
    ['["x","y"]', 'SS', { SS: ['x', 'y'] }],
    ['["x","x"]', 'SS', { SS: ['x'] }],
    ['["a|b"]', 'SS', { SS: ['a|b'] }],
    ['1|2|1.0', 'NS', { NS: ['1', '2'] }],
    ['[1, 2.50, "3"]', 'NS', { NS: ['1', '2.5', '3'] }],
    [`[${digits20}]`, 'NS', { NS: [digits20] }],
    ['AQ==|Ag==|AQ==', 'BS', { BS: [b(1), b(2)] }],
    ['["AQ==","Ag=="]', 'BS', { BS: [b(1), b(2)] }],
    ['{"a":1,"b":[true,null,"x"]}', 'JSON', { M: { a: { N: '1' }, b: { L: [{ BOOL: true }, { NULL: true }, { S: 'x' }] } } }],
    ['"str"', 'JSON', { S: 'str' }],
    ['42', 'JSON', { N: '42' }],
    ['null', 'JSON', { NULL: true }],
    ['[]', 'JSON', { L: [] }],
    [`{"n":${digits20}}`, 'M', { M: { n: { N: digits20 } } }],
    ['{"n":0.12345678901234567890}', 'M', { M: { n: { N: '0.1234567890123456789' } } }],
    ['{}', 'M', { M: {} }],
    ['{"m":{"x":{"y":"z"}}}', 'M', { M: { m: { M: { x: { M: { y: { S: 'z' } } } } } } }],
    ['[1,"a"]', 'L', { L: [{ N: '1' }, { S: 'a' }] }],
    ['[[1],[]]', 'L', { L: [{ L: [{ N: '1' }] }, { L: [] }] }],
  ])('%j as %s -> %j', (text, type, expected) => {
    expect(av(convertCell(text, type, 'col'))).toEqual(expected);
  });

  it('an N value is a NumberValue holding the canonical text, never a JS number', () => {
    const value = convertCell(digits20, 'N', 'col');
    expect(value).toBeInstanceOf(NumberValue);
    expect((value as NumberValue).value).toBe(digits20);
  });

  it.each<[string, string, ColumnType, string]>([
    ['39 significant digits', digits39, 'N', 'col'],
    ['letters as N', 'abc', 'N', 'col'],
    ['decimal comma as N', '1,5', 'N', 'col'],
    ['out of range N', '1e200', 'N', 'col'],
    ['yes as BOOL', 'yes', 'BOOL', 'col'],
    ['2 as BOOL', '2', 'BOOL', 'col'],
    ['not base64', 'not base64!', 'B', 'col'],
    ['unpadded base64', 'AQI', 'B', 'col'],
    ['empty JSON array as SS', '[]', 'SS', 'col'],
    ['bad JSON array as SS', '[broken', 'SS', 'col'],
    ['non-number in NS', '1|x', 'NS', 'col'],
    ['empty element in NS', '1||2', 'NS', 'col'],
    ['39 digits in NS', `1|${digits39}`, 'NS', 'col'],
    ['bad base64 in BS', 'AQ==|!!', 'BS', 'col'],
    ['bad JSON', '{broken', 'JSON', 'col'],
    ['array for M', '[1]', 'M', 'col'],
    ['string for M', '"x"', 'M', 'col'],
    ['object for L', '{"a":1}', 'L', 'col'],
    ['bad JSON for L', '[1,', 'L', 'col'],
  ])('%s -> TYPE_ERROR on the column', (_label, text, type, field) => {
    const error = rowErrorOf(() => convertCell(text, type, field));
    expect(error.code).toBe('TYPE_ERROR');
    expect(error.field).toBe(field);
  });

  it('bad JSON: the message names the field', () => {
    const error = rowErrorOf(() => convertCell('{broken', 'JSON', 'meta'));
    expect(error.field).toBe('meta');
    expect(error.message).toContain('"meta"');
  });

  it('an out-of-range number nested in JSON is a TYPE_ERROR on the nested path', () => {
    const error = rowErrorOf(() => convertCell('{"a":[1,1e999]}', 'M', 'meta'));
    expect(error.code).toBe('TYPE_ERROR');
    expect(error.field).toBe('meta.a[1]');
  });
});

describe('inferCell (--infer): only what comes back unchanged is converted', () => {
  it.each<[string, AttributeValue]>([
    ['007', { S: '007' }],
    ['12', { N: '12' }],
    ['0', { N: '0' }],
    ['-3.25', { N: '-3.25' }],
    ['0.5', { N: '0.5' }],
    [digits20, { N: digits20 }],
    [digits38, { N: digits38 }],
    [`-${digits38}`, { N: `-${digits38}` }],
    [digits39, { S: digits39 }],
    ['1e5', { S: '1e5' }],
    ['+1', { S: '+1' }],
    ['-0', { S: '-0' }],
    ['.5', { S: '.5' }],
    ['5.', { S: '5.' }],
    [' 12', { S: ' 12' }],
    ['12 ', { S: '12 ' }],
    ['1,000', { S: '1,000' }],
    ['NaN', { S: 'NaN' }],
    ['Infinity', { S: 'Infinity' }],
    ['-', { S: '-' }],
    ['0x10', { S: '0x10' }],
    ['2024-01-02', { S: '2024-01-02' }],
    ['true', { BOOL: true }],
    ['false', { BOOL: false }],
    ['True', { S: 'True' }],
    ['FALSE', { S: 'FALSE' }],
    ['null', { S: 'null' }],
    ['{"a":1}', { M: { a: { N: '1' } } }],
    ['[1,2]', { L: [{ N: '1' }, { N: '2' }] }],
    [`{"id":${digits20}}`, { M: { id: { N: digits20 } } }],
    ['{broken', { S: '{broken' }],
    ['[1,', { S: '[1,' }],
    ['{"a":1e999}', { S: '{"a":1e999}' }],
  ])('%j -> %j', (text, expected) => {
    expect(av(inferCell(text, 'col'))).toEqual(expected);
  });

  it("a decimal below DynamoDB's range (1E-131, one significant digit) stays a string instead of failing the row", () => {
    const tiny = `0.${'0'.repeat(130)}1`;
    expect(av(inferCell(tiny, 'col'))).toEqual({ S: tiny });
  });
});

describe('itemFromCells', () => {
  const S_KEY: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };
  const N_S_KEY: KeySchema = { partitionKey: { name: 'pk', type: 'N' }, sortKey: { name: 'sk', type: 'S' } };
  const options = (over: Partial<TypeMapOptions> = {}): TypeMapOptions => ({ keySchema: S_KEY, types: {}, infer: false, empty: 'omit', ...over });
  const build = (cells: Record<string, string>, over: Partial<TypeMapOptions> = {}) => {
    const o = options(over);
    return marshalled(itemFromCells(cells, o, effectiveTypes(o)));
  };

  it.each<[EmptyPolicy, Record<string, AttributeValue>]>([
    ['omit', { pk: { S: 'a' } }],
    ['null', { pk: { S: 'a' }, x: { NULL: true }, n: { NULL: true } }],
    ['string', { pk: { S: 'a' }, x: { S: '' }, n: { S: '' } }],
  ])('empty policy %s', (empty, expected) => {
    expect(build({ pk: 'a', x: '', n: '' }, { empty, types: { n: 'N' } })).toEqual(expected);
  });

  it('without types or --infer every cell is a string', () => {
    expect(build({ pk: '1', n: '12', b: 'true', j: '{"a":1}' })).toEqual({ pk: { S: '1' }, n: { S: '12' }, b: { S: 'true' }, j: { S: '{"a":1}' } });
  });

  it('explicit types win over --infer; other columns are inferred', () => {
    expect(build({ pk: 'a', zip: '02134', qty: '12', code: '12' }, { infer: true, types: { code: 'S' } })).toEqual({
      pk: { S: 'a' },
      zip: { S: '02134' },
      qty: { N: '12' },
      code: { S: '12' },
    });
  });

  it("key columns take the table's key type, even with --infer", () => {
    expect(build({ pk: '007', sk: '12', n: '12' }, { keySchema: N_S_KEY, infer: true })).toEqual({
      pk: { N: '7' },
      sk: { S: '12' },
      n: { N: '12' },
    });
  });

  it('a bad cell in an N key column is a TYPE_ERROR naming the column', () => {
    const o = options({ keySchema: N_S_KEY });
    const error = rowErrorOf(() => itemFromCells({ pk: 'abc', sk: 'x' }, o, effectiveTypes(o)));
    expect(error.code).toBe('TYPE_ERROR');
    expect(error.field).toBe('pk');
  });

  it('a column named __proto__ is an own attribute', () => {
    const o = options();
    const cells: Record<string, string> = { pk: 'a' };
    Object.defineProperty(cells, '__proto__', { value: 'x', enumerable: true });
    const item = itemFromCells(cells, o, effectiveTypes(o));
    expect(Object.keys(item)).toEqual(['pk', '__proto__']);
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
  });
});

describe('effectiveTypes', () => {
  it.each<[string, KeySchema, Record<string, ColumnType>, Record<string, ColumnType>]>([
    ['partition key only', { partitionKey: { name: 'pk', type: 'N' } }, {}, { pk: 'N' }],
    ['partition and sort key', { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'B' } }, {}, { pk: 'S', sk: 'B' }],
    ['merged with explicit types', { partitionKey: { name: 'pk', type: 'N' } }, { price: 'N', tags: 'SS' }, { pk: 'N', price: 'N', tags: 'SS' }],
  ])('%s', (_label, keySchema, types, expected) => {
    expect(effectiveTypes({ keySchema, types })).toEqual(expected);
  });
});

describe('coerceJsonItem', () => {
  const fromLine = (line: string) => itemFromJson(parseJsonPrecise(line));

  it.each<[string, string, Record<string, ColumnType>, Record<string, AttributeValue>]>([
    ['number text -> N', '{"price":"12.50"}', { price: 'N' }, { price: { N: '12.5' } }],
    ['number stays N', '{"price":3}', { price: 'N' }, { price: { N: '3' } }],
    ['20-digit number text -> N', `{"id":"${digits20}"}`, { id: 'N' }, { id: { N: digits20 } }],
    ['number -> S', `{"id":${digits20}}`, { id: 'S' }, { id: { S: digits20 } }],
    ['boolean -> S', '{"b":true}', { b: 'S' }, { b: { S: 'true' } }],
    ['text -> BOOL', '{"f":"true"}', { f: 'BOOL' }, { f: { BOOL: true } }],
    ['boolean stays BOOL', '{"f":false}', { f: 'BOOL' }, { f: { BOOL: false } }],
    ['base64 text -> B', '{"d":"AQID"}', { d: 'B' }, { d: { B: b(1, 2, 3) } }],
    ['array -> SS, duplicates collapse', '{"t":["a","b","a"]}', { t: 'SS' }, { t: { SS: ['a', 'b'] } }],
    ['piped text -> SS', '{"t":"a|b"}', { t: 'SS' }, { t: { SS: ['a', 'b'] } }],
    ['array of numbers -> NS by value', '{"t":[1,1.0,2]}', { t: 'NS' }, { t: { NS: ['1', '2'] } }],
    ['array of base64 -> BS', '{"t":["AQ==","Ag=="]}', { t: 'BS' }, { t: { BS: [b(1), b(2)] } }],
    ['JSON text -> M', '{"m":"{\\"a\\":1}"}', { m: 'M' }, { m: { M: { a: { N: '1' } } } }],
    ['object stays M', '{"m":{"a":1}}', { m: 'M' }, { m: { M: { a: { N: '1' } } } }],
    ['array stays L', '{"l":[1]}', { l: 'L' }, { l: { L: [{ N: '1' }] } }],
    ['anything passes JSON', '{"j":[true]}', { j: 'JSON' }, { j: { L: [{ BOOL: true }] } }],
    ['absent attribute is left absent', '{"a":"x"}', { price: 'N' }, { a: { S: 'x' } }],
    ['null is left null', '{"price":null}', { price: 'N' }, { price: { NULL: true } }],
    ['empty string is left as is', '{"price":""}', { price: 'N' }, { price: { S: '' } }],
  ])('%s', (_label, line, types, expected) => {
    expect(marshalled(coerceJsonItem(fromLine(line), types))).toEqual(expected);
  });

  it.each<[string, string, Record<string, ColumnType>, string]>([
    ['boolean declared N', '{"price":true}', { price: 'N' }, 'price'],
    ['bad number text declared N', '{"price":"abc"}', { price: 'N' }, 'price'],
    ['object declared S', '{"s":{"a":1}}', { s: 'S' }, 's'],
    ['number declared BOOL', '{"f":1}', { f: 'BOOL' }, 'f'],
    ['array declared B', '{"d":[1]}', { d: 'B' }, 'd'],
    ['object declared SS', '{"t":{"a":1}}', { t: 'SS' }, 't'],
    ['empty array declared SS', '{"t":[]}', { t: 'SS' }, 't'],
    ['non-number in NS', '{"t":["x"]}', { t: 'NS' }, 't'],
    ['array declared M', '{"m":[1]}', { m: 'M' }, 'm'],
    ['object declared L', '{"l":{"a":1}}', { l: 'L' }, 'l'],
    ['bad JSON text declared M', '{"m":"{broken"}', { m: 'M' }, 'm'],
  ])('%s -> TYPE_ERROR', (_label, line, types, field) => {
    const error = rowErrorOf(() => coerceJsonItem(fromLine(line), types));
    expect(error.code).toBe('TYPE_ERROR');
    expect(error.field).toBe(field);
  });
});
