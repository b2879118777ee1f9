/**
 * What a folder, glob or S3 prefix holds, decided in one place and pure, so no part is dropped silently: which of its entries
 * are data parts and which are skipped, and why. Local folders and globs (localListing.ts) and S3 prefixes
 * (s3Part.ts) only find the entries; every entry found ends in exactly one of the two lists, so no part is
 * ever dropped without being named.
 */

/** Why an entry of a folder, glob or prefix is not read. */
export type SkipReason =
  | 'hidden'
  | 'marker'
  | 'checksum'
  | 'export-manifest'
  | 'loader-file'
  | 'own-file'
  | 'folder-marker'
  | 'broken-link'
  | 'link-loop'
  | 'same-file'
  | 'not-a-file';

/** An entry not read, for the summary, --json and the report: its name, why (a code) and a sentence. */
export interface SkippedPart {
  name: string;
  reason: SkipReason;
  detail: string;
}

/** One thing a walker found under a folder, glob base or prefix. */
export interface FoundEntry {
  /** As shown: the argument's path joined with `relative`, or s3://bucket/key. */
  name: string;
  /** Its path under the folder, glob base or prefix, '/'-separated, as found (an S3 key's rest, verbatim). */
  relative: string;
  /**
   * file: a file or object; folder: a folder not walked (its name says skip it); broken-link: a symbolic
   * link to nothing; link-loop: a link to a folder that holds it; not-a-file: a pipe, socket or device.
   */
  kind: 'file' | 'folder' | 'broken-link' | 'link-loop' | 'not-a-file';
  /** The content's identity (a local file's dev:ino; an S3 object's URL): one file is read once. */
  identity?: string | undefined;
  /** Reached through a symbolic link: of two names of one file, the one without a link is read. */
  viaLink?: boolean | undefined;
  /** Which of the load's own files this is ("the lock file of --checkpoint ck.json"), when it is one. */
  own?: string | undefined;
  /** Where a link points, for the message. */
  target?: string | undefined;
}

/** The segments that make a name: '.' and empty ones (`./`, `//`) are spelling, not names. */
function segmentsOf(relative: string): string[] {
  return relative.split('/').filter((s) => s !== '' && s !== '.');
}

/**
 * Why a path under a folder or prefix is not data, by its name alone; undefined when it is data. Hidden
 * (a segment starting with "."; "." and ".." are spelling), a marker or temporary folder of Spark, Hadoop
 * or Glue (a segment starting with "_": _SUCCESS, _committed_*, _temporary/), a checksum (.crc, .md5,
 * .checksum), a DynamoDB export manifest, or a file ddb-spread writes (reject files, shard manifests,
 * write-reject logs, and their locks and temporary files), or any lock file (.lock).
 */
export function nameDecision(relative: string): { reason: SkipReason; detail: string } | undefined {
  if (relative.endsWith('/')) return { reason: 'folder-marker', detail: 'an empty "folder" object (its key ends in /), no data' };
  for (const segment of segmentsOf(relative)) {
    if (segment.startsWith('.') && segment !== '..') return { reason: 'hidden', detail: `hidden: "${segment}" starts with "."` };
    if (segment.startsWith('_')) return { reason: 'marker', detail: `"${segment}" starts with "_" (a marker or temporary folder of Spark, Hadoop or Glue)` };
  }
  const base = relative.slice(relative.lastIndexOf('/') + 1);
  const checksum = /\.(crc|md5|checksum)$/i.exec(base);
  if (checksum) return { reason: 'checksum', detail: `a checksum file (${checksum[0]})` };
  if (/^manifest-(summary|files)\.json$/.test(base)) return { reason: 'export-manifest', detail: 'a DynamoDB export manifest' };
  const loader = /\.(rejects\.jsonl|shards\.json|write-rejects)(\.lock|(\.\d+)?(\.[0-9a-f]+)?\.tmp)?$/i.exec(base);
  if (loader) return { reason: 'loader-file', detail: `a file ddb-spread writes (${loader[0]})` };
  // Another load's file caught between its write and its rename (`ck.json.<pid>.<hex>.tmp`): it may vanish
  // at any moment, and its content is a checkpoint or report, never data.
  const pending = /\.\d+(\.[0-9a-f]{8})?\.tmp$/i.exec(base);
  if (pending) return { reason: 'loader-file', detail: `a file a load writes, before its rename (${pending[0]})` };
  // Another load's lock (a checkpoint or reject file under another name, left by kill -9): never data.
  if (/\.lock$/i.test(base)) return { reason: 'loader-file', detail: 'a lock file (.lock), such as a load leaves when killed' };
  return undefined;
}

/** Names in a folder or prefix that are not data (nameDecision): hidden, markers, checksums, the loader's files. */
export function isDataName(name: string): boolean {
  return nameDecision(name) === undefined;
}

/** A path under a folder given as input is data when none of its names is hidden, a marker or a manifest. */
export const isDataPath = (relative: string) => nameDecision(relative) === undefined;

/**
 * Which file of ddb-spread's `head` (a file's first bytes) shows it to be, when it is one: a checkpoint,
 * a --report or a --listing, by the fields each begins with. Their names are the user's (`ck-1.json`): a
 * checkpoint of another worker of the load, in a folder the load reads, would otherwise be read as data.
 */
