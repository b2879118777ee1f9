import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { Item, KeySchema, PlannedWrite } from '../shared/types.js';
import { toWireItem } from './wireItem.js';
import type { WriteCondition } from './conditionOption.js';

export type { WriteCondition } from './conditionOption.js';

/** The condition parts of one PutItem/DeleteItem call; every name goes through ExpressionAttributeNames. */
export interface ConditionParts {
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
}

/**
 * The condition of `write`'s call (undefined: none, a row without its own under --item-conditions).
 * - item: the row's own (--item-conditions), its values in DynamoDB's wire form.
 * - ifNotExists: `attribute_not_exists(#k)` on the partition key, true exactly when no item has the key
 *   (DynamoDB evaluates the condition against the item of the call's primary key).
 * - ifNewer: `attribute_not_exists(#a) OR #a < :v`, `:v` the row's own value: the stored item is absent, has
 *   no such attribute, or a smaller one. DynamoDB compares Numbers numerically and Strings by their UTF-8
 *   bytes; a stored value of another type than `:v` makes `<` false, so the row is not written.
 * The row's value must have been checked by ifNewerProblem first.
 */
export function conditionOf(condition: WriteCondition, write: PlannedWrite, schema: KeySchema): ConditionParts | undefined {
  if (condition.kind === 'item') {
    const own = write.condition;
    if (!own) return undefined;
    return {
      ConditionExpression: own.expression,
      ...(own.names ? { ExpressionAttributeNames: own.names } : {}),
      ...(own.values ? { ExpressionAttributeValues: toWireItem(own.values) } : {}),
    };
  }
  if (condition.kind === 'ifNotExists') {
    return { ConditionExpression: 'attribute_not_exists(#k)', ExpressionAttributeNames: { '#k': schema.partitionKey.name } };
  }
  if (condition.kind === 'expression') {
    // DynamoDB refuses an empty map of names or values: each only when the expression has some.
    return {
      ConditionExpression: condition.expression,
      ...(Object.keys(condition.names).length > 0 ? { ExpressionAttributeNames: condition.names } : {}),
      ...(Object.keys(condition.values).length > 0 ? { ExpressionAttributeValues: condition.values } : {}),
    };
  }
  const value = toWireItem({ v: write.item[condition.attribute] })['v'];
  if (value === undefined)
    throw new Error(`--if-newer: the write of line ${write.origin.line} has no ${condition.attribute} (a bug: ifNewerProblem passed it)`);
  return {
    ConditionExpression: 'attribute_not_exists(#a) OR #a < :v',
    ExpressionAttributeNames: { '#a': condition.attribute },
    ExpressionAttributeValues: { ':v': value },
  };
}

/** Why a row cannot be written under --if-newer `attribute` (its value is missing or not a Number or a String), or undefined. */
export function ifNewerProblem(item: Item, attribute: string): string | undefined {
  const value = Object.hasOwn(item, attribute) ? item[attribute] : undefined;
  if (value === undefined || value === null)
    return `the row has no ${attribute}, which --if-newer compares with the stored item's; give every row a Number or String ${attribute}`;
  if (typeof value === 'string' || value instanceof NumberValue || typeof value === 'number' || typeof value === 'bigint') return undefined;
  return `the row's ${attribute} is ${describe(value)}, but --if-newer compares Numbers or Strings only (pass --types ${attribute}:N or ${attribute}:S)`;
}

function describe(value: unknown): string {
  if (typeof value === 'boolean') return 'a Boolean';
  if (value instanceof Uint8Array) return 'a Binary';
  if (Array.isArray(value)) return 'a List';
  if (value instanceof Set) return 'a set';
  return 'a Map';
}

/**
 * Whether `stored` (DynamoDB's item, as the SDK parses it) is `item`'s wire form: the same attributes and
 * values, numbers compared as DynamoDB stores them (normalized: `1.50` is `1.5`), sets in any order, binary by
 * its bytes. A resumed load asks this of the items its false conditions return (ALL_OLD): one equal to the
 * row is the row's own write that landed before the crash.
 */
export function sameItem(item: Record<string, AttributeValue>, stored: Record<string, AttributeValue> | undefined): boolean {
  if (stored === undefined) return false;
  const names = Object.keys(item);
  if (names.length !== Object.keys(stored).length) return false;
  return names.every((name) => Object.hasOwn(stored, name) && canonical(item[name]!) === canonical(stored[name]!));
}

function canonical(value: AttributeValue): string {
  const v = value as unknown as Record<string, unknown>;
  if (typeof v['S'] === 'string') return `S${JSON.stringify(v['S'])}`;
  if (typeof v['N'] === 'string') return `N${canonicalNumber(v['N'])}`;
  if (v['B'] !== undefined) return `B${bytesText(v['B'])}`;
  if (typeof v['BOOL'] === 'boolean') return `BOOL${String(v['BOOL'])}`;
  if (v['NULL'] !== undefined) return 'NULL';
  if (Array.isArray(v['SS'])) return `SS${JSON.stringify([...(v['SS'] as string[])].sort())}`;
  if (Array.isArray(v['NS'])) return `NS${JSON.stringify((v['NS'] as string[]).map(canonicalNumber).sort())}`;
  if (Array.isArray(v['BS'])) return `BS${JSON.stringify((v['BS'] as unknown[]).map(bytesText).sort())}`;
  if (Array.isArray(v['L'])) return `L[${(v['L'] as AttributeValue[]).map(canonical).join(',')}]`;
  if (v['M'] !== null && typeof v['M'] === 'object') {
    const map = v['M'] as Record<string, AttributeValue>;
    return `M{${Object.keys(map)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(map[k]!)}`)
      .join(',')}}`;
  }
  return `?${JSON.stringify(v)}`;
}

function bytesText(bytes: unknown): string {
  if (typeof bytes === 'string') return bytes;
  return bytes instanceof Uint8Array ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') : String(bytes);
}

/** A Number's text as DynamoDB keeps it: sign, significant digits and exponent, without leading or trailing zeros. */
export function canonicalNumber(text: string): string {
  const match = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(text);
  if (!match) return text;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  let digits = whole + fraction;
  let exp = Number(exponent) - fraction.length;
  const lead = /^0*/.exec(digits)![0].length;
  digits = digits.slice(lead);
  if (digits === '') return '0';
  const trail = /0*$/.exec(digits)![0].length;
  digits = digits.slice(0, digits.length - trail);
  exp += trail;
  return `${sign === '-' ? '-' : ''}${digits}e${exp}`;
}
