import type { NormalizedLoadOptions } from './options.js';
import type { RejectedRow } from './types.js';

/**
 * Resume after a crash, the pure part. Reading, planning, every write order and the batcher are
 * deterministic for a given input, options and shard seed, so the batches of a load form one fixed
 * sequence. A checkpoint records the low-water mark K of that sequence (every batch before K is done:
 * written, or its rows rejected), the counters up to K, the rejects of the write phase up to K, and what
 * identifies the input and the options. A resumed load re-reads and re-plans everything, sends nothing
 * before batch K, and sends every batch from K on in order, so the table ends as an uninterrupted load
 * leaves it. Rewrites are bounded: the batches past K that were in flight or done out of order when the
 * process died (at most --concurrency), plus those done since the last save (saved every 200 ms).
 */
export const CHECKPOINT_VERSION = 1;

/** The input as it was: a different file, or the same file changed, must not resume. */
export interface InputIdentity {
  path: string;
  size: number;
  mtimeMs: number;
  edgesSha256: string;
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
  /** K: every batch before it is done. */
  batchesDone: number;
  /** Counters of the batches before K. */
  written: number;
  plannedWcu: number;
  consumedWcu: number;
  /** Rows of the batches before K that DynamoDB refused (WRITE_REJECTED, RETRIES_EXHAUSTED), to put back in the reject file. */
  writeRejects: RejectedRow[];
  /** Write rejects beyond those kept (the list is capped). */
  writeRejectsNotKept: number;
}

/** Write rejects kept in the checkpoint; beyond, only their count (the file stays small). */
export const MAX_KEPT_WRITE_REJECTS = 10_000;

/** The options that change what is written or how rows fall into batches; rate, concurrency and logging do not. */
export function writeAffectingOptions(opts: NormalizedLoadOptions): Record<string, unknown> {
  return {
    table: opts.table,
    inputFormat: opts.inputFormat,
    delimiter: opts.delimiter,
    columns: opts.columns ?? null,
    types: sortKeys(opts.types),
    infer: opts.infer,
    empty: opts.empty,
    order: opts.order,
    window: opts.order === 'window' ? opts.windowRows : null,
    // The window is capped by --memory as well as by rows, so for window order it decides the batches too.
    windowMemoryBytes: opts.order === 'window' ? opts.memoryBytes : null,
    shard: opts.shard
      ? { rules: opts.shard.rules, separator: opts.shard.separator, keys: opts.shard.keys ? [...opts.shard.keys].sort() : null, keepOriginalKey: opts.shard.keepOriginalKey ?? null, seed: opts.shard.seed ?? null }
      : null,
    segment: opts.segment ? `${opts.segment.index}/${opts.segment.count}` : null,
  };
}

/**
 * Why a checkpoint cannot be resumed with this input and these options, in one sentence that says what
 * differs and how to start over; undefined when it can.
 */
export function resumeRefusal(saved: Pick<CheckpointFile, 'version' | 'input' | 'options'>, input: InputIdentity, options: Record<string, unknown>, path: string): string | undefined {
  const startOver = `delete ${path} (or pass another --checkpoint) to start over`;
  if (saved.version !== CHECKPOINT_VERSION) return `checkpoint ${path} was written by another version of ddb-spread (format ${saved.version}, this one reads ${CHECKPOINT_VERSION}); ${startOver}`;
  if (saved.input.path !== input.path) return `checkpoint ${path} is for input ${saved.input.path}, not ${input.path}; ${startOver}`;
  if (saved.input.size !== input.size) return `the input ${input.path} changed since checkpoint ${path} was written (size ${saved.input.size} -> ${input.size} bytes); ${startOver}`;
  if (saved.input.edgesSha256 !== input.edgesSha256) return `the input ${input.path} changed since checkpoint ${path} was written (its first or last 64 KB differ); ${startOver}`;
  if (saved.input.mtimeMs !== input.mtimeMs) return `the input ${input.path} was modified since checkpoint ${path} was written (modification time differs); ${startOver}`;
  for (const key of new Set([...Object.keys(saved.options), ...Object.keys(options)])) {
    const before = JSON.stringify(saved.options[key] ?? null);
    const now = JSON.stringify(options[key] ?? null);
    if (before !== now) return `option ${key} differs from checkpoint ${path} (${before} then, ${now} now); resume with the same options, or ${startOver}`;
  }
  return undefined;
}

/** What one finished batch adds to the counters. */
export interface BatchDone {
  written: number;
  plannedWcu: number;
  consumedWcu: number;
  writeRejects: RejectedRow[];
}

/**
 * Batches finish out of order (several are in flight); the low-water mark advances only over a prefix
 * of finished batches, folding their counts in, so the saved state always describes batches 0..K-1.
 */
export class BatchProgress {
  #done: number;
  readonly #pending = new Map<number, BatchDone>();
  readonly totals: Omit<CheckpointFile, 'version' | 'status' | 'createdAt' | 'updatedAt' | 'input' | 'options' | 'shardSeed' | 'batchesDone'>;

  constructor(from?: Pick<CheckpointFile, 'batchesDone' | 'written' | 'plannedWcu' | 'consumedWcu' | 'writeRejects' | 'writeRejectsNotKept'>) {
    this.#done = from?.batchesDone ?? 0;
    this.totals = {
      written: from?.written ?? 0,
      plannedWcu: from?.plannedWcu ?? 0,
      consumedWcu: from?.consumedWcu ?? 0,
      writeRejects: [...(from?.writeRejects ?? [])],
      writeRejectsNotKept: from?.writeRejectsNotKept ?? 0,
    };
  }

  /** K: every batch before it is done. */
  get batchesDone(): number {
    return this.#done;
  }

  /** Records batch `index` as done; returns true when the low-water mark moved. */
  complete(index: number, batch: BatchDone): boolean {
    if (index < this.#done) return false;
    this.#pending.set(index, batch);
    let moved = false;
    for (let next = this.#pending.get(this.#done); next !== undefined; next = this.#pending.get(this.#done)) {
      this.#pending.delete(this.#done);
      this.#done++;
      moved = true;
      this.totals.written += next.written;
      this.totals.plannedWcu += next.plannedWcu;
      this.totals.consumedWcu += next.consumedWcu;
      for (const row of next.writeRejects) {
        if (this.totals.writeRejects.length < MAX_KEPT_WRITE_REJECTS) this.totals.writeRejects.push(row);
        else this.totals.writeRejectsNotKept++;
      }
    }
    return moved;
  }
}

function sortKeys(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}
