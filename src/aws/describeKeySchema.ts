import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { KeySchema } from '../shared/types.js';
import type { AwsContext } from './awsErrors.js';
import { describeTable } from './describeTable.js';

/** Reads the table's key schema with DescribeTable; any failure is one clear LoaderError. */
export async function describeKeySchema(client: DynamoDBDocumentClient, context: AwsContext, signal?: AbortSignal): Promise<KeySchema> {
  return (await describeTable(client, context, signal)).keySchema;
}
