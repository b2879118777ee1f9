import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import type { Item } from '../shared/types.js';
import { ownerCheck, writtenKeysOf } from '../sharding/shardKeys.js';
import { fatalAwsError } from '../aws/awsErrors.js';
import { openReadSession, type ReadOptions } from './readOptions.js';
import { compareSortKeys } from './sortKeyOrder.js';

export interface QueryShardsOptions extends ReadOptions {
  /** Queries in flight at once. @default 16 */
  concurrency?: number;
  /** Items per Query page (DynamoDB's Limit); pages stop at 1 MB either way. @default no limit */
  pageSize?: number;
}

/** One shard's pages: the items of the page in hand, and the next page already on its way. */
interface Cursor {
  items: Item[];
  at: number;
  next: Promise<QueryCommandOutput> | undefined;
}

/**
 * Scatter-gather: every item of logical key `key`, across every partition key value its shards use (one
 * Query per value, in parallel, each paginated), merged by sort key as one Query of an unsharded key
 * would return them. Streams: each shard holds the page in hand and the next one in flight.
 */
export async function* queryShards(options: QueryShardsOptions): AsyncGenerator<Item> {
  const concurrency = options.concurrency ?? 16;
  const { client, context, schema, plan } = await openReadSession(options, concurrency);
  try {
    const limit = pLimit(concurrency);
    const page = (value: string, start: Record<string, unknown> | undefined) =>
      limit(() =>
        client
          .send(
            new QueryCommand({
              TableName: options.table,
              KeyConditionExpression: '#pk = :pk',
              ExpressionAttributeNames: { '#pk': schema.partitionKey.name },
              ExpressionAttributeValues: { ':pk': value },
              ConsistentRead: options.consistentRead ?? false,
              ...(options.pageSize ? { Limit: options.pageSize } : {}),
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
            options.signal ? { abortSignal: options.signal } : {},
          )
          .catch((error: unknown) => {
            throw fatalAwsError(error, context);
          }),
      );
    const values = writtenKeysOf(plan, options.key);
    const isOwn = ownerCheck(plan, options.key);
    const advance = (value: string, output: QueryCommandOutput): Cursor => {
      const next = output.LastEvaluatedKey ? page(value, output.LastEvaluatedKey) : undefined;
      // Read ahead: its failure is thrown where it is awaited; a reader that stops early never awaits it.
      next?.catch(() => undefined);
      return { items: (output.Items ?? []) as Item[], at: 0, next };
    };
    const firsts = await Promise.all(values.map((value) => page(value, undefined)));
    const cursors = firsts.map((output, i) => advance(values[i]!, output));
    const sortKey = schema.sortKey?.name;
    for (;;) {
      // Refill every cursor whose page is used up, so each head is its shard's next item.
      for (let i = 0; i < cursors.length; i++) {
        while (cursors[i]!.at >= cursors[i]!.items.length && cursors[i]!.next) cursors[i] = advance(values[i]!, await cursors[i]!.next!);
      }
      let best = -1;
      for (let i = 0; i < cursors.length; i++) {
        const c = cursors[i]!;
        if (c.at >= c.items.length) continue;
        if (best < 0 || (sortKey !== undefined && compareSortKeys(c.items[c.at]![sortKey], cursors[best]!.items[cursors[best]!.at]![sortKey]) < 0)) best = i;
      }
      if (best < 0) return;
      const item = cursors[best]!.items[cursors[best]!.at++]!;
      // Never an item of another logical key (ownerCheck): with --keep-original-key, the item says whose it is.
      if (isOwn(item)) yield item;
    }
  } finally {
    client.destroy();
  }
}
