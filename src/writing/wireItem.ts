import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { ownRecord } from '../shared/ownRecord.js';
import type { Item, KeySchema } from '../shared/types.js';

/**
 * An item in DynamoDB's wire form (AttributeValue maps), built here rather than by lib-dynamodb's
 * marshall: that one assigns every name into a plain `{}`, so `__proto__` vanished, and it takes a map
 * with an own `constructor` attribute for a class instance. Maps here have no prototype,
 * so every attribute name DynamoDB accepts goes out as written. Undefined values are left out.
 */
export function toWireItem(item: Item): Record<string, AttributeValue> {
  const out = ownRecord<AttributeValue>();
  for (const name of Object.keys(item)) {
    const value = toWire(item[name]);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function toWire(value: unknown): AttributeValue | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return { S: value };
  if (value instanceof NumberValue) return { N: value.value };
  if (typeof value === 'number' || typeof value === 'bigint') return { N: String(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  if (value === null) return { NULL: true };
  if (value instanceof Uint8Array) return { B: value };
  if (Array.isArray(value)) return { L: value.map((element) => toWire(element) ?? { NULL: true }) };
  if (value instanceof Set) {
    const elements = [...(value as Set<unknown>)];
    const first = elements[0];
    if (typeof first === 'string') return { SS: elements as string[] };
    if (first instanceof Uint8Array) return { BS: elements as Uint8Array[] };
    return { NS: elements.map((e) => (e instanceof NumberValue ? e.value : String(e))) };
  }
  return { M: toWireItem(value as Item) };
}

/** The primary key of a wire item (an UnprocessedItems entry) in native form, for keyIdOf. */
export function keyFromWire(item: Record<string, AttributeValue>, schema: KeySchema): Item {
  const key: Item = ownRecord();
  for (const attr of [schema.partitionKey, schema.sortKey]) {
    if (!attr || !Object.hasOwn(item, attr.name)) continue;
    const av = item[attr.name]!;
    if (av.S !== undefined) key[attr.name] = av.S;
    else if (av.N !== undefined) key[attr.name] = new NumberValue(av.N);
    else if (av.B !== undefined) key[attr.name] = av.B;
  }
  return key;
}
