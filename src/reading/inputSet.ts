import { open, readFile, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';
import { localPart, type InputPart, type ListedPart, type PartOutline } from './inputPart.js';
import { exportOfFolder, exportsBelow, partsOfExports, type ListedExport } from './dynamodbExport.js';
import { checkExportChain } from './exportChain.js';
import { globBase, globDepth, globMatcher, hasGlob } from './glob.js';
import { isDataPath, mayBeOwnByContent, ownFileByContent, ownFileOf, sortOut, type OwnFile, type SkippedPart } from './listing.js';
import { locationOf, resolveOwnFiles, walkLocal, type LocalEntry } from './localListing.js';
import type { S3Access } from './s3Part.js';

/** Every input of a load, in the one order they are read: arguments in order, each folder or prefix sorted by name. */
export interface InputSet {
  parts: ListedPart[];
  /** The arguments as given, for messages. */
  name: string;
  /** The exports found, in the order they are read, with their manifests (checked as one chain when listed). */
  exports: ListedExport[];
  totalBytes: number | undefined;
  /** What the listing has to say before the load starts (exports put in chain order, a chain let through). */
  notes: string[];
  /** Entries of folders, globs and prefixes not read, each with why (listing.ts): none is dropped unnamed. */
  skipped: SkippedPart[];
  /**
   * Some argument was listed (a folder, glob, S3 prefix or export) rather than named: its parts are what
   * it held at that moment, so workers listing at different times could see different parts.
   */
  listed?: boolean | undefined;
}

export interface ListContext {
  /** Stream read for "-". */
  stdin: Readable;
  /** S3 access, built on first use (only s3:// inputs need it). */
  s3: () => Promise<S3Access>;
  /**
   * Files the load writes: never read as input, even inside a folder given as input, nor their locks and
   * temporary files; named as skipped. A plain path is named "--rejects" etc. by the caller's option.
   */
  outputs: readonly (string | OwnFile)[];
  /** --allow-broken-export-chain: DynamoDB exports that do not form one chain are loaded as given. */
  allowBrokenExportChain?: boolean | undefined;
}

/**
 * Lists the parts of a load from its arguments: files, folders (their files, recursively, sorted by
 * path), globs (`*`, `?`, `**`), "-" for stdin, and s3://bucket/key or s3://bucket/prefix. A folder or
 * prefix that holds a DynamoDB export's manifest-summary.json is read as that export. Entries of a folder,
 * glob or prefix that are not data are named in `skipped` with why (listing.ts). A file named as an
 * argument is read whatever its name, unless it is one of the load's own files. A part listed by two
 * arguments is an error, as is an argument that matches nothing.
 */
export async function listInputs(args: readonly string[], ctx: ListContext): Promise<InputSet> {
  if (args.length === 0) throw new LoaderError('INVALID_OPTION', 'no input given: pass files, folders, globs, s3:// URLs or - for stdin');
  if (args.includes('-') && args.length > 1) throw new LoaderError('INVALID_OPTION', 'stdin (-) is read alone; pass it as the only input');
  const parts: ListedPart[] = [];
  const skipped: SkippedPart[] = [];
  const exports: InputSet['exports'] = [];
  const own = await resolveOwnFiles(ctx.outputs.map((o) => (typeof o === 'string' ? { option: 'an output', path: o } : o)));
  const seen = new Map<string, string>();
  let listed = false;
  for (const arg of args) {
    const mine: SkippedPart[] = [];
    const found = await listOne(arg, ctx, own, exports, mine);
    skipped.push(...mine);
    if (found.length === 0) {
      const why = mine.length > 0 ? `: every entry is skipped (${mine.map((s) => `${s.name}: ${s.detail}`).join('; ')})` : '';
      throw new LoaderError('INPUT_NOT_FOUND', `${arg} holds no input files${why}`, { file: arg });
    }
    for (const listed of found) {
      const id = await identityOf(listed.part);
      const before = seen.get(id);
      if (before !== undefined)
        throw new LoaderError(
          'INVALID_OPTION',
          `${listed.part.name} is given twice (by two of the inputs${before === listed.part.name ? '' : `: it is the same file as ${before}`}); each file is read once per load`,
          { file: listed.part.name },
        );
      seen.set(id, listed.part.name);
    }
    parts.push(...found);
    if (arg !== '-' && !(found.length === 1 && found[0]!.part.name === arg && found[0]!.expected === undefined)) listed = true;
  }
  // Every export of the load, whichever input it came from, before any part is read: a chain out of order, with a gap or of two tables, is refused.
  const notes = [
    ...exportFolderNotes(exports),
    ...checkExportChain(
      exports.map((e) => e.manifest),
      ctx.allowBrokenExportChain ?? false,
    ),
  ];
  const sizes = parts.map((p) => p.part.size);
  const totalBytes = sizes.every((s) => s !== undefined) ? sizes.reduce((a, b) => a! + b!, 0) : undefined;
  return { parts, name: args.join(' '), exports, totalBytes, notes, skipped, listed };
}

/** What makes two parts one: an S3 URL, a local file's device and inode (a link or a second spelling is the same file). */
async function identityOf(part: InputPart): Promise<string> {
  if (part.path === undefined) return part.name;
  const info = await stat(part.path).catch(() => undefined);
  return info ? `${info.dev}:${info.ino}` : resolve(part.path);
}

async function listOne(arg: string, ctx: ListContext, own: readonly OwnFile[], exports: ListedExport[], skipped: SkippedPart[]): Promise<ListedPart[]> {
  if (arg === '-') return [{ part: stdinPart(ctx.stdin) }];
  if (arg.startsWith('s3://')) {
    const s3 = await ctx.s3();
    return s3.list(arg, exports, skipped);
  }
  if (hasGlob(arg)) return localParts(await globEntries(arg, own), skipped);
  const info = await stat(arg).catch((error: NodeJS.ErrnoException) => {
    throw new LoaderError(
      error.code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE',
      error.code === 'ENOENT' ? `input file ${arg} does not exist` : `cannot read ${arg}: ${error.message}`,
      { file: arg, cause: error },
    );
  });
  if (!info.isDirectory()) {
    // Named by the user: read whatever its name (_data.csv, .hidden.csv), unless the load writes it.
    const mine = ownFileOf(await locationOf(arg), own) ?? ownFileOf(await realpath(arg).catch(() => arg), own);
    if (mine) throw new LoaderError('INVALID_OPTION', `${arg} is ${mine}: the load's own files are never input; name the data files instead`, { file: arg });
    return [{ part: await localPart(arg) }];
  }
  const exported = await exportOfFolder(localFolder(arg));
  if (exported) return partsOfExports([exported], exports);
  const entries = await walkLocal(arg, { own, prune: true, maxDepth: Infinity });
  // Export folders below it (AWSDynamoDB/<ExportId>/): never read as plain data.
  const files = entries.filter((e) => e.kind === 'file' && e.own === undefined).map((e) => e.relative);
  const below = await exportsBelow(arg, files, (dir) => localFolder(join(arg, dir)), isDataPath);
  if (below) return partsOfExports(below, exports, arg);
  return localParts(entries, skipped);
}

/** The data entries as parts; the others named in `skipped`. */
async function localParts(entries: readonly LocalEntry[], skipped: SkippedPart[]): Promise<ListedPart[]> {
  const sorted = sortOut(entries);
  skipped.push(...sorted.skipped);
  const parts: ListedPart[] = [];
  for (const entry of sorted.data) {
    const own = mayBeOwnByContent(entry.name) ? ownFileByContent(await headOf(entry.path)) : undefined;
    if (own !== undefined) skipped.push({ name: entry.name, reason: 'own-file', detail: `${own}: the load's own files are never input` });
    else parts.push({ part: await localPart(entry.path) });
  }
  return parts;
}

/** A local file's first bytes, as text ('' when it cannot be read: its read then says why). */
async function headOf(path: string): Promise<string> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(256), 0, 256, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** For each folder that held several exports: which, in the chain order they are read. */
function exportFolderNotes(exports: readonly ListedExport[]): string[] {
  const notes: string[] = [];
  for (const within of new Set(exports.map((e) => e.within))) {
    if (within === undefined) continue;
    const found = exports.filter((e) => e.within === within);
    const order = found.map((e) => `${e.name} (${e.manifest.type === 'FULL_EXPORT' ? 'full' : 'incremental'})`);
    notes.push(`${within} holds ${found.length} DynamoDB export${found.length === 1 ? '' : 's'}, read in chain order: ${order.join(', ')}`);
  }
  return notes;
}

/** A local folder as export.ts reads it. */
function localFolder(dir: string) {
  return {
    name: dir,
    async readText(name: string): Promise<string | undefined> {
      return readFile(join(dir, name), 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw new LoaderError('INPUT_UNREADABLE', `cannot read ${join(dir, name)}: ${error.message}`, { file: join(dir, name), cause: error });
      });
    },
    part: (name: string) => localPart(join(dir, name)),
  };
}

