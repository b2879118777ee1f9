import type { WriteStream } from 'node:fs';
import { once } from 'node:events';
import { LoaderError } from '../shared/errors.js';
import type { RejectedRow } from '../shared/types.js';
import { createPrivateFile } from '../files/privateFiles.js';

/**
 * The reject file: one JSON object per rejected row with its source file, line, reason code, message,
 * key (when known) and original text, so it can be fixed and fed back in. Created on the first reject
 * only, so a clean load leaves no empty file behind; private (0600), never through a symlink (its path
 * was checked and locked before the first row: src/load/outputFiles.ts).
 */
export class RejectSink {
  #opening: Promise<WriteStream> | undefined;
  #failed: Error | undefined;
  count = 0;

  constructor(readonly path: string) {}

  async write(row: RejectedRow): Promise<void> {
    if (this.#failed) throw this.#error(this.#failed);
    // One open for concurrent first rejects (batches reject in parallel).
    this.#opening ??= createPrivateFile(this.path).then((handle) => {
      const stream = handle.createWriteStream();
      stream.on('error', (error) => {
        this.#failed = error;
      });
      return stream;
    });
    let stream: WriteStream;
    try {
      stream = await this.#opening;
    } catch (error) {
      this.#failed = error as Error;
      throw this.#error(this.#failed);
    }
    this.count++;
    const record = {
      file: row.origin.file,
      line: row.origin.line,
      code: row.code,
      message: row.message,
      ...(row.field !== undefined ? { field: row.field } : {}),
      ...(row.key !== undefined ? { key: row.key } : {}),
      raw: row.origin.raw,
    };
    if (!stream.write(`${JSON.stringify(record)}\n`)) await once(stream, 'drain');
  }

  async close(): Promise<void> {
    if (!this.#opening) return;
    const stream = await this.#opening.catch(() => undefined);
    // A stream that failed is destroyed: end() would only say "Cannot call end after a stream was destroyed".
    if (this.#failed || !stream) throw this.#error(this.#failed ?? new Error('not opened'));
    await new Promise<void>((resolve, reject) => {
      stream.end((error?: Error | null) => (error ? reject(this.#error(error)) : resolve()));
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
