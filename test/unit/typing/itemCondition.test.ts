import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { KeySchema, PlannedWrite, RejectedRow, RowOrigin } from '../../../src/shared/types.js';
import { itemFromIon } from '../../../src/typing/ionItem.js';
import { createRowPlanner, isRejected, type SourceRecord } from '../../../src/typing/planRow.js';
import { RowError } from '../../../src/shared/errors.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };
const planner = (itemConditions: boolean) =>
  createRowPlanner({ keySchema: SCHEMA, types: {}, infer: false, empty: 'omit', jsonFlavor: 'ddb-json', ...(itemConditions ? { itemConditions } : {}) });
const origin = (raw: string): RowOrigin => ({ file: 'in.jsonl', line: 3, raw });
const line = (value: unknown): SourceRecord => ({ kind: 'json', origin: origin(JSON.stringify(value)) });
const ITEM = { pk: { S: 'a' }, version: { N: '7' } };

function planned(result: PlannedWrite | RejectedRow): PlannedWrite {
  if (isRejected(result)) throw new Error(`expected a write, got ${result.code}: ${result.message}`);
  return result;
}
function rejected(result: PlannedWrite | RejectedRow): RejectedRow {
  if (!isRejected(result)) throw new Error('expected a rejection');
  return result;
}

describe('a DynamoDB JSON line with its own condition (--item-conditions)', () => {
  it('is the item with the condition beside it: names kept, values typed as an item is', () => {
    const write = planned(
      planner(true).plan(
        line({
          Item: ITEM,
          ConditionExpression: 'attribute_not_exists(pk) OR #v < :v',
          ExpressionAttributeNames: { '#v': 'version' },
          ExpressionAttributeValues: { ':v': { N: '7' } },
        }),
      ),
    );
    expect(write.item).toEqual({ pk: 'a', version: new NumberValue('7') });
    expect(write.condition).toEqual({ expression: 'attribute_not_exists(pk) OR #v < :v', names: { '#v': 'version' }, values: { ':v': new NumberValue('7') } });
  });

  it('a line without a condition, bare or wrapped, has none: it is put unconditionally', () => {
    expect(planned(planner(true).plan(line({ Item: ITEM }))).condition).toBeUndefined();
    expect(planned(planner(true).plan(line(ITEM))).condition).toBeUndefined();
  });

  it('one planner keeps no condition from one line to the next', () => {
    const p = planner(true);
    expect(planned(p.plan(line({ Item: ITEM, ConditionExpression: 'attribute_not_exists(pk)' }))).condition).toBeDefined();
    expect(planned(p.plan(line({ Item: { pk: { S: 'b' } } }))).condition).toBeUndefined();
  });

  it('without --item-conditions the row is rejected (ITEM_CONDITION), never written without its condition', () => {
    const reject = rejected(planner(false).plan(line({ Item: ITEM, ConditionExpression: 'attribute_not_exists(pk)' })));
    expect(reject.code).toBe('ITEM_CONDITION');
    expect(reject.message).toMatch(/--item-conditions/);
    expect(reject.field).toBe('ConditionExpression');
  });

  it('a field beside Item that is neither the item nor its condition is rejected, with or without the flag', () => {
    for (const on of [true, false]) {
      const reject = rejected(planner(on).plan(line({ Item: ITEM, Condition: { expression: 'x' } })));
      expect(reject.code).toBe('INVALID_CONDITION');
      expect(reject.field).toBe('Condition');
      expect(reject.message).toMatch(/"Condition" beside "Item"/);
    }
  });

  it("a condition DynamoDB would refuse is the row's reject, naming the line's own fields", () => {
    const cases: [unknown, RegExp][] = [
      [{ Item: ITEM, ConditionExpression: 3 }, /must be a string/],
      [
        { Item: ITEM, ConditionExpression: '#v < :v', ExpressionAttributeValues: { ':v': { N: '1' } } },
        /uses #v, which ExpressionAttributeNames does not give/,
      ],
      [
        { Item: ITEM, ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':v': { N: '1' } } },
        /ExpressionAttributeValues gives :v, which the expression does not use/,
      ],
      [{ Item: ITEM, ConditionExpression: 'a = :v', ExpressionAttributeValues: { ':v': { N: 'x' } } }, /DynamoDB refuses/],
      [{ Item: ITEM, ConditionExpression: 'a = :v', ExpressionAttributeValues: [] }, /must be an object/],
      [{ Item: ITEM, ConditionExpression: '' }, /empty/],
    ];
    for (const [value, message] of cases) {
      const reject = rejected(planner(true).plan(line(value)));
      expect(reject.code).toBe('INVALID_CONDITION');
      expect(reject.message).toMatch(message);
    }
    // A row's values stay out of the message (it is printed; --no-excerpts keeps row contents off the terminal).
    for (const bad of [{ N: 'secret-41' }, { S: 'secret-42', N: '1' }]) {
      const reject = rejected(planner(true).plan(line({ Item: ITEM, ConditionExpression: 'a = :v', ExpressionAttributeValues: { ':v': bad } })));
      expect(reject.code).toBe('INVALID_CONDITION');
      expect(reject.message).not.toMatch(/secret/);
    }
  });

  it('an item whose attributes are named Item and ConditionExpression is an item, not a condition', () => {
    const write = planned(planner(true).plan(line({ pk: { S: 'a' }, Item: { S: 'x' }, ConditionExpression: { S: 'y' } })));
    expect(write.item).toEqual({ pk: 'a', Item: 'x', ConditionExpression: 'y' });
    expect(write.condition).toBeUndefined();
  });

  it('an Ion line with a condition beside Item is refused, not written without it nor as an item named Item', () => {
    expect(() => itemFromIon('{Item:{pk:"a"}, ConditionExpression:"attribute_not_exists(pk)"}', 'iso')).toThrow(RowError);
    try {
      itemFromIon('{Item:{pk:"a"}, ConditionExpression:"attribute_not_exists(pk)"}', 'iso');
    } catch (error) {
      expect((error as RowError).code).toBe('ITEM_CONDITION');
    }
    expect(itemFromIon('{Item:{pk:"a"}}', 'iso')).toEqual({ pk: 'a' });
  });
});
