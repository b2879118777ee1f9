import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What deciding on the compile cache needs from the process, passed in so it can be tested. */
export interface CompileCacheHost {
  /** node:module's enableCompileCache: absent before Node 22.1, where this is a no-op. */
  enable: ((dir: string) => unknown) | undefined;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  uid: number | undefined;
  tmp: string;
}

const host = (): CompileCacheHost => ({
  enable: typeof nodeModule.enableCompileCache === 'function' ? (dir) => nodeModule.enableCompileCache(dir) : undefined,
  env: process.env,
  platform: process.platform,
  uid: process.getuid?.(),
  tmp: tmpdir(),
});

/**
 * Node >= 22.1 keeps V8's compiled code of the modules a process loads (ours and the AWS SDK's) between
 * runs, which shortens every start after the first: what several --segment workers started at once on
 * few cores each pay. Enabled before anything else is loaded (bin/ddb-spread.js). A no-op on Node 20,
 * where it does not exist, under NODE_DISABLE_COMPILE_CACHE, and where NODE_COMPILE_CACHE already chose
 * a place (Node enabled it there at start).
 *
 * The cache is code the process will run, so it lives in a folder of this user's own in the OS temp dir
 * (never beside the user's data), made 0700; a folder of that name that is not a plain directory of this
 * user, or that others may write to (made by someone else to plant code), turns the cache off instead.
 * Returns the folder used, or undefined.
 */
export function enableCompileCache(h: CompileCacheHost = host()): string | undefined {
  if (h.enable === undefined || h.env['NODE_DISABLE_COMPILE_CACHE'] !== undefined || h.env['NODE_COMPILE_CACHE'] !== undefined) return undefined;
  const dir = join(h.tmp, h.uid === undefined ? 'ddb-spread-compile-cache' : `ddb-spread-compile-cache-${h.uid}`);
  let stats: Stats;
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  try {
    stats = lstatSync(dir);
  } catch {
    return undefined;
  }
  if (!isOwnPrivateDirectory(stats, h)) return undefined;
  h.enable(dir);
  return dir;
}

/** A directory (not a link to one) of this user that no one else may write to; on Windows the temp dir is the user's own. */
export function isOwnPrivateDirectory(
  stats: Pick<Stats, 'isDirectory' | 'isSymbolicLink' | 'uid' | 'mode'>,
  h: Pick<CompileCacheHost, 'platform' | 'uid'>,
): boolean {
  if (stats.isSymbolicLink() || !stats.isDirectory()) return false;
  if (h.platform === 'win32') return true;
  return (h.uid === undefined || stats.uid === h.uid) && (stats.mode & 0o022) === 0;
}
