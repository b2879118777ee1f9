import { readFile } from 'node:fs/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LoaderError } from '../shared/errors.js';
import type { KeySchema } from '../shared/types.js';
import { parseShardManifest, type ShardPlan } from '../sharding/readManifest.js';
import { resolveShardOptions } from '../sharding/shard.js';
import { parseShardRule, type ShardRule, type SuffixBase } from '../sharding/shardRule.js';
import { MANIFEST_VERSION } from '../sharding/shardManifest.js';
import { createClient } from '../aws/client.js';
import { targetOf } from '../aws/awsTarget.js';
import type { AwsContext } from '../aws/awsErrors.js';
import { describeKeySchema } from '../aws/describeKeySchema.js';

/** What query and get share: the table, the logical key, the manifest, and where DynamoDB is. */
export interface ReadOptions {
  table: string;
  /** The logical (unsharded) partition key value. */
  key: string;
  /** The shard manifest the load wrote (its path, or readShardManifest's result), or the load's rules. */
  manifest: string | ShardPlan | ShardRulesSpec;
  region?: string | undefined;
  profile?: string | undefined;
  endpoint?: string | undefined;
  caBundle?: string | undefined;
  /** Strongly consistent reads. @default false */
  consistentRead?: boolean;
  signal?: AbortSignal;
}

/**
 * The load's sharding options, for a reader without its manifest: rules, separator, seed, suffix base.
 * Without a manifest the values of a time rule cannot be listed, so query needs the manifest for those.
 */
export interface ShardRulesSpec {
  rules: (ShardRule | string)[];
  /** @default "#" */
  separator?: string;
  /** Needed for random:N. */
  seed?: number;
  /** @default 0 */
  suffixBase?: SuffixBase;
  /** The --shard-keys of the load; every key when undefined. */
  keys?: string[];
  /** The load's --keep-original-key: items read are checked against it (sharding/shardKeys.ts ownerOf). */
  keepOriginalKey?: string;
}

/** Reads and checks a shard manifest file (formats 1 and 2). */
export async function readShardManifest(path: string): Promise<ShardPlan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new LoaderError(
      code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE',
      `cannot read the shard manifest ${path}: ${(error as Error).message}${code === 'ENOENT' ? ' (a load writes it next to its input as <input>.<table>.shards.json, or where --shard-manifest said)' : ''}`,
      { file: path, cause: error },
    );
  }
  return parseShardManifest(text, path);
}

/** A read session: the client, the table's key schema, and the manifest completed with the sort key. */
export interface ReadSession {
  client: DynamoDBDocumentClient;
  /** Where the client goes and who said so, for the messages of failed calls. */
  context: AwsContext;
  schema: KeySchema;
  plan: ShardPlan;
}

export async function openReadSession(options: ReadOptions, maxSockets: number): Promise<ReadSession> {
  const given = typeof options.manifest === 'string' ? await readShardManifest(options.manifest) : options.manifest;
  // Another table's manifest lists another load's sharded keys: read with it, a key sharded here would be
  // queried unsharded and come back empty, with exit 0.
  if ('manifestVersion' in given && given.table !== options.table) {
    const named = typeof options.manifest === 'string' ? `${options.manifest} is` : 'the manifest is';
    throw new LoaderError(
      'MANIFEST_INVALID',
      `${named} the shard manifest of table "${given.table}", not of table "${options.table}": pass the manifest of this table's load (or --table ${given.table})`,
      { table: options.table },
    );
  }
  const client = createClient({
    region: options.region,
    profile: options.profile,
    endpoint: options.endpoint,
    caBundle: options.caBundle,
    requestTimeoutMs: 30_000,
    maxSockets,
    // Reads retry throttling and 5xx with the SDK's own backoff.
    sdkAttempts: 5,
  });
  try {
    const target = await targetOf(client);
    const context: AwsContext = {
      table: options.table,
      region: options.region ?? target.region,
      endpoint: target.endpoint ?? options.endpoint,
      endpointSource: target.endpointSource,
    };
    const schema = await describeKeySchema(client, context, options.signal);
    const plan = 'manifestVersion' in given ? given : planOfRules(given, schema, options.table);
    if (schema.partitionKey.name !== plan.partitionKey) {
      throw new LoaderError(
        'MANIFEST_INVALID',
        `the manifest shards attribute "${plan.partitionKey}" (table ${plan.table}), but the partition key of table "${options.table}" is "${schema.partitionKey.name}": pass the manifest of this table's load`,
        { table: options.table },
      );
    }
    // A format 1 manifest does not name the sort key: the table does.
    return { client, context, schema, plan: plan.sortKey === undefined ? { ...plan, sortKey: schema.sortKey?.name ?? null } : plan };
  } catch (error) {
    client.destroy();
    throw error;
  }
}

/** A plan from the load's options instead of its manifest: no values are listed. */
function planOfRules(spec: ShardRulesSpec, schema: KeySchema, table: string): ShardPlan {
  const rules = spec.rules.map((rule) => (typeof rule === 'string' ? parseShardRule(rule) : rule));
  const needsSeed = rules.some((rule) => rule.kind === 'random');
  if (needsSeed && spec.seed === undefined) {
    throw new LoaderError('INVALID_OPTION', "random:N suffixes follow from the load's seed: give --shard-seed (the manifest records it), or --manifest");
  }
  const resolved = resolveShardOptions(
    {
      rules,
      seed: spec.seed ?? 0,
      ...(spec.keepOriginalKey !== undefined ? { keepOriginalKey: spec.keepOriginalKey } : {}),
      ...(spec.separator !== undefined ? { separator: spec.separator } : {}),
      ...(spec.suffixBase !== undefined ? { suffixBase: spec.suffixBase } : {}),
    },
    schema,
    table,
  );
  return {
    manifestVersion: MANIFEST_VERSION,
    table,
    partitionKey: resolved.partitionKey,
    sortKey: resolved.sortKey ?? null,
    separator: resolved.separator,
    rules: resolved.rules,
    suffixBase: resolved.suffixBase,
    seed: resolved.seed,
    randomFromKey: true,
    shardedKeys: spec.keys ? new Set(spec.keys) : 'all',
    keepOriginalKey: spec.keepOriginalKey,
    keys: new Map(),
    complete: false,
    toolVersion: undefined,
  };
}
