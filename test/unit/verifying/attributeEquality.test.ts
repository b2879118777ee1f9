import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { differingAttributes, sameValue } from '../../../src/verifying/attributeEquality.js';

const bytes = (...b: number[]) => new Uint8Array(b);

describe("DynamoDB's equality", () => {
  it.each<[string, AttributeValue, AttributeValue]>([
    ['numbers by value', { N: '1.50' }, { N: '1.5' }],
    ['numbers in exponent form', { N: '1E2' }, { N: '100' }],
    ['negative zero and zero', { N: '-0' }, { N: '0' }],
    ['38 digits', { N: '12345678901234567890123456789012345678' }, { N: '12345678901234567890123456789012345678.0' }],
    ['string sets unordered', { SS: ['a', 'b', 'c'] }, { SS: ['c', 'a', 'b'] }],
    ['number sets by value, unordered', { NS: ['1.0', '2'] }, { NS: ['2.00', '1'] }],
    ['binary by bytes (another buffer, another offset)', { B: bytes(1, 2, 3) }, { B: new Uint8Array(bytes(9, 1, 2, 3).buffer, 1, 3) }],
    ['binary sets unordered', { BS: [bytes(1), bytes(2)] }, { BS: [bytes(2), bytes(1)] }],
    [
      'nested maps and lists',
      { M: { a: { L: [{ N: '1.0' }, { M: { b: { BOOL: true } } }] } } },
      { M: { a: { L: [{ N: '1' }, { M: { b: { BOOL: true } } }] } } },
    ],
    ['null', { NULL: true }, { NULL: true }],
  ])('equal: %s', (_name, a, b) => {
    expect(sameValue(a, b)).toBe(true);
    expect(sameValue(b, a)).toBe(true);
  });

  it.each<[string, AttributeValue, AttributeValue]>([
    ["a number's last digit", { N: '13.75' }, { N: '13.76' }],
    ['the 38th digit', { N: '12345678901234567890123456789012345678' }, { N: '12345678901234567890123456789012345679' }],
    ['a string "1" and the number 1', { S: '1' }, { N: '1' }],
    ['a set member changed', { SS: ['a', 'b'] }, { SS: ['a', 'c'] }],
    ['a set member more', { NS: ['1'] }, { NS: ['1', '2'] }],
    ['a string set and a list of the same strings', { SS: ['a'] }, { L: [{ S: 'a' }] }],
    ['list order', { L: [{ S: 'a' }, { S: 'b' }] }, { L: [{ S: 'b' }, { S: 'a' }] }],
    ['a byte', { B: bytes(1, 2) }, { B: bytes(1, 3) }],
    ['a map member more', { M: { a: { S: 'x' } } }, { M: { a: { S: 'x' }, b: { S: 'y' } } }],
    ['deep in a map', { M: { a: { L: [{ M: { b: { BOOL: true } } }] } } }, { M: { a: { L: [{ M: { b: { BOOL: false } } }] } } }],
    ['true and false', { BOOL: true }, { BOOL: false }],
    ['null and false', { NULL: true }, { BOOL: false }],
  ])('different: %s', (_name, a, b) => {
    expect(sameValue(a, b)).toBe(false);
    expect(sameValue(b, a)).toBe(false);
  });

  it('names the attributes that differ, missing on either side, sorted; names like __proto__ are attributes like any', () => {
    const expected: Record<string, AttributeValue> = JSON.parse('{"pk":{"S":"k"},"b":{"N":"1"},"__proto__":{"S":"p"},"gone":{"S":"x"}}') as Record<
      string,
      AttributeValue
    >;
    const stored: Record<string, AttributeValue> = JSON.parse('{"pk":{"S":"k"},"b":{"N":"1.0"},"__proto__":{"S":"q"},"extra":{"S":"y"}}') as Record<
      string,
      AttributeValue
    >;
    expect(differingAttributes(expected, stored)).toEqual(['__proto__', 'extra', 'gone']);
    expect(differingAttributes(expected, expected)).toEqual([]);
  });
});
