import { RowError } from '../shared/errors.js';
import type { Item, RowCondition } from '../shared/types.js';
import { expressionProblem } from './conditionExpression.js';
import { isDynamoJsonItem, itemFromAttributeValues, itemFromDynamoJson } from './json.js';

/**
 * A DynamoDB JSON line that may carry its own condition: `{"Item": {...}, "ConditionExpression": "...",
 * "ExpressionAttributeNames": {...}, "ExpressionAttributeValues": {...}}`, the item and condition fields of
 * a PutItem request side by side, as a backfill that checks each row against what the table holds needs
 * (a version per row: `attribute_not_exists(pk) OR #v < :v`).
 *
 * Only with --item-conditions is the condition applied; without it such a line is rejected (ITEM_CONDITION),
 * never written without the condition its author gave it. Any other field beside Item is rejected too
 * (INVALID_CONDITION): a field this reader does not know may be a condition in another layout, and writing the
 * item without it could overwrite what the condition was there to keep.
 */
export const CONDITION_FIELDS: readonly string[] = ['ConditionExpression', 'ExpressionAttributeNames', 'ExpressionAttributeValues'];

export interface ConditionedItem {
  item: Item;
  condition?: RowCondition;
}

/** A row's values are not quoted in its reject's message: that is printed, and row contents stay off the terminal under --no-excerpts. */
const LABELS = { names: 'ExpressionAttributeNames', values: 'ExpressionAttributeValues', quoteValues: false } as const;

/** A DynamoDB JSON line's item, and its condition when it carries one and `apply` (--item-conditions) is on. */
export function conditionedDynamoJson(value: unknown, apply: boolean): ConditionedItem {
  if (!isWrapperWithFields(value)) return { item: itemFromDynamoJson(value) };
  const others = Object.keys(value).filter((name) => name !== 'Item');
  const unknown = others.filter((name) => !CONDITION_FIELDS.includes(name));
  if (unknown.length > 0)
    throw new RowError(
      'INVALID_CONDITION',
      `the line holds ${unknown.map((n) => JSON.stringify(n)).join(', ')} beside "Item": a DynamoDB JSON line is an item, or {"Item": item} with at most ${CONDITION_FIELDS.join(', ')} beside it (applied with --item-conditions); the row is not written, so that nothing its other fields say is left out`,
      unknown[0],
    );
  if (!apply)
    throw new RowError(
      'ITEM_CONDITION',
      `the line carries its own condition (${others.join(', ')} beside "Item"), which this load does not apply: pass --item-conditions to send each row with its condition, or remove those fields (jq -c '{Item}') to write the items unconditionally`,
      others[0],
    );
  const expression = value['ConditionExpression'];
  if (typeof expression !== 'string')
    throw new RowError('INVALID_CONDITION', 'ConditionExpression must be a string (a DynamoDB condition expression)', 'ConditionExpression');
  const names = mapField(value, 'ExpressionAttributeNames');
  const values = mapField(value, 'ExpressionAttributeValues');
  const problem = expressionProblem(expression, names ?? {}, values ?? {}, LABELS);
  if (problem !== undefined) throw new RowError('INVALID_CONDITION', `the line's condition: ${problem}`, 'ConditionExpression');
  const condition: RowCondition = { expression };
  if (names && Object.keys(names).length > 0) condition.names = names as Record<string, string>;
  if (values && Object.keys(values).length > 0) condition.values = itemFromAttributeValues(values);
  return { item: itemFromDynamoJson(value['Item']), condition };
}

/** `{"Item": <DynamoDB JSON item>, ...more}`, and not itself an item whose attributes are named so. */
function isWrapperWithFields(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return Object.hasOwn(record, 'Item') && Object.keys(record).length > 1 && isDynamoJsonItem(record['Item']) && !isDynamoJsonItem(record);
}

function mapField(value: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  if (!Object.hasOwn(value, name)) return undefined;
  const field = value[name];
  if (typeof field !== 'object' || field === null || Array.isArray(field))
    throw new RowError('INVALID_CONDITION', `${name} must be an object (${name === LABELS.names ? '{"#s": "status"}' : '{":v": {"N": "3"}}'})`, name);
  return field as Record<string, unknown>;
}
