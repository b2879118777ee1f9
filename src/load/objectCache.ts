import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { RangeBytes } from '../ordering/stripes/ranges.js';
import { PrivateTempFolder, roomLeft, type CopyPlace } from './segmentCopy.js';

/**
 * A private local copy of the bytes a striped read plans from, for each S3 object of the set (write-through,
 * by byte range), so that the reads after the plan take them from local disk instead of fetching them again.
 * Planning stripes over S3 objects reads their bytes several times: a look at each object's head (are its
 * keys in runs?), the cut of an object into ranges (every byte, for where records start), the heads of the
 * ranges (where each stripe's first key ends), then the stripes themselves. On 16 key-sorted parts in S3
 * read by 4 workers (4 parts each, so each cut) that fetched 4.6x the input, 4x for one object read by one
 * worker; with the copy, the bytes the plan read are fetched once and the stripes read them from disk.
 *
 * Only what the plan reads is copied (freeze(), before the stripes are read): the stripes' own reads of
 * bytes the plan did not read (the parts not cut, the end of the last segment) go by S3 and are not
 * written to disk, which would cost writing them for no second read. The copy needs room on the temporary
 * folder's file system (--temp-dir): it stops where that would be left with less than it keeps free, and
 * the rest is fetched from S3 as without it; a write that fails (the disk filled meanwhile) stops it too.
 * Every byte was read under its object's ETag (If-Match), as any ranged GET of it: the same bytes either way.
 *
 * Hand-written: the caches on npm are of whole objects or in memory; this is a sparse file per object with
 * the stretches known written, shared by reads that run side by side, whose copied bytes are never read
 * before their write is finished (a stretch is recorded once written).
 *
 * The copies hold row data: a private folder (0700), files 0600, removed when the load ends and when the
 * process quits at once.
 */
export class ObjectCaches {
  readonly #folder: PrivateTempFolder;
  #room: Promise<number> | undefined;
  #written = 0;
  #stopped = false;
  #frozen = false;
  /** Bytes read from the copies instead of from S3. */
  readBack = 0;

  readonly #handles: Promise<FileHandle | undefined>[] = [];

  constructor(readonly place: CopyPlace) {
    this.#folder = new PrivateTempFolder(place);
    place.keep(async () => {
      for (const handle of this.#handles) await (await handle)?.close().catch(() => undefined);
    });
  }

  /** Opens object `index`'s copy (private: 0600); undefined, and the copying stopped, where it cannot be. */
  openCopy(file: string, path: string): Promise<FileHandle | undefined> {
    // Read and written: the copied stretches are read back through it (objectCache.ts #readCopy).
    const handle = open(path, 'w+', 0o600).catch((error: unknown) => {
      this.stop(`${file}: cannot copy the bytes read to plan the stripes (${(error as Error).message}): they are fetched from S3 again where read again`);
      return undefined;
    });
    this.#handles.push(handle);
    return handle;
  }

  /** `bytes` (an S3 object's ranged reads), read through a copy of what is read of them. */
  cached(file: string, index: number, bytes: RangeBytes): RangeBytes {
    const cache = new ObjectCache(this, file, index, bytes);
    return { open: (start, end, chunk) => Readable.from(cache.read(start, end, chunk), { objectMode: false }) };
  }

  /** From now on nothing more is copied; what was is still read from the copies. */
  freeze(): void {
    this.#frozen = true;
  }

  /** Where object `index`'s copy goes, or undefined once copying stopped (frozen, no room, a failed write). */
  async reserve(file: string, index: number, bytes: number): Promise<string | undefined> {
    if (this.#frozen || this.#stopped) return undefined;
    try {
      const folder = await this.#folder.made();
      this.#room ??= roomLeft(folder);
      if (this.#written + bytes > (await this.#room)) {
        this.stop(
          `${file}: the local copy of the bytes read to plan the stripes stopped at ${this.#written} bytes (the room left in ${this.place.parent}, less what is kept free; none on a file system in memory): the rest is fetched from S3 again where read again; give --temp-dir a folder with room to fetch each byte once`,
        );
        return undefined;
      }
      this.#written += bytes;
      return join(folder, `object-${index}.bytes`);
    } catch (error) {
      this.stop(
        `${file}: cannot copy the bytes read to plan the stripes (${(error as Error).message}): they are fetched from S3 again where read again; give --temp-dir a writable folder to fetch each byte once`,
      );
      return undefined;
    }
  }

  stop(message: string): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.place.warn(message);
  }
}

/** One object's copy: a sparse file, and the stretches of it written. */
class ObjectCache {
  /** Written stretches [start, end), sorted, apart. */
  readonly #stretches: { start: number; end: number }[] = [];
  #handle: Promise<FileHandle | undefined> | undefined;

