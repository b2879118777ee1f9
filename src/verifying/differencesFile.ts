import type { WriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
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
 */
export class DifferencesFile {
  #opening: Promise<{ handle: FileHandle; stream: WriteStream }> | undefined;
  #failed: Error | undefined;
  count = 0;

  constructor(readonly path: string) {}

  async write(record: DifferenceRecord): Promise<void> {
    if (this.#failed) throw this.#error(this.#failed);
    this.#opening ??= createPrivateFile(this.path).then((handle) => {
      const stream = handle.createWriteStream();
      stream.on('error', (error) => (this.#failed = error));
      return { handle, stream };
    });
    let stream: WriteStream;
    try {
      ({ stream } = await this.#opening);
    } catch (error) {
      this.#failed = error as Error;
      throw this.#error(this.#failed);
    }
    this.count++;
    if (!stream.write(`${JSON.stringify(record)}\n`)) await once(stream, 'drain');
  }

  async close(): Promise<void> {
    if (!this.#opening) return;
    const opened = await this.#opening.catch(() => undefined);
    if (this.#failed || !opened) throw this.#error(this.#failed ?? new Error('not opened'));
    await new Promise<void>((resolve, reject) => opened.stream.end((error?: Error | null) => (error ? reject(this.#error(error)) : resolve())));
    if (this.#failed) throw this.#error(this.#failed);
  }

  #error(cause: Error): LoaderError {
    return new LoaderError('REPORT_UNWRITABLE', `cannot write the differences file ${this.path}: ${cause.message}; pass --differences with a writable path`, {
      file: this.path,
      cause,
    });
  }
}
