import type { AttributeDefinition, GlobalSecondaryIndexDescription, KeySchemaElement, TableDescription } from '@aws-sdk/client-dynamodb';
import { LoaderError } from './errors.js';
import type { KeyAttribute, KeyAttributeType, KeySchema } from './types.js';

export type ProjectionType = 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
export type BillingMode = 'PROVISIONED' | 'PAY_PER_REQUEST';

/** A global secondary index: what decides whether an item lands in it and what one entry costs. */
export interface IndexInfo {
  name: string;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  /**
   * Key attributes beyond the first partition and first sort key attribute: GSIs may have multi-attribute
   * keys (up to four attributes each). Absent for ordinary indexes.
   */
  extraKeyAttributes?: KeyAttribute[];
  projection: ProjectionType;
  /** Projected non-key attributes; only meaningful for INCLUDE (empty otherwise). */
  nonKeyAttributes: string[];
  /** Provisioned WCU of the index; only on PROVISIONED tables. */
  provisionedWcu?: number;
  /** Write units per second the index can take at once (warm throughput), when DynamoDB reports it. */
  warmWriteUnits?: number;
  /** OnDemandThroughput.MaxWriteRequestUnits of the index, when a cap is set. */
  onDemandMaxWriteUnits?: number;
  /** IndexStatus (CREATING, UPDATING, DELETING, ACTIVE), when reported. */
  status?: string;
}

/** What rate control and write-cost estimates need to know about the table, from DescribeTable. */
export interface TableInfo {
  name: string;
  keySchema: KeySchema;
  billingMode: BillingMode;
  /** Provisioned capacity; only on PROVISIONED tables. */
  provisionedWcu?: number;
  provisionedRcu?: number;
  /** Write units per second the table can take at once (warm throughput), when DynamoDB reports it. */
  warmWriteUnits?: number;
  /** Read units per second the table can take at once (warm throughput), when DynamoDB reports it. */
  warmReadUnits?: number;
  /** OnDemandThroughput.MaxWriteRequestUnits, when a cap is set (DynamoDB reports -1 for "no cap"). */
  onDemandMaxWriteUnits?: number;
  /** OnDemandThroughput.MaxReadRequestUnits, when a cap is set: verify's --rcu auto stays within it. */
  onDemandMaxReadUnits?: number;
  /** ItemCount and TableSizeBytes: DynamoDB refreshes them about every six hours, so they lag. */
  itemCount?: number;
  sizeBytes?: number;
  gsis: IndexInfo[];
  /** Replicas DynamoDB listed (a global table), when any: AWS's bulk put items does not write to one. */
  replicas?: number;
  /**
   * Which table of that name this is: DescribeTable's TableId, else its CreationDateTime (ISO). A table
   * deleted and created again under the same name has another; undefined when the table is described offline.
   */
  identity?: string;
}

/**
 * Reads a DescribeTable `Table` into a TableInfo. Missing optional parts are tolerated, because
 * DynamoDB Local leaves out BillingModeSummary for provisioned tables and WarmThroughput and
 * OnDemandThroughput everywhere; a missing key is a LoaderError (AWS_ERROR), as nothing can be written
 * without it. `tableName` names the table in messages (the --table the user gave, which may be an ARN).
 */
export function tableInfoFromDescription(description: TableDescription, tableName = description.TableName ?? '(unnamed)'): TableInfo {
  const attributes = description.AttributeDefinitions ?? [];
  const typeOf = (name: string): KeyAttributeType => keyType(attributes, name, tableName);
  const hash = description.KeySchema?.find((k) => k.KeyType === 'HASH')?.AttributeName;
  const range = description.KeySchema?.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  if (!hash) throw new LoaderError('AWS_ERROR', `DescribeTable for "${tableName}" returned no partition key`, { table: tableName });
  const keySchema: KeySchema = { partitionKey: { name: hash, type: typeOf(hash) } };
  if (range) keySchema.sortKey = { name: range, type: typeOf(range) };

  const billingMode = billingModeOf(description);
  const info: TableInfo = { name: description.TableName ?? tableName, keySchema, billingMode, gsis: [] };
  if (billingMode === 'PROVISIONED') {
    setPositive(info, 'provisionedWcu', description.ProvisionedThroughput?.WriteCapacityUnits);
    setPositive(info, 'provisionedRcu', description.ProvisionedThroughput?.ReadCapacityUnits);
  }
  setPositive(info, 'warmWriteUnits', description.WarmThroughput?.WriteUnitsPerSecond);
  setPositive(info, 'warmReadUnits', description.WarmThroughput?.ReadUnitsPerSecond);
  setPositive(info, 'onDemandMaxWriteUnits', description.OnDemandThroughput?.MaxWriteRequestUnits);
  setPositive(info, 'onDemandMaxReadUnits', description.OnDemandThroughput?.MaxReadRequestUnits);
  if (isCount(description.ItemCount)) info.itemCount = description.ItemCount;
  if (isCount(description.TableSizeBytes)) info.sizeBytes = description.TableSizeBytes;
  if ((description.Replicas?.length ?? 0) > 0) info.replicas = description.Replicas!.length;
  for (const index of description.GlobalSecondaryIndexes ?? []) info.gsis.push(indexInfo(index, attributes, billingMode, tableName));
  const created = description.CreationDateTime;
  if (description.TableId) info.identity = `id ${description.TableId}`;
  else if (created instanceof Date && !Number.isNaN(created.getTime())) info.identity = `created ${created.toISOString()}`;
  return info;
}

