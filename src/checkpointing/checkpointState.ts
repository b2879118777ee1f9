import { DoneBatches, type BatchRange } from './doneBatches.js';
import type { SideBySidePosition } from '../reading/sideBySide.js';
import type { StripePlanRecord } from '../ordering/stripes/stripeLayout.js';
import type { StripeCursor } from '../ordering/stripes/stripeResume.js';

/**
 * Resume after a crash, the pure part. Reading, planning, every write order and the batcher are
 * deterministic for a given input, options and shard seed, so the batches of a load form one fixed
 * sequence. A checkpoint records the low-water mark K of that sequence (every batch before K is done:
 * written, or its rows rejected), the counters up to K, the rejects of the write phase up to K, and what
 * identifies the input and the options. A resumed load re-reads and re-plans everything, sends nothing
 * before batch K, and sends every batch from K on in order, so the table ends as an uninterrupted load
 * leaves it. Batches done above K (out of order, or while a slow batch held K) are recorded as ranges
 * and skipped too, so rewrites are bounded by the batches in flight when the process died (at most
 * --concurrency) plus those done since the last save (saved every 200 ms). Rows DynamoDB refused are not
 * in the checkpoint (it would grow, and hold row contents): see io/writeRejectLog.ts.
 */
// 3: stripes are now cut at a head's byte offset, which changes their sizes and so the striped order's
// batches; a checkpoint of format 2 would skip other rows than the ones it recorded, so it is refused.
// 4: a key running across whole ranges is now a stripe of its own (src/ordering/stripes/stripeKeys.ts): the stripes,
// and so the batches, of such a file differ from format 3's.
// 5: a load that streams its input (orders input and window) empties its order and its batcher at restart
// points (restartPoints.ts), which changes its batches, and the checkpoint records the points reached; the
// default order is now auto (decided from the data: a set streams through the window, or is read in
// stripes across its parts, where format 4 wrote it in round-robin): its batches differ from format 4's.
// 6: a striped read makes restart points too (every stripe's place recorded), emptying its batcher there, which
// changes its batches.
// 7: an export chain read by one process (alone, or by key beside other workers) empties its order and its
// batcher between exports, in every order that can (auto, window, input, stripes), which changes its batches.
export const CHECKPOINT_VERSION = 7;

/**
 * A restart point the reader reached: a place in the input where the order and the batcher held nothing,
 * so the batches after it depend on nothing before it. A resume whose every batch before `batch` is done
 * opens the input here instead of reading it from the start. The counters are those of the rows before it.
 */
export interface RestartPoint {
  /** Index of the part in the input set (0 for one file). */
  part: number;
  /** Index, in its part, of the first record after the point (0: the part's start). */
  row: number;
  /** Line of that record in its part (1-based; 1 at the part's start). */
  line: number;
  /** Where that line starts in the part, in bytes, for a plain part read alone: a resume opens the part there. Absent otherwise. */
  offset?: number;
  /** The first batch after the point: every batch before it holds only rows before it. */
  batch: number;
  rowsRead: number;
  otherSegments: number;
  /** Rows --skip-expired left out before the point; absent: none (and in checkpoints before it). */
  skippedExpired?: number;
  /** --transform's counters of the rows before the point (LoadCounters); absent without a transform. */
  skippedByTransform?: number;
  transformOutputs?: number;
  splitWrites?: number;
  /** Rows replaced by a later row of their key before the point (as the batcher counted them). */
  superseded: number;
  /**
   * Rows rejected before the point was reached (planning, and writing so far). A checkpoint that records its
   * reject file (rejectsFile) resumes after rejects, keeping theirs from the file; one that does not, never.
   */
  rejected: number;
  /** A point inside files read side by side (an export's data files): where each stands; `row` and `line` are then the group's and the record's. */
  sideBySide?: SideBySidePosition;
  /** A point of a striped read: where each stripe stood (`row` is then the rows handed on before it, `part` and `line` 0). */
  stripes?: StripeCursor[];
}

/**
 * The reject file as a checkpoint records it at a save: its first `bytes` bytes and their SHA-256. Every
 * reject of a row before a restart point the checkpoint keeps is in those bytes: planning rejects are
 * written as their rows are read, write rejects before their batch counts as done, and the save waits for
 * both to reach the file and fsyncs it before the checkpoint says so (rejectsBeforePoint.ts).
 */
export interface RejectFileState {
  bytes: number;
  sha256: string;
}

