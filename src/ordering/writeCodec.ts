import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { itemFromAttributeValues, itemToDynamoJson } from '../typing/json.js';
import type { Item, PlannedWrite } from '../shared/types.js';
import { setOwn } from '../shared/ownRecord.js';

/**
 * One planned write as one line of text (no line breaks: JSON escapes them), for an ordering that holds
 * writes as bytes, in memory or in temporary files. The origin travels too, so a write read back can
 * still be rejected with its line.
 *
 * Layout: a JSON array [partitionId, keyId, file, line, raw, size, wcu, unshardedKey | null, op, then name,
 * value for each attribute]. `op` is 1 for a delete, else 0; a write with its own condition (--item-conditions)
 * has [op, expression, names | null, values in DynamoDB JSON | null] there instead, so a write without one
 * encodes as before (an encoding's length decides where a --memory bound cuts the window order). A string value is the attribute's S value; any other value is its DynamoDB
 * JSON ({"N":"1.5"}, {"M":{...}}), so numbers keep every digit and binary every byte. Strings and
 * numbers, the common case, need no object of their own, and numbers are not validated again when read
 * back. The partition identity comes first, so `partitionEnd` can find it in the bytes without decoding
 * the write.
 */
export function encodeWrite(write: PlannedWrite, file?: string): string {
  const { origin, keyId, partitionId, unshardedKey, size, wcu, item } = write;
  // The input's name as null when it is `file` (the load's one input): an encoding's length, and so where
  // a --memory bound cuts the window order, must not depend on how the input's path was spelled (a
  // resume of ./c.csv as c.csv, or of the same bytes in another folder, skips batches by index).
  const fields: unknown[] = [
    partitionId,
    keyId,
    file !== undefined && origin.file === file ? null : origin.file,
    origin.line,
    origin.raw,
    size,
    wcu,
    unshardedKey ?? null,
    write.condition
      ? [
          write.op === 'delete' ? 1 : 0,
          write.condition.expression,
          write.condition.names ?? null,
          write.condition.values ? itemToDynamoJson(write.condition.values) : null,
        ]
      : write.op === 'delete'
        ? 1
        : 0,
  ];
  for (const name in item) {
    if (!Object.prototype.hasOwnProperty.call(item, name)) continue;
    const value: unknown = item[name];
    fields.push(
      name,
      typeof value === 'string' ? value : value instanceof NumberValue ? { N: value.value } : Object.values(itemToDynamoJson(single(name, value)))[0],
    );
  }
  return JSON.stringify(fields);
}

const HEADER_FIELDS = 9;

export function decodeWrite(text: string, file?: string): PlannedWrite {
  const fields = JSON.parse(text) as unknown[];
  const item: Item = {};
  for (let i = HEADER_FIELDS; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string | Record<string, unknown>;
    // Numbers were canonical when encoded: no need to validate them again.
    if (typeof value === 'string') setOwn(item, name, value);
    else if (typeof value.N === 'string') setOwn(item, name, new NumberValue(value.N));
    else setOwn(item, name, Object.values(itemFromAttributeValues(single(name, value)))[0]);
  }
  const [partitionId, keyId, ownFile, line, raw, size, wcu, unshardedKey] = fields as [
    string,
    string,
    string | null,
    number,
    string,
    number,
    number,
    string | null,
  ];
  const write: PlannedWrite = { origin: { file: ownFile ?? file ?? '', line, raw }, item, keyId, partitionId, size, wcu };
  if (unshardedKey !== null) write.unshardedKey = unshardedKey;
  const op = fields[8] as number | [number, string, Record<string, string> | null, Record<string, unknown> | null];
  if (Array.isArray(op)) {
    const [deletes, expression, names, values] = op;
    if (deletes === 1) write.op = 'delete';
    write.condition = { expression };
    if (names !== null) write.condition.names = names;
    if (values !== null) write.condition.values = itemFromAttributeValues(values);
  } else if (op === 1) write.op = 'delete';
  return write;
}

/** A one-attribute object, safe for any name (`__proto__` included). */
function single(name: string, value: unknown): Record<string, never> {
  const out = {};
  setOwn(out, name, value);
  return out;
}

/**
 * In the UTF-8 bytes of an encoded write starting at `start`, the end (exclusive) of the partition
 * identity's JSON string, quotes included. The JSON text of a string is a function of the string, so
 * those bytes identify the partition key without decoding them. UTF-8 continuation bytes are never
 * '"' or '\', so a byte scan is exact.
 */
export function partitionEnd(bytes: Uint8Array, start: number): number {
  if (bytes[start] !== 0x5b || bytes[start + 1] !== 0x22) throw new Error(`no encoded write at byte ${start}`);
  for (let i = start + 2; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 0x22) return i + 1;
    if (c === 0x5c) i++;
  }
  throw new Error(`an encoded write at byte ${start} ends inside its partition identity`);
}
