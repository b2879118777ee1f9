import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LoaderError } from '../../core/errors.js';
import type { KeyAttributeType, KeySchema } from '../../core/types.js';
import { fatalAwsError, type AwsContext } from './awsErrors.js';

/** Reads the table's key schema with DescribeTable; any failure is one clear LoaderError. */
export async function describeKeySchema(client: DynamoDBDocumentClient, context: AwsContext, signal?: AbortSignal): Promise<KeySchema> {
  let table;
  try {
    const response = await client.send(new DescribeTableCommand({ TableName: context.table }), { abortSignal: signal });
    table = response.Table;
  } catch (error) {
    throw fatalAwsError(error, context);
  }
  const typeOf = (name: string): KeyAttributeType => {
    const type = table?.AttributeDefinitions?.find((d) => d.AttributeName === name)?.AttributeType;
    if (type !== 'S' && type !== 'N' && type !== 'B') {
      throw new LoaderError('AWS_ERROR', `DescribeTable for "${context.table}" gave no type for key attribute "${name}"`, { table: context.table });
    }
    return type;
  };
  const hash = table?.KeySchema?.find((k) => k.KeyType === 'HASH')?.AttributeName;
  const range = table?.KeySchema?.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  if (!hash) throw new LoaderError('AWS_ERROR', `DescribeTable for "${context.table}" returned no partition key`, { table: context.table });
  const schema: KeySchema = { partitionKey: { name: hash, type: typeOf(hash) } };
  if (range) schema.sortKey = { name: range, type: typeOf(range) };
  return schema;
}