/** The input as it was: a different file, or the same file changed, must not resume. */
export interface InputIdentity {
  /** Resolved (absolute) path; only for messages: the content decides. */
  path: string;
  size: number;
  /** A hint only: when it differs, the full SHA-256 decides. */
  mtimeMs: number;
  edgesSha256: string;
  /** SHA-256 (hex) of the whole file; computed for a new checkpoint, and on resume when the modification time changed. */
  sha256?: string;
  /**
   * A set of parts (several files, a folder, a glob, S3, an export): each part's own identity,
   * so a part changed in place is found whatever the other parts' times. Absent for one local file (the
   * fields above are its own) and in checkpoints of ddb-spread before it.
   */
  parts?: PartIdentity[];
}

/** One part of a set as a checkpoint records it: the size and edges decide; when the time differs, the content hash. */
export interface PartIdentity {
  name: string;
  size: number;
  /** A local file's modification time (0 for S3). */
  mtimeMs: number;
  /** SHA-256 of a local file's first and last 64 KB, or an S3 object's ETag. */
  edges: string;
  /** A local file's SHA-256, an S3 object's ETag; recorded when the checkpoint is made. */
  hash?: string;
}

export interface CheckpointFile {
  version: number;
  status: 'running' | 'stopped' | 'complete';
  createdAt: string;
  updatedAt: string;
  input: InputIdentity;
  /** The options that decide what is written and in which batches (see writeAffectingOptions). */
  options: Record<string, unknown>;
  /** Seed of random:N shard suffixes, so a resumed load picks the same suffixes. */
  shardSeed: number | undefined;
  /**
   * A sharded load: the batches whose sharded keys the shard manifest file holds (saved before this file). A
   * resume starts only at a restart point before them, and takes the keys of the rows before it from there.
   */
  manifestBatches?: number;
  /** K: every batch before it is done. */
  batchesDone: number;
  /** Batches done above K, as sorted, disjoint ranges [from, to). */
  doneAbove: BatchRange[];
  /** Counters of every done batch. */
  written: number;
  plannedWcu: number;
  consumedWcu: number;
  /** Rows of done batches DynamoDB refused (WRITE_REJECTED, RETRIES_EXHAUSTED). */
  writeRejects: number;
  /** Bytes of the write-reject log that hold the entries of the done batches (a torn tail past them is cut). */
  writeRejectLogBytes: number;
  /** Superseded rows written or rejected in place of a refused successor; absent when none. */
  revived?: number;
  /** Of `written`, the deletes; absent when none. */
  deleted?: number;
  /** Rows of done batches whose condition (--if-not-exists, --if-newer) was false; absent when none. */
  conditionFailed?: number;
  /** A finished load's counters, reported again when the same command runs after it (a restarted job). */
  outcome?: LoadOutcome;
  /** Rows between restart points within a part (0: restart points off for this load). */
  restartEveryRows: number;
  /** Restart points reached that a resume may still use: the latest before K, and those after it. */
  restarts: RestartPoint[];
  /** The stripes a striped read was planned in (numbers only): a resume reads by them instead of cutting the input again. Absent otherwise. */
  stripePlan?: StripePlanRecord;
  /**
   * The auto order's striped read found the input not grouped by partition key, and the load started over
   * through the window: a resume reads it so too (the stripes would stop it again, and their batches are
   * not the ones recorded). Absent otherwise.
   */
  notGrouped?: true;
  /**
   * The reject file as of this save (rejectsBeforePoint.ts): a resume at a restart point after rejects keeps
   * the rejects of the rows before it from there. Absent in checkpoints of a ddb-spread before it, which
   * resume only at points before any reject.
   */
  rejectsFile?: RejectFileState;
  /**
   * The --condition-failures file as of this save: the lines of the batches counted done (conditionFailed of
   * them), which a resume keeps, cutting what follows. Absent when the load writes none.
   */
  conditionFailuresFile?: RejectFileState;
  /** Which table of its name the load wrote (TableInfo.identity); absent in checkpoints of a ddb-spread before it. */
  tableIdentity?: string;
}

/** What a finished load reported; a rerun on its checkpoint reports it again (and exits 2 on rejects). */
export interface LoadOutcome {
  rowsRead: number;
  written: number;
  superseded: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  otherSegments: number;
  /** Rows --skip-expired left out; absent: none. */
  skippedExpired?: number;
  /** Rows whose write condition was false; absent: none. */
  conditionFailed?: number;
  batches: number;
  /** --transform's counters (LoadCounters); absent without a transform. */
  skippedByTransform?: number;
  transformOutputs?: number;
  splitWrites?: number;
}

/** The counters a checkpoint sums over its done batches. */
export type Counters = Pick<CheckpointFile, 'written' | 'plannedWcu' | 'consumedWcu' | 'writeRejects' | 'revived' | 'deleted' | 'conditionFailed'>;

/**
 * Why a checkpoint cannot be resumed with this input and these options, in one sentence that says what
 * differs and how to start over; undefined when it can.
 */
