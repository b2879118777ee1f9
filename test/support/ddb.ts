import { randomBytes } from 'node:crypto';
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ScanCommand,
  type AttributeDefinition,
  type AttributeValue,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';

export interface KeyAttr {
  name: string;
  type: 'S' | 'N' | 'B';
}

export interface TableKeys {
  partitionKey: KeyAttr;
  sortKey?: KeyAttr;
  /** Global secondary indexes (projection ALL); their key attributes are declared with the table's. */
  gsis?: Array<{ name: string; partitionKey: KeyAttr; sortKey?: KeyAttr }>;
}

/** A client for DynamoDB Local: fixed region, fake static credentials. */
export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 3,
  });
}

/** Creates a PAY_PER_REQUEST table with a unique name, waits until ACTIVE, returns the name. */
export async function createTable(client: DynamoDBClient, keys: TableKeys): Promise<string> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  const attrs: AttributeDefinition[] = [{ AttributeName: keys.partitionKey.name, AttributeType: keys.partitionKey.type }];
  const schema: KeySchemaElement[] = [{ AttributeName: keys.partitionKey.name, KeyType: 'HASH' }];
  if (keys.sortKey) {
    attrs.push({ AttributeName: keys.sortKey.name, AttributeType: keys.sortKey.type });
    schema.push({ AttributeName: keys.sortKey.name, KeyType: 'RANGE' });
  }
  const declare = (attr: KeyAttr) => {
    if (!attrs.some((a) => a.AttributeName === attr.name)) attrs.push({ AttributeName: attr.name, AttributeType: attr.type });
  };
  const gsis = (keys.gsis ?? []).map((gsi) => {
    declare(gsi.partitionKey);
    if (gsi.sortKey) declare(gsi.sortKey);
    const indexKeys: KeySchemaElement[] = [{ AttributeName: gsi.partitionKey.name, KeyType: 'HASH' }];
    if (gsi.sortKey) indexKeys.push({ AttributeName: gsi.sortKey.name, KeyType: 'RANGE' });
    return { IndexName: gsi.name, KeySchema: indexKeys, Projection: { ProjectionType: 'ALL' as const } };
  });
  await client.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: attrs,
      KeySchema: schema,
      BillingMode: 'PAY_PER_REQUEST',
      ...(gsis.length > 0 ? { GlobalSecondaryIndexes: gsis } : {}),
    }),
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await client.send(new DescribeTableCommand({ TableName: name }));
    if (res.Table?.TableStatus === 'ACTIVE') return name;
    if (Date.now() > deadline) {
      throw new Error(`table ${name} not ACTIVE after 30 s (status ${String(res.Table?.TableStatus)})`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every item of the table, following LastEvaluatedKey. */
export async function scanAll(client: DynamoDBClient, table: string): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const res = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start !== undefined && Object.keys(start).length > 0);
  return items;
}

/**
 * Puts `items` into the table with BatchWriteItem, 25 a call and 8 calls at a time, sending unprocessed items
 * again until none is left: a table pre-filled in a fraction of the time one PutItem after another takes.
 */
export async function putItems(client: DynamoDBClient, table: string, items: readonly Record<string, AttributeValue>[]): Promise<void> {
  const batches: Record<string, AttributeValue>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  const send = async (batch: Record<string, AttributeValue>[]): Promise<void> => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 20) throw new Error(`putItems: ${requests.length} items still unprocessed after 20 tries`);
      const res = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
      requests = (res.UnprocessedItems?.[table] ?? []).map((r) => ({ PutRequest: { Item: r.PutRequest!.Item! } }));
    }
  };
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < batches.length) await send(batches[next++]!);
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}

export async function deleteTable(client: DynamoDBClient, name: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: name }));
}
