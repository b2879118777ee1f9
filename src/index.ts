/**
 * ddb-spread's programmatic API. The CLI (`ddb-spread load`) is a thin layer over `load()`.
 * @module
 */
export { load, type LoadDependencies } from './load/load.js';
export type { LoadOptions } from './load/options.js';
export type { InputFormat } from './reading/inputFormat.js';
export type { ColumnType, EmptyPolicy } from './typing/typeMap.js';
export type { LoadEvent } from './reporting/events.js';
export type { LoadCounters, LoadResult } from './reporting/result.js';
export type { KeySchema, KeyAttribute, RejectedRow, RowOrigin } from './shared/types.js';
export { LoaderError, type LoaderErrorCode, type FatalCode, type RejectCode } from './shared/errors.js';

// The read side of write sharding: the suffix functions, so an application computes the same
// suffixes, and the scatter-gather query over a logical key's shards.
export { randomShard, hashShard, timeBucket, parseTime, keyText } from './sharding/shard.js';
export { parseShardRule, formatShardRule, type ShardRule, type ResolvedShardRule, type SuffixBase, type TimeUnit } from './sharding/shardRule.js';
export { parseShardManifest, type ShardPlan } from './sharding/readManifest.js';
export { writtenKeysOf, shardedKeyOf } from './sharding/shardKeys.js';
export type { ShardManifestJson } from './sharding/shardManifest.js';
export { readShardManifest, type ReadOptions } from './querying/readOptions.js';
export { queryShards, type QueryShardsOptions } from './querying/queryShards.js';
export { getSharded, type GetShardedOptions } from './querying/getSharded.js';
export { itemJsonLine } from './querying/itemJson.js';
export type { Item } from './shared/types.js';
export type { TransformFunction, TransformOrigin, TransformResult } from './typing/transform.js';

// Checking a load: the table against what loading the input would leave (docs/VERIFY.md).
export { verify, type VerifyOptions, type VerifyDependencies } from './verifying/verify.js';
export type { VerifyResult, Outcome as VerifyOutcome, Difference as VerifyDifference } from './verifying/verifyResult.js';
// What a verify costs, two ways (BatchGetItem of the keys, a Scan of the table), and the cheaper one (docs/ESTIMATE.md#verify).
export {
  verifyCosts,
  chooseTableRead,
  type VerifyCostInput,
  type VerifyCosts,
  type TableRead,
  type TableReadCost,
  type TableReadChoice,
} from './estimating/verifyCost.js';
