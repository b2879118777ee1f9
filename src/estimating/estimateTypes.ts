import type { OrderMode } from '../ordering/order.js';
import type { ManagedPath } from './managedPaths.js';
import type { PrewarmAdvice } from './prewarmAdvice.js';
import type { TableRead, TableReadCost } from './verifyCost.js';

/**
 * What `ddb-spread estimate` (and `load --dry-run`) reports: one stable object, printed as text for
 * people and as JSON with --json. Documented field by field in docs/ESTIMATE.md; `version` changes when
 * a field changes meaning or goes away (fields may be added without a change of version).
 */
export interface EstimateResult {
  version: 1;
  input: EstimateInput;
  /** Item sizes of the valid rows, by DynamoDB's rules (attribute names included). */
  items: ItemSizes;
  /** Write units the load costs: each valid row once, table and every GSI it lands in. */
  writeUnits: { table: number; indexes: Record<string, number>; total: number };
  table: EstimateTable;
  keys: EstimateKeys;
  rate: EstimateRate;
  time: EstimateTime;
  /** The planned order and, for contrast, the input order, simulated against the partition model. */
  simulations: { planned: Simulation; input: Simulation };
  /** Keys that would exceed --key-wcu, with the shard count that removes the bottleneck. */
  shardAdvice: ShardAdvice[];
  capacity: CapacityPlan;
  cost: CostEstimate;
  /**
   * With --workers N: the whole load as N workers would run it (--segment 0/N … N-1/N): how they divide it,
   * what they read together, and the rate of all of them; the time, rate and cost above are the whole load's.
   */
  workers?: EstimateWorkers;
  /**
   * Pre-warming: with --prewarm, what the load raises (the figures above assume it); without, on an
   * on-demand table whose warm throughput holds the load below its target, what to run and the time it saves.
   */
  prewarm?: PrewarmAdvice;
  /** AWS's managed loaders (Import from S3, bulk put items): whether each would serve, what it would not do, its price. */
  managedPaths: ManagedPath[];
  /**
   * With --max-cost: the load's write units priced as its cost guard prices them (load/costGuard.ts: on
   * demand per write request unit, provisioned as the WCU-hours the units occupy), and whether the load would
   * be refused or stopped by it.
   */
  costGuard?: { maxUsd: number; usd: number; over: boolean };
  /** What `ddb-spread verify` of this load would read and cost, two ways (estimating/verifyCost.ts). */
  verify: VerifyEstimate;
  /**
   * --if-not-exists / --if-newer: the load's calls, one PutItem/DeleteItem per row (none superseded), each
   * charged as a write whether its condition holds or not; how many will fail is not known before the load.
   */
  /** `conditionFailuresPath`: --condition-failures, where the load would list the rows whose condition fails. */
  conditional?: { condition: string; calls: number; conditionFailuresPath?: string };
}

/**
 * The price of a verify after the load: BatchGetItem of the keys the input leaves, or a Scan of the table
 * merged against them, in read units, time at a read rate, and dollars; and which costs less.
 */
export interface VerifyEstimate {
  /**
   * Keys the verify reads: one per key the input decides (its last write), times the sample. With
   * superseded rows the keys' read units are the writes' scaled to the keys (the estimate keeps no key's
   * size); exact when every key is written once.
   */
  keys: number;
  /** --sample as a share (1: every key). The Scan reads the whole table whatever the sample. */
  sample: number;
  consistentRead: boolean;
  /** Read units per second the times and provisioned prices assume. */
  rcu: number;
  /** Where the rate comes from: --rcu, 80% of the provisioned RCU, of the warm read throughput (12,000 a new on-demand table), or of a lower MaxReadRequestUnits. */
  rcuSource: 'given' | 'provisioned' | 'warm-throughput' | 'on-demand-default' | 'on-demand-max';
  /** The share of that capacity taken, in percent (--rcu auto:P%; 80 by default; 100 for a given --rcu). */
  rcuPercent: number;
  /**
   * The table the Scan reads after the load: DescribeTable's size now plus the items the load leaves (a key
   * already there counted twice: an upper bound; DynamoDB refreshes the size about every six hours), or
   * offline the items the load leaves.
   */
  table: { bytes: number; items: number; source: 'describe-table' | 'input' };
  batchGet: TableReadCost;
  scan: TableReadCost & { segments: number };
  /** The way that costs less (chooseTableRead), and why. */
  cheaper: TableRead;
  why: string;
  prices: { region: string; date: string; onDemandPerMillionReads: number; provisionedPerRcuHour: number };
  /**
   * Flags to add to this estimate's inputs and options, with `verify` in place of `estimate` (the verify
   * as built: BatchGetItem of the keys, at the rate above).
   */
  flags: string;
}

