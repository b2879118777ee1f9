import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import { canonicalNumber, conditionOf, ifNewerProblem, sameItem } from '../../../src/writing/condition.js';
import { expressionProblem } from '../../../src/writing/conditionOption.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'order id', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const write = (item: Record<string, unknown>): PlannedWrite =>
  ({ origin: { file: 'in.csv', line: 7 }, item, keyId: 'k', partitionId: 'k', size: 10, wcu: 1 }) as PlannedWrite;

describe('conditionOf', () => {
  it('--if-not-exists: attribute_not_exists on the partition key, named through ExpressionAttributeNames (a name with a space is no expression)', () => {
    expect(conditionOf({ kind: 'ifNotExists' }, write({ 'order id': 'a', sk: new NumberValue('1') }), SCHEMA)).toEqual({
      ConditionExpression: 'attribute_not_exists(#k)',
      ExpressionAttributeNames: { '#k': 'order id' },
    });
  });

  it("--if-newer: absent or smaller than the row's own value, a Number as N and a String as S", () => {
    expect(conditionOf({ kind: 'ifNewer', attribute: 'updated at' }, write({ 'updated at': new NumberValue('1700000000.5') }), SCHEMA)).toEqual({
      ConditionExpression: 'attribute_not_exists(#a) OR #a < :v',
      ExpressionAttributeNames: { '#a': 'updated at' },
      ExpressionAttributeValues: { ':v': { N: '1700000000.5' } },
    });
    expect(conditionOf({ kind: 'ifNewer', attribute: 'at' }, write({ at: '2026-01-02T03:04:05Z' }), SCHEMA)?.ExpressionAttributeValues).toEqual({
      ':v': { S: '2026-01-02T03:04:05Z' },
    });
  });
});

describe('conditionOf --item-conditions', () => {
  it("sends the row's own expression, names and values (values in DynamoDB's wire form), and none for a row without one", () => {
    const own = write({ 'order id': 'a', sk: new NumberValue('1') });
    own.condition = { expression: 'attribute_not_exists(#k) OR #v < :v', names: { '#k': 'order id', '#v': 'version' }, values: { ':v': new NumberValue('7') } };
    expect(conditionOf({ kind: 'item' }, own, SCHEMA)).toEqual({
      ConditionExpression: 'attribute_not_exists(#k) OR #v < :v',
      ExpressionAttributeNames: { '#k': 'order id', '#v': 'version' },
      ExpressionAttributeValues: { ':v': { N: '7' } },
    });
    const bare = write({ 'order id': 'b', sk: new NumberValue('1') });
    bare.condition = { expression: 'attribute_exists(sk)' };
    expect(conditionOf({ kind: 'item' }, bare, SCHEMA)).toEqual({ ConditionExpression: 'attribute_exists(sk)' });
    expect(conditionOf({ kind: 'item' }, write({ 'order id': 'c', sk: new NumberValue('1') }), SCHEMA)).toBeUndefined();
  });
});

describe('ifNewerProblem', () => {
  it('accepts Numbers and Strings; names a missing attribute and each other type, with what to do', () => {
    expect(ifNewerProblem({ v: new NumberValue('3') }, 'v')).toBeUndefined();
    expect(ifNewerProblem({ v: 3 }, 'v')).toBeUndefined();
    expect(ifNewerProblem({ v: '2026' }, 'v')).toBeUndefined();
    expect(ifNewerProblem({}, 'v')).toMatch(/has no v/);
    expect(ifNewerProblem({ v: null }, 'v')).toMatch(/has no v/);
    expect(ifNewerProblem({ v: true }, 'v')).toMatch(/a Boolean.*--types v:N/);
    expect(ifNewerProblem({ v: new Uint8Array([1]) }, 'v')).toMatch(/a Binary/);
    expect(ifNewerProblem({ v: [1] }, 'v')).toMatch(/a List/);
    expect(ifNewerProblem({ v: new Set(['a']) }, 'v')).toMatch(/a set/);
    expect(ifNewerProblem({ v: { a: 1 } }, 'v')).toMatch(/a Map/);
    // An inherited name is no attribute of the row.
    expect(ifNewerProblem({}, 'toString')).toMatch(/has no toString/);
  });
});

