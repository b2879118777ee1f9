import type { WriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { rm } from 'node:fs/promises';
import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { LoaderError } from '../shared/errors.js';
import type { RejectedRow } from '../shared/types.js';
import { createPrivateFile } from '../files/privateFiles.js';
import type { RejectFileState } from '../checkpointing/rejectsBeforePoint.js';

/**
 * The reject file: one JSON object per rejected row with its source file, line, reason code, message,
 * key (when known) and original text, so it can be fixed and fed back in. Created on the first reject
 * only, so a clean load leaves no empty file behind; private (0600), never through a symlink (its path
 * was checked and locked before the first row: src/load/outputFiles.ts).
 *
 * It counts the bytes handed to it and hashes them as they go, and can wait until they are on disk
 * (settle): a checkpoint records both, so a resume at a restart point can keep the rejects of the rows
 * before the point from the file (src/checkpointing/rejectsBeforePoint.ts).
 */
export class RejectSink {
  #opening: Promise<{ handle: FileHandle; stream: WriteStream }> | undefined;
  #failed: Error | undefined;
  #bytes = 0;
  #hash: Hash = createHash('sha256');
  /** Settles when the last write handed to the stream is written (writes finish in order). */
  #written: Promise<void> = Promise.resolve();
  #closed = false;
  count = 0;

  constructor(readonly path: string) {}

  async write(row: RejectedRow): Promise<void> {
    const record = {
      file: row.origin.file,
      line: row.origin.line,
      code: row.code,
      message: row.message,
      ...(row.field !== undefined ? { field: row.field } : {}),
      ...(row.key !== undefined ? { key: row.key } : {}),
      raw: row.origin.raw,
    };
    await this.#append(`${JSON.stringify(record)}\n`);
    this.count++;
  }

  /**
   * A resume at a restart point: the file holds `lines` (the rejects of the rows before the point, as an
   * earlier run wrote them) and nothing else; with none, an earlier run's file is removed, as the rows after
   * the point are read again and rejected again.
   */
  async restore(lines: readonly string[]): Promise<void> {
    if (lines.length === 0) {
      await rm(this.path, { force: true }).catch((error: Error) => {
        throw this.#error(error);
      });
      return;
    }
    for (const line of lines) {
      await this.#append(`${line}\n`);
      this.count++;
    }
  }

  /** The bytes handed to the file so far and their SHA-256. */
  state(): RejectFileState {
    return { bytes: this.#bytes, sha256: this.#hash.copy().digest('hex') };
  }

  /** Resolves once every byte handed to the file is written and fsynced. */
  async settle(): Promise<void> {
    if (!this.#opening || this.#closed) return;
    await this.#written;
    if (this.#failed) throw this.#error(this.#failed);
    const { handle } = await this.#opening;
    try {
      await handle.sync();
    } catch (error) {
      throw this.#error(error as Error);
    }
  }

  async #append(text: string): Promise<void> {
    if (this.#failed) throw this.#error(this.#failed);
    // One open for concurrent first rejects (batches reject in parallel).
    this.#opening ??= createPrivateFile(this.path).then((handle) => {
      const stream = handle.createWriteStream();
      stream.on('error', (error) => {
        this.#failed = error;
      });
      return { handle, stream };
    });
    let stream: WriteStream;
    try {
      ({ stream } = await this.#opening);
    } catch (error) {
      this.#failed = error as Error;
      throw this.#error(this.#failed);
    }
    // Counted and hashed in the order handed to the stream, which is the order it writes them in.
    this.#bytes += Buffer.byteLength(text);
    this.#hash.update(text);
    const written = new Promise<void>((resolve) => stream.write(text, () => resolve()));
    this.#written = written;
    if (stream.writableNeedDrain) await once(stream, 'drain');
  }

  async close(): Promise<void> {
    if (!this.#opening) return;
    const opened = await this.#opening.catch(() => undefined);
    // A stream that failed is destroyed: end() would only say "Cannot call end after a stream was destroyed".
    if (this.#failed || !opened) throw this.#error(this.#failed ?? new Error('not opened'));
    // On disk before the checkpoint that counts these rejects says the load stopped.
    await this.settle();
    this.#closed = true;
    await new Promise<void>((resolve, reject) => {
      opened.stream.end((error?: Error | null) => (error ? reject(this.#error(error)) : resolve()));
    });
    if (this.#failed) throw this.#error(this.#failed);
  }

  #error(cause: Error): LoaderError {
    return new LoaderError('REJECTS_UNWRITABLE', `cannot write the reject file ${this.path}: ${cause.message}; pass --rejects with a writable path`, {
      file: this.path,
      cause,
    });
  }
}
