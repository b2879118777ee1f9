import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { LoaderError, RowError } from '../shared/errors.js';
import type { Item, KeyAttribute } from '../shared/types.js';
import { ownerCheck, shardedKeyOf } from '../sharding/shardKeys.js';
import { decodeBase64, toNumberValue } from '../typing/json.js';
import { fatalAwsError } from '../aws/awsErrors.js';
import { openReadSession, type ReadOptions } from './readOptions.js';

export interface GetShardedOptions extends ReadOptions {
  /** The sort key value: text as on the command line (a number's digits, binary as base64), or typed. */
  sort?: unknown;
  /** Values of attributes a hash or time rule takes its suffix from, when not the sort key (text or typed). */
  values?: Record<string, unknown>;
}

/**
 * One item by its logical primary key: the suffix is computed (random from the seed and the key, hash and
 * time from their attribute), then one GetItem. Undefined when there is no such item.
 */
export async function getSharded(options: GetShardedOptions): Promise<Item | undefined> {
  const { client, context, schema, plan } = await openReadSession(options, 1);
  try {
    if (schema.sortKey && options.sort === undefined) {
      throw new LoaderError('INVALID_OPTION', `table "${options.table}" has a sort key "${schema.sortKey.name}": give its value (--sort)`, {
        table: options.table,
      });
    }
    const sort = schema.sortKey ? typed(options.sort, schema.sortKey) : undefined;
    const written = shardedKeyOf(plan, options.key, sort, options.values ?? {});
    const isOwn = ownerCheck(plan, options.key);
    const key: Item = { [schema.partitionKey.name]: written };
    if (schema.sortKey) key[schema.sortKey.name] = sort;
    const output = await client
      .send(
        new GetCommand({ TableName: options.table, Key: key, ConsistentRead: options.consistentRead ?? false }),
        options.signal ? { abortSignal: options.signal } : {},
      )
      .catch((error: unknown) => {
        throw fatalAwsError(error, context);
      });
    const item = output.Item as Item | undefined;
    // An item of another logical key under the computed value is not this key's item (ownerCheck).
    return item && isOwn(item) ? item : undefined;
  } finally {
    client.destroy();
  }
}

/** A key value given as text, typed as the table declares the attribute. */
function typed(value: unknown, attribute: KeyAttribute): unknown {
  if (typeof value !== 'string') return value;
  try {
    if (attribute.type === 'N') return toNumberValue(value, attribute.name);
    if (attribute.type === 'B') return decodeBase64(value, attribute.name);
    return value;
  } catch (error) {
    if (error instanceof RowError) throw new LoaderError('INVALID_OPTION', `--sort: ${error.message}`, { field: attribute.name });
    throw error;
  }
}
