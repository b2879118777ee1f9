import type { Dirent, Stats } from 'node:fs';
import { readdir, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { LoaderError } from '../shared/errors.js';
import { nameDecision, ownFileOf, type FoundEntry, type OwnFile } from './listing.js';

/** An entry of a local folder: FoundEntry with the path to open (the name, through any link). */
export interface LocalEntry extends FoundEntry {
  path: string;
}

export interface WalkOptions {
  /** The load's own files, resolved by resolveOwnFiles. */
  own: readonly OwnFile[];
  /** Folders whose name says skip (hidden, `_temporary`) are named once and not walked: a folder given as input. */
  prune: boolean;
  /** Folders deeper than this are not walked: a glob without `**` reaches no further. */
  maxDepth: number;
}

/**
 * Every entry under `root`, recursively, named as `join(root, relative)` whatever the spelling of root
 * (`./d`, `d/.`, `d//`): files (followed through symbolic links, which are walked into when they point at a
 * folder, never into a folder that holds them), links that point nowhere or back up, pipes and sockets.
 * Which of them are data is sortOut's (listing.ts) decision.
 */
export async function walkLocal(root: string, options: WalkOptions): Promise<LocalEntry[]> {
  const entries: LocalEntry[] = [];
  const rootReal = await realpath(root);
  const walk = async (dir: string, prefix: string, realDir: string, ancestors: ReadonlySet<string>, viaLink: boolean, depth: number): Promise<void> => {
    let children: Dirent[];
    try {
      children = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      throw new LoaderError('INPUT_UNREADABLE', `cannot read the folder ${dir}: ${(error as Error).message}`, { file: dir, cause: error });
    }
    for (const child of children) {
      const path = join(dir, child.name);
      const relative = prefix === '' ? child.name : `${prefix}/${child.name}`;
      const location = join(realDir, child.name);
      const link = child.isSymbolicLink();
      let target = location;
      let info: Stats | undefined;
      if (link) {
        try {
          target = await realpath(path);
          info = await stat(target);
        } catch {
          const to = await readlink(path).catch(() => undefined);
          entries.push({ name: path, path, relative, kind: 'broken-link', target: to, own: ownFileOf(location, options.own) });
          continue;
        }
      }
      const isDirectory = info ? info.isDirectory() : child.isDirectory();
      const isFile = info ? info.isFile() : child.isFile();
      const through = viaLink || link;
      if (isDirectory) {
        const own = ownFileOf(location, options.own);
        if (own) entries.push({ name: path, path, relative, kind: 'folder', own });
        else if (ancestors.has(target)) entries.push({ name: path, path, relative, kind: 'link-loop', target });
        else if (options.prune && nameDecision(relative)) entries.push({ name: path, path, relative, kind: 'folder' });
        else if (depth < options.maxDepth) await walk(path, relative, target, new Set([...ancestors, target]), through, depth + 1);
        continue;
      }
      if (!isFile) {
        entries.push({ name: path, path, relative, kind: 'not-a-file' });
        continue;
      }
      // A file its name already skips (another worker's temporary file, a Spark marker) is not stat'ed: it
      // may be renamed or deleted between readdir and stat, which must not stop this load.
      if (!link && (ownFileOf(location, options.own) !== undefined || nameDecision(relative) !== undefined)) {
        entries.push({ name: path, path, relative, kind: 'file', own: ownFileOf(location, options.own) });
        continue;
      }
      info ??= await stat(path).catch((error: Error) => {
        throw new LoaderError('INPUT_UNREADABLE', `cannot read ${path}: ${error.message}`, { file: path, cause: error });
      });
      const own = ownFileOf(location, options.own) ?? ownFileOf(target, options.own);
      entries.push({ name: path, path, relative, kind: 'file', identity: `${info.dev}:${info.ino}`, viaLink: through, own });
    }
  };
  await walk(root, '', rootReal, new Set([rootReal]), false, 1);
  return entries;
}

/** Where a path lies: its folder's real path (symbolic links resolved) and its own name, as walkLocal sees entries. */
export async function locationOf(path: string): Promise<string> {
  const absolute = resolve(path);
  const folder = await realpath(dirname(absolute)).catch(() => dirname(absolute));
  return join(folder, basename(absolute));
}

/** The load's own files resolved as walkLocal resolves entries, so a spelling or a link cannot hide one. */
export async function resolveOwnFiles(files: readonly OwnFile[]): Promise<OwnFile[]> {
  return Promise.all(files.map(async (f) => ({ option: `${f.option} ${f.path}`, path: await locationOf(f.path), prefix: f.prefix, rest: f.rest })));
}
