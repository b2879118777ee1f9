import { readFile } from 'node:fs/promises';
import { LoaderError } from '../shared/errors.js';
import { mergeOwn, ownRecord } from '../shared/ownRecord.js';
import { DEFAULT_CONCURRENCY, DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT_MS, type LoadOptions } from '../load/options.js';
import type { InputFormat } from '../reading/inputFormat.js';
import type { OrderMode } from '../ordering/order.js';
import type { ShardRule, SuffixBase } from '../sharding/shardRule.js';
import type { WcuSpec } from '../pacing/rateChoice.js';
import { offlineTableInfo, UNNAMED_TABLE } from '../estimating/offlineTable.js';
import type { IndexInfo } from '../shared/tableInfo.js';
import type { KeyAttribute } from '../shared/types.js';
import type { Segment } from '../load/segment.js';
import { longFlag, optionsOf } from './optionTable.js';
import type { EstimateOptions } from '../estimating/estimate.js';
import { COLUMN_TYPES, type ColumnType, type EmptyPolicy } from '../typing/typeNames.js';
import type { TimestampMode } from '../typing/typeNames.js';

/**
 * Flags of `ddb-spread load` as commander hands them over: the `key`s of the option table (optionTable.ts),
 * which also says which load() option each becomes; test/unit/cli/optionTable.test.ts checks toLoadOptions against it.
 */
export interface LoadFlags {
  table: string;
  region?: string;
  profile?: string;
  endpointUrl?: string;
  caBundle?: string;
  s3EndpointUrl?: string;
  s3PathStyle?: boolean;
  allowBrokenExportChain?: boolean;
  delete?: boolean;
  operationColumn?: string;
  transform?: string;
  inputFormat?: InputFormat;
  delimiter?: string;
  columns?: string[];
  types?: Record<string, ColumnType>;
  schema?: string;
  infer?: boolean;
  empty: EmptyPolicy;
  timestamps?: TimestampMode;
  concurrency: number;
  maxAttempts: number;
  requestTimeout: number;
  /** --outage-timeout, in ms. */
  outageTimeout?: number;
  rejects?: string;
  conditionFailures?: string;
  maxRejects?: number;
  strict?: boolean;
  /** --accept-rejects: a load that finished with its rejected rows in the reject file exits 0, not 2. */
  acceptRejects?: boolean;
  json?: boolean;
  progress: boolean;
  quiet?: boolean;
  excerpts: boolean;
  verbose?: boolean;
  order?: OrderMode;
  window?: number;
  memory?: number;
  tempDir?: string;
  shard?: ShardRule[];
  shardSeparator?: string;
  shardKeys?: string[];
  shardKeysFile?: string;
  keepOriginalKey?: string;
  shardSeed?: number;
  shardBase?: SuffixBase;
  shardManifest?: string;
  wcu?: WcuSpec;
  keyWcu?: number;
  pacing: boolean;
  prewarm?: boolean;
  dryRun?: boolean;
  /** --config job.json, already applied to the other flags. */
  config?: string;
  logInterval: number;
  logFormat: 'text' | 'json';
  checkpoint?: string;
  listing?: string;
  partsDisjoint?: boolean;
  stopTimeout: number;
  report?: string;
  htmlReport?: string;
  compareEstimate?: string;
  segment?: Segment;
  totalWcu?: WcuSpec;
  partitionKey?: KeyAttribute;
  sortKey?: KeyAttribute;
  billing?: 'provisioned' | 'on-demand';
  tableWcu?: number;
  tableRcu?: number;
  gsi?: IndexInfo[];
  itemCount?: number;
  newTable?: boolean;
  workers?: number;
  priceWriteRequest?: number;
  priceWcuHour?: number;
  priceReadRequest?: number;
  priceRcuHour?: number;
  skipExpired?: string;
  maxCost?: number;
  ifNotExists?: boolean;
  itemConditions?: boolean;
  ifNewer?: string;
  /** --condition and its names and values: JSON text from the command line, objects from a config file. */
  condition?: string;
  conditionNames?: string | Record<string, string>;
  conditionValues?: string | Record<string, unknown>;
}

