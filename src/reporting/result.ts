/** Counters of a load; every row read ends in exactly one of written, superseded or rejected. */
export interface LoadCounters {
  rowsRead: number;
  /** Rows stored: puts and deletes. */
  written: number;
  /** Of `written`, the deletes (DeleteRequest): `written - deleted` items were put. */
  deleted?: number;
  /** Rows replaced by a later row with the same primary key before they were sent. */
  superseded: number;
  /**
   * Rows first superseded, then written (or rejected) in place of the later row of their key because
   * DynamoDB refused that one; counted in written or rejected, not in superseded.
   */
  revived?: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  /**
   * Write units DynamoDB consumed, table and GSIs (ReturnConsumedCapacity=INDEXES): as it reported them,
   * and, for calls that did not ask because every answer so far had matched the plan, as planned
   * (LoadResult.capacityReports; src/pacing/capacityReports.ts).
   */
  consumedWcu: number;
  /** Write units the written items cost by ddb-spread's size model (table and GSIs). */
  plannedWcu: number;
  batches: number;
  retries: number;
  throttledItems: number;
  /**
   * Throttled calls by kind: DynamoDB's ThrottlingReasons (e.g. TableWriteKeyRangeThroughputExceeded: one
   * key range; TableWriteProvisionedThroughputExceeded: the table), the exception's name when a call gave
   * no reason, UnprocessedItems for calls refused in part (DynamoDB gives no reason for those).
   */
  throttlesByReason?: Record<string, number>;
  bytesRead: number;
  /** Rows of partition keys in other segments (--segment): other workers load them. */
  otherSegments: number;
  /**
   * Rows whose write condition (--if-not-exists, --if-newer) DynamoDB found false: the table kept its item.
   * Neither written nor rejected; absent without a condition.
   */
  conditionFailed?: number;
  /** Rows --skip-expired did not write: their TTL attribute was already past at the load's fixed load time (src/typing/expiry.ts). */
  skippedExpired?: number;
  /** Of `written`, the rows an earlier run of the checkpoint wrote (not this run's pace). */
  writtenBeforeResume: number;
  /** --transform: rows it returned no item for; neither written nor rejected. Absent without a transform. */
  skippedByTransform?: number;
  /** --transform: the items it returned, each then a write like a row's (or a reject). Absent without a transform. */
  transformOutputs?: number;
  /** --transform: the items beyond the first of rows it split (a row of k items adds k - 1). Absent without a transform. */
  splitWrites?: number;
}

/**
 * The writes a load must account for: one per row read, plus the extra items of rows a transform split, less
 * the rows it skipped and the rows --skip-expired left out, and the rows whose write condition was false (they
 * are settled: DynamoDB kept the item). Each other ends written, superseded, rejected, another segment's or not
 * written. So every sum of a load's rows (summary, --json, report, checkpoint, status, progress) counts them.
 */
export function writesToAccount(c: Pick<LoadCounters, 'rowsRead' | 'skippedByTransform' | 'splitWrites' | 'skippedExpired' | 'conditionFailed'>): number {
  return c.rowsRead + (c.splitWrites ?? 0) - (c.skippedByTransform ?? 0) - (c.skippedExpired ?? 0) - (c.conditionFailed ?? 0);
}

/**
 * How the workers of a load divide it: by part (this worker read only `parts` of the listing's parts, the
 * others read the rest) or by key (this worker read every part and wrote the keys of its segment).
 */
export interface DivisionSummary {
  by: 'parts' | 'chain' | 'keys' | 'ranges';
  /** Why the parts could or could not be divided. */
  why: string;
  /** The parts and bytes this worker reads. */
  parts: number;
  bytes: number;
  /** The parts and bytes only the other workers read (0 when divided by key); by range, the ranges. */
  otherParts: number;
  otherBytes: number;
  /** By range: the bytes read to find where the ranges start (load/rangeCuts.ts), besides bytesRead. */
  scannedBytes?: number;
  /**
   * By range, with S3 parts: the bytes read back from the local copy of the segment this worker scanned
   * (load/segmentCopy.ts) instead of fetched from S3 again: its range's, and worker 0's looks at the part's
   * head (a read-ahead of a few 64 KB chunks, not in bytesRead). 0 when no copy was made.
   */
  copiedBytes?: number;
}

