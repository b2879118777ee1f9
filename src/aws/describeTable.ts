import { DescribeTableCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { backoffDelay, isTransientCredentialFailure } from './backoff.js';
import { tableInfoFromDescription, type TableInfo } from '../shared/tableInfo.js';
import { errorFacts, fatalAwsError, type AwsContext } from './awsErrors.js';
import { LoaderError } from '../shared/errors.js';

/** DescribeTable calls before a credential failure that may pass (a container endpoint timing out) ends the load. */
export const CREDENTIAL_ATTEMPTS = 5;
/** Backoff between those calls: up to 0.5, 1, 2, 4 s. */
const CREDENTIAL_BACKOFF = { baseMs: 500, capMs: 4000 };

/**
 * Reads what the load needs to know about the table (keys, billing mode, capacity, GSIs) with one
 * DescribeTable; any failure is one clear LoaderError. A temporary credential failure is the one failure
 * retried here (the first call is the first to need credentials); the batch writer retries its own.
 */
export async function describeTable(client: DynamoDBDocumentClient, context: AwsContext, signal?: AbortSignal): Promise<TableInfo> {
  let table: TableDescription | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await client.send(new DescribeTableCommand({ TableName: context.table }), { abortSignal: signal });
      table = response.Table;
      break;
    } catch (error) {
      // The load was stopped (SIGINT, SIGTERM, a caller's signal) while the call was out: a stop on request,
      // exit 130 or 143 with nothing written, not a failure of DynamoDB.
      if (signal?.aborted)
        throw new LoaderError('ABORTED', `stopped on request before the load began (while describing table "${context.table}"); nothing was written`, {
          table: context.table,
          cause: error,
        });
      if (attempt >= CREDENTIAL_ATTEMPTS || !isTransientCredentialFailure(errorFacts(error))) throw fatalAwsError(error, context);
      await sleepFor(backoffDelay(attempt, Math.random, CREDENTIAL_BACKOFF), undefined, signal ? { signal } : undefined).catch(() => undefined);
    }
  }
  // An empty description fails on the missing partition key, with the same message as before.
  return tableInfoFromDescription(table ?? {}, context.table);
}