export interface EstimateWorkers {
  count: number;
  /** By part (each worker reads its share of the parts), a chain's export by export, or by key (every worker reads every part). */
  by: 'parts' | 'chain' | 'keys' | 'ranges';
  why: string;
  inputBytes: number;
  /** The bytes the worker with the most reads. */
  largestShareBytes: number;
  /** The bytes all the workers read together. */
  bytesReadByAll: number;
  /** The read phase of the slowest worker, each worker on cores of its own (seconds); the estimate's own pass read everything. */
  readSeconds: number;
}

export interface EstimateInput {
  file: string;
  /** Size of the file on disk (compressed size for .gz), when known. */
  bytes: number | undefined;
  rows: number;
  /**
   * Rows that passed validation and are written: rows - rejected - expired (superseded rows included); with
   * --transform, the writes: rows + extra items of split rows - rows skipped - expired - rejected.
   */
  validRows: number;
  /** Rows --skip-expired leaves out (their TTL past at the estimate's load time); 0 without it. */
  expired: number;
  /** --transform: rows it skipped, and the items it returned; absent without a transform. */
  skippedByTransform?: number;
  transformOutputs?: number;
  /** Rows with the same primary key as a later row: only the later one is written. */
  superseded: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  /** The reject file, when a row was rejected (the same file `load` writes). */
  rejectsPath: string | undefined;
}

export interface ItemSizes {
  totalBytes: number;
  averageBytes: number;
  maxBytes: number;
  /** Items per size band, bands as upper bounds in bytes: 1 KB, 2 KB, 4 KB, ... 400 KB. Empty bands included. */
  histogram: Array<{ upToBytes: number; items: number }>;
}

