import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { bytesText, numberText } from './attributeEquality.js';

/**
 * An item's fingerprint, pure: 128 bits of SHA-256 over a canonical text of the item, so that two items
 * DynamoDB holds equal (attributeEquality.ts: numbers by value, sets unordered, binary by bytes, map
 * attributes in any order) have the same fingerprint, and two that differ almost surely do not.
 *
 * The Scan read of verify keeps one fingerprint per scanned key instead of the item (about 24 bytes,
 * whatever the item's size): a key whose stored fingerprint is the expected item's matched; any other is
 * read again by key to name what differs, so a fingerprint never decides a difference on its own.
 */
export function itemFingerprint(item: Record<string, AttributeValue>): string {
  return createHash('sha256').update(canonicalMap(item)).digest('base64').slice(0, 22);
}

function canonicalMap(map: Record<string, AttributeValue>): string {
  const names = Object.keys(map).sort();
  return `{${names.map((name) => `${JSON.stringify(name)}:${canonical(map[name]!)}`).join(',')}}`;
}

function canonical(value: AttributeValue): string {
  if (value.S !== undefined) return `S${JSON.stringify(value.S)}`;
  if (value.N !== undefined) return `N${JSON.stringify(numberText(value.N))}`;
  if (value.B !== undefined) return `B${JSON.stringify(bytesText(value.B))}`;
  if (value.BOOL !== undefined) return `BOOL${String(value.BOOL)}`;
  if (value.NULL !== undefined) return 'NULL';
  if (value.SS !== undefined) return `SS${setText(value.SS)}`;
  if (value.NS !== undefined) return `NS${setText(value.NS.map(numberText))}`;
  if (value.BS !== undefined) return `BS${setText(value.BS.map(bytesText))}`;
  if (value.L !== undefined) return `L[${value.L.map(canonical).join(',')}]`;
  if (value.M !== undefined) return `M${canonicalMap(value.M)}`;
  return '?';
}

/** A set's members, each once, sorted (DynamoDB keeps no order and no duplicates). */
function setText(members: readonly string[]): string {
  return JSON.stringify([...new Set(members)].sort());
}
