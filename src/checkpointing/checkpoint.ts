import { readFile, rm } from 'node:fs/promises';
import {
  BatchProgress,
  CHECKPOINT_VERSION,
  partsRefusal,
  restartPointsKept,
  resumePoint,
  resumeRefusal,
  type BatchDone,
  type RestartPoint,
  type PartIdentity,
  type CheckpointFile,
  type InputIdentity,
  type LoadOutcome,
} from './checkpointState.js';
import { parseCheckpoint } from './checkpointShape.js';
import { LoaderError } from '../shared/errors.js';
import { WriteRejectLog, type WriteRejectEntry } from './writeRejectLog.js';
import { writePrivateFileAtomically } from '../files/privateFiles.js';
import type { RejectFileState } from './checkpointState.js';
import type { StripePlanRecord } from '../ordering/stripes/stripeLayout.js';

/** The reject file as a save records it: what was handed to it so far, and a wait until that is on disk. */
export interface TrackedRejectFile {
  /** The bytes handed to the file so far (written or being written), and their SHA-256. */
  state(): RejectFileState;
  /** Resolves once every byte handed to the file is written and fsynced. */
  settle(): Promise<void>;
}

/** Saves at most this often while batches finish; every stop saves at once. */
const SAVE_EVERY_MS = 200;

/**
 * The checkpoint file (--checkpoint): opened before the first row, saved while the load runs and at
 * every stop. Each save fsyncs the write-reject log, then writes a temporary file, fsyncs it, renames it
 * over the checkpoint and fsyncs the folder, so a crash or a power cut leaves either the old state or the
 * new one, never half a file, and never a checkpoint counting rejects the log lost.
 */
export class CheckpointStore {
  readonly progress: BatchProgress;
  #file: CheckpointFile;
  #lastSave = 0;
  #saving: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  /** Absent for a finished checkpoint, which is never written again. */
  readonly #rejectLog: WriteRejectLog | undefined;
  /** Write rejects of the batches an earlier run did, by input line: put back when those rows are read again. */
  readonly restoredRejects: Map<string, WriteRejectEntry>;
  /** Restart points reached and still of use (see restartPointsKept). */
  #restarts: RestartPoint[];
  /** The first batch that holds a row DynamoDB refused (Infinity: none): without the reject file recorded, no resume starts after it. */
  #firstRejectBatch = Infinity;
  /** The reject file this run writes, recorded with each save (see trackRejectFile). */
  #rejectFile: TrackedRejectFile | undefined;
  /** The --condition-failures file of this run, recorded with each save (see trackConditionFailures). */
  #conditionFailures: TrackedRejectFile | undefined;
  /** A sharded load's manifest, saved before a save that makes a later restart point usable (see trackManifest). */
  #saveManifest: (() => Promise<void>) | undefined;
  /** The batches whose keys the manifest file holds: Infinity for a load that is not sharded. */
  #manifestCovers: number;
  /** A manifest save is under way (one at a time). */
  #manifestPending = false;

  private constructor(
    readonly path: string,
    file: CheckpointFile,
    rejectLog: WriteRejectLog | undefined,
    restored: Map<string, WriteRejectEntry>,
  ) {
    this.#file = file;
    this.progress = new BatchProgress(file);
    this.#rejectLog = rejectLog;
    this.restoredRejects = restored;
    this.#restarts = [...file.restarts];
    for (const entry of restored.values()) this.#firstRejectBatch = Math.min(this.#firstRejectBatch, entry.batch);
    this.#manifestCovers = file.shardSeed !== undefined ? (file.manifestBatches ?? 0) : Infinity;
  }

  /** Where a resume starts: the latest usable restart point before K (and, sharded, before the manifest's batches); undefined: the input's start. */
  get resumePoint(): RestartPoint | undefined {
    return resumePoint(this.#restarts, this.#usableMark, this.#firstRejectBatch, this.#rejectsKept);
  }

  /** The batches before which a restart point may be resumed at: done, and (sharded) with their keys in the manifest file. */
  get #usableMark(): number {
    return Math.min(this.progress.batchesDone, this.#manifestCovers);
  }

  /**
   * A sharded load's manifest, from now on saved (by `save`) before a checkpoint save that would make a
   * later restart point usable: the file then holds the keys of every batch done, and the checkpoint
   * records how many (manifestBatches). Once per restart point at most, however often the checkpoint is saved.
   */
  trackManifest(save: () => Promise<void>): void {
    this.#saveManifest = save;
  }

  /** Whether a resume keeps the rejects of the rows before its restart point from the reject file (so may start after rejects). */
  get #rejectsKept(): boolean {
    return this.#rejectFile !== undefined || this.#file.rejectsFile !== undefined;
  }

