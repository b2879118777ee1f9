import { createHash } from 'node:crypto';
import { LoaderError } from '../shared/errors.js';
import type { ListedExport } from './dynamodbExport.js';
import type { SkippedPart } from './listing.js';

/**
 * The listing of one load written down once, pure: which parts the arguments held when
 * they were listed, with each part's identity then. Workers of one load (`--segment i/N`) list at different
 * times; a part uploaded between two workers' listings would be loaded by some workers only, and the rows
 * of its keys that fall in the other workers' segments by none. So the first worker writes the listing to a
 * place every worker shares (load/sharedListing.ts), and every worker loads exactly those parts. No row data is
 * in it: names, sizes, ETags, modification times, export counts.
 */
export interface ListingDoc {
  format: 'ddb-spread-listing';
  version: 1;
  /** The arguments as given when listed: a worker with other arguments is refused. */
  inputs: string[];
  /**
   * N of the listing worker's `--segment i/N`, when it had one: a worker told another N is refused, as its
   * segments would not divide the keys with the others' (some keys in no worker's segment). Absent in
   * listings written before it was recorded, and for a load of one worker.
   */
  segments?: number;
  /**
   * How those workers divide the work (load/shares.ts): each reads its share of the parts, its share of each
   * export of a chain (with a barrier between exports), or every part and the keys of its segment. Every worker must divide the same way, or a part's rows could be loaded by no
   * worker. Absent in listings written before it was recorded (whose workers divided by keys), and for a load
   * of one worker.
   */
  division?: 'parts' | 'chain' | 'keys' | 'ranges';
  /** When it was listed (ISO), for messages. */
  listedAt: string;
  parts: ListingPartDoc[];
  exports: ListedExport[];
  /** What the listing said before the load (exports put in chain order): said again by every worker. */
  notes: string[];
  skipped: SkippedPart[];
}

/** One part as listed: an S3 object with its ETag, or a local file with its size and modification time. */
export interface ListingPartDoc {
  name: string;
  size: number;
  /** S3: the ETag pinned (every GET asks for it). */
  etag?: string | undefined;
  /** Local: the path to open (as given, relative to where the workers run or absolute). */
  path?: string | undefined;
  /** Local: the modification time when listed; a file changed since then is refused before any write. */
  mtimeMs?: number | undefined;
  /** How the part is read when its listing said (an export's data file); absent: by its name or bytes. */
  format?: string | undefined;
  /** An export data file's manifest count and MD5. */
  expected?: { items: number; md5?: string | undefined } | undefined;
}

export const LISTING_FORMAT = 'ddb-spread-listing';

/**
 * The listing as JSON text, one part a line, so a person can read and diff it; with the digest of what it
 * says, so a listing changed by hand after some workers loaded it is refused (parseListing) rather than
 * dealt to the others otherwise, leaving a part to no worker.
 */
export function listingText(doc: ListingDoc): string {
  const { parts, ...head } = doc;
  const lines = parts.map((p) => `    ${JSON.stringify(p)}`);
  const headText = JSON.stringify({ ...head, digest: digestOf(head, parts) }, null, 2).replace(/\n}$/, '');
  return `${headText},\n  "parts": [\n${lines.join(',\n')}\n  ]\n}\n`;
}

/** SHA-256 of what a listing says, its fields in the order written (the parts last); not of its spacing. */
function digestOf(head: object, parts: unknown): string {
  return `sha256:${createHash('sha256')
    .update(JSON.stringify({ ...head, parts }))
    .digest('hex')}`;
}

/** The listing in `text` (from `where`, for messages), checked field by field. */
export function parseListing(text: string, where: string): ListingDoc {
  const bad = (why: string) =>
    new LoaderError(
      'INVALID_OPTION',
      `--listing ${where} is not a listing ddb-spread wrote (${why}); remove it to list the input again, or point --listing at the listing of this load`,
      { file: where },
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const doc = value as Partial<ListingDoc> | null;
  if (typeof doc !== 'object' || doc === null || doc.format !== LISTING_FORMAT) throw bad(`no "format": "${LISTING_FORMAT}"`);
  if (doc.version !== 1) throw bad(`version ${JSON.stringify(doc.version)}; this ddb-spread reads version 1`);
  if (!Array.isArray(doc.inputs) || !doc.inputs.every((i) => typeof i === 'string')) throw bad('"inputs" is not a list of strings');
  if (typeof doc.listedAt !== 'string') throw bad('no "listedAt"');
  if (doc.segments !== undefined && (!Number.isSafeInteger(doc.segments) || doc.segments < 1)) throw bad('"segments" is not a count');
  if (doc.division !== undefined && doc.division !== 'parts' && doc.division !== 'chain' && doc.division !== 'keys' && doc.division !== 'ranges')
    throw bad('"division" is none of "parts", "chain", "keys"');
  if (!Array.isArray(doc.parts) || doc.parts.length === 0) throw bad('no "parts"');
  for (const [i, p] of doc.parts.entries()) {
    const part = p as Partial<ListingPartDoc> | null;
    if (typeof part !== 'object' || part === null || typeof part.name !== 'string' || !Number.isSafeInteger(part.size) || part.size! < 0)
      throw bad(`part ${i + 1} has no name or size`);
    const s3 = part.name.startsWith('s3://');
    if (s3 && typeof part.etag !== 'string') throw bad(`part ${i + 1} (${part.name}) has no ETag`);
    if (!s3 && (typeof part.path !== 'string' || typeof part.mtimeMs !== 'number')) throw bad(`part ${i + 1} (${part.name}) has no path or mtimeMs`);
    if (part.expected !== undefined && (typeof part.expected !== 'object' || !Number.isSafeInteger(part.expected.items)))
      throw bad(`part ${i + 1} (${part.name}) has a bad "expected"`);
  }
  if (!Array.isArray(doc.exports)) throw bad('no "exports"');
  if (!Array.isArray(doc.skipped)) throw bad('no "skipped"');
  if (!Array.isArray(doc.notes)) throw bad('no "notes"');
  // A listing without one is an earlier ddb-spread's.
  const { digest, parts, ...head } = doc as ListingDoc & { digest?: unknown };
  if (digest !== undefined && digest !== digestOf(head, parts))
    throw new LoaderError(
      'INVALID_OPTION',
      `--listing ${where} was changed since it was written (what it says no longer matches its "digest"): workers that loaded it before and after the change would divide different parts between them, and a part could be read by no worker. Put it back as it was written, or start the load over: remove it and every worker's checkpoint, and run every worker again`,
      { file: where },
    );
  return { ...head, parts } as ListingDoc;
}

/**
 * Why a listing made by a worker of `listed` workers cannot serve one of `count`; undefined when the counts
 * are the same, or either is not known (an older listing, a load with no --segment).
 */
export function segmentsMismatch(listed: number | undefined, segment: { index: number; count: number } | undefined): string | undefined {
  if (listed === undefined || segment === undefined || listed === segment.count) return undefined;
  return `it was made for ${listed} workers, this worker was given --segment ${segment.index}/${segment.count}: segments of ${segment.count} and of ${listed} workers do not divide the keys between them, and keys in neither would be loaded by no worker`;
}

/** Why a listing made for `listed` cannot serve a worker given `inputs`; undefined when they are the same arguments. */
export function inputsMismatch(listed: readonly string[], inputs: readonly string[]): string | undefined {
  if (listed.length === inputs.length && listed.every((a, i) => a === inputs[i])) return undefined;
  return `it lists ${listed.map((a) => JSON.stringify(a)).join(' ')}, this load was given ${inputs.map((a) => JSON.stringify(a)).join(' ')}`;
}
