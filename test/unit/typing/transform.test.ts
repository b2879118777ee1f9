/**
 * --transform's pure parts: a transform's return checked and copied into items (typing/transform.ts), and
 * the planner's two halves (typed, then finish) around it: outputs checked as rows are, deletes kept deletes.
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { RowError } from '../../../src/shared/errors.js';
import type { PlannedWrite, RejectedRow } from '../../../src/shared/types.js';
import { createRowPlanner, isRejected, type SourceRecord } from '../../../src/typing/planRow.js';
import { MAX_TRANSFORM_OUTPUTS, transformFailure, transformOutputs } from '../../../src/typing/transform.js';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return error instanceof RowError ? error.code : 'not a RowError';
  }
  return undefined;
};

describe('transformOutputs', () => {
  it('takes an item, an array of items, or nothing (null, undefined, [])', () => {
    expect(transformOutputs({ pk: 'a' })).toEqual([{ pk: 'a' }]);
    expect(transformOutputs([{ pk: 'a' }, { pk: 'b' }])).toHaveLength(2);
    expect(transformOutputs(null)).toEqual([]);
    expect(transformOutputs(undefined)).toEqual([]);
    expect(transformOutputs([])).toEqual([]);
  });

  it('puts numbers in canonical form, whatever the transform gave (NumberValue, number, bigint), so one key is one key', () => {
    const [item] = transformOutputs({ a: new NumberValue('007.50'), b: 12, c: 10n ** 30n, d: new Set([1, new NumberValue('1.0'), 2]) });
    expect((item!['a'] as NumberValue).value).toBe('7.5');
    expect((item!['b'] as NumberValue).value).toBe('12');
    expect((item!['c'] as NumberValue).value).toBe('1' + '0'.repeat(30));
    expect([...(item!['d'] as Set<NumberValue>)].map((n) => n.value)).toEqual(['1', '2']);
  });

  it("takes another copy of lib-dynamodb's NumberValue (a module's own node_modules) as a number", () => {
    // Another copy's class: same name and shape, not ddb-spread's class.
    const Other = class {
      constructor(readonly value: string) {}
    };
    Object.defineProperty(Other, 'name', { value: 'NumberValue' });
    const [item] = transformOutputs({ n: new Other('1.50'), s: new Set([new Other('2')]) });
    expect(item!['n']).toBeInstanceOf(NumberValue);
    expect((item!['n'] as NumberValue).value).toBe('1.5');
    expect([...(item!['s'] as Set<NumberValue>)].map((n) => n.value)).toEqual(['2']);
    expect(() => transformOutputs({ n: new (class Other {})() })).toThrow(/TRANSFORM|no DynamoDB type/);
  });

  it('copies into prototype-free records: __proto__ and constructor are attribute names', () => {
    const returned = JSON.parse('{"__proto__":"x","constructor":{"__proto__":1}}') as Record<string, unknown>;
    const [item] = transformOutputs(returned);
    expect(Object.keys(item!)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(item)).toBe(null);
    expect(Object.keys(item!['constructor'] as object)).toEqual(['__proto__']);
  });

  it('leaves undefined attributes out, and makes undefined list elements null', () => {
    expect(transformOutputs({ pk: 'a', gone: undefined, l: [1, undefined] })).toEqual([{ pk: 'a', l: [new NumberValue('1'), null] }]);
  });

  it('refuses what is no item or no DynamoDB value, naming it: TRANSFORM_OUTPUT_INVALID', () => {
    for (const bad of ['text', 7, [1], [{ pk: 'a' }, 'b'], new Map(), new Date(0), { d: new Date(0) }, { f: () => 1 }, { n: NaN }, { n: Infinity }]) {
      expect(
        codeOf(() => transformOutputs(bad)),
        String(bad),
      ).toBe('TRANSFORM_OUTPUT_INVALID');
    }
    expect(codeOf(() => transformOutputs({ s: new Set() }))).toBe('TRANSFORM_OUTPUT_INVALID');
    expect(codeOf(() => transformOutputs({ s: new Set(['a', 1]) }))).toBe('TRANSFORM_OUTPUT_INVALID');
    expect(codeOf(() => transformOutputs({ n: new NumberValue('1e400') }))).toBe('TRANSFORM_OUTPUT_INVALID');
    expect(codeOf(() => transformOutputs({ s: 'half \ud800 pair' }))).toBe('TRANSFORM_OUTPUT_INVALID');
    expect(codeOf(() => transformOutputs(Array.from({ length: MAX_TRANSFORM_OUTPUTS + 1 }, () => ({ pk: 'a' }))))).toBe('TRANSFORM_OUTPUT_INVALID');
    expect(() => transformOutputs({ m: { deep: new Date(0) } })).toThrow(/"m\.deep" is a Date/);
    expect(() => transformOutputs([{ pk: 'a' }, 3])).toThrow(/as item 1, a number/);
  });

  it('refuses nesting deeper than DynamoDB takes (TOO_DEEP), without walking further', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { m: deep };
    expect(codeOf(() => transformOutputs({ pk: 'a', deep }))).toBe('TOO_DEEP');
  });

  it("a throw's message becomes TRANSFORM_FAILED's", () => {
    expect(transformFailure(new Error('bad row')).message).toBe('the transform threw: bad row');
    expect(transformFailure(new TypeError('x is undefined')).message).toBe('the transform threw: TypeError: x is undefined');
    expect(transformFailure('a string').code).toBe('TRANSFORM_FAILED');
  });
});

describe("the planner's halves around a transform", () => {
  const planner = createRowPlanner({
    keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } },
    types: { sk: 'N' },
    infer: false,
    empty: 'omit',
    jsonFlavor: 'json',
    indexKeys: [{ index: 'byOwner', name: 'owner', type: 'S', role: 'partition' }],
  });
  const record = (cells: Record<string, string>, line = 2): SourceRecord => ({
    kind: 'csv',
    origin: { file: 'f.csv', line, raw: Object.values(cells).join(',') },
    cells,
  });

  it('typed then finish of the same item is plan', () => {
    const rec = record({ pk: 'a', sk: '1', v: 'x' });
    const typed = planner.typed(rec);
    if (isRejected(typed)) throw new Error('rejected');
    expect(planner.finish(typed, typed.item)).toEqual(planner.plan(rec));
  });

  it("checks an output as any row's item: keys, their types, GSI keys; the reject says it was the output and keeps the row's line", () => {
    const typed = planner.typed(record({ pk: 'a', sk: '1' }, 9));
    if (isRejected(typed)) throw new Error('rejected');
    const missing = planner.finish(typed, { sk: new NumberValue('1') }, true) as RejectedRow;
    expect([missing.code, missing.origin.line]).toEqual(['MISSING_KEY', 9]);
    expect(missing.message).toMatch(/^the transform's output: /);
    expect((planner.finish(typed, { pk: 'a', sk: 'one' }, true) as RejectedRow).code).toBe('KEY_TYPE_MISMATCH');
    expect((planner.finish(typed, { pk: 'a', sk: new NumberValue('1'), owner: 5 }, true) as RejectedRow).code).toBe('KEY_TYPE_MISMATCH');
    expect((planner.finish(typed, { pk: 'a', sk: new NumberValue('1'), big: 'x'.repeat(400 * 1024) }, true) as RejectedRow).code).toBe('ITEM_TOO_LARGE');
    const ok = planner.finish(typed, { pk: 'b', sk: new NumberValue('2'), v: 'y' }, true) as PlannedWrite;
    expect([ok.item, ok.origin]).toEqual([{ pk: 'b', sk: new NumberValue('2'), v: 'y' }, typed.record.origin]);
    expect(ok.keyId).not.toBe((planner.plan(record({ pk: 'a', sk: '1' })) as PlannedWrite).keyId);
  });

  it("a delete row's outputs are deletes of their keys only", () => {
    const deletes = createRowPlanner({
      keySchema: { partitionKey: { name: 'pk', type: 'S' } },
      types: {},
      infer: false,
      empty: 'omit',
      jsonFlavor: 'json',
      deletes: { all: true },
    });
    const typed = deletes.typed(record({ pk: 'a' }));
    if (isRejected(typed)) throw new Error('rejected');
    expect(typed.isDelete).toBe(true);
    const write = deletes.finish(typed, { pk: 'b', other: 'dropped' }, true) as PlannedWrite;
    expect([write.op, write.item]).toEqual(['delete', { pk: 'b' }]);
  });
});