export function resumeRefusal(
  saved: Pick<CheckpointFile, 'version' | 'input' | 'options'>,
  input: InputIdentity,
  options: Record<string, unknown>,
  path: string,
): string | undefined {
  const startOver = `delete ${path} (or pass another --checkpoint) to start over`;
  if (saved.version !== CHECKPOINT_VERSION)
    return `checkpoint ${path} was written by another version of ddb-spread (format ${saved.version}, this one reads ${CHECKPOINT_VERSION}); ${startOver}`;
  // The content decides, not the path (./c.csv, c.csv, a copy downloaded again elsewhere are one input).
  if (saved.input.size !== input.size)
    return `the input ${input.path} is not the one of checkpoint ${path} (size ${saved.input.size} -> ${input.size} bytes; it was ${saved.input.path}); ${startOver}`;
  if (saved.input.edgesSha256 !== input.edgesSha256)
    return `the input ${input.path} is not the one of checkpoint ${path} (its first or last 64 KB differ; it was ${saved.input.path}); ${startOver}`;
  if (saved.input.sha256 !== undefined && input.sha256 !== undefined) {
    if (saved.input.sha256 !== input.sha256)
      return `the input ${input.path} is not the one of checkpoint ${path} (same size, but its SHA-256 differs; it was ${saved.input.path}); ${startOver}`;
  } else if (saved.input.mtimeMs !== input.mtimeMs) {
    return `the input ${input.path} was modified since checkpoint ${path} was written (modification time differs, and no content hash to compare); ${startOver}`;
  }
  for (const key of new Set([...Object.keys(saved.options), ...Object.keys(options)])) {
    const before = JSON.stringify(saved.options[key] ?? null);
    const now = JSON.stringify(options[key] ?? null);
    if (before !== now && key === 'shard' && !before.includes('"randomSuffix"') && now.includes('"randomSuffix"'))
      return `checkpoint ${path} was taken by an earlier ddb-spread, whose random:N suffixes came from the input's path and line; this one derives them from the seed and the primary key, so resuming would store rows twice: ${startOver} (load again into an empty table)`;
    if (before !== now && key === 'autoReading')
      return `checkpoint ${path} was taken by ${before === 'null' || Number(before) < Number(now) ? 'an earlier' : 'another'} ddb-spread, whose ${options['order'] === 'stripes' ? 'stripes' : 'auto'} order read this input in other batches (reading ${before === 'null' ? 1 : before} then, ${now} now: how an export's data files, small sets and large S3 objects are read, and where restart points fall); resuming would skip rows it never wrote: ${startOver}, or resume with the ddb-spread that took it`;
    if (before !== now && key === 'transform')
      return before === 'null' || now === 'null'
        ? `checkpoint ${path} was taken ${before === 'null' ? 'without' : 'with'} --transform, and this load runs ${now === 'null' ? 'without' : 'with'} one: its batches would hold other items, so resuming would skip rows it never wrote: resume with the same --transform, or ${startOver}`
        : `the --transform module changed since checkpoint ${path} was taken (${before} then, ${now} now): its outputs could differ, so the batches the checkpoint counts as done would not be this load's; restore the module the load started with, or ${startOver}`;
    if (before !== now && key === 'conditionFailures')
      return `checkpoint ${path} was taken ${before === 'null' ? 'without' : 'with'} --condition-failures, and this load runs ${now === 'null' ? 'without' : 'with'} it: the file must list the rows of the batches done before too, which are not sent again; resume ${before === 'null' ? 'without' : 'with'} --condition-failures (the file it began), or ${startOver}`;
    if (before !== now) return `option ${key} differs from checkpoint ${path} (${before} then, ${now} now); resume with the same options, or ${startOver}`;
  }
  return undefined;
}

/**
 * Why the parts found are not the parts a checkpoint recorded, naming the part and what differs; undefined
 * when every part is the one recorded. `found` carries a part's content hash where its time differs. Pure.
 */
export function partsRefusal(saved: readonly PartIdentity[], found: readonly PartIdentity[], path: string): string | undefined {
  const startOver = `delete ${path} (or pass another --checkpoint) to start over`;
  if (saved.length !== found.length)
    return `the input has ${found.length} parts, checkpoint ${path} recorded ${saved.length} (a part added or removed); ${startOver}`;
  for (const [i, now] of found.entries()) {
    const before = saved[i]!;
    if (before.name !== now.name) return `part ${i + 1} of the input is ${now.name}, checkpoint ${path} recorded ${before.name}; ${startOver}`;
    if (before.size !== now.size) return `${now.name} changed since checkpoint ${path} was written (size ${before.size} -> ${now.size} bytes); ${startOver}`;
    if (before.edges !== now.edges)
      return `${now.name} changed since checkpoint ${path} was written (its first or last 64 KB, or its ETag, differ); ${startOver}`;
    if (before.mtimeMs === now.mtimeMs) continue;
    if (before.hash === undefined || now.hash === undefined)
      return `${now.name} was modified since checkpoint ${path} was written (modification time differs, and no content hash to compare); ${startOver}`;
    if (before.hash !== now.hash)
      return `${now.name} changed since checkpoint ${path} was written (same size, but its content differs: SHA-256 ${now.hash.slice(0, 12)}..., ${before.hash.slice(0, 12)}... then); ${startOver}`;
  }
  return undefined;
}

