/**
 * Attack on --item-conditions at the planner: a line whose condition could be left out (an export's line or
 * change record, JSON or Ion, that carries ConditionExpression beside its item), or read other than its author
 * wrote it (fields in another order, __proto__, a duplicated field), must never become a write without it.
 */
import { describe, expect, it } from 'vitest';
import type { KeySchema, PlannedWrite, RejectedRow, RowOrigin } from '../../src/shared/types.js';
import { createRowPlanner, isRejected, type RecordFlavor, type SourceRecord } from '../../src/typing/planRow.js';
import { decodeWrite, encodeWrite } from '../../src/ordering/writeCodec.js';
import { expressionProblem } from '../../src/typing/conditionExpression.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };
const planner = (itemConditions: boolean) =>
  createRowPlanner({ keySchema: SCHEMA, types: {}, infer: false, empty: 'omit', jsonFlavor: 'ddb-json', ...(itemConditions ? { itemConditions } : {}) });
const origin = (raw: string): RowOrigin => ({ file: 'in.json', line: 3, raw });
const json = (raw: string, flavor?: RecordFlavor): SourceRecord => ({ kind: 'json', origin: origin(raw), ...(flavor ? { flavor } : {}) });
const ion = (raw: string, flavor?: RecordFlavor): SourceRecord => ({ kind: 'ion', origin: origin(raw), ...(flavor ? { flavor } : {}) });
const ITEM = { pk: { S: 'a' }, v: { S: 'new' } };
const CONDITION = { ConditionExpression: 'attribute_not_exists(pk)' };

function rejected(result: PlannedWrite | RejectedRow): RejectedRow {
  if (!isRejected(result))
    throw new Error(`expected a rejection, got a write ${JSON.stringify(result.item)} with condition ${JSON.stringify(result.condition)}`);
  return result;
}

describe("an export's line that carries its own condition", () => {
  for (const on of [true, false]) {
    const flag = on ? 'with --item-conditions' : 'without it';
    it(`a full export's JSON line is rejected, never written without its condition (${flag})`, () => {
      const reject = rejected(planner(on).plan(json(JSON.stringify({ Item: ITEM, ...CONDITION }), 'ddb-export')));
      expect(reject.code).toBe('ITEM_CONDITION');
      expect(reject.field).toBe('ConditionExpression');
    });

    it(`an incremental export's JSON change record is rejected, put or delete (${flag})`, () => {
      for (const change of [
        { Keys: { pk: { S: 'a' } }, NewImage: ITEM, ...CONDITION },
        { Keys: { pk: { S: 'a' } }, ExpressionAttributeValues: { ':v': { S: 'x' } } },
      ]) {
        const reject = rejected(planner(on).plan(json(JSON.stringify(change), 'ddb-change')));
        expect(reject.code).toBe('ITEM_CONDITION');
      }
    });

    it(`an ION export's change record is rejected, as its full export's line is (${flag})`, () => {
      expect(rejected(planner(on).plan(ion('{Item:{pk:"a",v:"new"},ConditionExpression:"attribute_not_exists(pk)"}', 'ddb-export'))).code).toBe(
        'ITEM_CONDITION',
      );
      for (const change of [
        '{Keys:{pk:"a"},NewImage:{pk:"a",v:"new"},ConditionExpression:"attribute_not_exists(pk)"}',
        '{Keys:{pk:"a"},ConditionExpression:"attribute_exists(pk)"}',
      ])
        expect(rejected(planner(on).plan(ion(change, 'ddb-change'))).code).toBe('ITEM_CONDITION');
    });
  }

  it("an export's line without one still loads", () => {
    const p = planner(true);
    expect(isRejected(p.plan(json(JSON.stringify({ Item: ITEM }), 'ddb-export')))).toBe(false);
    expect(isRejected(p.plan(json(JSON.stringify({ Keys: { pk: { S: 'a' } }, NewImage: ITEM }), 'ddb-change')))).toBe(false);
    expect(isRejected(p.plan(ion('{Keys:{pk:"a"},NewImage:{pk:"a"}}', 'ddb-change')))).toBe(false);
  });
});

describe('a DynamoDB JSON line read as its author wrote it', () => {
  it('fields in any order: the condition is kept, and survives the write codec', () => {
    for (const raw of [JSON.stringify({ ...CONDITION, Item: ITEM }), JSON.stringify({ Item: ITEM, ...CONDITION })]) {
      const write = planner(true).plan(json(raw));
      if (isRejected(write)) throw new Error(write.message);
      expect(write.condition).toEqual({ expression: 'attribute_not_exists(pk)' });
      expect(decodeWrite(encodeWrite(write)).condition).toEqual({ expression: 'attribute_not_exists(pk)' });
    }
  });

  it('__proto__ beside Item, or as a placeholder, rejects the row', () => {
    for (const raw of [
      `{"Item":${JSON.stringify(ITEM)},"__proto__":{"ConditionExpression":"attribute_not_exists(pk)"}}`,
      `{"Item":${JSON.stringify(ITEM)},"ConditionExpression":"#a = :a","ExpressionAttributeNames":{"__proto__":"v"},"ExpressionAttributeValues":{":a":{"S":"x"}}}`,
    ]) {
      for (const on of [true, false]) expect(['INVALID_CONDITION', 'ITEM_CONDITION']).toContain(rejected(planner(on).plan(json(raw))).code);
    }
  });
});

describe('a condition DynamoDB would refuse on every call is refused before it', () => {
  // DynamoDB's limit on any expression string: 4 KB (docs: "Constraints", expression parameters), counted in UTF-8 bytes.
  const sized = (bytes: number) => `attribute_not_exists(pk) OR #v = :v${' '.repeat(bytes - 'attribute_not_exists(pk) OR #v = :v'.length)}`;
  const names = { '#v': 'v' };
  const values = { ':v': { S: 'x' } };

  it("a line's expression over 4 KB rejects its row (INVALID_CONDITION), as an estimate and a dry run count it; 4 KB is sent", () => {
    const over = rejected(
      planner(true).plan(
        json(JSON.stringify({ Item: ITEM, ConditionExpression: sized(4097), ExpressionAttributeNames: names, ExpressionAttributeValues: values })),
      ),
    );
    expect(over.code).toBe('INVALID_CONDITION');
    expect(over.message).toMatch(/4,097 bytes.*4 KB/);
    const at = planner(true).plan(
      json(JSON.stringify({ Item: ITEM, ConditionExpression: sized(4096), ExpressionAttributeNames: names, ExpressionAttributeValues: values })),
    );
    expect(isRejected(at)).toBe(false);
  });

  it('--condition over 4 KB is refused before the first write; bytes, not characters, count', () => {
    expect(expressionProblem(sized(4097), names, values)).toMatch(/4,097 bytes/);
    expect(expressionProblem(sized(4096), names, values)).toBeUndefined();
    // 2,040 two-byte characters: under 4,096 characters, over 4,096 bytes.
    expect(expressionProblem(`attribute_not_exists(pk) OR #v = :v OR #v = ${'é'.repeat(2040)}`, names, values)).toMatch(/bytes/);
  });
});
