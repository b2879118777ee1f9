import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { parseDynamoNumber, type DynamoNumber } from '../typing/number.js';

/**
 * DynamoDB's sort key order, so items merged from several shards come out as one Query of an unsharded
 * key would return them: strings by their UTF-8 bytes, numbers by value (all 38 digits, no double),
 * binary by unsigned bytes. Pure.
 */
export function compareSortKeys(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  const x = numberOf(a);
  const y = numberOf(b);
  if (x && y) return compareNumbers(x, y);
  // Items without a sort key (a table without one): each shard holds one item; keep the shards' order.
  return 0;
}

function numberOf(value: unknown): DynamoNumber | undefined {
  const text = value instanceof NumberValue ? value.value : typeof value === 'number' ? String(value) : undefined;
  if (text === undefined) return undefined;
  const parsed = parseDynamoNumber(text);
  return typeof parsed === 'string' ? undefined : parsed;
}

/** Value = ±0.<digits> × 10^exponent; zero has no digits. */
function compareNumbers(a: DynamoNumber, b: DynamoNumber): number {
  const sign = (n: DynamoNumber) => (n.digits === '' ? 0 : n.negative ? -1 : 1);
  if (sign(a) !== sign(b)) return sign(a) - sign(b);
  if (sign(a) === 0) return 0;
  const magnitude =
    a.exponent !== b.exponent ? a.exponent - b.exponent : a.digits.padEnd(40, '0') < b.digits.padEnd(40, '0') ? -1 : a.digits === b.digits ? 0 : 1;
  return sign(a) * Math.sign(magnitude);
}
