import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { numberSize, parseDynamoNumber, plainNumberSize } from './number.js';
import type { Item } from '../shared/types.js';

/** DynamoDB's item size limit: 400 KB, attribute names included. */
export const MAX_ITEM_BYTES = 400 * 1024;

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * Item size by DynamoDB's rules (developer guide, "Item sizes and formats"): the UTF-8 length of each
 * attribute name plus its value's size. Strings: UTF-8 bytes; numbers: see numberSize; binary: raw
 * bytes; null and booleans: 1 byte; lists and maps: 3 bytes + 1 byte per element + the elements
 * (map keys count as names); sets: the sum of their elements.
 */
export function itemSize(item: Item): number {
  let size = 0;
  for (const name of Object.keys(item)) {
    const value = item[name];
    if (value === undefined) continue;
    size += utf8(name) + valueSize(value);
  }
  return size;
}

export function valueSize(value: unknown): number {
  if (typeof value === 'string') return utf8(value);
  if (value instanceof NumberValue) return sizeOfNumberText(value.value);
  if (typeof value === 'number' || typeof value === 'bigint') return sizeOfNumberText(String(value));
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let size = 0;
    for (const element of value) size += valueSize(element);
    return size;
  }
  if (Array.isArray(value)) {
    let size = 3;
    for (const element of value) size += 1 + valueSize(element);
    return size;
  }
  if (typeof value === 'object') {
    let size = 3;
    for (const [name, element] of Object.entries(value as Record<string, unknown>)) {
      if (element === undefined) continue;
      size += 1 + utf8(name) + valueSize(element);
    }
    return size;
  }
  return 0;
}

function sizeOfNumberText(text: string): number {
  const plain = plainNumberSize(text);
  if (plain !== 0) return plain;
  const parsed = parseDynamoNumber(text);
  // An invalid number never reaches here (conversion rejects it); count its text to stay conservative.
  return typeof parsed === 'string' ? utf8(text) : numberSize(parsed);
}

/** Write units one standard put costs: each item rounds up to 1 KB, and a write costs at least 1. */
export function writeUnits(size: number): number {
  return Math.max(1, Math.ceil(size / 1024));
}
