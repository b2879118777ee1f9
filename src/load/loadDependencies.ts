import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Readable } from 'node:stream';
import type { LoadEvent } from '../reporting/events.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { PlannedWrite, RowOrigin } from '../shared/types.js';
import type { CallerFiles } from './outputFiles.js';
import type { StripeLayout } from '../ordering/stripes/stripedRecords.js';
import type { InputSet } from '../reading/inputSet.js';

/** What load() needs from its environment; each has a real default and can be replaced in tests. */
export interface LoadDependencies {
  /** A DynamoDB document client; by default one is built from the region, profile and endpoint options. */
  client?: DynamoDBDocumentClient;
  /**
   * Send BatchWriteItem calls after the first below the client's middleware chain (src/writing/directSend.ts).
   * @default true for the client load() builds; false for a client given here, whose own middleware (a
   * logger, a retry strategy, tracing, headers) must then see every call
   */
  directBatchWrites?: boolean;
  /**
   * Stops reading when aborted; batches already sent finish, then load() rejects with code ABORTED. An abort
   * after every batch has settled stops nothing: the load ends as its checkpoint records it.
   */
  signal?: AbortSignal;
  onEvent?: (event: LoadEvent) => void;
  /** Stream read for input "-". @default process.stdin */
  stdin?: Readable;
  /** Random source for backoff jitter. @default Math.random */
  random?: () => number;
  /** Monotonic clock (ms) for rate control. @default performance.now */
  now?: () => number;
  /** A dry run: the same reading, planning, sharding, ordering and batching, and nothing written. */
  dryRun?: DryRun;
  /** Files the caller reads or will write (the CLI's --schema, --config, --report): checked with load's own before the first row. */
  files?: CallerFiles;
  /** Sizes the tests shrink so that small files exercise what only large ones would; users never set them. */
  testSeams?: TestSeams;
  /**
   * A striped read of this input found it not grouped by partition key (load() and estimate() set it when
   * they start over): the auto order then streams it through the window without cutting it again.
   */
  notGrouped?: boolean;
}

/**
 * Sizes and timeouts made small by tests, passed in rather than read from the environment anywhere below
 * the CLI (src/cli/testSeams.ts reads them there for the tests that spawn it).
 */
export interface TestSeams {
  /** Between DescribeTable calls while --prewarm waits for the table (aws/warmThroughput.ts: 5 s otherwise). */
  prewarmPollMs?: number;
  /** The smallest stripe of a striped read, in bytes (ordering/stripes/stripedRecords.ts' MIN_STRIPE_BYTES otherwise). */
  stripeBytes?: number;
  /** How long a Parquet worker may go without a row group before it is called stalled, at the least (parquetThread.ts). */
  parquetStallMs?: number;
  /** Records between restart points inside a part, for a new checkpoint (load/restartPoints.ts' restartSpacing otherwise). */
  restartRows?: number;
  /** The timeline's first bucket interval, in ms (reporting/timeline.ts' DEFAULT_BUCKET_MS otherwise): a short load still has a course. */
  timelineBucketMs?: number;
  /** How often a worker writes its state beside the listing (load/workerBoard.ts' HEARTBEAT_MS otherwise). */
  heartbeatMs?: number;
  /** How long a peer of a shared budget may be unheard before its part is taken (load/loadStatus.ts' SILENT_AFTER_MS otherwise). */
  silentMs?: number;
  /** How long a worker waits for another's scan of its segment before scanning it itself (load/rangeCuts.ts' WAIT_MS otherwise). */
  rangeWaitMs?: number;
}

/**
 * What a dry run (the estimate) plugs into load(): no rate control, no shard manifest, and batches go
 * to `record` instead of DynamoDB, each counted as written.
 */
export interface DryRun {
  /** The table, when known without DescribeTable (the estimate's offline flags). */
  tableInfo?: TableInfo;
  /**
   * Called with the table's description before the first row. Returning `'start over'` ends the dry run
   * at once, before any row is read: dryRunLoad() resolves with the table, for its caller to start again
   * with what the table showed (the estimate, when the table has GSIs).
   */
  onTable?: (table: TableInfo) => 'start over' | undefined;
  /** Each planned write in input order; what it returns goes on to the order (a slimmer copy, say). */
  onPlanned(write: PlannedWrite): PlannedWrite;
  /**
   * Each batch, in the order `load` would send it. A promise holds the batch's slot until it settles, so a
   * caller that works on the batches (verify reads the table) holds the reading back, as writes do.
   */
  record(writes: readonly PlannedWrite[]): unknown;
  /**
   * The striped read simulated, not done (the estimate). When set and the order is `stripes` or `auto`,
   * the file is cut as a load would cut it and read whole in input order instead: told the stripes'
   * layout; or 'own' where the dry run orders the rows itself as the load would (the auto order's
   * window, a set read in stripes across its parts); or undefined where the load would read the file whole in round-robin order (it
   * is then read in input order). Called once, before the first row.
   */
  onStripes?: (layout: StripeLayout | 'own' | undefined) => void;
  /**
   * Each row read and not written (rejected, or of another segment), in input order: it still moves its
   * stripe along in a striped read, so the estimate's simulation of that read needs its text too.
   */
  onSkipped?: (origin: RowOrigin) => void;
  /** The inputs as listed, before any is read: the whole load's parts (the estimate's division between workers). */
  onListed?: (set: InputSet) => void;
  /**
   * Whether rows read whole (not in stripes) may be read, typed and planned on a second thread
   * (planningThread.ts), where the parts allow it: `onPlanned` is then given writes whose item is empty
   * and whose origin has no raw text (rejected rows keep theirs). Asked once the table is known.
   */
  planElsewhere?: (table: TableInfo) => boolean;
  /** Told, once a second thread has planned the last row, how long it was busy, in seconds. */
  onPlannedElsewhere?: (busySeconds: number) => void;
}
