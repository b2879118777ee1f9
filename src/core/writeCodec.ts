import { itemFromAttributeValues, itemToDynamoJson } from './json.js';
import type { PlannedWrite } from './types.js';

/**
 * One planned write as one line of text (no line breaks: JSON escapes them), for the temporary files of
 * an ordering larger than memory. The item travels as DynamoDB JSON, so numbers keep every digit and
 * binary every byte; the origin travels too, so a write read back can still be rejected with its line.
 */
export function encodeWrite(write: PlannedWrite): string {
  const { origin, keyId, partitionId, unshardedKey, size, wcu, item } = write;
  return JSON.stringify([origin.file, origin.line, origin.raw, keyId, partitionId, size, wcu, itemToDynamoJson(item), unshardedKey ?? null]);
}

export function decodeWrite(text: string): PlannedWrite {
  const [file, line, raw, keyId, partitionId, size, wcu, item, unshardedKey] = JSON.parse(text) as [
    string,
    number,
    string,
    string,
    string,
    number,
    number,
    Record<string, unknown>,
    string | null,
  ];
  const write: PlannedWrite = { origin: { file, line, raw }, item: itemFromAttributeValues(item), keyId, partitionId, size, wcu };
  if (unshardedKey !== null) write.unshardedKey = unshardedKey;
  return write;
}

/**
 * Bytes a write costs while held in memory, roughly: the raw text (UTF-16), the item's objects (about
 * three times its DynamoDB size) and fixed overhead for the objects and the key strings. Used to keep
 * an ordering within its memory budget; an estimate on the safe side, not a measurement.
 */
export function heldBytes(write: PlannedWrite): number {
  return 2 * (write.origin.raw.length + write.keyId.length + write.partitionId.length) + 3 * write.size + 400;
}