export interface EstimateTable {
  name: string;
  /** Where the description came from: DescribeTable, or the offline flags (--partition-key, --billing ...). */
  source: 'describe-table' | 'flags';
  billingMode: 'PROVISIONED' | 'PAY_PER_REQUEST';
  provisionedWcu: number | undefined;
  provisionedRcu: number | undefined;
  warmWriteUnits: number | undefined;
  itemCount: number | undefined;
  gsis: Array<{ name: string; projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE' }>;
  /** Partitions the table has now, by AWS's initial-allocation formula (capacity and size). */
  partitionsNow: number;
  /** Partitions at the load's target rate (more when the target needs a raise of provisioned WCU). */
  partitionsAtTarget: number;
}

export interface HotKey {
  key: string;
  rows: number;
  /** Share of the valid rows. */
  rowShare: number;
  /** Write units, table and GSIs. */
  units: number;
  /** Share of the load's write units (table and GSIs). */
  unitShare: number;
}

export interface EstimateKeys {
  /** Distinct partition key values before sharding (HyperLogLog estimate, ±2%; exact below a few thousand). */
  distinct: number;
  /** Distinct partition key values as written (after --shard); equal to `distinct` without sharding. */
  distinctWritten: number;
  /** Heaviest partition keys before sharding, heaviest first (at most 10). */
  hottest: HotKey[];
  /** Heaviest partition key values as written, after sharding (at most 10); same as `hottest` without --shard. */
  hottestWritten: HotKey[];
  sharded: boolean;
  /**
   * Each GSI's heaviest partition key values, by the index's own write units (a GSI partition
   * has the same 1,000 WCU/s ceiling, so a low-cardinality index key is a bottleneck of its own).
   * `unitShare` is the share of the load's write units.
   */
  indexes: Array<{ index: string; hottest: HotKey[] }>;
}

export interface EstimateRate {
  /** The target write units per second, as `load` would choose it (undefined: none, as fast as the table takes). */
  targetWcu: number | undefined;
  /**
   * The rate the estimate works at, the rate the load can reach: the target, but at most a
   * provisioned table's WCU (unless it is created for the load); on an on-demand table the average of a
   * rate that starts at the warm throughput and doubles at most every 30 minutes (`--wcu auto` aims at the
   * table's quota but reaches that); the table's capacity without a target.
   */
  assumedWcu: number;
  /** The highest rate the load reaches (above assumedWcu only when an on-demand rate grows). */
  peakWcu: number;
  reason: string;
  /** When --wcu asks for more than the table can take: what the estimate does instead. */
  warning: string | undefined;
  keyWcu: number;
  /** The highest rate at which the simulated planned order sees no throttled write. */
  throttleFreeWcu: number;
}

export interface EstimateTime {
  /** Write units (table and GSIs) / assumed rate. */
  idealSeconds: number;
  /**
   * What the load is predicted to take, as `load` measures it: start-up, then the read phase and the
   * writing (one after the other in a global order, which writes nothing until the whole input is read;
   * overlapping in the streaming orders).
   */
  estimatedSeconds: number;
  /** Start-up before the first row: opening the files, DescribeTable (one round trip when the table came from flags). */
  startupSeconds: number;
  /** Reading, typing and ordering every row, as this estimate's own pass over the input took on this machine. */
  readSeconds: number;
  /** The simulated writing of the planned order (pacing, per-key limits and throttling included). */
  writeSeconds: number;
  /** What bounds the duration: the table's rate, or one key at --key-wcu. */
  bottleneck:
    | { kind: 'table'; wcu: number }
    | { kind: 'key'; key: string; units: number; seconds: number }
    /** A GSI partition key at --key-wcu of the index's units. */
    | { kind: 'index-key'; index: string; key: string; units: number; seconds: number };
}

export interface Simulation {
  order: OrderMode;
  /** Paced as `load` paces (target and --key-wcu); the input-order contrast is unpaced, as other loaders write. */
  paced: boolean;
  seconds: number;
  /** Writes the partition model refused (each refusal counts; a write refused twice counts twice). */
  throttledItems: number;
  /** partitions[p][t]: write units of partition p in time bucket t, as a share of its sustained rate (1 = full). */
  heat: { bucketSeconds: number; partitions: number[][] };
}

export interface ShardAdvice {
  key: string;
  units: number;
  /** Rate the key needs to finish with the rest of the load. */
  requiredWcu: number;
  minShards: number;
  recommendedShards: number;
  /** The exact flags, e.g. --shard hash:4 --shard-keys cust-0007; for a GSI key, what to write instead (a shard suffix in the index key's value). */
  flags: string;
  /** The GSI whose partition key this is; undefined for the table's partition key. */
  index: string | undefined;
  /** What sharding costs readers: N queries per logical key (or one, for a point read of a hash suffix). */
  reads: string;
}

export interface CapacityPlan {
  /** Provisioned WCU the load would need to finish at the target rate (undefined for on-demand). */
  loadWcu: number | undefined;
  /** Partitions after raising the table to loadWcu (AWS doubles the partitions until they hold it). */
  partitionsAfterRaise: number | undefined;
  /** Write units per partition per second once the table is set back to its current WCU: partitions are never merged. */
  perPartitionWcuAfterLoad: number | undefined;
  /** The slower, smaller alternative: the highest WCU that creates no new partition, and how long the load takes at it. */
  noSplitWcu: number | undefined;
  noSplitSeconds: number | undefined;
  /** Sentences of advice, in the order to read them. */
  advice: string[];
}

export interface CostEstimate {
  /** Prices used, with where and when they are from (override with --price-write-request and --price-wcu-hour). */
  prices: { region: string; date: string; onDemandPerMillionWrites: number; provisionedPerWcuHour: number };
  /** On-demand: one write request unit per KB, tables and GSIs alike. */
  onDemandUsd: number;
  /** Provisioned: the target WCU for the estimated duration, in WCU-hours (billed by the hour). */
  provisionedWcuHours: number;
  provisionedUsd: number;
  /** When the table is new or empty: DynamoDB's Import from S3 writes no capacity at all. */
  importFromS3: string | undefined;
}
