import type { WriteOrder } from '../ordering/order.js';
import type { WriteOrderer } from '../ordering/writeOrderer.js';
import type { InputSet } from '../reading/inputSet.js';
import type { OpenedInputSet } from '../reading/readInputSet.js';
import type { CapacityReports } from '../pacing/capacityReports.js';
import type { RatePacer } from '../pacing/ratePacer.js';
import type { ShardManifest } from '../sharding/shardManifest.js';
import type { OpenedCheckpoint } from './openCheckpoint.js';
import type { Division, Share } from './shares.js';

/**
 * What the load's result and progress events report, as far as setup has got: each part is recorded here
 * as the setup step that made it returns it, so a load that stops early still reports what it had. Only
 * records: what must be released is released by the load's Disposer.
 */
export interface LoadFacts {
  /** The inputs listed (files, folders, globs, S3, exports), before any is opened: this worker's share of them. */
  inputSet?: InputSet;
  /** How the workers of the load (--segment) divide the work, and this worker's share of the parts when by part. */
  division?: Division;
  share?: Share;
  /** Each partition key's rate in this worker (--key-wcu, or its share of it when the parts are divided). */
  keyWcu?: number;
  /** The rate chosen and why; a provisioned table's WCU, the most a load reaches whatever --wcu asks. */
  rate?: { reason: string; tableWcu: number; nowWcu: number; pacer: RatePacer | undefined; capacity: CapacityReports | undefined };
  checkpoint?: OpenedCheckpoint;
  manifest?: ShardManifest;
  /** Where the manifest was written at the end, once it was. */
  manifestWritten?: string;
  /** The input as read: its bytes so far (a striped read's, when it is read in stripes). */
  input?: Pick<OpenedInputSet, 'bytesRead' | 'totalBytes'>;
  /** The write order in effect when reading began (--order, or what auto decided), and the order's state. */
  reading?: { order: WriteOrder; orderer: WriteOrderer };
  /** Set once the table is described and the input open: only then do counters mean anything. */
  started: boolean;
}
