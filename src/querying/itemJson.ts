import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../shared/types.js';
import { itemToDynamoJson } from '../typing/json.js';

/**
 * An item read back as one JSON line. Plain JSON: numbers as JSON numbers with every digit DynamoDB
 * keeps (no double in between), binary as base64 text, sets as arrays. `ddbJson`: DynamoDB JSON as the
 * AWS CLI and `ddb-spread load --input-format ddb-json` read it. Pure.
 */
export function itemJsonLine(item: Item, ddbJson = false): string {
  return `${ddbJson ? JSON.stringify(itemToDynamoJson(item)) : plainJson(item)}\n`;
}

function plainJson(value: unknown): string {
  if (value instanceof NumberValue) return value.value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string' || typeof value === 'boolean' || value === null || value === undefined) return JSON.stringify(value ?? null);
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString('base64'));
  if (Array.isArray(value) || value instanceof Set) return `[${[...(value as Iterable<unknown>)].map(plainJson).join(',')}]`;
  const fields = Object.entries(value as Record<string, unknown>).map(([name, v]) => `${JSON.stringify(name)}:${plainJson(v)}`);
  return `{${fields.join(',')}}`;
}
