import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';
import { localPart, type InputPart, type PartOutline } from './inputPart.js';
import { exportOfFolder, exportsBelow, partsOfExports, type ExportKind, type ListedExport } from './dynamodbExport.js';
import { checkExportChain } from './exportChain.js';
import { globBase, globMatcher, hasGlob } from './glob.js';
import type { S3Access } from './s3Part.js';
import type { InputFormat } from '../load/options.js';

/** How a part's records are read: a line format, or a DynamoDB export data file (export.ts). */
export type PartFormat = InputFormat | ExportKind;

/** One part of the input set, with how it is read and what its manifest says it holds. */
export interface ListedPart {
  part: InputPart;
  /** Undefined: from --input-format, or the part's name. */
  format?: PartFormat | undefined;
  /** An export's manifest: items in this data file, and its MD5 (hex) when given. */
  expected?: { items: number; md5?: string | undefined } | undefined;
}

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
}

export interface ListContext {
  /** Stream read for "-". */
  stdin: Readable;
  /** S3 access, built on first use (only s3:// inputs need it). */
  s3: () => Promise<S3Access>;
  /** Files the load writes: never read as input, even inside a folder given as input. */
  outputs: readonly string[];
  /** --allow-broken-export-chain: DynamoDB exports that do not form one chain are loaded as given. */
  allowBrokenExportChain?: boolean | undefined;
}

/** Names in a folder or prefix that are not data: hidden files, Spark's _SUCCESS and .crc, the loader's own outputs. */
export function isDataName(name: string): boolean {
  const base = name.slice(name.lastIndexOf('/') + 1);
  if (base === '' || base.startsWith('.') || base.startsWith('_')) return false;
  return !/\.(crc|rejects\.jsonl|shards\.json|write-rejects|md5|checksum)$/i.test(base) && !/^manifest-(summary|files)\.json$/.test(base);
}

/**
 * Lists the parts of a load from its arguments: files, folders (their files, recursively, sorted by
 * path), globs (`*`, `?`, `**`), "-" for stdin, and s3://bucket/key or s3://bucket/prefix. A folder or
 * prefix that holds a DynamoDB export's manifest-summary.json is read as that export. A part listed twice
 * is an error, as is an argument that matches nothing.
 */
export async function listInputs(args: readonly string[], ctx: ListContext): Promise<InputSet> {
  if (args.length === 0) throw new LoaderError('INVALID_OPTION', 'no input given: pass files, folders, globs, s3:// URLs or - for stdin');
  if (args.includes('-') && args.length > 1) throw new LoaderError('INVALID_OPTION', 'stdin (-) is read alone; pass it as the only input');
  const parts: ListedPart[] = [];
  const exports: InputSet['exports'] = [];
  const outputs = new Set(ctx.outputs.map((p) => resolve(p)));
  for (const arg of args) {
    const found = await listOne(arg, ctx, outputs, exports);
    if (found.length === 0) throw new LoaderError('INPUT_NOT_FOUND', `${arg} holds no input files`, { file: arg });
    parts.push(...found);
  }
  const seen = new Set<string>();
  for (const { part } of parts) {
    const id = part.name.startsWith('s3://') ? part.name : resolve(part.name);
    if (seen.has(id))
      throw new LoaderError('INVALID_OPTION', `${part.name} is given twice (by two of the inputs); each file is read once per load`, { file: part.name });
    seen.add(id);
  }
  // Every export of the load, whichever input it came from, before any part is read (issue 29 items 8, 9).
  const notes = [
    ...exportFolderNotes(exports),
    ...checkExportChain(
      exports.map((e) => e.manifest),
      ctx.allowBrokenExportChain ?? false,
    ),
  ];
  const sizes = parts.map((p) => p.part.size);
  const totalBytes = sizes.every((s) => s !== undefined) ? sizes.reduce((a, b) => a! + b!, 0) : undefined;
  return { parts, name: args.join(' '), exports, totalBytes, notes };
}

async function listOne(arg: string, ctx: ListContext, outputs: ReadonlySet<string>, exports: ListedExport[]): Promise<ListedPart[]> {
  if (arg === '-') return [{ part: stdinPart(ctx.stdin) }];
  if (arg.startsWith('s3://')) {
    const s3 = await ctx.s3();
    return s3.list(arg, exports);
  }
  if (hasGlob(arg)) {
    const matches = await globFiles(arg);
    const parts: ListedPart[] = [];
    for (const path of matches) if (!outputs.has(resolve(path))) parts.push({ part: await localPart(path) });
    return parts;
  }
  const info = await stat(arg).catch((error: NodeJS.ErrnoException) => {
    throw new LoaderError(
      error.code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE',
      error.code === 'ENOENT' ? `input file ${arg} does not exist` : `cannot read ${arg}: ${error.message}`,
      { file: arg, cause: error },
    );
  });
  if (!info.isDirectory()) return [{ part: await localPart(arg) }];
  const exported = await exportOfFolder(localFolder(arg));
  if (exported) return partsOfExports([exported], exports);
  // Export folders below it (AWSDynamoDB/<ExportId>/): never read as plain data.
  const below = await exportsBelow(arg, await everyFileUnder(arg), (dir) => localFolder(join(arg, dir)), isDataPath);
  if (below) return partsOfExports(below, exports, arg);
  const parts: ListedPart[] = [];
  for (const path of await filesUnder(arg)) if (!outputs.has(resolve(path))) parts.push({ part: await localPart(path) });
  return parts;
}

/** A path under a folder given as input is data when none of its names is hidden, a marker or a manifest. */
export const isDataPath = (relative: string) => relative.split('/').every((name) => name === '' || isDataName(name));

/** Every file under `dir` (any name), relative to it, "/" between names: where export manifests are looked for. */
async function everyFileUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => !e.isDirectory()).map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
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

/** Files under `dir`, recursively, data names only, sorted by path (byte order). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    const relative = path.slice(dir.length);
    if (entry.isFile() && relative.split('/').every((segment) => segment === '' || isDataName(segment))) files.push(path);
  }
  return files.sort(byBytes);
}

async function globFiles(pattern: string): Promise<string[]> {
  const base = globBase(pattern);
  const matches = globMatcher(pattern);
  const info = await stat(base).catch(() => undefined);
  if (!info?.isDirectory()) return [];
  const entries = await readdir(base, { recursive: true, withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && isDataName(entry.name) && matches(path)) files.push(path);
  }
  return files.sort(byBytes);
}

export const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
