import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { type RejectCode } from '../../../src/shared/errors.js';
import { keyForDisplay, keyIdOf, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES } from '../../../src/typing/key.js';
import type { Item, KeySchema } from '../../../src/shared/types.js';
import { rowErrorOf } from '../../support/thrown.js';

const n = (text: string) => new NumberValue(text);
const bytes = (...values: number[]) => new Uint8Array(values);

const S: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };
const N: KeySchema = { partitionKey: { name: 'pk', type: 'N' } };
const B: KeySchema = { partitionKey: { name: 'pk', type: 'B' } };
const S_S: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const S_N: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const N_B: KeySchema = { partitionKey: { name: 'pk', type: 'N' }, sortKey: { name: 'sk', type: 'B' } };

describe('keyIdOf: identity', () => {
  it.each<[string, KeySchema, Item, Item]>([
    ['same string', S, { pk: 'a' }, { pk: 'a', other: 'ignored' }],
    ['numbers by value: 1.0 and 1', N, { pk: n('1.0') }, { pk: n('1') }],
    ['numbers by value: 1e2 and 100', N, { pk: n('1e2') }, { pk: n('100') }],
    ['numbers by value: -0 and 0', N, { pk: n('-0') }, { pk: n('0') }],
    ['numbers by value: +5 and 5', N, { pk: n('+5') }, { pk: n('5') }],
    ['binary by bytes: Uint8Array and Buffer', B, { pk: bytes(1, 2, 3) }, { pk: Buffer.from([1, 2, 3]) }],
    ['composite, sort key number by value', S_N, { pk: 'a', sk: n('2.50') }, { pk: 'a', sk: n('2.5') }],
    ['composite N + B', N_B, { pk: n('7'), sk: bytes(0) }, { pk: n('7.000'), sk: bytes(0) }],
  ])('equal ids: %s', (_label, schema, a, b) => {
    expect(keyIdOf(a, schema)).toBe(keyIdOf(b, schema));
  });

  it.each<[string, KeySchema, Item, KeySchema, Item]>([
    ['different strings', S, { pk: 'a' }, S, { pk: 'b' }],
    ['case matters', S, { pk: 'a' }, S, { pk: 'A' }],
    ['different numbers', N, { pk: n('1') }, N, { pk: n('10') }],
    ['N 1 vs N 1.01', N, { pk: n('1') }, N, { pk: n('1.01') }],
    ['S "1" vs N 1', S, { pk: '1' }, N, { pk: n('1') }],
    ['S "AQ==" vs B [1]', S, { pk: 'AQ==' }, B, { pk: bytes(1) }],
    ['different bytes', B, { pk: bytes(1) }, B, { pk: bytes(1, 0) }],
    ['same partition, different sort', S_S, { pk: 'a', sk: 'x' }, S_S, { pk: 'a', sk: 'y' }],
    ['partition and sort swapped', S_S, { pk: 'a', sk: 'b' }, S_S, { pk: 'b', sk: 'a' }],
    // DynamoDB strings may contain U+0000; the id must still be unambiguous.
    ['separator inside a string', S_S, { pk: 'a\u0000Sb', sk: 'c' }, S_S, { pk: 'a', sk: 'b\u0000Sc' }],
  ])('different ids: %s', (_label, schemaA, a, schemaB, b) => {
    expect(keyIdOf(a, schemaA)).not.toBe(keyIdOf(b, schemaB));
  });
});

