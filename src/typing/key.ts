import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { RowError } from '../shared/errors.js';
import { parseDynamoNumber, plainNumberSize } from './number.js';
import { ownValue, setOwn } from '../shared/ownRecord.js';
import type { Item, KeyAttribute, KeySchema } from '../shared/types.js';

/** Key value limits from the BatchWriteItem and data-type docs. */
export const MAX_PARTITION_KEY_BYTES = 2048;
export const MAX_SORT_KEY_BYTES = 1024;

/**
 * Checks that the item carries the table's key attributes with the table's types and within the length
 * limits, and returns its key identity: a string equal for two items exactly when DynamoDB sees the
 * same primary key (numbers compare by value, so "1.0" and "1" are one key).
 */
export function keyIdOf(item: Item, schema: KeySchema): string {
  return keyIdsOf(item, schema).keyId;
}

/** keyIdOf, plus the identity of the partition key alone (what the write order spreads). */
export function keyIdsOf(item: Item, schema: KeySchema): { keyId: string; partitionId: string } {
  const pk = keyPart(item, schema.partitionKey, MAX_PARTITION_KEY_BYTES, 'partition');
  if (!schema.sortKey) return { keyId: pk, partitionId: pk };
  // Length-prefixed, so no partition key value can run into the sort key part and alias another key.
  return { keyId: `${pk.length}:${pk}${keyPart(item, schema.sortKey, MAX_SORT_KEY_BYTES, 'sort')}`, partitionId: pk };
}

function keyPart(item: Item, attr: KeyAttribute, maxBytes: number, role: string): string {
  const value = ownValue(item, attr.name);
  if (value === undefined || value === null || value === '') {
    throw new RowError('MISSING_KEY', `${role} key "${attr.name}" is missing or empty`, attr.name);
  }
  switch (attr.type) {
    case 'S': {
      if (typeof value !== 'string') throw mismatch(attr, value);
      const bytes = Buffer.byteLength(value, 'utf8');
      if (bytes > maxBytes) {
        throw new RowError('KEY_TOO_LONG', `${role} key "${attr.name}" is ${bytes} bytes; DynamoDB allows at most ${maxBytes}`, attr.name);
      }
      return `S${value}`;
    }
    case 'N': {
      if (!(value instanceof NumberValue)) throw mismatch(attr, value);
      // Canonical plain text (what typing makes of most numbers) is its own canonical form.
      if (plainNumberSize(value.value) !== 0) return `N${value.value}`;
      const parsed = parseDynamoNumber(value.value);
      if (typeof parsed === 'string') throw new RowError('KEY_TYPE_MISMATCH', parsed, attr.name);
      return `N${parsed.text}`;
    }
    case 'B': {
      if (!(value instanceof Uint8Array)) throw mismatch(attr, value);
      if (value.byteLength === 0) throw new RowError('MISSING_KEY', `${role} key "${attr.name}" is empty`, attr.name);
      if (value.byteLength > maxBytes) {
        throw new RowError('KEY_TOO_LONG', `${role} key "${attr.name}" is ${value.byteLength} bytes; DynamoDB allows at most ${maxBytes}`, attr.name);
      }
      return `B${Buffer.from(value).toString('base64')}`;
    }
  }
}

function mismatch(attr: KeyAttribute, value: unknown): RowError {
  return new RowError('KEY_TYPE_MISMATCH', `key "${attr.name}" must be of type ${attr.type} (the table's key type), got ${describeType(value)}`, attr.name);
}

export function describeType(value: unknown): string {
  if (value instanceof NumberValue || typeof value === 'number') return 'N';
  if (typeof value === 'string') return 'S';
  if (typeof value === 'boolean') return 'BOOL';
  if (value === null) return 'NULL';
  if (value instanceof Uint8Array) return 'B';
  if (value instanceof Set) return 'a set';
  if (Array.isArray(value)) return 'L';
  return 'M';
}

/** The key as plain strings, for reject records and messages. Never throws. */
export function keyForDisplay(item: Item, schema: KeySchema): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const attr of [schema.partitionKey, schema.sortKey]) {
    if (!attr) continue;
    const value = ownValue(item, attr.name);
    if (value === undefined || value === null) return undefined;
    setOwn(out, attr.name, value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value instanceof NumberValue ? value.value : String(value));
  }
  return out;
}

/** The primary key of an item, for BatchWriteItem DeleteRequest and for matching UnprocessedItems. */
export function keyOf(item: Item, schema: KeySchema): Item {
  const key: Item = {};
  setOwn(key, schema.partitionKey.name, ownValue(item, schema.partitionKey.name));
  if (schema.sortKey) setOwn(key, schema.sortKey.name, ownValue(item, schema.sortKey.name));
  return key;
}