/** The entries under a glob's base that the pattern matches; a pattern without `**` reaches only its own depth. */
async function globEntries(pattern: string, own: readonly OwnFile[]): Promise<LocalEntry[]> {
  const base = globBase(pattern);
  const matches = globMatcher(pattern);
  const info = await stat(base).catch(() => undefined);
  if (!info?.isDirectory()) return [];
  const maxDepth = globDepth(pattern);
  const entries = await walkLocal(base, { own, prune: false, maxDepth });
  return entries.filter((entry) => matches(entry.name));
}

function stdinPart(stdin: Readable): InputPart {
  return {
    name: 'stdin',
    size: undefined,
    open(fromByte = 0) {
      if (fromByte !== 0) throw new LoaderError('INPUT_UNREADABLE', 'stdin cannot be read again from an offset');
      return Promise.resolve(stdin);
    },
    outline: () => Promise.reject(new LoaderError('INVALID_OPTION', '--checkpoint needs a file input (stdin cannot be read again to resume)')),
    contentHash: () => Promise.reject(new LoaderError('INVALID_OPTION', '--checkpoint needs a file input')),
  };
}

/** The outlines of every part, for a checkpoint. */
export async function outlinesOf(set: InputSet): Promise<PartOutline[]> {
  const outlines: PartOutline[] = [];
  for (const { part } of set.parts) outlines.push(await part.outline());
  return outlines;
}
