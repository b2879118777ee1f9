/**
 * The bench's tables on DynamoDB Local: pk (S) as partition key and sk as sort key, the shape every bench
 * input has (bench/data.ts, the estimate's scenarios). One definition, so that every bench loads into the
 * same kind of table and a change of key shape is made once.
 */
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface BenchTableOptions {
  /** sk's type: S for bench/data.ts's files (default), N for the estimate's scenarios. */
  sortKeyType?: 'S' | 'N';
  /** Provisioned write capacity (with 1 RCU) for a table the partition proxy models; on demand when absent. */
  provisionedWcu?: number;
}

/** A client for creating and dropping tables, with the dummy credentials DynamoDB Local accepts. */
export function adminClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}

/** Creates the table and waits until it is ACTIVE (Local makes it so at once; the wait is for safety). */
export async function createBenchTable(client: DynamoDBClient, name: string, options: BenchTableOptions = {}): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: options.sortKeyType ?? 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      ...(options.provisionedWcu === undefined
        ? { BillingMode: 'PAY_PER_REQUEST' }
        : { BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: options.provisionedWcu } }),
    }),
  );
  for (let i = 0; i < 100; i++) {
    const d = await client.send(new DescribeTableCommand({ TableName: name }));
    if (d.Table?.TableStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`table ${name} did not become ACTIVE`);
}

/** Drops the table, so that DynamoDB Local's heap stays flat over a long bench; a failure is not the bench's concern. */
export async function dropBenchTable(client: DynamoDBClient, name: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
}

/** DescribeTable's ItemCount. */
export async function itemCount(client: DynamoDBClient, name: string): Promise<number | undefined> {
  return (await client.send(new DescribeTableCommand({ TableName: name }))).Table?.ItemCount;
}
