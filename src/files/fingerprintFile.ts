import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';

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
