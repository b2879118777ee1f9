import { DescribeTableCommand, UpdateTableCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { errorFacts, type AwsContext } from './awsErrors.js';
import { LoaderError } from '../shared/errors.js';

/** The warm write throughputs to raise: the table's, and each GSI's. */
export interface WarmUpdate {
  table?: number;
  indexes: Array<{ name: string; writeUnits: number }>;
}

export interface WarmWaitOptions {
  signal?: AbortSignal | undefined;
  /** How long to wait for the table, its GSIs and their warm throughput to be ACTIVE again. @default 30 min */
  timeoutMs?: number;
  /** Between DescribeTable calls. @default 5 s */
  pollMs?: number;
  /** Told of each state seen while waiting ("table UPDATING, warm throughput UPDATING, 40 s"). */
  onWaiting?: (state: string, waitedMs: number) => void;
  now?: () => number;
}

const DEFAULT_TIMEOUT_MS = 30 * 60_000;
const DEFAULT_POLL_MS = 5000;

/**
 * Asks DynamoDB to raise warm write throughput with one UpdateTable (WarmThroughput for the table,
 * GlobalSecondaryIndexUpdates for its GSIs); DynamoDB applies it asynchronously (waitUntilWarm). 'in use':
 * the table is being updated already (another worker of the load raising it, say): wait, describe and plan
 * again. A stop (the signal) is ABORTED, nothing written; any other refusal is one AWS_ERROR that says what to do.
 */
export async function sendWarmUpdate(
  client: DynamoDBDocumentClient,
  context: AwsContext,
  update: WarmUpdate,
  signal?: AbortSignal,
): Promise<'sent' | 'in use'> {
  const input = {
    TableName: context.table,
    ...(update.table !== undefined ? { WarmThroughput: { WriteUnitsPerSecond: update.table } } : {}),
    ...(update.indexes.length > 0
      ? { GlobalSecondaryIndexUpdates: update.indexes.map((i) => ({ Update: { IndexName: i.name, WarmThroughput: { WriteUnitsPerSecond: i.writeUnits } } })) }
      : {}),
  };
  try {
    await client.send(new UpdateTableCommand(input), { abortSignal: signal });
    return 'sent';
  } catch (error) {
    if (signal?.aborted) throw stopped(context, 'while raising its warm throughput', error);
    const facts = errorFacts(error);
    if (facts.name === 'ResourceInUseException') return 'in use';
    throw new LoaderError(
      'AWS_ERROR',
      `UpdateTable could not raise the warm throughput of table "${context.table}": ${facts.name ?? 'error'}: ${facts.message ?? String(error)}; ` +
        'the endpoint may not support warm throughput (DynamoDB Local does not), or the value is above the account quota: run without --prewarm, or raise it yourself',
      { table: context.table, cause: error },
    );
  }
}

/** Polls DescribeTable until the table, its GSIs and their warm throughput are all ACTIVE; returns that description. */
export async function waitUntilWarm(client: DynamoDBDocumentClient, context: AwsContext, options: WarmWaitOptions = {}): Promise<TableDescription> {
  const { signal } = options;
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const startedAt = now();
  for (;;) {
    let table: TableDescription | undefined;
    try {
      table = (await client.send(new DescribeTableCommand({ TableName: context.table }), { abortSignal: signal })).Table;
    } catch (error) {
      if (signal?.aborted) throw stopped(context, 'while waiting for its warm throughput', error);
      throw new LoaderError(
        'AWS_ERROR',
        `DescribeTable failed while waiting for the warm throughput of table "${context.table}": ${String((error as Error).message)}`,
        {
          table: context.table,
          cause: error,
        },
      );
    }
    const pending = notActive(table ?? {});
    if (pending.length === 0 && table) return table;
    const waited = now() - startedAt;
    if (waited >= timeoutMs)
      throw new LoaderError(
        'AWS_ERROR',
        `table "${context.table}" was not ACTIVE ${Math.round(waited / 1000)} s after its warm throughput was raised (${pending.join(', ')}); nothing was written: run again once it is ACTIVE`,
        { table: context.table },
      );
    options.onWaiting?.(pending.join(', '), waited);
    try {
      await sleepFor(pollMs, undefined, signal ? { signal } : undefined);
    } catch (error) {
      throw stopped(context, 'while waiting for its warm throughput', error);
    }
  }
}

/**
 * What is not ACTIVE yet: the table, its warm throughput, each GSI being updated and its warm throughput.
 * A GSI being created or deleted is not waited for: a backfill can take hours, the load may write while it
 * runs, and the plan leaves such an index alone (it says so). Pure.
 */
export function notActive(table: TableDescription): string[] {
  const pending: string[] = [];
  if (table.TableStatus !== undefined && table.TableStatus !== 'ACTIVE') pending.push(`table ${table.TableStatus}`);
  const warm = table.WarmThroughput?.Status;
  if (warm !== undefined && warm !== 'ACTIVE') pending.push(`warm throughput ${warm}`);
  for (const gsi of table.GlobalSecondaryIndexes ?? []) {
    if (gsi.IndexStatus === 'UPDATING') pending.push(`GSI ${gsi.IndexName ?? '?'} ${gsi.IndexStatus}`);
    const gsiWarm = gsi.WarmThroughput?.Status;
    if (gsiWarm !== undefined && gsiWarm !== 'ACTIVE') pending.push(`GSI ${gsi.IndexName ?? '?'} warm throughput ${gsiWarm}`);
  }
  return pending;
}

function stopped(context: AwsContext, when: string, cause: unknown): LoaderError {
  return new LoaderError('ABORTED', `stopped on request before the load began (${when} of table "${context.table}"); nothing was written`, {
    table: context.table,
    cause,
  });
}