  /**
   * The reject file of this run, from now on recorded with each save: its bytes and their hash as of the
   * save, written and fsynced before the checkpoint is (see rejectsBeforePoint.ts).
   */
  trackRejectFile(file: TrackedRejectFile): void {
    this.#rejectFile = file;
  }

  /**
   * The --condition-failures file of this run, from now on recorded with each save (its bytes and hash, on
   * disk before the checkpoint is). Its lines are handed on by `complete`'s `beforeDone`, in the same step as
   * their batch is counted done, so each save records exactly the lines of the batches it counts done.
   */
  trackConditionFailures(file: TrackedRejectFile): void {
    this.#conditionFailures = file;
  }

  /** The stripes a striped read is planned in: recorded with the next save (a resume reads by them). */
  keepStripePlan(plan: StripePlanRecord): void {
    this.#file = { ...this.#file, stripePlan: plan };
  }

  /** The reader reached a restart point: recorded with the next save. */
  reached(point: RestartPoint): void {
    this.#restarts.push(point);
  }

  /** True when this run continues an earlier one (the file existed). */
  resumed = false;

  get file(): Readonly<CheckpointFile> {
    return this.#file;
  }

  /** The write-reject log's path, next to the checkpoint. */
  static rejectLogPath(path: string): string {
    return `${path}.write-rejects`;
  }

  /**
   * Opens `path`: a new checkpoint when there is none, or the saved one when it matches this input and
   * these options (a LoaderError CHECKPOINT_MISMATCH otherwise, saying what differs and how to start over;
   * CHECKPOINT_INVALID when the file is not a checkpoint). A finished checkpoint is returned as it is.
   */
  static async open(
    path: string,
    found: InputIdentity,
    hashInput: () => Promise<string>,
    options: Record<string, unknown>,
    shardSeed: number | undefined,
    /** Rows between restart points in a part, for a new checkpoint (0: none); a resumed one keeps its own. */
    restartEveryRows: number,
    /** A set's part `index`'s content hash (found.parts): recorded for each, and on resume for a part whose time differs. */
    hashPart?: (index: number) => Promise<string>,
    /**
     * The load starts over through the window after its striped read found the input not grouped (this
     * process opened the checkpoint a moment ago and matched it): a new checkpoint replaces it, recording why.
     */
    notGrouped?: boolean,
    /** The table written, by name and identity: a checkpoint of another table of that name (deleted and created again) is refused. */
    table?: { name: string; identity: string },
  ): Promise<CheckpointStore> {
    let input = found;
    let text: string | undefined;
    try {
      if (!notGrouped) text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unwritable(path, error);
    }
    if (text === undefined) {
      input = { ...input, sha256: await hashInput() };
      if (input.parts && hashPart) {
        const parts: PartIdentity[] = [];
        for (const [i, part] of input.parts.entries()) parts.push({ ...part, hash: await hashPart(i) });
        input = { ...input, parts };
      }
      const now = new Date().toISOString();
      const file: CheckpointFile = {
        version: CHECKPOINT_VERSION,
        status: 'running',
        createdAt: now,
        updatedAt: now,
        input,
        options,
        shardSeed,
        batchesDone: 0,
        doneAbove: [],
        written: 0,
        plannedWcu: 0,
        consumedWcu: 0,
        writeRejects: 0,
        writeRejectLogBytes: 0,
        restartEveryRows,
        restarts: [],
        ...(notGrouped ? { notGrouped: true as const } : {}),
        ...(table ? { tableIdentity: table.identity } : {}),
      };
      // The checkpoint replaced goes before its write-reject log is emptied: a crash between the two then
      // leaves no checkpoint (the next run starts over, its writes idempotent), never one that counts write
      // rejects its emptied log no longer holds (which a resume would refuse as damaged).
      if (notGrouped) {
        try {
          await rm(path, { force: true });
        } catch (error) {
          throw unwritable(path, error);
        }
      }
      const store = new CheckpointStore(path, file, await WriteRejectLog.create(CheckpointStore.rejectLogPath(path)), new Map());
      // Written at once: a bad path fails before any row, and a crash in the first second leaves a file.
      try {
        await store.save('running');
      } catch (error) {
        await store.#rejectLog?.close().catch(() => undefined);
        throw error;
      }
      return store;
    }
    const saved = parseCheckpoint(text, path);
    // A set part by part; one file (or a one-part set of a checkpoint from before parts were recorded) as a whole.
    if (input.parts && (saved.input.parts !== undefined || input.parts.length > 1)) input = await partsChecked(saved.input, input, hashPart, path);
    else {
      // Recorded as the checkpoint was: a one-part set of an older checkpoint stays whole.
      input = { ...input };
      delete input.parts;
      // The modification time is a hint: unchanged, the size and edges suffice; changed (a fresh copy of
      // the same bytes, say), the whole content must hash the same.
      const sameOutline = saved.input.size === input.size && saved.input.edgesSha256 === input.edgesSha256;
      if (sameOutline && saved.input.mtimeMs !== input.mtimeMs) input = { ...input, sha256: await hashInput() };
      else if (sameOutline && saved.input.sha256 !== undefined) input = { ...input, sha256: saved.input.sha256 };
    }
    const refusal = resumeRefusal(saved, input, options, path) ?? tableRefusal(saved, table, path);
    if (refusal) throw new LoaderError('CHECKPOINT_MISMATCH', refusal, { file: path });
    // A checkpoint of a ddb-spread before it records the table from now on.
    if (saved.tableIdentity === undefined && table) saved.tableIdentity = table.identity;
    // The input may have moved (a fresh download): the content matched, so the new path is recorded.
    saved.input = { ...input };
    if (saved.status === 'complete') {
      // Not opened for writing: a finished checkpoint stays as it is.
      const store = new CheckpointStore(path, saved, undefined, new Map());
      store.resumed = true;
      return store;
    }
    const progress = new BatchProgress(saved);
    const { log, entries } = await WriteRejectLog.resume(
      CheckpointStore.rejectLogPath(path),
      saved.writeRejectLogBytes,
      (batch) => progress.isDone(batch),
      path,
    );
    if (entries.size !== saved.writeRejects) {
      await log.close();
      throw new LoaderError(
        'CHECKPOINT_INVALID',
        `checkpoint ${path} counts ${saved.writeRejects} rows DynamoDB refused, but its write-reject log ${log.path} holds ${entries.size}; delete the checkpoint (and the log) to start over`,
        { file: path },
      );
    }
    const store = new CheckpointStore(path, saved, log, entries);
    store.resumed = true;
    // The log was rewritten to the done batches' entries: the checkpoint records its new length before
    // anything is appended.
    await store.save(saved.status);
    return store;
  }

