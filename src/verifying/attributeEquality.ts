import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { parseDynamoNumber } from '../typing/number.js';

/**
 * DynamoDB's own equality of attribute values, pure: numbers by value (1.50 equals 1.5, 1E2 equals 100),
 * sets unordered (and without regard to duplicates, which DynamoDB never stores), binary by bytes, maps by
 * their names and values, lists in order. Two values of different types are never equal (the string "1"
 * is not the number 1).
 */
export function sameValue(a: AttributeValue, b: AttributeValue): boolean {
  if (a.S !== undefined) return b.S === a.S;
  if (a.N !== undefined) return b.N !== undefined && numberText(a.N) === numberText(b.N);
  if (a.B !== undefined) return b.B !== undefined && sameBytes(a.B, b.B);
  if (a.BOOL !== undefined) return b.BOOL === a.BOOL;
  if (a.NULL !== undefined) return b.NULL !== undefined;
  if (a.SS !== undefined) return b.SS !== undefined && sameSet(a.SS, b.SS, (s) => s);
  if (a.NS !== undefined) return b.NS !== undefined && sameSet(a.NS, b.NS, numberText);
  if (a.BS !== undefined) return b.BS !== undefined && sameSet(a.BS, b.BS, bytesText);
  if (a.L !== undefined) return b.L !== undefined && a.L.length === b.L.length && a.L.every((v, i) => sameValue(v, b.L![i]!));
  if (a.M !== undefined) return b.M !== undefined && differingAttributes(a.M, b.M).length === 0;
  return false;
}

/**
 * The names of the attributes that differ between the item expected and the item stored: present in one
 * and not the other, or of unequal value. Sorted, so a report reads the same on every run.
 */
export function differingAttributes(expected: Record<string, AttributeValue>, actual: Record<string, AttributeValue>): string[] {
  const names = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  const differing: string[] = [];
  for (const name of names) {
    const a = Object.hasOwn(expected, name) ? expected[name] : undefined;
    const b = Object.hasOwn(actual, name) ? actual[name] : undefined;
    if (a === undefined || b === undefined || !sameValue(a, b)) differing.push(name);
  }
  return differing.sort();
}

/** A number's canonical text (typing/number.ts): one text per value. Text DynamoDB would refuse stays as it is. */
export function numberText(text: string): string {
  const parsed = parseDynamoNumber(text);
  return typeof parsed === 'string' ? text : parsed.text;
}

export function bytesText(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

function sameSet<T>(a: readonly T[], b: readonly T[], canonical: (member: T) => string): boolean {
  const left = new Set(a.map(canonical));
  const right = new Set(b.map(canonical));
  if (left.size !== right.size) return false;
  for (const member of left) if (!right.has(member)) return false;
  return true;
}