export function ownFileByContent(head: string): string | undefined {
  if (/^\{"version":\d+,"status":"[a-z]+","createdAt":"/.test(head)) return 'a checkpoint written by ddb-spread (of another load or worker)';
  if (/^\{\s*"reportVersion":\s*\d+,\s*"ddbSpreadVersion":/.test(head)) return 'a --report written by ddb-spread';
  if (/^\{\s*"format":\s*"ddb-spread-listing"/.test(head)) return 'a --listing written by ddb-spread';
  if (/^\{\s*"format":\s*"ddb-spread-worker"/.test(head)) return "a worker's state written by ddb-spread beside its --listing";
  if (/^<!doctype html>\s*<html[^>]*>\s*<head>\s*<meta charset="utf-8">\s*<meta name="generator" content="ddb-spread --html-report">/i.test(head))
    return 'an --html-report written by ddb-spread';
  return undefined;
}

/** Entries whose content is worth a look for ownFileByContent: the files ddb-spread writes as JSON, and its HTML report. */
export const mayBeOwnByContent = (name: string): boolean => /\.(json|html?)$/i.test(name);

/** A file a load writes: the option that names it and its path (resolved the same way as the entries). */
export interface OwnFile {
  option: string;
  path: string;
  /** `path` is a name prefix: the order's temporary folders `<--temp-dir>/ddb-spread-XXXXXX`. */
  prefix?: boolean | undefined;
  /** `path` is a name prefix, and this what follows it (the workers' states beside a listing, and their temporary files). */
  rest?: RegExp | undefined;
}

/**
 * Which of the load's own files `path` is: one of `own`, its lock (`<path>.lock`), or a temporary file
 * written beside it before a rename (`<path>.<pid>.tmp`, `<path>.<pid>.<hex>.tmp`). Paths compared as given:
 * the caller resolves both the same way.
 */
export function ownFileOf(path: string, own: readonly OwnFile[]): string | undefined {
  for (const file of own) {
    if (file.rest) {
      if (path.startsWith(file.path) && file.rest.test(path.slice(file.path.length))) return `a file of ${file.option}`;
      continue;
    }
    if (file.prefix) {
      // mkdtemp's six characters.
      if (path.startsWith(file.path) && /^[A-Za-z0-9]{6}$/.test(path.slice(file.path.length))) return `a temporary folder of ${file.option}`;
      continue;
    }
    if (path === file.path) return `the file of ${file.option}`;
    if (path === `${file.path}.lock`) return `the lock file of ${file.option}`;
    if (path.startsWith(`${file.path}.`) && /^\.\d+(\.[0-9a-f]+)?\.tmp$/.test(path.slice(file.path.length))) return `a temporary file of ${file.option}`;
  }
  return undefined;
}

/** UTF-8 byte order (S3's listing order): JavaScript's `<` compares UTF-16 code units, which puts an astral character before U+E000-U+FFFF. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * The entries of one folder, glob or prefix sorted out: the data parts, sorted by their path under it
 * (byte order), and the rest, each named with why. Every entry is in exactly one list. Two names of one
 * file (symbolic or hard links) are read once: under the name reached without a link, else the first.
 */
export function sortOut<T extends FoundEntry>(entries: readonly T[]): { data: T[]; skipped: SkippedPart[] } {
  const sorted = [...entries].sort((a, b) => byBytes(a.relative, b.relative) || byBytes(a.name, b.name));
  const skipped: SkippedPart[] = [];
  const candidates: T[] = [];
  for (const entry of sorted) {
    const skip = (reason: SkipReason, detail: string) => skipped.push({ name: entry.name, reason, detail });
    if (entry.own !== undefined) skip('own-file', `${entry.own}: the load's own files are never input`);
    else if (entry.kind === 'broken-link') skip('broken-link', `a symbolic link to ${entry.target ?? 'nothing'}, which cannot be read`);
    else if (entry.kind === 'link-loop') skip('link-loop', `a symbolic link to the folder ${entry.target ?? ''} that holds it (a loop)`);
    else if (entry.kind === 'not-a-file') skip('not-a-file', 'not a regular file (a pipe, socket or device)');
    else {
      const decided = nameDecision(entry.relative);
      if (decided) skip(decided.reason, decided.detail);
      else if (entry.kind === 'folder') skip('not-a-file', 'a folder not walked');
      else candidates.push(entry);
    }
  }
  // The name to keep for each identity: reached without a link if there is one, else the first.
  const keep = new Map<string, T>();
  for (const entry of candidates) {
    if (entry.identity === undefined) continue;
    const held = keep.get(entry.identity);
    if (!held || (held.viaLink && !entry.viaLink)) keep.set(entry.identity, entry);
  }
  const data: T[] = [];
  for (const entry of candidates) {
    const kept = entry.identity === undefined ? entry : keep.get(entry.identity)!;
    if (kept === entry) data.push(entry);
    else skipped.push({ name: entry.name, reason: 'same-file', detail: `the same file as ${kept.name}, which is read (once)` });
  }
  skipped.sort((a, b) => byBytes(a.name, b.name));
  return { data, skipped };
}
