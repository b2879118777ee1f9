/**
 * A GSI key attribute of the wrong type (or empty, or too long) is refused by DynamoDB with a
 * ValidationException that names no field. DescribeTable's AttributeDefinitions give every index key's
 * type, so such a row is rejected in planning, with a message naming the field and the index; dry runs and
 * estimates count it the same way.
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { indexKeyAttributes } from '../../../src/typing/indexKeys.js';
import { createRowPlanner, isRejected, type SourceRecord } from '../../../src/typing/planRow.js';
import type { TableInfo } from '../../../src/shared/tableInfo.js';
import type { RejectedRow } from '../../../src/shared/types.js';

const TABLE: TableInfo = {
  name: 'Orders',
  keySchema: { partitionKey: { name: 'cust', type: 'S' }, sortKey: { name: 'order', type: 'S' } },
  billingMode: 'PAY_PER_REQUEST',
  gsis: [
    { name: 'byStatus', partitionKey: { name: 'status', type: 'S' }, sortKey: { name: 'total', type: 'N' }, projection: 'ALL', nonKeyAttributes: [] },
    // An index on a table key attribute: checked by the table's key checks already.
    { name: 'byOrder', partitionKey: { name: 'order', type: 'S' }, projection: 'KEYS_ONLY', nonKeyAttributes: [] },
    { name: 'byBlob', partitionKey: { name: 'blob', type: 'B' }, projection: 'KEYS_ONLY', nonKeyAttributes: [] },
  ],
} as unknown as TableInfo;

let line = 0;
const json = (value: object): SourceRecord => ({ kind: 'json', origin: { file: 'in.jsonl', line: ++line, raw: JSON.stringify(value) } });
const planner = () =>
  createRowPlanner({ keySchema: TABLE.keySchema, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json', indexKeys: indexKeyAttributes(TABLE) });

function rejected(value: object): RejectedRow {
  const result = planner().plan(json(value));
  if (!isRejected(result)) throw new Error(`expected a reject, got a write of ${JSON.stringify(value)}`);
  return result;
}

describe('GSI key attributes checked in planning', () => {
  it('lists the index key attributes that are not table keys, with their types and index', () => {
    expect(indexKeyAttributes(TABLE).map((a) => [a.name, a.type, a.index, a.role])).toEqual([
      ['status', 'S', 'byStatus', 'partition'],
      ['total', 'N', 'byStatus', 'sort'],
      ['blob', 'B', 'byBlob', 'partition'],
    ]);
  });

  it('a number in an S index key is rejected as KEY_TYPE_MISMATCH naming the field and the index', () => {
    const row = rejected({ cust: 'c1', order: 'o1', status: 404 });
    expect(row.code).toBe('KEY_TYPE_MISMATCH');
    expect(row.field).toBe('status');
    expect(row.message).toContain('byStatus');
    expect(row.key).toEqual({ cust: 'c1', order: 'o1' });
  });

  it.each([
    ['a string in an N index sort key', { total: '12' }, 'KEY_TYPE_MISMATCH', 'total'],
    ['a boolean', { status: true }, 'KEY_TYPE_MISMATCH', 'status'],
    ['NULL', { status: null }, 'KEY_TYPE_MISMATCH', 'status'],
    ['a map', { status: { a: 1 } }, 'KEY_TYPE_MISMATCH', 'status'],
    ['an empty string', { status: '' }, 'MISSING_KEY', 'status'],
    ['a partition key over 2048 bytes', { status: 'x'.repeat(2049) }, 'KEY_TOO_LONG', 'status'],
    ['a sort key value of the wrong type beside a good partition key', { status: 'ok', total: 'high' }, 'KEY_TYPE_MISMATCH', 'total'],
  ])('%s is rejected', (_what, attrs, code, field) => {
    const row = rejected({ cust: 'c1', order: 'o1', ...attrs });
    expect([row.code, row.field]).toEqual([code, field]);
  });

  it('rows without the index keys (sparse index) and rows with the right types are written', () => {
    const p = planner();
    for (const value of [
      { cust: 'c', order: 'o' },
      { cust: 'c', order: 'o', status: 'shipped', total: 12 },
      { cust: 'c', order: 'o', status: 'x'.repeat(2048) },
    ]) {
      const result = p.plan(json(value));
      expect(isRejected(result)).toBe(false);
    }
    const written = p.plan(json({ cust: 'c', order: 'o', total: 3 }));
    expect(isRejected(written) ? undefined : written.item['total']).toEqual(new NumberValue('3'));
  });

  it('without index keys the planner does not check (no GSIs)', () => {
    const p = createRowPlanner({ keySchema: TABLE.keySchema, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json' });
    expect(isRejected(p.plan(json({ cust: 'c', order: 'o', status: 404 })))).toBe(false);
  });
});

describe('GSI names that are Object.prototype members', () => {
  it('the write cost per index counts an index named constructor or __proto__ like any other', async () => {
    const { createWriteCostModel, consumedFromResponse } = await import('../../../src/pacing/writeCost.js');
    const table = {
      ...TABLE,
      gsis: [
        { name: 'constructor', partitionKey: { name: 'status', type: 'S' }, projection: 'ALL', nonKeyAttributes: [] },
        { name: '__proto__', partitionKey: { name: 'status', type: 'S' }, projection: 'ALL', nonKeyAttributes: [] },
      ],
    } as unknown as TableInfo;
    const cost = createWriteCostModel(table)({ cust: 'c', order: 'o', status: 's' }, 100);
    expect(Object.keys(cost.indexes).sort()).toEqual(['__proto__', 'constructor']);
    expect([cost.indexes['constructor'], Object.getOwnPropertyDescriptor(cost.indexes, '__proto__')?.value, cost.total]).toEqual([1, 1, 3]);
    const consumed = consumedFromResponse(
      [
        {
          TableName: 'Orders',
          CapacityUnits: 3,
          Table: { CapacityUnits: 1 },
          GlobalSecondaryIndexes: JSON.parse('{"constructor":{"CapacityUnits":1},"__proto__":{"CapacityUnits":1}}'),
        },
      ],
      'Orders',
    );
    expect(Object.keys(consumed.indexes).sort()).toEqual(['__proto__', 'constructor']);
    expect(consumed.indexes['constructor']).toBe(1);
  });
});
