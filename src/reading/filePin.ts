import { close, fstatSync, open, read, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';

/**
 * A local file's identity as it was when the load listed it: the file, its size and its
 * modification and change times. A file truncated, appended to, rewritten in place or replaced while it is
 * read would make a load of two versions, or lose the rows past the cut: every byte a load reads from a
 * local file is checked against this, as an S3 object's reads are checked against its ETag (s3Part.ts).
 */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export function identityOf(stats: Stats): FileIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs };
}

/** What differs between the identity pinned and the one found, in words; undefined when nothing does. Pure. */
export function identityChange(pinned: FileIdentity, now: FileIdentity): string | undefined {
  if (now.dev !== pinned.dev || now.ino !== pinned.ino) return 'replaced by another file';
  if (now.size !== pinned.size) return `size ${bytes(pinned.size)} -> ${bytes(now.size)} bytes`;
  if (now.mtimeMs !== pinned.mtimeMs) return `modified: mtime ${time(pinned.mtimeMs)} -> ${time(now.mtimeMs)}`;
  if (now.ctimeMs !== pinned.ctimeMs) return `its inode changed: ctime ${time(pinned.ctimeMs)} -> ${time(now.ctimeMs)}`;
  return undefined;
}

const bytes = (n: number) => n.toLocaleString('en-US');
const time = (ms: number) => new Date(ms).toISOString();

/** Read-ahead of a whole part's read (as openInput's). */
const PART_CHUNK = 256 * 1024;

/** A local file pinned when listed: its reads check it. */
export class FilePin {
  constructor(
    /** As shown in messages: the path as found. */
    readonly name: string,
    readonly path: string,
    readonly identity: FileIdentity,
  ) {}

  /** The error of a file found changed: what changed, and the two ways on. */
  changed(what: string): LoaderError {
    return new LoaderError(
      'INPUT_CHANGED',
      `${this.name} changed while it was being read (${what}): rows read from it now would mix two versions or miss some; restore it and run the load again (with the same --checkpoint it resumes where it stopped), or start over on the new content without that checkpoint`,
      { file: this.name },
    );
  }

  /** Throws when `stats` (of the path or of an open descriptor) is not the pinned identity. */
  verify(stats: Stats): void {
    const what = identityChange(this.identity, identityOf(stats));
    if (what !== undefined) throw this.changed(what);
  }

  /** The file at its path, checked now (deleted, moved away, replaced or changed: an error). */
  async check(): Promise<void> {
    let found: Stats;
    try {
      found = await stat(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw this.changed('it was deleted or moved away');
      throw unreadable(this.name, error);
    }
    this.verify(found);
  }

  /** An open descriptor of the file, checked now: synchronous, as cheap as a system call, once per chunk read. */
  verifyDescriptor(fd: number): void {
    this.verify(fstatSync(fd));
  }

  /**
   * Bytes [start, end) of the file (end at most the pinned size), read in chunks of `chunkBytes`. The file is
   * checked when it is opened, after every chunk is read and before it is handed on (so no byte read after a
   * change ever reaches a parser), and at the end; a file that ends early is a change too.
   */
  open(start = 0, end = this.identity.size, chunkBytes = PART_CHUNK): Readable {
    return new PinnedReadStream(this, start, Math.min(end, this.identity.size), chunkBytes);
  }
}

export function unreadable(name: string, error: unknown): LoaderError {
  return new LoaderError('INPUT_UNREADABLE', `cannot read ${name}: ${(error as Error).message}`, { file: name, cause: error });
}

class PinnedReadStream extends Readable {
  readonly #pin: FilePin;
  #fd = -1;
  #at: number;
  readonly #end: number;
  readonly #chunk: number;

  constructor(pin: FilePin, start: number, end: number, chunk: number) {
    super({ highWaterMark: chunk });
    this.#pin = pin;
    this.#at = start;
    this.#end = end;
    this.#chunk = chunk;
  }

  override _construct(callback: (error?: Error | null) => void): void {
    open(this.#pin.path, 'r', (error, fd) => {
      if (error) return callback(error.code === 'ENOENT' ? this.#pin.changed('it was deleted or moved away') : unreadable(this.#pin.name, error));
      this.#fd = fd;
      try {
        // The path may name another file than the one listed by now.
        this.#pin.verifyDescriptor(fd);
      } catch (failure) {
        return callback(failure as Error);
      }
      callback();
    });
  }

  override _read(): void {
    const want = Math.min(this.#chunk, this.#end - this.#at);
    if (want <= 0) {
      // Every byte read: the path must still name the file listed (not replaced by a rename).
      this.#pin.check().then(
        () => this.push(null),
        (error: Error) => this.destroy(error),
      );
      return;
    }
    const buffer = Buffer.allocUnsafe(want);
    read(this.#fd, buffer, 0, want, this.#at, (error, got) => {
      if (this.destroyed) return;
      if (error) return void this.destroy(unreadable(this.#pin.name, error));
      try {
        // After the read: a file unchanged now was unchanged when these bytes were read.
        this.#pin.verifyDescriptor(this.#fd);
      } catch (failure) {
        return void this.destroy(failure as Error);
      }
      if (got === 0) return void this.destroy(this.#pin.changed(`it ended at byte ${bytes(this.#at)} of its ${bytes(this.#pin.identity.size)}`));
      this.#at += got;
      this.push(got < want ? buffer.subarray(0, got) : buffer);
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#fd < 0) return callback(error);
    const fd = this.#fd;
    this.#fd = -1;
    close(fd, () => callback(error));
  }
}
