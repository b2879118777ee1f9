import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { S3Access } from '../reading/s3Part.js';
import { LoaderError } from '../shared/errors.js';
import { parseWorkerDoc } from './loadStatus.js';
import type { Segment } from './segment.js';
import { localWorkerStore, s3WorkerStore, workerDocPath, type WorkerDoc } from './workerBoard.js';

/**
 * Each worker of a load its own reject file. One --rejects path given to every index (a Job's one command
 * line without the index in it) would have each worker's file replace the one before: the rows an earlier
 * worker rejected would then be in no reject file, while status still counts them. A worker's reject file is
 * created at its first reject (reporting/rejectSink.ts), and two workers cannot hold it at once (its lock),
 * so a worker that finds its path in another worker's state of this load, with rows in it, and a file there,
 * is refused before it reads a row.
 */

/** The worker (i/N) of this load (its listing time and table) whose reject file, with rows in it, is `rejectsPath`; undefined if none. Pure. */
export function sharedRejectsOf(
  peers: ReadonlyArray<{ segment: string; doc: WorkerDoc | undefined }>,
  me: { listedAt: string; table: string; rejectsPath: string },
): string | undefined {
  const mine = resolve(me.rejectsPath);
  return peers.find(
    ({ doc }) =>
      doc !== undefined &&
      doc.listedAt === me.listedAt &&
      doc.table === me.table &&
      doc.rejectsPath !== undefined &&
      doc.rejected > 0 &&
      resolve(doc.rejectsPath) === mine,
  )?.segment;
}

/** Reads the other workers' states beside the listing and refuses this worker's --rejects when one of them wrote its rejects there. */
export async function refuseSharedRejects(o: {
  listing: string;
  segment: Segment;
  listedAt: string;
  table: string;
  rejectsPath: string;
  s3: () => Promise<S3Access>;
}): Promise<void> {
  const { count } = o.segment;
  const peers = await Promise.all(
    Array.from({ length: count }, (_, index) => index)
      .filter((index) => index !== o.segment.index)
      .map(async (index) => {
        const path = workerDocPath(o.listing, { index, count });
        const segment = `${index}/${count}`;
        const store = path.startsWith('s3://') ? s3WorkerStore(path, o.s3) : localWorkerStore(path);
        // A state that cannot be read or is not one names no reject file: status and the barrier say what is wrong with it.
        const text = await store.read().catch(() => undefined);
        let doc: WorkerDoc | undefined;
        try {
          doc = text === undefined ? undefined : parseWorkerDoc(text, store.where, segment);
        } catch {
          doc = undefined;
        }
        return { segment, doc };
      }),
  );
  const peer = sharedRejectsOf(peers, o);
  // Not there: the path is on the other worker's own disk (a pod's /tmp), not a file they share.
  if (
    peer === undefined ||
    !(await stat(o.rejectsPath).then(
      () => true,
      () => false,
    ))
  )
    return;
  const { index } = o.segment;
  throw new LoaderError(
    'INVALID_OPTION',
    `--rejects ${o.rejectsPath} is worker ${peer}'s reject file too (its state beside --listing ${o.listing} says it rejected rows there): this worker's reject file would replace it, and the rows worker ${peer} rejected would be in no reject file. Give each worker its own, with its index in the path (--rejects "/state/orders-$JOB_COMPLETION_INDEX.rejects.jsonl" in a Kubernetes Indexed Job, $AWS_BATCH_JOB_ARRAY_INDEX in AWS Batch), or leave --rejects out (its default names the segment: ...seg-${index}-of-${count}.rejects.jsonl)`,
    { file: o.rejectsPath },
  );
}