describe('keyIdOf: rejected keys', () => {
  it.each<[string, KeySchema, Item, RejectCode, string]>([
    ['partition key absent', S, { other: 'x' }, 'MISSING_KEY', 'pk'],
    ['partition key null', S, { pk: null }, 'MISSING_KEY', 'pk'],
    ['partition key empty string', S, { pk: '' }, 'MISSING_KEY', 'pk'],
    ['N partition key absent', N, {}, 'MISSING_KEY', 'pk'],
    ['B partition key empty bytes', B, { pk: bytes() }, 'MISSING_KEY', 'pk'],
    ['sort key absent', S_S, { pk: 'a' }, 'MISSING_KEY', 'sk'],
    ['sort key null', S_S, { pk: 'a', sk: null }, 'MISSING_KEY', 'sk'],
    ['sort key empty string', S_S, { pk: 'a', sk: '' }, 'MISSING_KEY', 'sk'],
    ['B sort key empty bytes', N_B, { pk: n('1'), sk: bytes() }, 'MISSING_KEY', 'sk'],
    ['both missing reports the partition key', S_S, {}, 'MISSING_KEY', 'pk'],
    ['string in N key', N, { pk: '1' }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['JS number in N key (not a NumberValue)', N, { pk: 1 }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['invalid NumberValue in N key', N, { pk: n('abc') }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['NumberValue in S key', S, { pk: n('1') }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['boolean in S key', S, { pk: true }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['map in S key', S, { pk: { S: 'a' } }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['list in S key', S, { pk: ['a'] }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['set in S key', S, { pk: new Set(['a']) }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['binary in S key', S, { pk: bytes(1) }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['string in B key', B, { pk: 'AQ==' }, 'KEY_TYPE_MISMATCH', 'pk'],
    ['string in N sort key', S_N, { pk: 'a', sk: '1' }, 'KEY_TYPE_MISMATCH', 'sk'],
    ['S partition key of 2049 bytes', S, { pk: 'x'.repeat(2049) }, 'KEY_TOO_LONG', 'pk'],
    ['S partition key of 1025 two-byte chars (2050 bytes)', S, { pk: 'é'.repeat(1025) }, 'KEY_TOO_LONG', 'pk'],
    ['S partition key of 683 three-byte chars (2049 bytes)', S, { pk: '日'.repeat(683) }, 'KEY_TOO_LONG', 'pk'],
    ['S sort key of 1025 bytes', S_S, { pk: 'a', sk: 'x'.repeat(1025) }, 'KEY_TOO_LONG', 'sk'],
    ['S sort key of 342 three-byte chars (1026 bytes)', S_S, { pk: 'a', sk: '日'.repeat(342) }, 'KEY_TOO_LONG', 'sk'],
    ['B partition key of 2049 bytes', B, { pk: new Uint8Array(2049) }, 'KEY_TOO_LONG', 'pk'],
    ['B sort key of 1025 bytes', N_B, { pk: n('1'), sk: new Uint8Array(1025) }, 'KEY_TOO_LONG', 'sk'],
  ])('%s', (_label, schema, item, code, field) => {
    const error = rowErrorOf(() => keyIdOf(item, schema));
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
  });

  it('the KEY_TYPE_MISMATCH message names the attribute and the table type', () => {
    const error = rowErrorOf(() => keyIdOf({ pk: 'x' }, N));
    expect(error.message).toContain('"pk"');
    expect(error.message).toContain('N');
  });

  it('limits are 2048 and 1024 bytes', () => {
    expect(MAX_PARTITION_KEY_BYTES).toBe(2048);
    expect(MAX_SORT_KEY_BYTES).toBe(1024);
  });

  it.each<[string, KeySchema, Item]>([
    ['S partition key of exactly 2048 bytes', S, { pk: 'x'.repeat(2048) }],
    ['S partition key of 1024 two-byte chars (2048 bytes)', S, { pk: 'é'.repeat(1024) }],
    ['S sort key of exactly 1024 bytes', S_S, { pk: 'a', sk: 'x'.repeat(1024) }],
    ['S sort key of 256 four-byte chars (1024 bytes)', S_S, { pk: 'a', sk: '😀'.repeat(256) }],
    ['B partition key of exactly 2048 bytes', B, { pk: new Uint8Array(2048) }],
    ['B sort key of exactly 1024 bytes', N_B, { pk: n('1'), sk: new Uint8Array(1024) }],
    ['a string key of whitespace is a real key', S, { pk: ' ' }],
    ['the number 0 is a real key', N, { pk: n('0') }],
  ])('accepted at the limit: %s', (_label, schema, item) => {
    expect(typeof keyIdOf(item, schema)).toBe('string');
  });
});

describe('keyForDisplay', () => {
  it.each<[string, KeySchema, Item, Record<string, string> | undefined]>([
    ['string key', S, { pk: 'a', other: 'x' }, { pk: 'a' }],
    ['number key keeps the text it was given', N, { pk: n('1.50') }, { pk: '1.50' }],
    ['binary key as base64', B, { pk: bytes(1, 2, 3) }, { pk: 'AQID' }],
    ['composite key', S_N, { pk: 'a', sk: n('2') }, { pk: 'a', sk: '2' }],
    ['a wrong-typed key is still shown', N, { pk: 'abc' }, { pk: 'abc' }],
    ['an empty string key is shown', S, { pk: '' }, { pk: '' }],
    ['missing partition key', S, {}, undefined],
    ['null partition key', S, { pk: null }, undefined],
    ['missing sort key', S_S, { pk: 'a' }, undefined],
  ])('%s', (_label, schema, item, expected) => {
    expect(keyForDisplay(item, schema)).toEqual(expected);
  });
});
