import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { hashFile } from '../files/hashFile.js';
import { fingerprintFile } from '../files/fingerprintFile.js';
import { LoaderError } from '../shared/errors.js';
import { FilePin, identityOf, type FileIdentity } from './filePin.js';
import type { PartFormat } from './inputFormat.js';

/**
 * One object a load reads: a local file or an S3 object. The input set (inputSet.ts) is a list of them in
 * a fixed order, read one after another as one input. `open(fromByte, toByte)` streams the raw (still
 * compressed) bytes of a byte range, so a reader can pick up mid-object and a striped read can read a part
 * in pieces (S3's ranged GET, a local read at an offset).
 */
export interface InputPart {
  /** As shown in messages and the reject file: the path as found, or s3://bucket/key. */
  readonly name: string;
  /** Size in bytes (compressed size for .gz), when known. */
  readonly size: number | undefined;
  /** S3's ETag (quotes included), pinned when the part was listed: a changed object is an error. */
  readonly etag?: string | undefined;
  /** A local file's path: Parquet and striped reads open it again at offsets. Undefined for S3 and stdin. */
  readonly path?: string | undefined;
  /** A local file's identity when listed: every read of it is checked against it (filePin.ts). */
  readonly pin?: FilePin | undefined;
  /** The raw bytes from `fromByte` (default 0) to `toByte` (exclusive; default the end), checked against the pin or ETag. */
  open(fromByte?: number, toByte?: number): Promise<Readable>;
  /** What identifies the content for a checkpoint: cheap (size, edges or ETag). */
  outline(): Promise<PartOutline>;
  /** A strong content identity for a checkpoint: a local file's SHA-256, an S3 object's ETag. */
  contentHash(): Promise<string>;
}

/** A part's identity as a checkpoint records it. */
export interface PartOutline {
  name: string;
  size: number;
  /** A local file's modification time (0 for S3: the ETag decides). */
  mtimeMs: number;
  /** SHA-256 of a local file's first and last 64 KB, or the S3 ETag. */
  edges: string;
}

/**
 * A local file, stat'ed when listed: its identity is pinned then, and every read checks it, as
 * do the checkpoint's outline and content hash, so a checkpoint always describes the version that was read.
 */
export async function localPart(path: string): Promise<InputPart> {
  let info: Stats;
  try {
    info = await stat(path);
    if (info.isDirectory()) throw new LoaderError('INPUT_UNREADABLE', `${path} is a directory`, { file: path });
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new LoaderError(
      code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE',
      code === 'ENOENT' ? `input file ${path} does not exist` : `cannot read ${path}: ${(error as Error).message}`,
      { file: path, cause: error },
    );
  }
  return pinnedLocalPart(path, path, identityOf(info));
}

/** A local file whose identity was pinned when it was listed (another thread reads it as that listing saw it). */
export function pinnedLocalPart(path: string, name: string, identity: FileIdentity): InputPart {
  const pin = new FilePin(name, path, identity);
  return {
    name,
    size: identity.size,
    path,
    pin,
    open: (fromByte = 0, toByte?: number) => Promise.resolve(pin.open(fromByte, toByte)),
    async outline() {
      const found = (await fingerprintFile(path))!;
      await pin.check();
      return { name: path, size: found.size, mtimeMs: found.mtimeMs, edges: found.edgesSha256 };
    },
    async contentHash() {
      const hash = await hashFile(path);
      await pin.check();
      return hash;
    },
  };
}

/** One part of the input set, with how it is read and what its manifest says it holds. */
export interface ListedPart {
  part: InputPart;
  /** Undefined: from --input-format, or the part's name. */
  format?: PartFormat | undefined;
  /** An export's manifest: items in this data file, and its MD5 (hex) when given. */
  expected?: { items: number; md5?: string | undefined } | undefined;
  /**
   * Only these bytes of the part are read (a worker's range of a part divided by byte range,
   * load/rangeCuts.ts): from `start`, where a record starts on line `line`, to `end` (exclusive), where
   * the next record starts or the part ends. A CSV part's columns are still its header's.
   */
  range?: PartRange | undefined;
  /**
   * A CSV part's header row, as the look at its head before the first write read it (partHeads.ts): a read
   * from inside the part (a range, a resume) takes its columns from here instead of reading the head again
   * (over S3, a GET of a window or two for each look).
   */
  header?: readonly string[] | undefined;
}

export interface PartRange {
  start: number;
  end: number;
  line: number;
}
