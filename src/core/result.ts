/** Counters of a load; every row read ends in exactly one of written, superseded or rejected. */
export interface LoadCounters {
  rowsRead: number;
  written: number;
  /** Rows replaced by a later row with the same primary key before they were sent. */
  superseded: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  /** Table write units reported by DynamoDB (ReturnConsumedCapacity). */
  consumedWcu: number;
  /** Write units the written items cost by ddb-spread's size model. */
  plannedWcu: number;
  batches: number;
  retries: number;
  throttledItems: number;
  bytesRead: number;
}

export interface LoadResult extends LoadCounters {
  table: string;
  input: string;
  /** Path of the reject file, when any row was rejected. */
  rejectsPath: string | undefined;
  elapsedMs: number;
  itemsPerSecond: number;
  /** The write order used. */
  order: import('./order.js').OrderMode;
  /** Bytes the write order put in temporary files (0 when the input fitted in --memory). */
  orderTempBytes: number;
  /** Path of the shard manifest, when sharding. */
  shardManifestPath: string | undefined;
  /** Partition key values that were sharded. */
  shardedKeys: number;
  /** True when every row read was written or superseded. */
  complete: boolean;
}
