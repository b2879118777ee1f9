import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createTable, deleteTable, localClient, scanAll } from '../support/ddb.js';

describe('DynamoDB Local harness', () => {
  const client = localClient(inject('ddbEndpoint'));
  afterAll(() => client.destroy());

  it('creates a table, writes a batch, scans it back, deletes it', async () => {
    const table = await createTable(client, {
      partitionKey: { name: 'pk', type: 'S' },
      sortKey: { name: 'sk', type: 'N' },
    });
    try {
      const res = await client.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [table]: [1, 2, 3].map((n) => ({
              PutRequest: { Item: { pk: { S: 'user#1' }, sk: { N: String(n) }, name: { S: `item ${n}` } } },
            })),
          },
        }),
      );
      expect(res.UnprocessedItems?.[table] ?? []).toHaveLength(0);

      const items = await scanAll(client, table);
      expect(items).toHaveLength(3);
      const sorted = [...items].sort((a, b) => Number(a['sk']?.N) - Number(b['sk']?.N));
      expect(sorted).toEqual([1, 2, 3].map((n) => ({ pk: { S: 'user#1' }, sk: { N: String(n) }, name: { S: `item ${n}` } })));
    } finally {
      await deleteTable(client, table);
    }
  });

  it('gives each table a distinct name', async () => {
    const keys = { partitionKey: { name: 'id', type: 'S' as const } };
    const a = await createTable(client, keys);
    const b = await createTable(client, keys);
    try {
      expect(a).toMatch(/^t_[0-9a-f]+$/);
      expect(b).not.toBe(a);
    } finally {
      await deleteTable(client, a);
      await deleteTable(client, b);
    }
  });
});