/** What one finished batch adds to the counters. */
export interface BatchDone {
  written: number;
  plannedWcu: number;
  consumedWcu: number;
  /** Rows of the batch DynamoDB refused (they are in the write-reject log, not in the checkpoint). */
  writeRejects: number;
  /** Superseded rows the batch took back (BatchOutcome.revived). */
  revived?: number;
  /** Of `written`, the deletes. */
  deleted?: number;
  /** Rows whose write condition was false (BatchOutcome.conditionFailed). */
  conditionFailed?: number;
}

/**
 * Batches finish out of order (several are in flight). The done set is K plus the ranges done above it
 * (see DoneBatches); the counters are the sums over every done batch, so the saved state always
 * describes exactly the batches it records as done.
 */
export class BatchProgress {
  readonly #done: DoneBatches;
  readonly totals: Counters;

  constructor(from?: Pick<CheckpointFile, 'batchesDone' | 'doneAbove' | keyof Counters>) {
    this.#done = new DoneBatches(from?.batchesDone ?? 0, from?.doneAbove ?? []);
    this.totals = {
      written: from?.written ?? 0,
      plannedWcu: from?.plannedWcu ?? 0,
      consumedWcu: from?.consumedWcu ?? 0,
      writeRejects: from?.writeRejects ?? 0,
      // Only when there are any: a checkpoint without them looks as before.
      ...(from?.revived ? { revived: from.revived } : {}),
      ...(from?.deleted ? { deleted: from.deleted } : {}),
      ...(from?.conditionFailed ? { conditionFailed: from.conditionFailed } : {}),
    };
  }

  /** K: every batch before it is done. */
  get batchesDone(): number {
    return this.#done.mark;
  }

  /** The batches done above K, as ranges [from, to). */
  get doneAbove(): BatchRange[] {
    return this.#done.above;
  }

  isDone(index: number): boolean {
    return this.#done.has(index);
  }

  /** Records batch `index` as done; returns true when it was not yet. */
  complete(index: number, batch: BatchDone): boolean {
    if (!this.#done.add(index)) return false;
    this.totals.written += batch.written;
    this.totals.plannedWcu += batch.plannedWcu;
    this.totals.consumedWcu += batch.consumedWcu;
    this.totals.writeRejects += batch.writeRejects;
    if (batch.revived) this.totals.revived = (this.totals.revived ?? 0) + batch.revived;
    if (batch.deleted) this.totals.deleted = (this.totals.deleted ?? 0) + batch.deleted;
    if (batch.conditionFailed) this.totals.conditionFailed = (this.totals.conditionFailed ?? 0) + batch.conditionFailed;
    return true;
  }
}

/**
 * Whether a resume may start at `point`. With the reject file recorded (`rejectsKept`), always: the rejects of
 * the rows before it are kept from the file (rejectsBeforePoint.ts). Without, only when no row before it was
 * rejected, neither while planning (counted when the point was reached) nor by DynamoDB in a batch before it
 * (the first batch with a write reject is `firstRejectBatch`): a resume writes the reject file anew from the
 * rows it reads, so a point after a reject would lose that reject.
 */
function usable(point: RestartPoint, firstRejectBatch: number, rejectsKept: boolean): boolean {
  return rejectsKept || (point.rejected === 0 && point.batch <= firstRejectBatch);
}

/** The restart point a resume starts at: the latest usable one whose batches before it are all done (batch <= K); undefined: the start. */
export function resumePoint(points: readonly RestartPoint[], mark: number, firstRejectBatch: number, rejectsKept = false): RestartPoint | undefined {
  let found: RestartPoint | undefined;
  for (const point of points) if (point.batch <= mark && usable(point, firstRejectBatch, rejectsKept) && (!found || point.batch >= found.batch)) found = point;
  return found;
}

/** The points worth keeping: the one a resume would start at now, and those not yet behind K (K only grows). */
export function restartPointsKept(points: readonly RestartPoint[], mark: number, firstRejectBatch: number, rejectsKept = false): RestartPoint[] {
  const now = resumePoint(points, mark, firstRejectBatch, rejectsKept);
  return points.filter((point) => point === now || (point.batch > mark && usable(point, firstRejectBatch, rejectsKept)));
}
