import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { type RejectCode } from '../../../src/shared/errors.js';
import { isDynamoJsonItem, itemFromDynamoJson, itemFromJson, parseJsonPrecise } from '../../../src/typing/json.js';
import type { Item } from '../../../src/shared/types.js';
import { rowErrorOf } from '../../support/thrown.js';

const marshalled = (item: Item): Record<string, AttributeValue> => marshall(item, { removeUndefinedValues: true });
const b = (...values: number[]) => new Uint8Array(values);

describe('parseJsonPrecise', () => {
  it('keeps a 23-digit integer exactly', () => {
    const value = parseJsonPrecise('12345678901234567890123');
    expect(value).toBeInstanceOf(NumberValue);
    expect((value as NumberValue).value).toBe('12345678901234567890123');
  });

  it('keeps a 20-digit fraction exactly', () => {
    const value = parseJsonPrecise('{"a":0.12345678901234567890}') as Record<string, unknown>;
    expect(value.a).toBeInstanceOf(NumberValue);
    expect((value.a as NumberValue).value).toBe('0.12345678901234567890');
  });

  it.each([
    ['[9007199254740993]', '9007199254740993'],
    ['{"big":-12345678901234567890.5}', '-12345678901234567890.5'],
    ['{"e":1e400}', '1e400'],
  ])('%s keeps its number text', (text, digits) => {
    const found: string[] = [];
    JSON.stringify(parseJsonPrecise(text), (_k, v: unknown) => {
      if (v instanceof NumberValue) found.push(v.value);
      return v instanceof NumberValue ? null : v;
    });
    expect(found).toEqual([digits]);
  });

  it('parses ordinary JSON like JSON.parse', () => {
    const text = '{"s":"12345678901234567890","n":1.5,"b":true,"z":null,"l":[1,"x"]}';
    const value = parseJsonPrecise(text) as Record<string, unknown>;
    expect(value.s).toBe('12345678901234567890');
    expect(Object.keys(value)).toEqual(['s', 'n', 'b', 'z', 'l']);
  });

  it.each(['{"a":', '{broken', "{'a':1}", '', '{"n":12345678901234567890,}'])('throws on invalid JSON %j', (text) => {
    expect(() => parseJsonPrecise(text)).toThrow();
  });
});

describe('itemFromJson', () => {
  it('maps every JSON type, numbers as exact N', () => {
    const value = parseJsonPrecise('{"pk":"a","n":12345678901234567890,"f":1.50,"b":true,"z":null,"m":{"x":[1,"y",{"deep":false}]},"e":[],"o":{}}');
    expect(marshalled(itemFromJson(value))).toEqual({
      pk: { S: 'a' },
      n: { N: '12345678901234567890' },
      f: { N: '1.5' },
      b: { BOOL: true },
      z: { NULL: true },
      m: { M: { x: { L: [{ N: '1' }, { S: 'y' }, { M: { deep: { BOOL: false } } }] } } },
      e: { L: [] },
      o: { M: {} },
    });
  });

  it.each<[string, unknown, RejectCode, string | undefined]>([
    ['an array', [1], 'NOT_AN_OBJECT', undefined],
    ['null', null, 'NOT_AN_OBJECT', undefined],
    ['a string', 'x', 'NOT_AN_OBJECT', undefined],
    ['a number', 1, 'NOT_AN_OBJECT', undefined],
    ['an out-of-range number', parseJsonPrecise('{"n":1e200}'), 'TYPE_ERROR', 'n'],
    ['a 39-digit number', parseJsonPrecise('{"n":123456789012345678901234567890123456789}'), 'TYPE_ERROR', 'n'],
    ['an out-of-range number in a map', parseJsonPrecise('{"m":{"x":1e999}}'), 'TYPE_ERROR', 'm.x'],
    ['an out-of-range number in a list', parseJsonPrecise('{"l":[1,1e999]}'), 'TYPE_ERROR', 'l[1]'],
  ])('%s -> %s', (_label, value, code, field) => {
    const error = rowErrorOf(() => itemFromJson(value));
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
  });
});

