import { randomBytes } from 'node:crypto';
import { constants, readFileSync, unlinkSync } from 'node:fs';
import { access, lstat, open, readFile, realpath, rename, stat, unlink, utimes, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { LoaderError, type FatalCode } from '../shared/errors.js';
import type { NormalizedLoadOptions } from './options.js';
import { defaultOutputPath, findOutputConflict, type ResolvedFile } from './outputPaths.js';

/**
 * The files a load writes (reject file, shard manifest, checkpoint, report, the order's temporary files):
 * checked before the first row is read, created private (0600) without following a symlink, and the
 * reject file locked against a second process. Rows are in these files, and a path mistaken for the
 * input destroyed the input while it was read (issue 11).
 */

/** A file named by an option: `code` is the error a problem with it raises (INVALID_OPTION by default). */
export interface NamedFile {
  option: string;
  path: string;
  code?: FatalCode;
}

const { O_WRONLY, O_CREAT, O_TRUNC, O_EXCL, O_NOFOLLOW } = constants;
/** A held lock is touched this often... */
const LOCK_HEARTBEAT_MS = 30_000;
/** ...so one from another host untouched for this long is a leftover of a machine or container that is gone. */
export const LOCK_STALE_MS = 5 * 60_000;
/** Lock files this process holds (two load() calls in one process are two holders too). */
const heldHere = new Set<string>();
const PRIVATE = 0o600;

interface Inspected extends ResolvedFile {
  /** What lstat saw at the path itself. */
  kind: 'missing' | 'file' | 'directory' | 'symlink' | 'other';
}

async function inspect(file: NamedFile): Promise<Inspected> {
  const absolute = resolve(file.path);
  let kind: Inspected['kind'];
  try {
    const info = await lstat(absolute);
    kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other';
  } catch {
    kind = 'missing';
  }
  let resolved: string;
  let inode: string | undefined;
  try {
    resolved = await realpath(absolute);
    const info = await stat(resolved);
    inode = `${info.dev}:${info.ino}`;
  } catch {
    // Not there (or a dangling link): the folder's real path and the name.
    resolved = await realpath(dirname(absolute)).then(
      (folder) => join(folder, basename(absolute)),
      () => absolute,
    );
  }
  return { option: file.option, path: file.path, resolved, inode, kind };
}

/**
 * Refuses, before anything is read or written, outputs that cannot be written safely: one that is a file
 * read (the input, by path, symlink or hard link), two outputs that are one file, a symlink, a folder or
 * anything but a regular file, and a path whose folder is missing or not writable. Each refusal is a
 * LoaderError naming the option, the path and what to do.
 */
export async function checkOutputFiles(reads: readonly NamedFile[], writes: readonly NamedFile[]): Promise<void> {
  const readFiles = await Promise.all(reads.filter((r) => r.path !== '-').map(inspect));
  const writeFiles = await Promise.all(writes.map(inspect));
  const conflict = findOutputConflict(readFiles, writeFiles);
  if (conflict) throw new LoaderError('INVALID_OPTION', conflict, { file: writeFiles.find((w) => conflict.startsWith(`${w.option} ${w.path} `))?.path });
  for (const [i, file] of writeFiles.entries()) {
    const code = writes[i]!.code ?? 'INVALID_OPTION';
    const refuse = (why: string, cause?: unknown) =>
      new LoaderError(code, `${file.option} ${file.path} ${why}`, { file: file.path, ...(cause === undefined ? {} : { cause }) });
    if (file.kind === 'symlink')
      throw refuse(`is a symbolic link; ddb-spread never writes through a link (it could point anywhere): give the real path, or remove the link`);
    if (file.kind === 'directory') throw refuse('is a folder: give a file path');
    if (file.kind === 'other') throw refuse('is not a regular file: give the path of a file');
    const folder = dirname(resolve(file.path));
    try {
      if (!(await stat(folder)).isDirectory()) throw refuse(`cannot be created: ${folder} is not a folder; choose another path for ${file.option}`);
      await access(folder, constants.W_OK);
      if (file.kind === 'file') await access(file.path, constants.W_OK);
    } catch (error) {
      if (error instanceof LoaderError) throw error;
      const errno = (error as NodeJS.ErrnoException).code;
      if (errno === 'ENOENT' || errno === 'ENOTDIR')
        throw refuse(`cannot be created: the folder ${folder} does not exist; create it or choose another path for ${file.option}`, error);
      throw refuse(`is not writable (${errno ?? (error as Error).message}); choose a writable path for ${file.option}`, error);
    }
  }
}

/** Files a caller of load() reads or will write besides load's own (the CLI's --schema, --config, --report). */
export interface CallerFiles {
  reads?: NamedFile[];
  writes?: NamedFile[];
}

/**
 * Everything load() does with its output files before the first row: the checks above over the input,
 * the reject file, the manifest, the checkpoint and the caller's files; a dry run's guard; then the lock
 * on the reject file, which the caller releases when the load ends.
 */
export async function prepareOutputFiles(opts: NormalizedLoadOptions, dryRun: boolean, caller: CallerFiles = {}): Promise<FileLock> {
  const rejects: NamedFile = { option: '--rejects', path: opts.rejectsPath, code: 'REJECTS_UNWRITABLE' };
  const writes: NamedFile[] = [rejects];
  if (opts.shard && !dryRun) writes.push({ option: '--shard-manifest', path: opts.shard.manifestPath, code: 'MANIFEST_UNWRITABLE' });
  if (opts.checkpointPath && !dryRun) writes.push({ option: '--checkpoint', path: opts.checkpointPath, code: 'CHECKPOINT_UNWRITABLE' });
  // Its write-reject log (CheckpointStore.rejectLogPath) is created, emptied, beside it: an output too.
  if (opts.checkpointPath && !dryRun)
    writes.push({ option: 'the write-reject log of --checkpoint', path: `${opts.checkpointPath}.write-rejects`, code: 'CHECKPOINT_UNWRITABLE' });
  writes.push(...(caller.writes ?? []));
  const inputs = opts.inputs.filter((input) => !input.startsWith('s3://')).map((path) => ({ option: 'the input', path }));
  await checkOutputFiles([...inputs, ...(caller.reads ?? [])], writes);
  if (dryRun) await checkDryRunOutput(rejects, defaultOutputPath(opts.inputs[0]!, 'rejects', { segment: opts.segment, dryRun: true }));
  return FileLock.acquire(rejects);
}

/**
 * A dry run never overwrites an existing file other than its own default reject file: a real load's reject
 * file may be the only list of rows missing from the table (issue 11.8). Empty files are fine.
 */
export async function checkDryRunOutput(file: NamedFile, ownDefault: string): Promise<void> {
  if (resolve(file.path) === resolve(ownDefault)) return;
  const info = await stat(file.path).catch(() => undefined);
  if (info && info.size > 0) {
    throw new LoaderError(
      'INVALID_OPTION',
      `${file.option} ${file.path} exists (it may hold the rows a real load rejected); a dry run never overwrites a file: leave ${file.option} out (a dry run writes ${ownDefault}), choose a new path, or remove the file`,
      { file: file.path },
    );
  }
}

/**
 * Creates (or truncates) `path` for writing, private to the user (0600, also when it existed with a wider
 * mode), and never through a symlink (O_NOFOLLOW: a link planted at the path is an error, its target untouched).
 */
export async function createPrivateFile(path: string): Promise<FileHandle> {
  const handle = await open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, PRIVATE);
  try {
    await handle.chmod(PRIVATE);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** Creates a new private file (0600) that must not exist yet, never through a symlink (the order's temporary files). */
export function createNewPrivateFile(path: string): Promise<FileHandle> {
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, PRIVATE);
}

/**
 * Replaces `path` with `text` atomically: a new private temporary file beside it (O_EXCL | O_NOFOLLOW, 0600)
 * renamed over it, so a reader never sees half a file. rename() replaces a symlink at `path` rather than
 * writing through it. `durable`: fsync the file and the folder, so a power cut leaves the old or the new one.
 */
export async function writePrivateFileAtomically(path: string, text: string, durable = false): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await createNewPrivateFile(temporary);
  try {
    try {
      await handle.writeFile(text);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  if (durable) {
    // The rename is durable once the folder is synced (ext4 and friends).
    const folder = await open(dirname(path), 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  }
}

/** Who holds a lock: written into the lock file. */
interface LockHolder {
  pid: number;
  host: string;
  /** Linux: the holder's start time in clock ticks since boot (/proc/<pid>/stat), so a reused pid is told apart. */
  startTicks?: string;
  since: string;
}

/**
 * An exclusive lock on a file for the life of a load: `<path>.lock`, created with O_EXCL, holding pid and
 * host, and touched every 30 s while held. A second process is refused before it reads a row. A lock left
 * by a process that died on this host (kill -9) is taken over at once; one from another host (a pod
 * replaced on another node) once it has not been touched for 5 minutes.
 */
export class FileLock {
  #onExit: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  /** `text`: what this lock wrote, so release() removes the lock only while it is still this one. */
  private constructor(
    readonly lockPath: string,
    readonly text: string,
  ) {}

  static async acquire(file: NamedFile): Promise<FileLock> {
    const lockPath = `${file.path}.lock`;
    const holder: LockHolder = { pid: process.pid, host: hostname(), ...startTicksOf(process.pid), since: new Date().toISOString() };
    for (let attempt = 0; ; attempt++) {
      let handle: FileHandle;
      try {
        handle = await createNewPrivateFile(lockPath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
          throw new LoaderError(
            file.code ?? 'INVALID_OPTION',
            `cannot lock ${file.option} ${file.path} (${lockPath}): ${(error as Error).message}; choose a writable path for ${file.option}`,
            { file: file.path, cause: error },
          );
        }
        const text = await readFile(lockPath, 'utf8').catch(() => '');
        const other = parseHolder(text);
        const touchedMs = (await stat(lockPath).catch(() => undefined))?.mtimeMs ?? Date.now();
        // A lock with this process's pid that it does not hold is a leftover of an earlier process (a
        // restarted container gives its processes the same pids).
        const held = other && (other.pid === process.pid && other.host === hostname() ? heldHere.has(resolve(lockPath)) : isAlive(other, touchedMs));
        if (other && !held) {
          // Left by a process that is gone; removed only if it is still that process's lock.
          if ((await readFile(lockPath, 'utf8').catch(() => '')) === text) await unlink(lockPath).catch(() => undefined);
          continue;
        }
        const who = other ? `process ${other.pid} on ${other.host} (since ${other.since})` : 'another process';
        throw new LoaderError(
          'OUTPUT_LOCKED',
          `${file.option} ${file.path} is in use by ${who}: two loads never write one file; give this one its own ${file.option}, or wait for the other to finish${other?.host === hostname() ? '' : ` (a lock from another host untouched for ${LOCK_STALE_MS / 60_000} minutes is taken over; if that process is gone, you may delete ${lockPath})`}`,
          { file: file.path },
        );
      }
      const text = `${JSON.stringify(holder)}\n`;
      try {
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      const lock = new FileLock(lockPath, text);
      heldHere.add(resolve(lockPath));
      // process.exit (a second Ctrl-C, --stop-timeout) skips every finally: the lock goes with the process.
      lock.#onExit = () => {
        try {
          unlinkSync(lockPath);
        } catch {
          // Already gone.
        }
      };
      process.once('exit', lock.#onExit);
      lock.#heartbeat = setInterval(() => {
        const now = new Date();
        void utimes(lockPath, now, now).catch(() => undefined);
      }, LOCK_HEARTBEAT_MS).unref();
      return lock;
    }
  }

  async release(): Promise<void> {
    if (!this.#onExit) return;
    clearInterval(this.#heartbeat);
    heldHere.delete(resolve(this.lockPath));
    process.off('exit', this.#onExit);
    this.#onExit = undefined;
    // Another process may have taken it over meanwhile (it looked stale): its lock stays.
    if ((await readFile(this.lockPath, 'utf8').catch(() => undefined)) === this.text) await unlink(this.lockPath).catch(() => undefined);
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string') return { since: '?', ...value } as LockHolder;
  } catch {
    // Unreadable: being written at this moment, or damaged; treated as held.
  }
  return undefined;
}

function isAlive(holder: LockHolder, touchedMs: number): boolean {
  // Another host's processes cannot be seen from here: its lock lives while it is touched.
  if (holder.host !== hostname()) return Date.now() - touchedMs < LOCK_STALE_MS;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // The pid runs; on Linux it is the holder only if it started when the holder did.
  const now = startTicksOf(holder.pid).startTicks;
  return holder.startTicks === undefined || now === undefined || now === holder.startTicks;
}

function startTicksOf(pid: number): { startTicks?: string } {
  if (process.platform !== 'linux') return {};
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) is in parentheses and may hold spaces.
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return ticks ? { startTicks: ticks } : {};
  } catch {
    return {};
  }
}
