import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CheckpointStore } from '../checkpointing/checkpoint.js';
import type { OrderMode } from '../ordering/order.js';
import type { WriteOrderer } from '../ordering/writeOrderer.js';
import type { RatePacer } from '../pacing/ratePacer.js';
import type { EndpointWatch } from '../writing/endpointWatch.js';
import type { CapacityReports } from '../pacing/capacityReports.js';
import type { InputSet } from '../reading/inputSet.js';
import type { OpenedInputSet } from '../reading/readInputSet.js';
import type { S3Access } from '../reading/s3Part.js';
import type { LoadEvent } from '../reporting/events.js';
import { RejectSink } from '../reporting/rejectSink.js';
import { writeJsonAtomically } from '../files/privateFiles.js';
import { LoaderError } from '../shared/errors.js';
import type { ShardManifest } from '../sharding/shardManifest.js';
import type { NormalizedLoadOptions } from './options.js';
import type { FileLock } from '../files/fileLock.js';
import type { LoadStop } from './loadStop.js';
import type { LoadTally } from './loadTally.js';

/**
 * What one load holds while it runs: the client, the files it writes and their locks, the checkpoint,
 * the order's temporary files, the input. prepareLoad() fills it in as it acquires each, so a failure at
 * any step still releases what came before it; release() is the one way out, in a fixed order.
 */
export class LoadSession {
  readonly rejects: RejectSink;
  rejectsLock: FileLock | undefined;
  /** Held while this run owns the checkpoint: a second run on it is refused (issue 11.12). */
  checkpointLock: FileLock | undefined;
  checkpoint: CheckpointStore | undefined;
  /** Batches before this one were done by an earlier run of this checkpoint: they are not sent again. */
  resumeFrom = 0;
  pacer: RatePacer | undefined;
  /** The endpoint's watch (outages, --outage-timeout); undefined for a dry run. */
  watch: EndpointWatch | undefined;
  /** Which calls ask for ConsumedCapacity; undefined for a dry run (no calls). */
  capacity: CapacityReports | undefined;
  rateReason = '';
  /** A provisioned table's WCU: the most a load reaches whatever --wcu asks (Infinity otherwise; issue 15). */
  tableWcu = Infinity;
  /** The inputs listed (files, folders, globs, S3, exports), before any is opened. */
  inputSet: InputSet | undefined;
  input: OpenedInputSet | undefined;
  /** The S3 client, when an input is in S3. */
  s3: S3Access | undefined;
  orderer: WriteOrderer | undefined;
  /** The write order in effect: --order, or round-robin where a file cannot be read in stripes. */
  order: OrderMode | undefined;
  manifest: ShardManifest | undefined;
  manifestWritten: string | undefined;
  /** Set once the table is described and the input open: only then do counters mean anything. */
  started = false;

  constructor(
    readonly opts: NormalizedLoadOptions,
    readonly client: DynamoDBDocumentClient,
    readonly ownsClient: boolean,
  ) {
    this.rejects = new RejectSink(opts.rejectsPath);
  }

  /**
   * Closes everything, recording in `stop` the first failure to close a file that holds the load's
   * outcome (reject file, manifest, checkpoint). The checkpoint is saved complete only when the load
   * finished and every row read is accounted for: a complete checkpoint is never resumed, so a load whose
   * counts do not add up (a bug) stays resumable rather than final.
   */
  async release(stop: LoadStop, tally: LoadTally, emit: (event: LoadEvent) => void): Promise<void> {
    try {
      await this.rejects.close();
    } catch (error) {
      stop.fail(error);
    }
    await this.rejectsLock?.release();
    try {
      await this.orderer?.close();
    } catch (error) {
      emit({ type: 'warning', message: `could not remove the temporary files in ${this.orderer?.stats.tempPath}: ${(error as Error).message}` });
    }
    if (this.manifest && this.started) {
      try {
        this.manifestWritten = await saveManifest(this.opts.shard!.manifestPath, this.manifest);
      } catch (error) {
        stop.fail(error);
      }
    }
    this.watch?.close();
    if (this.checkpoint) {
      // Complete only when the input was read to its end and every row read is accounted for (issue 29.11).
      const finished = !stop.stopping && tally.inputEnded && tally.accounted;
      try {
        await this.checkpoint.close(finished ? 'complete' : 'stopped', finished ? tally.outcome() : undefined);
      } catch (error) {
        stop.fail(error);
      }
    }
    await this.checkpointLock?.release().catch(() => undefined);
    if (this.ownsClient) this.client.destroy();
    this.s3?.destroy();
  }
}

/** Writes the manifest atomically, so a reader never sees half a file. */
export async function saveManifest(path: string, manifest: ShardManifest): Promise<string> {
  await writeJsonAtomically(
    path,
    manifest.toJSON(),
    '--shard-manifest',
    (error) =>
      new LoaderError('MANIFEST_UNWRITABLE', `cannot write the shard manifest ${path}: ${error.message}; choose another path with --shard-manifest`, {
        file: path,
        cause: error,
      }),
  );
  return path;
}