describe('itemFromDynamoJson', () => {
  const ALL_TYPES = {
    pk: { S: 'a' },
    n: { N: '12345678901234567890.50' },
    bin: { B: 'AQID' },
    t: { BOOL: true },
    f: { BOOL: false },
    z: { NULL: true },
    ss: { SS: ['x', 'y', 'x'] },
    ns: { NS: ['1', '1.0', '2'] },
    bs: { BS: ['AQ==', 'Ag=='] },
    m: { M: { inner: { L: [{ S: 'deep' }, { N: '3' }, { M: {} }] } } },
    l: { L: [] },
    empty: { S: '' },
  };
  const EXPECTED: Record<string, AttributeValue> = {
    pk: { S: 'a' },
    n: { N: '12345678901234567890.5' },
    bin: { B: b(1, 2, 3) },
    t: { BOOL: true },
    f: { BOOL: false },
    z: { NULL: true },
    ss: { SS: ['x', 'y'] },
    ns: { NS: ['1', '2'] },
    bs: { BS: [b(1), b(2)] },
    m: { M: { inner: { L: [{ S: 'deep' }, { N: '3' }, { M: {} }] } } },
    l: { L: [] },
    empty: { S: '' },
  };

  it('reads a bare item with every type', () => {
    expect(marshalled(itemFromDynamoJson(parseJsonPrecise(JSON.stringify(ALL_TYPES))))).toEqual(EXPECTED);
  });

  it('reads an S3 export line {"Item":{...}}', () => {
    expect(marshalled(itemFromDynamoJson(parseJsonPrecise(JSON.stringify({ Item: ALL_TYPES }))))).toEqual(EXPECTED);
  });

  it('an attribute named "Item" in a bare item is an attribute, not an export wrapper', () => {
    expect(marshalled(itemFromDynamoJson({ Item: { S: 'x' } }))).toEqual({ Item: { S: 'x' } });
    expect(marshalled(itemFromDynamoJson({ Item: { M: { a: { S: 'x' } } } }))).toEqual({ Item: { M: { a: { S: 'x' } } } });
  });

  it('keeps more than 15 digits of an N exactly', () => {
    const item = itemFromDynamoJson({ id: { N: '98765432109876543210987654321' } });
    expect((item.id as NumberValue).value).toBe('98765432109876543210987654321');
  });

  it.each<[string, unknown, RejectCode, string | undefined]>([
    ['plain JSON given to ddb-json', { pk: 'a' }, 'TYPE_ERROR', 'pk'],
    ['plain JSON number given to ddb-json', { pk: { S: 'a' }, n: 1 }, 'TYPE_ERROR', 'n'],
    ['an empty SS', { ss: { SS: [] } }, 'TYPE_ERROR', 'ss'],
    ['an empty NS', { ns: { NS: [] } }, 'TYPE_ERROR', 'ns'],
    ['an empty BS', { bs: { BS: [] } }, 'TYPE_ERROR', 'bs'],
    ['a non-string in SS', { ss: { SS: ['a', 1] } }, 'TYPE_ERROR', 'ss'],
    ['a bad number in NS', { ns: { NS: ['1', 'x'] } }, 'TYPE_ERROR', 'ns'],
    ['N as a JSON number', { n: { N: 1 } }, 'TYPE_ERROR', 'n'],
    ['N that is not a number', { n: { N: 'abc' } }, 'TYPE_ERROR', 'n'],
    ['N with 39 digits', { n: { N: '1'.repeat(39) } }, 'TYPE_ERROR', 'n'],
    ['S that is not a string', { s: { S: 1 } }, 'TYPE_ERROR', 's'],
    ['B that is not base64', { b: { B: '!!' } }, 'TYPE_ERROR', 'b'],
    ['BOOL as text', { t: { BOOL: 'true' } }, 'TYPE_ERROR', 't'],
    ['NULL false', { z: { NULL: false } }, 'TYPE_ERROR', 'z'],
    ['two type tags', { x: { S: 'a', N: '1' } }, 'TYPE_ERROR', 'x'],
    ['an unknown tag', { x: { Q: '1' } }, 'TYPE_ERROR', 'x'],
    ['M that is an array', { m: { M: [] } }, 'TYPE_ERROR', 'm'],
    ['L that is an object', { l: { L: {} } }, 'TYPE_ERROR', 'l'],
    ['a bad value nested in M', { m: { M: { inner: { N: 'x' } } } }, 'TYPE_ERROR', 'm.inner'],
    ['a bad value nested in L', { l: { L: [{ S: 'a' }, 'plain'] } }, 'TYPE_ERROR', 'l[1]'],
    ['an array line', [{ S: 'a' }], 'NOT_AN_OBJECT', undefined],
    ['a null line', null, 'NOT_AN_OBJECT', undefined],
    ['a string line', 'x', 'NOT_AN_OBJECT', undefined],
  ])('%s -> %s', (_label, value, code, field) => {
    const error = rowErrorOf(() => itemFromDynamoJson(value));
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
  });

  it('plain JSON given to ddb-json: the message points to --input-format jsonl', () => {
    expect(rowErrorOf(() => itemFromDynamoJson({ pk: 'a' })).message).toContain('jsonl');
  });
});

describe('isDynamoJsonItem', () => {
  it.each<[string, unknown, boolean]>([
    ['a DynamoDB-JSON item', { pk: { S: 'a' } }, true],
    ['every type tag', { a: { S: 'x' }, b: { N: '1' }, c: { NULL: true }, d: { M: {} }, e: { L: [] }, f: { SS: ['x'] }, g: { BOOL: true } }, true],
    ['empty object', {}, false],
    ['plain JSON', { pk: 'a' }, false],
    ['mixed', { pk: { S: 'a' }, n: 1 }, false],
    ['descriptor with two keys', { pk: { S: 'a', x: 1 } }, false],
    ['unknown tag', { pk: { X: 'a' } }, false],
    ['S3 export wrapper (itself not an item)', { Item: { pk: { S: 'a' } } }, false],
    ['array', [{ S: 'a' }], false],
    ['null', null, false],
    ['string', 'x', false],
  ])('%s -> %s', (_label, value, expected) => {
    expect(isDynamoJsonItem(value)).toBe(expected);
  });
});

describe('"__proto__" is an own attribute and pollutes nothing', () => {
  const cases: [string, () => Item][] = [
    ['itemFromJson (JSON.parse path)', () => itemFromJson(parseJsonPrecise('{"pk":"a","__proto__":{"polluted":true}}'))],
    ['itemFromJson (lossless path)', () => itemFromJson(parseJsonPrecise('{"pk":"a","__proto__":{"polluted":true},"n":12345678901234567890}'))],
    ['itemFromDynamoJson', () => itemFromDynamoJson(parseJsonPrecise('{"pk":{"S":"a"},"__proto__":{"M":{"polluted":{"BOOL":true}}}}'))],
  ];

  it.each(cases)('%s', (_label, build) => {
    const item = build();
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(Object.keys(item)).toContain('__proto__');
    expect(Object.getOwnPropertyDescriptor(item, '__proto__')?.value).toEqual({ polluted: true });
    expect((item as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('nested maps keep "__proto__" as an own key', () => {
    const item = itemFromJson(parseJsonPrecise('{"pk":"a","m":{"__proto__":{"x":1}}}'));
    const m = item.m as Record<string, unknown>;
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
    expect(Object.keys(m)).toEqual(['__proto__']);
  });
});
