import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { LoaderError } from '../core/errors.js';
import type { RejectedRow } from '../core/types.js';

/**
 * The reject file: one JSON object per rejected row with its source file, line, reason code, message,
 * key (when known) and original text, so it can be fixed and fed back in. Created on the first reject
 * only, so a clean load leaves no empty file behind.
 */
export class RejectSink {
  #stream: WriteStream | undefined;
  #failed: Error | undefined;
  count = 0;

  constructor(readonly path: string) {}

  async write(row: RejectedRow): Promise<void> {
    if (this.#failed) throw this.#error(this.#failed);
    if (!this.#stream) {
      this.#stream = createWriteStream(this.path, { flags: 'w' });
      this.#stream.on('error', (error) => {
        this.#failed = error;
      });
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
    if (!this.#stream.write(`${JSON.stringify(record)}\n`)) await once(this.#stream, 'drain');
  }

  async close(): Promise<void> {
    const stream = this.#stream;
    if (!stream) return;
    await new Promise<void>((resolve, reject) => {
      stream.end((error?: Error | null) => (error ? reject(this.#error(error)) : resolve()));
    });
    if (this.#failed) throw this.#error(this.#failed);
  }

  #error(cause: Error): LoaderError {
    return new LoaderError('REJECTS_UNWRITABLE', `cannot write the reject file ${this.path}: ${cause.message}; pass --rejects with a writable path`, { file: this.path, cause });
  }
}
