import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BatchProgress, CHECKPOINT_VERSION, resumeRefusal, type BatchDone, type CheckpointFile, type InputIdentity } from '../core/checkpointState.js';
import { LoaderError } from '../core/errors.js';

/** Saves at most this often while batches finish; every stop saves at once. */
const SAVE_EVERY_MS = 200;

/**
 * The checkpoint file (--checkpoint): opened before the first row, saved while the load runs and at
 * every stop. Each save writes a temporary file, fsyncs it, renames it over the checkpoint and fsyncs the
 * folder, so a crash or a power cut leaves either the old state or the new one, never half a file.
 */
export class CheckpointStore {
  readonly progress: BatchProgress;
  #file: CheckpointFile;
  #lastSave = 0;
  #saving: Promise<void> = Promise.resolve();

  private constructor(readonly path: string, file: CheckpointFile) {
    this.#file = file;
    this.progress = new BatchProgress(file);
  }

  /** True when this run continues an earlier one (the file existed). */
  resumed = false;

  get file(): Readonly<CheckpointFile> {
    return this.#file;
  }

  /**
   * Opens `path`: a new checkpoint when there is none, or the saved one when it matches this input and
   * these options (a LoaderError CHECKPOINT_MISMATCH otherwise, saying what differs and how to start over).
   */
  static async open(path: string, input: InputIdentity, options: Record<string, unknown>, shardSeed: number | undefined): Promise<CheckpointStore> {
    let text: string | undefined;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unwritable(path, error);
    }
    if (text === undefined) {
      const now = new Date().toISOString();
      const store = new CheckpointStore(path, {
        version: CHECKPOINT_VERSION,
        status: 'running',
        createdAt: now,
        updatedAt: now,
        input,
        options,
        shardSeed,
        batchesDone: 0,
        written: 0,
        plannedWcu: 0,
        consumedWcu: 0,
        writeRejects: [],
        writeRejectsNotKept: 0,
      });
      // Written at once: a bad path fails before any row, and a crash in the first second leaves a file.
      await store.save('running');
      return store;
    }
    let saved: CheckpointFile;
    try {
      saved = JSON.parse(text) as CheckpointFile;
    } catch (error) {
      throw new LoaderError('CHECKPOINT_MISMATCH', `checkpoint ${path} is not a ddb-spread checkpoint (${(error as Error).message}); delete it or pass another --checkpoint`, { file: path, cause: error });
    }
    const refusal = resumeRefusal(saved, input, options, path);
    if (refusal) throw new LoaderError('CHECKPOINT_MISMATCH', refusal, { file: path });
    const store = new CheckpointStore(path, saved);
    store.resumed = true;
    return store;
  }

  /** Records batch `index` as done, and saves when the low-water mark moved and the last save is 200 ms old. */
  complete(index: number, batch: BatchDone): void {
    if (!this.progress.complete(index, batch)) return;
    if (performance.now() - this.#lastSave >= SAVE_EVERY_MS) void this.save('running').catch(() => undefined);
  }

  /** Saves the state now (serialised behind any save under way). */
  save(status: CheckpointFile['status']): Promise<void> {
    this.#lastSave = performance.now();
    const file: CheckpointFile = {
      ...this.#file,
      status,
      updatedAt: new Date().toISOString(),
      batchesDone: this.progress.batchesDone,
      ...this.progress.totals,
    };
    this.#file = file;
    const next = this.#saving.then(() => writeDurably(this.path, `${JSON.stringify(file)}\n`));
    this.#saving = next.catch(() => undefined);
    return next;
  }
}

async function writeDurably(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    // The rename is durable once the folder is synced (ext4 and friends).
    const folder = await open(dirname(path), 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  } catch (error) {
    throw unwritable(path, error);
  }
}

function unwritable(path: string, error: unknown): LoaderError {
  return new LoaderError('CHECKPOINT_UNWRITABLE', `cannot write checkpoint ${path}: ${(error as Error).message}; pass --checkpoint with a writable path`, { file: path, cause: error });
}