/**
 * BillingModeSummary is the authority, but DynamoDB leaves it out for tables that were never switched
 * (and Local leaves it out for provisioned tables); then a table with provisioned WCU is PROVISIONED,
 * as on-demand tables report 0.
 */
function billingModeOf(description: TableDescription): BillingMode {
  const mode = description.BillingModeSummary?.BillingMode;
  if (mode === 'PROVISIONED' || mode === 'PAY_PER_REQUEST') return mode;
  return (description.ProvisionedThroughput?.WriteCapacityUnits ?? 0) > 0 ? 'PROVISIONED' : 'PAY_PER_REQUEST';
}

function indexInfo(index: GlobalSecondaryIndexDescription, attributes: AttributeDefinition[], billingMode: BillingMode, tableName: string): IndexInfo {
  const name = index.IndexName;
  if (!name) throw new LoaderError('AWS_ERROR', `DescribeTable for "${tableName}" returned a global secondary index with no name`, { table: tableName });
  const keyOf = (element: KeySchemaElement): KeyAttribute => {
    const attribute = element.AttributeName ?? '';
    return { name: attribute, type: keyType(attributes, attribute, tableName) };
  };
  const hashes = (index.KeySchema ?? []).filter((k) => k.KeyType === 'HASH').map(keyOf);
  const ranges = (index.KeySchema ?? []).filter((k) => k.KeyType === 'RANGE').map(keyOf);
  const [partitionKey, ...moreHashes] = hashes;
  const [sortKey, ...moreRanges] = ranges;
  if (!partitionKey) {
    throw new LoaderError('AWS_ERROR', `DescribeTable for "${tableName}" returned no partition key for index "${name}"`, { table: tableName });
  }
  const type = index.Projection?.ProjectionType;
  // A missing projection type is read as ALL: the largest entry, so write costs are never underestimated.
  const projection: ProjectionType = type === 'KEYS_ONLY' || type === 'INCLUDE' ? type : 'ALL';
  const info: IndexInfo = {
    name,
    partitionKey,
    projection,
    nonKeyAttributes: projection === 'INCLUDE' ? [...(index.Projection?.NonKeyAttributes ?? [])] : [],
  };
  if (sortKey) info.sortKey = sortKey;
  const extra = [...moreHashes, ...moreRanges];
  if (extra.length > 0) info.extraKeyAttributes = extra;
  if (billingMode === 'PROVISIONED') setPositive(info, 'provisionedWcu', index.ProvisionedThroughput?.WriteCapacityUnits);
  setPositive(info, 'warmWriteUnits', index.WarmThroughput?.WriteUnitsPerSecond);
  setPositive(info, 'onDemandMaxWriteUnits', index.OnDemandThroughput?.MaxWriteRequestUnits);
  if (index.IndexStatus) info.status = index.IndexStatus;
  return info;
}

function keyType(attributes: AttributeDefinition[], name: string, tableName: string): KeyAttributeType {
  const type = attributes.find((d) => d.AttributeName === name)?.AttributeType;
  if (type !== 'S' && type !== 'N' && type !== 'B') {
    throw new LoaderError('AWS_ERROR', `DescribeTable for "${tableName}" gave no type for key attribute "${name}"`, { table: tableName });
  }
  return type;
}

/** Sets a capacity figure only when it is a real one: 0 means "on-demand", -1 means "no cap". */
function setPositive<T extends object, K extends keyof T>(target: T, key: K, value: number | undefined): void {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) target[key] = value as T[K];
}

function isCount(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
