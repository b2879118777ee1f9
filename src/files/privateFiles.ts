import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LoaderError } from '../shared/errors.js';

/**
 * The files a load writes hold its rows (reject file, checkpoint, manifest, report, the order's temporary
 * files): each is created private to the user (0600) and never through a symlink, and replaced atomically
 * where a reader must never see half of it.
 */

const { O_WRONLY, O_CREAT, O_TRUNC, O_EXCL, O_NOFOLLOW } = constants;
const PRIVATE = 0o600;

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

/**
 * Writes JSON next to its target and renames it, so a reader never sees half a file (--report, the
 * shard manifest); private (0600), never through a symlink. A failure becomes `failure(error)`, or a
 * LoaderError naming `flag`.
 */
export async function writeJsonAtomically(path: string, value: unknown, flag: string, failure?: (error: Error) => LoaderError): Promise<void> {
  try {
    await writePrivateFileAtomically(path, `${JSON.stringify(value, null, 2)}\n`);
  } catch (error) {
    throw (
      failure?.(error as Error) ??
      new LoaderError('INVALID_OPTION', `cannot write ${flag} ${path}: ${(error as Error).message}; choose another path`, { file: path, cause: error })
    );
  }
}