  /**
   * Records batch `index` as done (its write rejects first, in the log), and saves at most every 200 ms.
   * `beforeDone` runs at the moment the batch is counted done, with nothing in between (the batch's lines of
   * the --condition-failures file), so that no save records one without the other.
   */
  async complete(index: number, batch: BatchDone, rejects: readonly WriteRejectEntry[], beforeDone?: () => void): Promise<void> {
    if (this.progress.isDone(index)) return;
    if (!this.#rejectLog) throw new Error(`checkpoint ${this.path} is finished and cannot record batches`);
    await this.#rejectLog.append(rejects);
    for (const entry of rejects) this.#firstRejectBatch = Math.min(this.#firstRejectBatch, entry.batch);
    if (this.progress.isDone(index)) return;
    beforeDone?.();
    if (!this.progress.complete(index, batch)) return;
    const since = performance.now() - this.#lastSave;
    if (since >= SAVE_EVERY_MS) void this.save('running').catch(() => undefined);
    // A later save catches this batch even when no other batch finishes soon after (a slow tail).
    else this.#timer ??= setTimeout(() => void this.save('running').catch(() => undefined), SAVE_EVERY_MS - since).unref();
  }

  /** Saves the state now (serialised behind any save under way); a finished load records its `outcome`. */
  save(status: CheckpointFile['status'], outcome?: LoadOutcome): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#lastSave = performance.now();
    // A later restart point became usable: the manifest is saved first, with the keys of every batch done.
    const saveManifest = this.#saveManifest;
    const done = this.progress.batchesDone;
    const manifestDue =
      saveManifest !== undefined &&
      !this.#manifestPending &&
      done > this.#manifestCovers &&
      (status !== 'running' || (resumePoint(this.#restarts, done, this.#firstRejectBatch, this.#rejectsKept)?.batch ?? 0) > this.#manifestCovers);
    // The manifest's batches count only once it is saved: a save that fails (a full disk) leaves them as they were.
    if (manifestDue) this.#manifestPending = true;
    // The state as of now; the log's bytes include every reject of the batches it counts (appended first).
    let file: CheckpointFile = {
      ...this.#file,
      status,
      updatedAt: new Date().toISOString(),
      batchesDone: this.progress.batchesDone,
      doneAbove: this.progress.doneAbove,
      ...this.progress.totals,
      writeRejectLogBytes: this.#rejectLog?.bytes ?? this.#file.writeRejectLogBytes,
      restarts: (this.#restarts = restartPointsKept(this.#restarts, this.#usableMark, this.#firstRejectBatch, this.#rejectsKept)),
      ...(Number.isFinite(this.#manifestCovers) ? { manifestBatches: this.#manifestCovers } : {}),
      // Every reject of a batch counted done here was handed to the file before the batch was (dispatcher.ts).
      ...(this.#rejectFile ? { rejectsFile: this.#rejectFile.state() } : {}),
      // Its lines of the batches counted here were handed on as each was counted (complete's beforeDone).
      ...(this.#conditionFailures ? { conditionFailuresFile: this.#conditionFailures.state() } : {}),
      ...(outcome ? { outcome } : {}),
    };
    this.#file = file;
    const rejectFile = this.#rejectFile;
    const conditionFailures = this.#conditionFailures;
    const next = this.#saving.then(async () => {
      try {
        await this.#rejectLog?.sync();
      } catch (error) {
        throw unwritable(this.path, error);
      }
      // The reject file's own errors are its own (REJECTS_UNWRITABLE), and the manifest's (MANIFEST_UNWRITABLE).
      await rejectFile?.settle();
      await conditionFailures?.settle();
      if (manifestDue) {
        try {
          await saveManifest();
          // Every batch before `done` had booked its keys when this save began; keys are only ever added.
          this.#manifestCovers = Math.max(this.#manifestCovers, done);
          file = { ...file, manifestBatches: this.#manifestCovers };
        } finally {
          this.#manifestPending = false;
        }
      }
      await writeDurably(this.path, `${JSON.stringify(file)}\n`);
    });
    this.#saving = next.catch(() => undefined);
    return next;
  }

  /** Saves with `status` (and a finished load's `outcome`), then closes the write-reject log. */
  async close(status: CheckpointFile['status'], outcome?: LoadOutcome): Promise<void> {
    try {
      await this.save(status, outcome);
    } finally {
      await this.#rejectLog?.close().catch(() => undefined);
    }
  }
}

/**
 * A set of parts checked part by part against a checkpoint: a part whose time differs is
 * hashed and must hash as recorded, whatever the other parts' times. A set checkpoint of a ddb-spread before
 * this recorded only the newest time of all its parts, which misses an older part changed in place: it is
 * refused (a set of one part is read with the old rule, which holds for one file). Returns the set as found,
 * with the checkpoint's hash for the whole when every part matched.
 */
async function partsChecked(
  saved: InputIdentity,
  found: InputIdentity,
  hashPart: ((index: number) => Promise<string>) | undefined,
  path: string,
): Promise<InputIdentity> {
  const foundParts = found.parts!;
  if (saved.parts === undefined)
    throw new LoaderError(
      'CHECKPOINT_MISMATCH',
      `checkpoint ${path} was written by an earlier ddb-spread, which did not record each input file of a set, so a file changed since cannot be told apart; delete ${path} (or pass another --checkpoint) to start over`,
      { file: path },
    );
  const parts: PartIdentity[] = [];
  for (const [i, part] of foundParts.entries()) {
    const before = saved.parts[i];
    const same = before !== undefined && before.name === part.name && before.size === part.size && before.edges === part.edges;
    const hash = !same ? undefined : before.mtimeMs === part.mtimeMs ? before.hash : await hashPart?.(i);
    parts.push({ ...part, ...(hash === undefined ? {} : { hash }) });
  }
  const refusal = partsRefusal(saved.parts, parts, path);
  if (refusal) throw new LoaderError('CHECKPOINT_MISMATCH', refusal, { file: path });
  return { ...found, parts, ...(saved.sha256 === undefined ? {} : { sha256: saved.sha256 }) };
}

/**
 * Why a checkpoint must not go on into this table: it loaded another table of the same name, since deleted
 * and created again, so the rows it counts as written are not in this one (a finished checkpoint would say
 * "nothing to do" over an empty table). Undefined when it is the same table, or either is unknown.
 */
function tableRefusal(saved: CheckpointFile, table: { name: string; identity: string } | undefined, path: string): string | undefined {
  if (!table || saved.tableIdentity === undefined || saved.tableIdentity === table.identity) return undefined;
  return `checkpoint ${path} loaded another table named ${table.name} (${saved.tableIdentity}; this one: ${table.identity}): the table was deleted and created again since, so the rows the checkpoint counts as written are not in it; delete ${path} (or pass another --checkpoint) to load the input into this table`;
}

async function writeDurably(path: string, text: string): Promise<void> {
  try {
    // 0600, a new temporary file, no symlink followed: the checkpoint says which input was loaded where.
    await writePrivateFileAtomically(path, text, true);
  } catch (error) {
    throw unwritable(path, error);
  }
}

function unwritable(path: string, error: unknown): LoaderError {
  return new LoaderError('CHECKPOINT_UNWRITABLE', `cannot write checkpoint ${path}: ${(error as Error).message}; pass --checkpoint with a writable path`, {
    file: path,
    cause: error,
  });
}