describe('sameItem (a resumed load telling its own landed write from another)', () => {
  it('numbers as DynamoDB stores them, sets in any order, binary by bytes, maps by name', () => {
    const row = {
      pk: { S: 'a' },
      n: { N: '001.50' },
      ns: { NS: ['2', '1.0'] },
      b: { B: new Uint8Array([1, 2]) },
      m: { M: { y: { N: '1' }, x: { L: [{ S: 'q' }, { NULL: true }] } } },
    };
    const stored = {
      m: { M: { x: { L: [{ S: 'q' }, { NULL: true }] }, y: { N: '1' } } },
      b: { B: Buffer.from([1, 2]) },
      ns: { NS: ['1', '2'] },
      n: { N: '1.5' },
      pk: { S: 'a' },
    };
    expect(sameItem(row, stored)).toBe(true);
    expect(sameItem(row, { ...stored, n: { N: '1.51' } })).toBe(false);
    expect(sameItem(row, { ...stored, extra: { S: 'x' } })).toBe(false);
    expect(sameItem(row, { ...stored, n: { S: '1.5' } })).toBe(false);
    expect(sameItem(row, undefined)).toBe(false);
  });

  it('canonicalNumber: leading and trailing zeros, signs, exponents', () => {
    expect(canonicalNumber('1.50')).toBe(canonicalNumber('15e-1'));
    expect(canonicalNumber('-0.0')).toBe('0');
    expect(canonicalNumber('100')).toBe(canonicalNumber('1E2'));
    expect(canonicalNumber('-7')).not.toBe(canonicalNumber('7'));
    expect(canonicalNumber('12345678901234567890123456789012345678')).toBe('12345678901234567890123456789012345678e0');
  });
});

describe('expressionProblem (--condition, checked before the first write)', () => {
  it('accepts an expression whose placeholders are all given and used; names each mismatch', () => {
    expect(expressionProblem('attribute_not_exists(#s) OR #s <> :x', { '#s': 'status' }, { ':x': { S: 'locked' } })).toBeUndefined();
    expect(expressionProblem('attribute_exists(pk)', {}, {})).toBeUndefined();
    expect(expressionProblem('  ', {}, {})).toMatch(/empty/);
    expect(expressionProblem('#s = :x', {}, { ':x': { S: 'a' } })).toMatch(/uses #s/);
    expect(expressionProblem('#s = :x', { '#s': 's' }, { ':x': { S: 'a' }, ':y': { S: 'b' } })).toMatch(/gives :y/);
    expect(expressionProblem('#s = :x', { s: 's' }, { ':x': { S: 'a' } })).toMatch(/must be # and/);
    expect(expressionProblem('#s = :x', { '#s': '' }, { ':x': { S: 'a' } })).toMatch(/non-empty/);
    expect(expressionProblem('#s = :x', { '#s': 's' }, { ':x': 'a' })).toMatch(/one DynamoDB JSON value/);
    expect(expressionProblem('#s = :x', { '#s': 's' }, { ':x': { S: 'a', N: '1' } })).toMatch(/one DynamoDB JSON value/);
  });

  it('refuses values DynamoDB would refuse on every call (each row then rejected): a Number that is no number, a String or Boolean of another type, an empty set', () => {
    const problem = (value: unknown) => expressionProblem('#s < :x', { '#s': 's' }, { ':x': value });
    for (const good of [{ N: '3' }, { N: '-1.5e3' }, { S: '' }, { BOOL: false }, { NULL: true }, { SS: ['a'] }, { NS: ['1', '2.5'] }, { M: {} }, { L: [] }])
      expect(problem(good), JSON.stringify(good)).toBeUndefined();
    for (const bad of [{ N: 'abc' }, { N: 3 }, { N: '' }, { S: 5 }, { BOOL: 'true' }, { NULL: false }, { SS: [] }, { SS: [1] }, { NS: ['x'] }])
      expect(problem(bad), JSON.stringify(bad)).toMatch(/:x/);
  });
});