  constructor(
    readonly caches: ObjectCaches,
    readonly file: string,
    readonly index: number,
    readonly bytes: RangeBytes,
  ) {}

  /** Bytes [start, end): the stretches copied from the file, the others from the object (and copied while allowed). */
  async *read(start: number, end: number, chunk: number): AsyncGenerator<Buffer> {
    let at = start;
    while (at < end) {
      const inside = this.#stretches.find((s) => s.start <= at && at < s.end);
      if (inside) {
        // Through the copy's open handle, not its path: a folder removed meanwhile (a tmp reaper) still reads.
        const piece = await this.#readCopy(at, Math.min(end, inside.end, at + chunk));
        if (!piece) continue;
        this.caches.readBack += piece.length;
        at += piece.length;
        yield piece;
        continue;
      }
      const next = this.#stretches.find((s) => s.start > at);
      const to = Math.min(end, next?.start ?? end);
      for await (const piece of this.bytes.open(at, to, chunk)) {
        const buffer = piece as Buffer;
        await this.#copy(at, buffer);
        at += buffer.length;
        yield buffer;
      }
    }
  }

  /**
   * Bytes of the copy from `start` (at most to `end`), or undefined where it cannot be read: the copied
   * stretches are then forgotten and the copying stopped, said, and the bytes fetched from the object again.
   */
  async #readCopy(start: number, end: number): Promise<Buffer | undefined> {
    try {
      const handle = await this.#handle;
      if (!handle) throw new Error('the copy is not open');
      const buffer = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      if (bytesRead === 0) throw new Error(`the copy ends before byte ${start}`);
      return buffer.subarray(0, bytesRead);
    } catch (error) {
      this.#stretches.splice(0);
      this.caches.stop(
        `${this.file}: a read of the local copy of the bytes read to plan the stripes failed (${(error as Error).message}): they are fetched from S3 again`,
      );
      return undefined;
    }
  }

  async #copy(at: number, buffer: Buffer): Promise<void> {
    const path = await this.caches.reserve(this.file, this.index, buffer.length);
    if (path === undefined) return;
    this.#handle ??= this.caches.openCopy(this.file, path);
    const handle = await this.#handle;
    if (!handle) return;
    try {
      let done = 0;
      while (done < buffer.length) done += (await handle.write(buffer, done, buffer.length - done, at + done)).bytesWritten;
    } catch (error) {
      this.caches.stop(
        `${this.file}: a write to the local copy of the bytes read to plan the stripes failed (${(error as Error).message}): the rest is fetched from S3 again where read again`,
      );
      return;
    }
    this.#record(at, at + buffer.length);
  }

  /** Adds [start, end) to the written stretches, joining those it touches. */
  #record(start: number, end: number): void {
    let s = start;
    let e = end;
    const kept = this.#stretches.filter((x) => {
      if (x.end < s || x.start > e) return true;
      s = Math.min(s, x.start);
      e = Math.max(e, x.end);
      return false;
    });
    kept.push({ start: s, end: e });
    kept.sort((a, b) => a.start - b.start);
    this.#stretches.splice(0, this.#stretches.length, ...kept);
  }
}
