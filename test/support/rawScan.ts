/**
 * A Scan of DynamoDB Local read as raw JSON: JSON.parse keeps an own `__proto__` attribute, which the
 * SDK's deserializer and plain-object helpers would drop. DynamoDB Local does not check signatures.
 * Returns each item as JSON text with names sorted at every level, the list sorted.
 */
export async function rawScan(endpoint: string, table: string): Promise<string[]> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.Scan',
      'x-amz-date': '20250101T000000Z',
      authorization: 'AWS4-HMAC-SHA256 Credential=local/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=0',
    },
    body: JSON.stringify({ TableName: table, ConsistentRead: true }),
  });
  const body = JSON.parse(await response.text()) as { Items: Array<Record<string, unknown>> };
  return body.Items.map(sortedJson).sort();
}

/** JSON text with the names sorted at every level; own `__proto__` keys included. */
export function sortedJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${sortedJson((value as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** The expected items, given as DynamoDB JSON texts, in rawScan's form. */
export const expectedScan = (...items: string[]): string[] => items.map((text) => sortedJson(JSON.parse(text))).sort();