/** Flags that describe the table offline (the option table's estimate group): for estimate and load --dry-run only. */
const OFFLINE_FLAGS = optionsOf('load').filter((spec) => spec.group === 'estimate');
const kebab = (name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

export { DEFAULT_CONCURRENCY, DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT_MS };

/** Maps flags to estimate() options: load's options, plus the table from the offline flags and the prices. */
export async function toEstimateOptions(input: string | string[], flags: LoadFlags): Promise<EstimateOptions> {
  const options: EstimateOptions = await toLoadOptions(input, { ...flags, table: flags.table ?? UNNAMED_TABLE }, true);
  if (flags.partitionKey) {
    options.tableInfo = offlineTableInfo(options.table, {
      partitionKey: flags.partitionKey,
      ...(flags.sortKey ? { sortKey: flags.sortKey } : {}),
      ...(flags.billing ? { billing: flags.billing } : {}),
      ...(flags.tableWcu !== undefined ? { tableWcu: flags.tableWcu } : {}),
      ...(flags.tableRcu !== undefined ? { tableRcu: flags.tableRcu } : {}),
      ...(flags.gsi ? { gsis: flags.gsi } : {}),
      ...(flags.itemCount !== undefined ? { itemCount: flags.itemCount } : {}),
    });
    if (flags.newTable) {
      if (flags.billing !== 'provisioned' || flags.wcu?.kind !== 'fixed') {
        throw new LoaderError(
          'INVALID_OPTION',
          '--new-table needs --billing provisioned and a fixed --wcu: the table is created at --wcu for the load and set back to --table-wcu afterwards',
        );
      }
      options.newTable = true;
    }
  } else {
    const stray = (['sortKey', 'billing', 'tableWcu', 'tableRcu', 'gsi', 'itemCount', 'newTable'] as const).find((name) => flags[name] !== undefined);
    if (stray)
      throw new LoaderError(
        'INVALID_OPTION',
        `${kebab(stray)} describes the table offline and needs --partition-key too (without them the table is read with DescribeTable)`,
      );
    if (flags.table === undefined)
      throw new LoaderError('INVALID_OPTION', 'estimate needs --table (read with DescribeTable) or --partition-key name:TYPE to describe the table offline');
  }
  if (flags.workers !== undefined) options.workers = flags.workers;
  // The verify's own flags price the verify after the load (estimate's verify section); load --dry-run has none.
  const verify = flags as LoadFlags & { rcu?: number | string; consistentRead?: boolean; sample?: number; scan?: number | 'auto' };
  if (verify.rcu !== undefined) options.rcu = verify.rcu;
  if (verify.consistentRead === false) options.consistentRead = false;
  if (verify.sample !== undefined) options.sample = verify.sample;
  if (verify.scan !== undefined) options.scanSegments = verify.scan;
  return options;
}

/** Reads --shard-keys-file: one partition key value per line; blank lines and lines starting with # are skipped. */
export async function readShardKeysFile(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new LoaderError('INVALID_OPTION', `cannot read --shard-keys-file ${path}: ${(error as Error).message}`, { file: path, cause: error });
  }
  const keys = text.split(/\r?\n/).filter((line) => line.trim() !== '' && !line.startsWith('#'));
  if (keys.length === 0) throw new LoaderError('INVALID_OPTION', `--shard-keys-file ${path} lists no keys (one partition key value per line)`, { file: path });
  return keys;
}

/**
 * Reads --schema: a JSON object mapping attribute names to types, e.g. {"price":"N","tags":"SS"}.
 * Types given with --types take precedence.
 */
export async function readSchemaFile(path: string): Promise<Record<string, ColumnType>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new LoaderError('INVALID_OPTION', `cannot read --schema ${path}: ${(error as Error).message}`, { file: path, cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new LoaderError('INVALID_OPTION', `--schema ${path} must hold a JSON object like {"price":"N","active":"BOOL"}`, { file: path });
  }
  const types = ownRecord<ColumnType>();
  for (const [name, type] of Object.entries(parsed)) {
    const upper = typeof type === 'string' ? type.toUpperCase() : '';
    if (!(COLUMN_TYPES as readonly string[]).includes(upper)) {
      throw new LoaderError('INVALID_OPTION', `--schema ${path}: "${name}" has type ${JSON.stringify(type)}; use one of ${COLUMN_TYPES.join(', ')}`, {
        file: path,
        field: name,
      });
    }
    types[name] = upper as ColumnType;
  }
  return types;
}

