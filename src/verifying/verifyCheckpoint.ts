import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { PartIdentity } from '../checkpointing/checkpointState.js';
import { FileLock } from '../files/fileLock.js';
import { fingerprintFile } from '../files/fingerprintFile.js';
import { hashFile } from '../files/hashFile.js';
import { writePrivateFileAtomically } from '../files/privateFiles.js';
import { LoaderError } from '../shared/errors.js';
import type { Difference, Outcome } from './verifyResult.js';

export const VERIFY_CHECKPOINT_KIND = 'ddb-spread verify';
export const VERIFY_CHECKPOINT_VERSION = 1;

/**
 * How far a verify got, as its checkpoint records it. The second pass numbers the dry run's planned writes
 * in input order (the same numbers on every run of the same input and options); `done` is how many of them,
 * from the first, have their fate recorded here: the counts, the examples and the first `differences.bytes`
 * bytes of the differences file are those of exactly these writes. A resumed verify reads the input again
 * (the first pass, and the second up to `done` without reading the table) and checks from `done` on.
 */
export interface VerifyProgress {
  /** The first pass's planned writes (a resume whose first pass plans another number read another input). */
  planned: number;
  done: number;
  writes: { checked: number; superseded: number; notSampled: number };
  outcomes: Record<Outcome, number>;
  /** The differences file's first `bytes` bytes (their SHA-256), holding `count` records. */
  differences: { bytes: number; count: number; sha256?: string };
  examples: Difference[];
  /** The reads of every run of this verify so far. */
  reads: { calls: number; keys: number; consumedRcu: number };
}

export interface VerifyCheckpointFile extends VerifyProgress {
  kind: typeof VERIFY_CHECKPOINT_KIND;
  version: number;
  status: 'running' | 'stopped' | 'complete';
  createdAt: string;
  updatedAt: string;
  /** Every input file: name, size, modification time and the SHA-256 of its first and last 64 KB. */
  input: PartIdentity[];
  /** The options that decide the outcomes (the load's write-affecting ones, the sample, the pinned --skip-expired time, ...). */
  options: Record<string, unknown>;
  /** The table read (TableInfo.identity), once known: a table deleted and created again is another. */
  tableIdentity?: string;
}

/** Saved at most this often while the verify goes on; every stop saves at once. */
export const VERIFY_SAVE_EVERY_MS = 1000;

/** Where a verify keeps its checkpoint, given the load's --checkpoint: beside it, never over it (verify reads the load's). */
export const verifyCheckpointPath = (checkpoint: string) => `${checkpoint}.verify`;

/**
 * A verify's checkpoint: locked for the run (two verifies on one file would cut each other's differences),
 * opened against the input's identity and the options, saved atomically (a new private 0600 file, fsynced,
 * renamed over the old, the folder fsynced), after the differences file is fsynced up to the bytes it records.
 */
export class VerifyCheckpoint {
  #saving: Promise<void> = Promise.resolve();
  #lastSave = 0;

  private constructor(
    readonly path: string,
    private file: VerifyCheckpointFile,
    private readonly lock: FileLock,
    /** The progress an earlier run saved; undefined for a new checkpoint. */
    readonly resumed: VerifyProgress | undefined,
  ) {}

