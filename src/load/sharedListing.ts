import { link, readFile, stat, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { LoaderError } from '../shared/errors.js';
import { localPart, type InputPart } from '../reading/inputPart.js';
import type { InputSet } from '../reading/inputSet.js';
import type { ListedPart } from '../reading/inputPart.js';
import type { PartFormat } from '../reading/inputFormat.js';
import { inputsMismatch, listingText, parseListing, segmentsMismatch, type ListingDoc, type ListingPartDoc } from '../reading/listingDoc.js';
import type { S3Access } from '../reading/s3Part.js';
import { createNewPrivateFile } from '../files/privateFiles.js';

/**
 * `--listing`: every worker of one load reads the same parts. The first worker to get
 * there lists the input and writes the listing where all of them look (a shared volume, or an S3 object);
 * every worker, the first included, then loads exactly the parts it names, each pinned at the identity it
 * had when listed. Writing it is create-once: a local file is linked into place (link() fails when one is
 * there), an S3 object is put with If-None-Match: * (S3's conditional write); a worker that loses the race
 * reads the winner's. A part changed or gone since it was listed stops the load before any write.
 */
export interface ListingStore {
  /** As shown in messages. */
  where: string;
  /** The listing's text, or undefined when there is none yet. */
  read(): Promise<string | undefined>;
  /** Writes `text` unless a listing is already there; false when one was (another worker's). */
  create(text: string): Promise<boolean>;
}

/** Rebuilds parts from a listing: an S3 object pinned at its ETag, a local file checked against its size and time. */
export interface PartFactory {
  s3: () => Promise<S3Access>;
}

export interface SharedListing {
  set: InputSet;
  /** How the listing says the workers divide the work; undefined when it does not say (see ListingDoc.division). */
  division: 'parts' | 'chain' | 'keys' | 'ranges' | undefined;
  /** True when this worker listed the input and wrote the listing. */
  made: boolean;
  listedAt: string;
  /**
   * Parts the inputs hold now that the listing does not (added since it was listed), when this worker loads a
   * listing another wrote: no worker of this load reads them, so the worker names them (addedWarning).
   */
  added: string[];
}

export async function sharedListing(
  store: ListingStore,
  inputs: readonly string[],
  segment: { index: number; count: number } | undefined,
  list: () => Promise<InputSet>,
  parts: PartFactory,
  now: () => number = Date.now,
  /** How the workers will divide the listed set, recorded in a listing this worker writes. */
  divide: (set: InputSet) => 'parts' | 'chain' | 'keys' | 'ranges' | undefined = () => undefined,
): Promise<SharedListing> {
  const existing = await store.read();
  if (existing !== undefined) return withAdded(await revived(existing, store.where, inputs, segment, parts), list);
  const set = await list();
  const doc = await docOf(set, inputs, segment?.count, new Date(now()).toISOString(), divide(set));
  const text = listingText(doc);
  if (await store.create(text)) {
    // Read back: a store without conditional writes (an S3-compatible server that ignores If-None-Match)
    // keeps the last writer's; loading what is stored keeps every worker on one listing all the same.
    const stored = await store.read();
    if (stored === undefined || stored === text) return { set, made: true, listedAt: doc.listedAt, division: doc.division, added: [] };
    return withAdded(await revived(stored, store.where, inputs, segment, parts), async () => set);
  }
  // Another worker wrote its listing first: load that one, so all load the same parts.
  const theirs = await store.read();
  if (theirs === undefined) throw new LoaderError('INPUT_UNREADABLE', `--listing ${store.where} was there a moment ago and is gone; run the load again`);
  return withAdded(await revived(theirs, store.where, inputs, segment, parts), async () => set);
}

/**
 * The listing with the parts the inputs hold now and it does not: a part written after the listing (a job
 * still writing the folder when the first worker started) is read by no worker of this load, and must not go
 * unsaid. A listing that fails (an input gone: the parts' own check says so) names none.
 */
async function withAdded(shared: SharedListing, list: () => Promise<InputSet>): Promise<SharedListing> {
  const now = await list().catch(() => undefined);
  if (!now) return shared;
  const listed = new Set(shared.set.parts.map((p) => p.part.name));
  return { ...shared, added: now.parts.map((p) => p.part.name).filter((name) => !listed.has(name)) };
}

/** What a worker says of the parts added since the listing; undefined when there are none. */
export function addedWarning(shared: Pick<SharedListing, 'added' | 'listedAt'>, where: string): string | undefined {
  const { added } = shared;
  if (added.length === 0) return undefined;
  const shown = added.slice(0, 5).join(', ') + (added.length > 5 ? `, and ${added.length - 5} more` : '');
  return `${added.length === 1 ? '1 part is' : `${added.length} parts are`} in the input now that ${added.length === 1 ? 'was' : 'were'} not when --listing ${where} was listed (${shared.listedAt}): ${shown}. No worker of this load reads ${added.length === 1 ? 'it' : 'them'}; load ${added.length === 1 ? 'it' : 'them'} in a load of ${added.length === 1 ? 'its' : 'their'} own, or start this load over with a new listing (remove it and every worker's checkpoint)`;
}

async function revived(
  text: string,
  where: string,
  inputs: readonly string[],
  segment: { index: number; count: number } | undefined,
  factory: PartFactory,
): Promise<SharedListing> {
  const doc = parseListing(text, where);
  const mismatch = inputsMismatch(doc.inputs, inputs) ?? segmentsMismatch(doc.segments, segment);
  if (mismatch !== undefined)
    throw new LoaderError(
      'INVALID_OPTION',
      `--listing ${where} is the listing of another load (${mismatch}); give every worker the same inputs and the same N of --segment i/N, or another --listing for this load`,
      { file: where },
    );
  const listed: ListedPart[] = [];
  for (const p of doc.parts) {
    const part = p.name.startsWith('s3://') ? (await factory.s3()).part(p.name, p.size, p.etag!) : await localAsListed(p, where);
    listed.push({
      part,
      ...(p.format !== undefined ? { format: p.format as PartFormat } : {}),
      ...(p.expected !== undefined ? { expected: p.expected } : {}),
    });
  }
  const totalBytes = doc.parts.reduce((sum, p) => sum + p.size, 0);
  return {
    set: { parts: listed, name: doc.inputs.join(' '), exports: doc.exports, totalBytes, notes: doc.notes, skipped: doc.skipped, listed: true },
    made: false,
    listedAt: doc.listedAt,
    division: doc.division,
    added: [],
  };
}

/** A local part of a listing: there still, with the size and modification time it was listed with. */
async function localAsListed(p: ListingPartDoc, where: string): Promise<InputPart> {
  const info = await stat(p.path!).catch(() => undefined);
  const changed = (what: string) =>
    new LoaderError(
      'INPUT_CHANGED',
      `${p.name} ${what} since it was listed in --listing ${where}: the workers of this load would read different data; restore it, or start the load over with a new listing (remove ${where} and every worker's checkpoint)`,
      { file: p.name },
    );
  if (!info) throw changed('is gone');
  if (info.size !== p.size) throw changed(`changed size (${p.size} -> ${info.size} bytes)`);
  if (info.mtimeMs !== p.mtimeMs) throw changed(`was modified (${new Date(p.mtimeMs!).toISOString()} -> ${new Date(info.mtimeMs).toISOString()})`);
  return localPart(p.path!);
}

async function docOf(
  set: InputSet,
  inputs: readonly string[],
  segments: number | undefined,
  listedAt: string,
  division: 'parts' | 'chain' | 'keys' | 'ranges' | undefined,
): Promise<ListingDoc> {
  const parts: ListingPartDoc[] = [];
  for (const { part, format, expected } of set.parts) {
    if (part.name === 'stdin') throw new LoaderError('INVALID_OPTION', '--listing lists files, folders, globs and S3 prefixes; stdin (-) cannot be shared');
    const doc: ListingPartDoc = { name: part.name, size: part.size ?? 0 };
    if (part.path === undefined) doc.etag = part.etag ?? '';
    else {
      doc.path = part.path;
      doc.mtimeMs = (await part.outline()).mtimeMs;
    }
    if (format !== undefined) doc.format = format;
    if (expected !== undefined) doc.expected = expected;
    parts.push(doc);
  }
  return {
    format: 'ddb-spread-listing',
    version: 1,
    inputs: [...inputs],
    ...(segments !== undefined ? { segments } : {}),
    ...(division !== undefined ? { division } : {}),
    listedAt,
    parts,
    exports: set.exports,
    notes: set.notes,
    skipped: set.skipped,
  };
}

/** A listing in a local file (a shared volume): created with link(), which never replaces a file that is there. */
export function localListingStore(path: string): ListingStore {
  return {
    where: path,
    read: () =>
      readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw new LoaderError('INPUT_UNREADABLE', `cannot read --listing ${path}: ${error.message}`, { file: path, cause: error });
      }),
    async create(text) {
      const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      const fail = (error: unknown) =>
        new LoaderError('MANIFEST_UNWRITABLE', `cannot write --listing ${path}: ${(error as Error).message}`, { file: path, cause: error });
      try {
        const handle = await createNewPrivateFile(temporary);
        try {
          await handle.writeFile(text);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await link(temporary, path);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw fail(error);
      } finally {
        await unlink(temporary).catch(() => undefined);
      }
    },
  };
}

/** A listing in S3: put with If-None-Match: *, so the first worker's stays. */
export function s3ListingStore(url: string, s3: () => Promise<S3Access>): ListingStore {
  return {
    where: url,
    read: async () => (await s3()).readText(url),
    create: async (text) => (await s3()).createText(url, text),
  };
}