/** Maps parsed flags to load() options. The CLI adds nothing the library does not have. */
export async function toLoadOptions(input: string | string[], flags: LoadFlags, estimating = false): Promise<LoadOptions> {
  if (!estimating && !flags.dryRun) {
    const offline = OFFLINE_FLAGS.find((spec) => flags[spec.key as keyof LoadFlags] !== undefined);
    if (offline)
      throw new LoaderError('INVALID_OPTION', `${longFlag(offline)} is for ddb-spread estimate (or load --dry-run); a load reads the table with DescribeTable`);
  }
  const schemaTypes = flags.schema ? await readSchemaFile(flags.schema) : {};
  const options: LoadOptions = {
    input,
    table: flags.table,
    types: mergeOwn(schemaTypes, flags.types),
    infer: flags.infer ?? false,
    empty: flags.empty,
    concurrency: flags.concurrency,
    maxAttempts: flags.maxAttempts,
    requestTimeoutMs: flags.requestTimeout,
  };
  if (flags.outageTimeout !== undefined) options.outageTimeoutMs = flags.outageTimeout;
  if (flags.inputFormat) options.inputFormat = flags.inputFormat;
  if (flags.timestamps) options.timestamps = flags.timestamps;
  if (flags.delimiter !== undefined) options.delimiter = flags.delimiter;
  if (flags.columns) options.columns = flags.columns;
  if (flags.rejects) options.rejectsPath = flags.rejects;
  if (flags.conditionFailures) options.conditionFailuresPath = flags.conditionFailures;
  if (flags.strict) options.maxRejects = 1;
  else if (flags.maxRejects !== undefined) options.maxRejects = flags.maxRejects;
  if (flags.order) options.order = flags.order;
  if (flags.window !== undefined) options.window = flags.window;
  if (flags.memory !== undefined) options.memoryBytes = flags.memory;
  if (flags.tempDir) options.tempDir = flags.tempDir;
  if (flags.shard) options.shard = flags.shard;
  if (flags.shardSeparator !== undefined) options.shardSeparator = flags.shardSeparator;
  if (flags.shardKeys || flags.shardKeysFile) {
    options.shardKeys = [...(flags.shardKeys ?? []), ...(flags.shardKeysFile ? await readShardKeysFile(flags.shardKeysFile) : [])];
  }
  if (flags.keepOriginalKey) options.keepOriginalKey = flags.keepOriginalKey;
  if (flags.shardSeed !== undefined) options.shardSeed = flags.shardSeed;
  if (flags.shardBase !== undefined) options.shardSuffixBase = flags.shardBase;
  if (flags.shardManifest) options.shardManifestPath = flags.shardManifest;
  if (flags.wcu) options.wcu = flags.wcu;
  if (flags.keyWcu !== undefined) options.keyWcu = flags.keyWcu;
  if (!flags.pacing) options.pacing = false;
  if (flags.prewarm) options.prewarm = true;
  if (flags.segment) options.segment = flags.segment;
  if (flags.checkpoint && !estimating && !flags.dryRun) options.checkpointPath = flags.checkpoint;
  if (flags.listing) options.listing = flags.listing;
  if (flags.partsDisjoint) options.partsDisjoint = true;
  if (flags.totalWcu !== undefined) options.totalWcu = flags.totalWcu;
  if (flags.region) options.region = flags.region;
  if (flags.profile) options.profile = flags.profile;
  if (flags.endpointUrl) options.endpoint = flags.endpointUrl;
  if (flags.caBundle) options.caBundle = flags.caBundle;
  if (flags.s3EndpointUrl) options.s3Endpoint = flags.s3EndpointUrl;
  if (flags.s3PathStyle) options.s3PathStyle = true;
  if (flags.allowBrokenExportChain) options.allowBrokenExportChain = true;
  if (flags.delete) options.delete = true;
  if (flags.operationColumn !== undefined) options.operationColumn = flags.operationColumn;
  if (flags.skipExpired !== undefined) options.skipExpired = flags.skipExpired;
  if (flags.ifNotExists) options.ifNotExists = true;
  if (flags.ifNewer !== undefined) options.ifNewer = flags.ifNewer;
  if (flags.condition !== undefined) options.conditionExpression = flags.condition;
  if (flags.itemConditions) options.itemConditions = true;
  if (flags.conditionNames !== undefined) options.conditionNames = jsonFlag('--condition-names', flags.conditionNames) as Record<string, string>;
  if (flags.conditionValues !== undefined) options.conditionValues = jsonFlag('--condition-values', flags.conditionValues) as Record<string, unknown>;
  if (flags.maxCost !== undefined) options.maxCostUsd = flags.maxCost;
  if (flags.priceWriteRequest !== undefined || flags.priceWcuHour !== undefined || flags.priceReadRequest !== undefined || flags.priceRcuHour !== undefined) {
    options.prices = {
      ...(flags.priceWriteRequest !== undefined ? { onDemandPerMillionWrites: flags.priceWriteRequest } : {}),
      ...(flags.priceWcuHour !== undefined ? { provisionedPerWcuHour: flags.priceWcuHour } : {}),
      ...(flags.priceReadRequest !== undefined ? { onDemandPerMillionReads: flags.priceReadRequest } : {}),
      ...(flags.priceRcuHour !== undefined ? { provisionedPerRcuHour: flags.priceRcuHour } : {}),
    };
  }
  if (flags.transform !== undefined) options.transform = flags.transform;
  return options;
}

/** A flag whose value is a JSON object: text from the command line, or the object itself from a config file. */
function jsonFlag(flag: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    throw new LoaderError('INVALID_OPTION', `${flag} is not JSON (${(error as Error).message}); give an object, e.g. ${flag} '{"#s": "status"}'`);
  }
}
