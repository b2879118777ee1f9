import { DescribeTableCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tableInfoFromDescription, type TableInfo } from '../../core/tableInfo.js';
import { fatalAwsError, type AwsContext } from './awsErrors.js';

/**
 * Reads what the load needs to know about the table (keys, billing mode, capacity, GSIs) with one
 * DescribeTable; any failure is one clear LoaderError.
 */
export async function describeTable(client: DynamoDBDocumentClient, context: AwsContext, signal?: AbortSignal): Promise<TableInfo> {
  let table: TableDescription | undefined;
  try {
    const response = await client.send(new DescribeTableCommand({ TableName: context.table }), { abortSignal: signal });
    table = response.Table;
  } catch (error) {
    throw fatalAwsError(error, context);
  }
  // An empty description fails on the missing partition key, with the same message as before.
  return tableInfoFromDescription(table ?? {}, context.table);
}
