import { createReadStream, rmSync } from 'node:fs';
import { mkdtemp, open, rm, statfs, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { InputPart } from '../reading/inputPart.js';

/**
 * A private local copy of the bytes of an S3 part's segment that a worker scans for where records start
 * (rangeCuts.ts), made as the scan reads them, so that its range, which lies almost all in that segment, is
 * read from the copy and not fetched from S3 a second time: each byte of the object is then fetched once
 * (2 TB read as 2 TB, not 3.5 TB with 8 workers). A local file's segment is not copied: reading it again
 * costs no transfer, where a copy would cost writing it.
 *
 * The copy needs the segment's size on the temporary folder's file system (--temp-dir). It is made only
 * where that leaves room (the write order's temporary files go there too); one that cannot be finished (the
 * disk filled meanwhile) is dropped, and the range read from S3 as without it. Either way the same bytes
 * are read: the copy was read under the part's ETag, as every ranged GET of it is.
 *
 * The copy holds row data: its folder is private (mkdtemp: 0700) and the file 0600. It is removed when
 * the load ends, as the write order's temporary files are, and when the process quits at once.
 */

/** What must stay free on the temporary folder's file system after a copy, at the least. */
const KEEP_FREE_BYTES = 1024 ** 3;
/** ... and at the least this share of the file system. */
const KEEP_FREE_SHARE = 0.1;

export interface CopyPlace {
  /** The folder the copies' private folder is made in (--temp-dir, else the system's). */
  parent: string;
  /** Registers the removal of what was made, for when the load ends. */
  keep: (release: () => Promise<void>) => void;
  warn: (message: string) => void;
}

/** Bytes a worker read back from its copies instead of the input; counted as its range is read. */
export interface CopyTally {
  bytes: number;
}

/** The copies of one worker's segments: their private folder, made at the first. */
export class SegmentCopies {
  readonly #folder: PrivateTempFolder;
  readonly tally: CopyTally = { bytes: 0 };

  constructor(readonly place: CopyPlace) {
    this.#folder = new PrivateTempFolder(place);
  }

  /**
   * A copy of `bytes` bytes of `part` from byte `start` to be written as it is scanned, or undefined where
   * the file system would be left with too little room (said once, the range then read from S3 again).
   */
  async start(part: InputPart, start: number, bytes: number, label: string): Promise<SegmentCopy | undefined> {
    try {
      return await this.#start(part, start, bytes, label);
    } catch (error) {
      // A copy only spares a second fetch: a --temp-dir it cannot be made in (missing, not writable) leaves the range to S3.
      this.place.warn(
        `${part.name}: cannot copy segment ${label} while scanning it (${(error as Error).message}): this worker fetches its range from S3 a second time; give --temp-dir a writable folder to fetch each byte once`,
      );
      return undefined;
    }
  }

  async #start(part: InputPart, start: number, bytes: number, label: string): Promise<SegmentCopy | undefined> {
    const folder = await this.#folder.made();
    const room = await roomLeft(folder);
    if (room < bytes) {
      this.place.warn(
        `${part.name}: not copying the ${bytes} bytes of segment ${label} while scanning it (${Math.max(0, room)} bytes can be written in ${this.place.parent} before what is kept free, none on a file system in memory): this worker fetches its range from S3 a second time; give --temp-dir a folder with room to fetch each byte once`,
      );
      return undefined;
    }
    const path = join(folder, `segment-${label.replace(/[^0-9a-z-]/gi, '-')}.bytes`);
    const handle = await open(path, 'wx', 0o600);
    return new SegmentCopy(part, path, handle, start, this.tally, this.place.warn);
  }
}

/** A private folder (mkdtemp: 0700) in the place's parent, made at first use; removed when the load ends, and on exit. */
export class PrivateTempFolder {
  #folder: Promise<string> | undefined;

  constructor(readonly place: CopyPlace) {}

  made(): Promise<string> {
    this.#folder ??= mkdtemp(join(this.place.parent, 'ddb-spread-')).then((folder) => {
      // A process that quits at once (a second SIGINT/SIGTERM, --stop-timeout) skips the load's releases:
      // the copies hold rows, so they go on exit too, as the write order's temporary files do.
      const onExit = () => rmSync(folder, { recursive: true, force: true });
      process.once('exit', onExit);
      this.place.keep(async () => {
        process.off('exit', onExit);
        await rm(folder, { recursive: true, force: true });
      });
      return folder;
    });
    return this.#folder;
  }
}