  /**
   * Opens (and locks) `path`: the saved progress when it is this input's and these options', nothing when
   * there is no file or the one there finished (a finished verify is run again from the start: the table may
   * have changed since). Another input or other options: CHECKPOINT_MISMATCH (exit 78), saying what differs.
   */
  static async open(path: string, inputs: readonly string[], options: Record<string, unknown>): Promise<VerifyCheckpoint> {
    const lock = await FileLock.acquire({ option: '--checkpoint', path, code: 'CHECKPOINT_UNWRITABLE' });
    try {
      const input = await identityOf(inputs);
      let text: string | undefined;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unwritable(path, error);
      }
      const saved = text === undefined ? undefined : parseVerifyCheckpoint(text, path);
      if (saved && saved.status !== 'complete') {
        // The modification time is a hint: changed (a copy of the same bytes, a touch), the content must hash as recorded.
        for (const [i, part] of input.entries()) {
          const before = saved.input[i];
          if (before?.name === part.name && before.size === part.size && before.edges === part.edges)
            part.hash = before.mtimeMs === part.mtimeMs ? before.hash : await hashFile(part.name);
        }
        const refusal = refusalOf(saved, input, options, path);
        if (refusal) throw new LoaderError('CHECKPOINT_MISMATCH', refusal, { file: path });
        return new VerifyCheckpoint(path, { ...saved, input }, lock, progressOf(saved));
      }
      // Each file's SHA-256, as a load's checkpoint records it: a resume tells a file changed in place by it.
      for (const part of input) part.hash = await hashFile(part.name);
      const now = new Date().toISOString();
      const fresh: VerifyCheckpointFile = {
        kind: VERIFY_CHECKPOINT_KIND,
        version: VERIFY_CHECKPOINT_VERSION,
        status: 'running',
        createdAt: now,
        updatedAt: now,
        input,
        options,
        planned: -1,
        done: 0,
        writes: { checked: 0, superseded: 0, notSampled: 0 },
        outcomes: { matched: 0, absent: 0, missing: 0, different: 0, deletedButPresent: 0, rejectedButPresent: 0, extra: 0, expired: 0, conditionKept: 0 },
        differences: { bytes: 0, count: 0 },
        examples: [],
        reads: { calls: 0, keys: 0, consumedRcu: 0 },
      };
      const store = new VerifyCheckpoint(path, fresh, lock, undefined);
      // Written at once: a bad path fails before the input is read.
      await store.save('running', fresh);
      return store;
    } catch (error) {
      await lock.release().catch(() => undefined);
      throw error;
    }
  }

  /** The table read, checked against the one the saved progress was made on. */
  checkTable(name: string, identity: string | undefined): void {
    if (this.resumed && this.file.tableIdentity !== undefined && identity !== undefined && this.file.tableIdentity !== identity)
      throw new LoaderError(
        'CHECKPOINT_MISMATCH',
        `checkpoint ${this.path} verified another table named ${name} (${this.file.tableIdentity}; this one: ${identity}): it was deleted and created again since; delete ${this.path} to verify this one from the start`,
        { file: this.path },
      );
    if (identity !== undefined) this.file = { ...this.file, tableIdentity: identity };
  }

  /** Whether a save is due (the last one was at least VERIFY_SAVE_EVERY_MS ago). */
  get due(): boolean {
    return performance.now() - this.#lastSave >= VERIFY_SAVE_EVERY_MS;
  }

  /**
   * Saves `progress` (taken now; `beforeWrite` runs first, e.g. the differences file's fsync), serialised
   * behind any save under way. A save's failure is the returned promise's.
   */
  save(status: VerifyCheckpointFile['status'], progress: VerifyProgress, beforeWrite?: () => Promise<void>): Promise<void> {
    this.#lastSave = performance.now();
    const file: VerifyCheckpointFile = { ...this.file, ...structuredClone(progressOf(progress)), status, updatedAt: new Date().toISOString() };
    this.file = file;
    const next = this.#saving.then(async () => {
      await beforeWrite?.();
      try {
        await writePrivateFileAtomically(this.path, `${JSON.stringify(file)}\n`, true);
      } catch (error) {
        throw unwritable(this.path, error);
      }
    });
    this.#saving = next.catch(() => undefined);
    return next;
  }

  /** Waits for the saves under way, then lets the lock go. */
  async release(): Promise<void> {
    await this.#saving;
    await this.lock.release().catch(() => undefined);
  }
}

/**
 * The --skip-expired time an unfinished verify checkpoint at `path` pinned, if any: a resume judges the rows'
 * expiry at the same time as the run it goes on from. Unreadable or finished: undefined (open() says what is wrong).
 */
export async function savedExpiredAt(path: string): Promise<number | undefined> {
  try {
    const saved = JSON.parse(await readFile(path, 'utf8')) as { kind?: unknown; status?: unknown; options?: { skipExpired?: { at?: unknown } } };
    const at = saved.options?.skipExpired?.at;
    return saved.kind === VERIFY_CHECKPOINT_KIND && saved.status !== 'complete' && typeof at === 'number' && Number.isSafeInteger(at) ? at : undefined;
  } catch {
    return undefined;
  }
}

function progressOf(saved: VerifyProgress): VerifyProgress {
  const { planned, done, writes, outcomes, differences, examples, reads } = saved;
  return { planned, done, writes, outcomes, differences, examples, reads };
}