export interface LoadResult extends LoadCounters {
  table: string;
  input: string;
  /** Path of the reject file, when any row was rejected. */
  rejectsPath: string | undefined;
  /** Path of the --condition-failures file, when a row's condition was false and it was asked for. */
  conditionFailuresPath?: string | undefined;
  elapsedMs: number;
  itemsPerSecond: number;
  /** The write order used. */
  order: import('../ordering/order.js').OrderMode;
  /** Bytes the write order put in temporary files (0 when the input fitted in --memory). */
  orderTempBytes: number;
  /** Path of the shard manifest, when sharding. */
  shardManifestPath: string | undefined;
  /** Partition key values that were sharded. */
  shardedKeys: number;
  /** Rate control: the target and why, and what the closed loop did. */
  rate: RateSummary;
  /** The partition keys with the most write units written (at most 5; values as in the input). */
  hotKeys: Array<{ key: string; units: number; share: number }>;
  /** A key that needed longer at --key-wcu than the rest of the load, with the shard count that removes that. */
  bottleneck: import('../pacing/rateControl.js').Bottleneck | undefined;
  /** The checkpoint file (--checkpoint), when there is one. */
  checkpointPath: string | undefined;
  /** Batches an earlier run of the checkpoint had done, when this load resumed it (those were not sent again). */
  resumedFromBatch: number | undefined;
  /** This worker's segment ("i/N"), when loading one segment of N. */
  segment: string | undefined;
  /** With a segment of N > 1: how the workers divide the work, and this worker's share of the parts. */
  division?: DivisionSummary | undefined;
  /**
   * Entries of the folders, globs and prefixes given that were not read, each named with why (hidden,
   * a marker, a checksum, the load's own file, a broken link...): no part is left out unnamed.
   */
  skipped: import('../reading/listing.js').SkippedPart[];
  /**
   * Rows read that are neither written, superseded, rejected nor another segment's: the load stopped
   * (a signal, an outage past --outage-timeout, a failure) before they were stored. 0 for a load that ended.
   */
  notWritten: number;
  /**
   * True when the input was read to its end, the load was not stopped, and every row was written or
   * superseded (or belongs to another segment): never for a failed or aborted load, even when every row read so far was written.
   */
  complete: boolean;
  /** This run's BatchWriteItem calls, those that asked for ConsumedCapacity and were answered, and the units counted as planned; undefined for a dry run. */
  capacityReports: import('../pacing/capacityReports.js').CapacityReportsSummary | undefined;
  /**
   * The load's course, a few seconds a bucket: units written and charged, the rate in force, throttles,
   * errors, rows and the hottest keys of each (src/reporting/timeline.ts). Absent for a dry run.
   */
  timeline?: import('./timeline.js').Timeline;
}

export interface RateSummary {
  /** The load's target in write units per second; undefined without --wcu. */
  targetWcu: number | undefined;
  /** How the target was chosen, in one sentence. */
  reason: string;
  /** The per-partition-key ceiling (--key-wcu). */
  keyWcu: number;
  /** The rate in force at the end (below the target after throttles); undefined when unlimited. */
  finalWcu: number | undefined;
  /** Best whole second of write units stored. */
  peakWcu: number;
  /** Planned write units written per second over the whole load. */
  averageWcu: number;
  /** Consumed / planned write units as learned from DynamoDB. */
  costRatio: number;
  tableThrottles: number;
  keyThrottles: number;
  /** Times the whole load's rate was cut. */
  decreases: number;
  /** Calls that failed without an answer (5xx, resets, timeouts, lost replies), retried; never a rate signal. */
  errors: number;
  /** Cuts undone: the throttles did not rise with the rate (noise), so the rate before the cut came back. */
  restores: number;
}

declare module '../shared/errors.js' {
  interface LoaderError {
    /** For a load that stopped: the counters at the stop. Declared here, beside LoadResult, so shared/ imports no stage. */
    result?: LoadResult;
  }
}