/** File systems held in memory (tmpfs, ramfs: a /tmp or an emptyDir of medium Memory): a copy there would take RAM. */
const IN_MEMORY = new Set([0x01021994, 0x858458f6]);

/**
 * Bytes that can still be written on `folder`'s file system before what is kept free: max(1 GiB, 10%) of
 * it; none on one held in memory, where the copies would take the process's host's RAM, unseen.
 */
export async function roomLeft(folder: string): Promise<number> {
  const room = await statfs(folder);
  if (IN_MEMORY.has(Number(room.type))) return 0;
  return room.bavail * room.bsize - Math.max(KEEP_FREE_BYTES, KEEP_FREE_SHARE * room.blocks * room.bsize);
}

/** One segment's copy: written in order as it is scanned, then read as part of its range. */
export class SegmentCopy {
  #written = 0;
  #failed = false;
  #handle: FileHandle | undefined;

  constructor(
    readonly part: InputPart,
    readonly path: string,
    handle: FileHandle,
    readonly start: number,
    readonly tally: CopyTally,
    readonly warn: (message: string) => void,
  ) {
    this.#handle = handle;
  }

  /** Appends the next scanned bytes; a failed write (the disk full) drops the copy, and the scan goes on. */
  async write(chunk: Buffer): Promise<void> {
    if (this.#failed || !this.#handle) return;
    try {
      let at = 0;
      while (at < chunk.length) {
        const { bytesWritten } = await this.#handle.write(chunk, at, chunk.length - at, this.#written + at);
        at += bytesWritten;
      }
      this.#written += chunk.length;
    } catch (error) {
      await this.#drop(`could not be written (${(error as Error).message})`);
    }
  }

  /**
   * The copy, once the whole segment was written to it: the part, whose bytes in the segment come from the
   * copy and the others from the part itself. Undefined, and the copy removed, when it is not whole.
   */
  async finish(end: number): Promise<InputPart | undefined> {
    if (!this.#failed && this.start + this.#written !== end) await this.#drop(`is ${this.#written} bytes, not ${end - this.start}`);
    if (this.#failed) return undefined;
    try {
      await this.#handle!.close();
    } catch (error) {
      await this.#drop(`could not be closed (${(error as Error).message})`);
      return undefined;
    }
    this.#handle = undefined;
    return copiedPart(this.part, { path: this.path, start: this.start, end }, this.tally);
  }

  /** The scan failed: the copy is of no use. */
  async discard(): Promise<void> {
    this.#failed = true;
    await this.#handle?.close().catch(() => undefined);
    this.#handle = undefined;
    await rm(this.path, { force: true });
  }

  async #drop(why: string): Promise<void> {
    this.#failed = true;
    await this.#handle?.close().catch(() => undefined);
    this.#handle = undefined;
    await rm(this.path, { force: true });
    this.warn(`${this.part.name}: the local copy of a segment ${why}: this worker fetches its range from S3 again`);
  }
}

/**
 * `part`, whose bytes from copy.start to copy.end are read from the local copy: a read over the copy's
 * edges takes the bytes before and after it from the part (a range opens a byte before its first record).
 */
export function copiedPart(part: InputPart, copy: { path: string; start: number; end: number }, tally: CopyTally): InputPart {
  const size = part.size ?? copy.end;
  return {
    name: part.name,
    size: part.size,
    ...(part.etag !== undefined ? { etag: part.etag } : {}),
    outline: () => part.outline(),
    contentHash: () => part.contentHash(),
    open: (fromByte = 0, toByte?: number) => {
      const to = Math.min(toByte ?? size, size);
      async function* pieces(): AsyncGenerator<Buffer> {
        const before = Math.min(to, copy.start);
        if (fromByte < before) yield* (await part.open(fromByte, before)) as AsyncIterable<Buffer>;
        const inFrom = Math.max(fromByte, copy.start);
        const inTo = Math.min(to, copy.end);
        if (inFrom < inTo)
          for await (const chunk of createReadStream(copy.path, { start: inFrom - copy.start, end: inTo - copy.start - 1 }) as AsyncIterable<Buffer>) {
            tally.bytes += chunk.length;
            yield chunk;
          }
        const after = Math.max(fromByte, copy.end);
        if (after < to) yield* (await part.open(after, to)) as AsyncIterable<Buffer>;
      }
      return Promise.resolve(Readable.from(pieces(), { objectMode: false }));
    },
  };
}
