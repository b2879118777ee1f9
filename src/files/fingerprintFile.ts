import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { LoaderError } from '../shared/errors.js';
import { writePrivateFileAtomically } from '../load/outputFiles.js';

/**
 * Identifies an input file without reading it all: size, modification time, and a SHA-256 of its first
 * and last 64 KB. A resumed or reported load can then tell "the same file" from "a file changed since".
 */
export interface InputFingerprint {
  path: string;
  size: number;
  mtimeMs: number;
  /** SHA-256 (hex) of the first and the last 64 KB. */
  edgesSha256: string;
}

const EDGE = 64 * 1024;

export async function fingerprintFile(path: string): Promise<InputFingerprint | undefined> {
  if (path === '-') return undefined;
  const info = await stat(path);
  const handle = await open(path, 'r');
  try {
    const hash = createHash('sha256');
    const head = Buffer.alloc(Math.min(EDGE, info.size));
    await handle.read(head, 0, head.length, 0);
    hash.update(head);
    if (info.size > EDGE) {
      const tail = Buffer.alloc(Math.min(EDGE, info.size - EDGE));
      await handle.read(tail, 0, tail.length, info.size - tail.length);
      hash.update(tail);
    }
    return { path, size: info.size, mtimeMs: info.mtimeMs, edgesSha256: hash.digest('hex') };
  } finally {
    await handle.close();
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
