import { LoaderError } from '../shared/errors.js';
import { parseListing } from '../reading/listingDoc.js';
import type { S3Access, S3Options } from '../reading/s3Part.js';
import { loadStatus, parseWorkerDoc, type LoadStatus } from './loadStatus.js';
import { localListingStore, s3ListingStore } from './sharedListing.js';
import { localWorkerStore, s3WorkerStore, workerDocPath } from './workerBoard.js';

/** What `ddb-spread status` reports: the listing's facts, and the load's status from every worker's state. */
export interface StatusReport extends LoadStatus {
  listing: string;
  listedAt: string;
  parts: number;
  bytes: number;
}

/**
 * Reads the listing the workers of a load share (a local file or s3://bucket/key) and each worker's state
 * beside it, and says where the load as a whole stands (loadStatus.ts). Reads only: nothing is written.
 */
export async function readStatus(
  listing: string,
  s3Options: Omit<S3Options, 'requestTimeoutMs'>,
  now: () => number = Date.now,
  /** The table whose load is asked about (one listing may have served loads into several). */
  table?: string,
): Promise<StatusReport> {
  let access: S3Access | undefined;
  let making: Promise<S3Access> | undefined;
  // The S3 client is loaded only for a listing in S3: the status of a local listing never needs it. One
  // promise for every caller, so the workers' documents read at once share one client.
  const s3 = () =>
    (making ??= import('../reading/s3Part.js').then(({ createS3Access }) => (access = createS3Access({ ...s3Options, requestTimeoutMs: 30_000 }))));
  try {
    const inS3 = listing.startsWith('s3://');
    const text = await (inS3 ? s3ListingStore(listing, s3) : localListingStore(listing)).read();
    if (text === undefined)
      throw new LoaderError('INPUT_NOT_FOUND', `no listing at ${listing}: no worker of this load has started yet (or --listing named another place)`, {
        file: listing,
      });
    const doc = parseListing(text, listing);
    const count = doc.segments;
    if (count === undefined)
      throw new LoaderError('INVALID_OPTION', `${listing} was written by a load without --segment (or by an earlier ddb-spread): it has no workers to ask`, {
        file: listing,
      });
    const docs = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const path = workerDocPath(listing, { index, count });
        const found = await (inS3 ? s3WorkerStore(path, s3) : localWorkerStore(path)).read();
        return found === undefined ? undefined : parseWorkerDoc(found, path, `${index}/${count}`);
      }),
    );
    return {
      listing,
      listedAt: doc.listedAt,
      parts: doc.parts.length,
      bytes: doc.parts.reduce((n, p) => n + p.size, 0),
      ...loadStatus(count, docs, now(), doc.listedAt, table),
    };
  } finally {
    access?.destroy();
  }
}
