import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** DynamoDB JSON as written in tests: binary as base64 text, sets sorted, so `toEqual` compares wire values exactly. */
export type PlainValue =
  | { S: string }
  | { N: string }
  | { B: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] }
  | { L: PlainValue[] }
  | { M: Record<string, PlainValue> };

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

export function plainValue(av: AttributeValue): PlainValue {
  if (av.S !== undefined) return { S: av.S };
  if (av.N !== undefined) return { N: av.N };
  if (av.B !== undefined) return { B: b64(av.B) };
  if (av.BOOL !== undefined) return { BOOL: av.BOOL };
  if (av.NULL !== undefined) return { NULL: true };
  if (av.SS !== undefined) return { SS: [...av.SS].sort() };
  if (av.NS !== undefined) return { NS: [...av.NS].sort() };
  if (av.BS !== undefined) return { BS: av.BS.map(b64).sort() };
  if (av.L !== undefined) return { L: av.L.map(plainValue) };
  if (av.M !== undefined) return { M: plainItem(av.M) };
  throw new Error(`unknown attribute value ${JSON.stringify(av)}`);
}

/** A raw item from a low-level Scan, as plain DynamoDB JSON. */
export function plainItem(item: Record<string, AttributeValue>): Record<string, PlainValue> {
  const out: Record<string, PlainValue> = {};
  for (const name of Object.keys(item).sort()) out[name] = plainValue(item[name]!);
  return out;
}

/** A stable one-line text of an item (attribute names sorted at every level), for hashing and maps. */
export function canonicalItem(item: Record<string, AttributeValue>): string {
  return stableStringify(plainItem(item));
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
