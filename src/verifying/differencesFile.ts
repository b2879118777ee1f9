import { createHash, type Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { open, rm } from 'node:fs/promises';
import { constants } from 'node:fs';
import { createPrivateFile } from '../files/privateFiles.js';
import { LoaderError } from '../shared/errors.js';

/** One line of the differences file: the reject file's fields (file, line, code, message, key, raw). */
export interface DifferenceRecord {
  file: string;
  line: number;
  code: 'MISSING' | 'DIFFERENT' | 'DELETED_BUT_PRESENT' | 'REJECTED_BUT_PRESENT' | 'EXTRA';
  message: string;
  field?: string;
  key?: Record<string, string>;
  /** The input row's text, so the rows can be fed back to load (`jq -r .raw`), as a reject file's. */
  raw: string;
}

/**
 * The differences file: one JSON object per key not as the input leaves it, in the reject file's format
 * (reporting/rejectSink.ts), so it is read, fixed and fed back to load the same way. Created at the first
 * difference only (a clean verify leaves no file); private (0600), never through a symlink.
 *
 * Writes are queued in the order they are handed over and written one after another at known offsets, so
 * `bytes` (counted as each record is handed over) is where the file will end once they are written; sync()
 * waits for them and fsyncs, after which a checkpoint may record `bytes`. A resumed verify reopens the file
 * cut back to the bytes its checkpoint recorded (resume()), so nothing is listed twice.
 */
export class DifferencesFile {
  #handle: Promise<FileHandle> | undefined;
  #chain: Promise<void> = Promise.resolve();
  #failed: Error | undefined;
  /** Records handed over (this run's, and a resumed run's before it). */
  count = 0;
  /** Bytes handed over: the file's length once they are written. */
  bytes = 0;
  /** SHA-256 of the bytes handed over, as they are handed over. */
  #hash: Hash = createHash('sha256');

  /** The SHA-256 (hex) of the file's `bytes` bytes once written: a checkpoint records it, a resume checks it. */
  get sha256(): string {
    return this.#hash.copy().digest('hex');
  }

  constructor(readonly path: string) {}

  /**
   * Goes on from a checkpoint: the file cut back to its first `bytes` bytes (a run killed after the save wrote
   * more), holding `count` records; with 0 bytes, any file left is removed. A file shorter than that is refused.
   */
  async resume(bytes: number, count: number, checkpoint: string, sha256?: string): Promise<void> {
    if (bytes === 0) {
      await rm(this.path, { force: true });
      return;
    }
    let handle: FileHandle;
    try {
      handle = await open(this.path, constants.O_RDWR | constants.O_NOFOLLOW);
    } catch (error) {
      throw new LoaderError(
        'CHECKPOINT_INVALID',
        `checkpoint ${checkpoint} records ${bytes} bytes of differences in ${this.path}, which cannot be opened (${(error as Error).message}); delete ${checkpoint} to verify from the start`,
        { file: checkpoint, cause: error },
      );
    }
    const size = (await handle.stat()).size;
    if (size < bytes) {
      await handle.close();
      throw new LoaderError(
        'CHECKPOINT_INVALID',
        `checkpoint ${checkpoint} records ${bytes} bytes of differences in ${this.path}, which holds ${size}: it was cut or replaced since; delete ${checkpoint} to verify from the start`,
        { file: checkpoint },
      );
    }
    // The bytes recorded must be the ones there: a file replaced or edited since would be appended to as if this run's.
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(1 << 20);
    for (let at = 0; at < bytes;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, bytes - at), at);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
    if (sha256 !== undefined && hash.copy().digest('hex') !== sha256) {
      await handle.close();
      throw new LoaderError(
        'CHECKPOINT_INVALID',
        `the first ${bytes} bytes of ${this.path} are not the differences checkpoint ${checkpoint} recorded (their SHA-256 differs): the file was changed or replaced since; delete ${checkpoint} to verify from the start`,
        { file: checkpoint },
      );
    }
    this.#hash = hash;
    await handle.truncate(bytes);
    await handle.chmod(0o600);
    this.#handle = Promise.resolve(handle);
    this.bytes = bytes;
    this.count = count;
  }

  /** Hands records over, written in this order after any handed over before. */
  write(records: readonly DifferenceRecord[]): Promise<void> {
    if (this.#failed) return Promise.reject(this.#error(this.#failed));
    if (records.length === 0) return this.#chain;
    const text = Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const at = this.bytes;
    this.bytes += text.length;
    this.#hash.update(text);
    this.count += records.length;
    this.#handle ??= createPrivateFile(this.path);
    const handle = this.#handle;
    this.#chain = this.#chain.then(async () => {
      if (this.#failed) return;
      try {
        const h = await handle;
        let done = 0;
        while (done < text.length) done += (await h.write(text, done, text.length - done, at + done)).bytesWritten;
      } catch (error) {
        this.#failed = error as Error;
      }
    });
    return this.#chain.then(() => {
      if (this.#failed) throw this.#error(this.#failed);
    });
  }

  /** Waits for every record handed over to be written, and fsyncs the file. */
  async sync(): Promise<void> {
    await this.#chain;
    if (this.#failed) throw this.#error(this.#failed);
    if (!this.#handle) return;
    try {
      await (await this.#handle).sync();
    } catch (error) {
      this.#failed = error as Error;
      throw this.#error(this.#failed);
    }
  }

  async close(): Promise<void> {
    if (!this.#handle) return;
    const opening = this.#handle;
    try {
      await this.sync();
    } finally {
      this.#handle = undefined;
      await (await opening.catch(() => undefined))?.close().catch(() => undefined);
    }
  }

  #error(cause: Error): LoaderError {
    return new LoaderError('REPORT_UNWRITABLE', `cannot write the differences file ${this.path}: ${cause.message}; pass --differences with a writable path`, {
      file: this.path,
      cause,
    });
  }
}
