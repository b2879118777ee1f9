import { LoaderError } from '../shared/errors.js';
import { hash32 } from '../shared/hash.js';
import type { PlannedWrite } from '../shared/types.js';

/**
 * Scale-out over several workers: `--segment i/N` makes a worker load only the partition keys whose hash
 * falls in segment i of N (0-based, as Kubernetes' JOB_COMPLETION_INDEX and AWS Batch's
 * AWS_BATCH_JOB_ARRAY_INDEX count). The hash is of the original, unsharded partition key, so every write
 * of a key, its order and its pacing stay on one worker, and N workers over one file load every row
 * exactly once. A row that cannot be planned has no key: it belongs to the segment of its line number,
 * so each rejected row is reported by exactly one worker.
 */
export interface Segment {
  index: number;
  count: number;
}

export function parseSegment(text: string): Segment {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || !Number.isSafeInteger(count) || count < 1 || count > 100_000 || index >= count) {
    throw new LoaderError(
      'INVALID_OPTION',
      `--segment takes i/N with 0 <= i < N <= 100000 (e.g. 0/4 for the first of four workers; JOB_COMPLETION_INDEX and AWS_BATCH_JOB_ARRAY_INDEX count from 0), got "${text}"`,
    );
  }
  return { index, count };
}

/** The segment of a partition key identity (type letter + value), by FNV-1a with a murmur3 finaliser. */
export function segmentOfKey(partitionIdentity: string, count: number): number {
  return hash32(partitionIdentity) % count;
}

/** The segment of a planned write: by its partition key before any shard suffix. */
export function segmentOfWrite(write: Pick<PlannedWrite, 'partitionId' | 'unshardedKey'>, count: number): number {
  // Sharded keys are strings, so their original identity is "S" + the value, as partitionId writes it.
  return segmentOfKey(write.unshardedKey !== undefined ? `S${write.unshardedKey}` : write.partitionId, count);
}

/** The segment of a row that could not be planned: by its line number. */
export function segmentOfLine(line: number, count: number): number {
  return line % count;
}
