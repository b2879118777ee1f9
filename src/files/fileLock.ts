import { readFileSync, unlinkSync } from 'node:fs';
import { readFile, stat, unlink, utimes, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { LoaderError, type FatalCode } from '../shared/errors.js';
import { createNewPrivateFile } from './privateFiles.js';

/** A file named by an option: `code` is the error a problem with it raises (INVALID_OPTION by default). */
export interface NamedFile {
  option: string;
  path: string;
  code?: FatalCode;
}

/** A held lock is touched this often... */
const LOCK_HEARTBEAT_MS = 30_000;
/** ...so one from another host untouched for this long is a leftover of a machine or container that is gone. */
export const LOCK_STALE_MS = 5 * 60_000;
/** Lock files this process holds (two load() calls in one process are two holders too). */
const heldHere = new Set<string>();

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