/** A verify checkpoint's text, checked for the fields a resume relies on; CHECKPOINT_INVALID otherwise. */
export function parseVerifyCheckpoint(text: string, path: string): VerifyCheckpointFile {
  const invalid = (why: string) =>
    new LoaderError('CHECKPOINT_INVALID', `${path} is not a verify checkpoint ddb-spread can resume (${why}); delete it to verify from the start`, {
      file: path,
    });
  let parsed: Partial<VerifyCheckpointFile>;
  try {
    parsed = JSON.parse(text) as Partial<VerifyCheckpointFile>;
  } catch (error) {
    throw invalid(`not JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || parsed.kind !== VERIFY_CHECKPOINT_KIND) throw invalid('it is not a verify checkpoint');
  if (parsed.version !== VERIFY_CHECKPOINT_VERSION) throw invalid(`format ${String(parsed.version)}, this ddb-spread reads ${VERIFY_CHECKPOINT_VERSION}`);
  const count = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  const ok =
    ['running', 'stopped', 'complete'].includes(parsed.status as string) &&
    Array.isArray(parsed.input) &&
    parsed.options !== null &&
    typeof parsed.options === 'object' &&
    typeof parsed.planned === 'number' &&
    count(parsed.done) &&
    parsed.writes !== undefined &&
    count(parsed.writes.checked) &&
    count(parsed.writes.superseded) &&
    count(parsed.writes.notSampled) &&
    parsed.outcomes !== undefined &&
    Object.values(parsed.outcomes).every(count) &&
    parsed.differences !== undefined &&
    count(parsed.differences.bytes) &&
    count(parsed.differences.count) &&
    Array.isArray(parsed.examples) &&
    parsed.reads !== undefined &&
    parsed.writes.checked + parsed.writes.superseded + parsed.writes.notSampled === parsed.done;
  if (!ok) throw invalid('a field is missing or its counts do not add up');
  return parsed as VerifyCheckpointFile;
}

/** Why a saved verify must not go on with this input and these options (undefined: it may). Pure. */
export function refusalOf(saved: VerifyCheckpointFile, input: readonly PartIdentity[], options: Record<string, unknown>, path: string): string | undefined {
  const startOver = `delete ${path} to verify from the start`;
  if (saved.input.length !== input.length)
    return `the input is not the one of checkpoint ${path} (${saved.input.length} files then, ${input.length} now); ${startOver}`;
  for (const [i, part] of input.entries()) {
    const before = saved.input[i]!;
    if (before.name !== part.name) return `the input is not the one of checkpoint ${path} (${before.name} then, ${part.name} now); ${startOver}`;
    if (before.size !== part.size || before.edges !== part.edges)
      return `the input ${part.name} changed since checkpoint ${path} was written (size ${before.size} -> ${part.size} bytes${before.size === part.size ? ', its first or last 64 KB differ' : ''}); ${startOver}`;
    if (before.hash !== undefined && part.hash !== undefined ? before.hash !== part.hash : before.mtimeMs !== part.mtimeMs)
      return `the input ${part.name} changed since checkpoint ${path} was written (same size, but ${before.hash !== undefined && part.hash !== undefined ? 'its SHA-256 differs' : 'its modification time differs'}); ${startOver}`;
  }
  for (const key of new Set([...Object.keys(saved.options), ...Object.keys(options)])) {
    const before = JSON.stringify(saved.options[key] ?? null);
    const now = JSON.stringify(options[key] ?? null);
    if (before !== now) return `option ${key} differs from checkpoint ${path} (${before} then, ${now} now); resume with the same options, or ${startOver}`;
  }
  return undefined;
}

/**
 * The input files as a verify checkpoint records them: each local file, and each file of a folder (sorted),
 * by resolved path, size, modification time and edges (and, for the checkpoint, its SHA-256). S3 inputs and patterns are refused: a verify cannot
 * yet tell them changed.
 */
async function identityOf(inputs: readonly string[]): Promise<PartIdentity[]> {
  const parts: PartIdentity[] = [];
  const add = async (path: string): Promise<void> => {
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory()) {
      for (const entry of (await readdir(path)).sort()) await add(join(path, entry));
      return;
    }
    if (!info?.isFile())
      throw new LoaderError(
        'INVALID_OPTION',
        `verify --checkpoint takes local files and folders, whose changes it can tell; ${path} is neither (S3 and patterns are not supported yet): verify without --checkpoint`,
      );
    const found = (await fingerprintFile(path))!;
    parts.push({ name: resolve(path), size: found.size, mtimeMs: found.mtimeMs, edges: found.edgesSha256 });
  };
  for (const input of inputs) await add(input);
  return parts;
}

function unwritable(path: string, error: unknown): LoaderError {
  return new LoaderError('CHECKPOINT_UNWRITABLE', `cannot write checkpoint ${path}: ${(error as Error).message}; pass --checkpoint with a writable path`, {
    file: path,
    cause: error,
  });
}
