import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LoaderError, type LoaderErrorCode } from '../shared/errors.js';
import type { SourceRecord } from '../typing/planRow.js';
import { unpackValue } from './clonedValues.js';
import type { FileIdentity } from './filePin.js';
import { recordsOfGroup, type DecodedGroup } from './readParquet.js';

/**
 * A Parquet file decoded in a worker thread (parquetWorker.ts). hyparquet trusts the counts and lengths
 * in a file's pages: one flipped byte in a page header can make it loop forever (measured on 1.31.5: a run
 * of bit-packed or RLE values whose count never reaches the page's), and on the load's thread that loop
 * would block the event loop, so neither SIGTERM nor --stop-timeout could end the load. In a worker, the
 * load's thread stays free: a signal stops the load (the worker is terminated), and a row group that
 * does not come within a bound drawn from its size is reported as a corrupt file, naming it. Decoding
 * also leaves the load's thread for typing and writing.
 */

export interface ParquetWorkerData {
  path: string;
  file: string;
  /** The file's identity when listed: the worker checks each read against it (filePin.ts). */
  identity?: FileIdentity | undefined;
}

/** What the worker posts: a row group started (its bytes), a row group decoded, the end, or its error. */
export type FromWorker =
  | { type: 'group'; group: number; bytes: number }
  | ({ type: 'rows'; bytesRead: number } & DecodedGroup)
  | { type: 'end'; bytesRead: number }
  | { type: 'error'; code: LoaderErrorCode | undefined; message: string };

/**
 * Time a row group may take at least, and per MB of its bytes: far above what hyparquet needs (a row
 * group of 1 MB decodes in tens of ms) on a machine shared with other work. The footer's bound is three
 * times the base: it includes the worker's start (loading hyparquet).
 */
export const STALL_BASE_MS = 10_000;
export const STALL_MS_PER_MB = 1_000;

/** How long the load waits for a row group of `bytes` (compressed + uncompressed, from the footer). */
export function stallBoundMs(bytes: number, baseMs = STALL_BASE_MS): number {
  return baseMs + Math.ceil((bytes / (1024 * 1024)) * STALL_MS_PER_MB);
}

export interface ParquetThreadOptions {
  /** Stops the read: the worker is terminated and the records end. */
  signal?: AbortSignal;
  /** The least time per row group (tests shorten it). @default STALL_BASE_MS */
  stallBaseMs?: number;
  /** Told of the bytes the worker has read so far, for progress. */
  onBytes?: (bytes: number) => void;
  /** The file's pinned identity (filePin.ts): a read of a changed file is INPUT_CHANGED. */
  identity?: FileIdentity | undefined;
}

/** The records of the Parquet file at `path` (named `file` in messages), decoded in a worker. */
export async function* readParquetInWorker(path: string, file: string, options: ParquetThreadOptions = {}): AsyncGenerator<SourceRecord> {
  const baseMs = options.stallBaseMs ?? STALL_BASE_MS;
  const worker = startWorker({ path, file, identity: options.identity });
  const inbox: FromWorker[] = [];
  let wake: (() => void) | undefined;
  let failure: LoaderError | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let armed = 0;
  let ended = false;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const fail = (error: LoaderError) => {
    failure ??= error;
    void worker.terminate();
    notify();
  };
  const disarm = () => {
    armed++;
    clearTimeout(timer);
  };
  const arm = (ms: number, what: string) => {
    disarm();
    const token = armed;
    // Checked again after the messages already posted are taken (setImmediate runs after them), so a busy
    // load thread that sees its timer late never takes a row group that came in time for a stall.
    timer = setTimeout(() => setImmediate(() => token === armed && fail(stalled(file, what, ms))), ms);
  };
  const onAbort = () => {
    stopped = true;
    void worker.terminate();
    notify();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'group') arm(stallBoundMs(message.bytes, baseMs), `row group ${message.group}`);
    else {
      disarm();
      ended ||= message.type === 'end';
      inbox.push(message);
    }
    notify();
  });
  worker.on('error', (error) => fail(new LoaderError('INPUT_UNREADABLE', `cannot read ${file} as Parquet: ${error.message}`, { file, cause: error })));
  worker.on('exit', () => {
    if (!stopped && !ended) fail(new LoaderError('INPUT_UNREADABLE', `cannot read ${file} as Parquet: its decoder stopped`, { file }));
    notify();
  });
  // The footer: worker start, the file's index read and parsed.
  arm(3 * baseMs, 'its footer');
  try {
    for (;;) {
      const message = inbox.shift();
      if (stopped) return;
      if (failure) throw failure;
      if (!message) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (message.type === 'error')
        throw message.code
          ? new LoaderError(message.code, message.message, { file })
          : new LoaderError('INPUT_UNREADABLE', `cannot read ${file} as Parquet: ${message.message}`, { file });
      if (message.type === 'group') continue;
      options.onBytes?.(message.bytesRead);
      if (message.type === 'end') return;
      // The next row group is decoded while these rows are typed and written.
      worker.postMessage('next');
      const group = { ...message, rows: message.rows.map((row) => unpackValue(row) as Record<string, unknown>) };
      yield* recordsOfGroup(group, file);
    }
  } finally {
    disarm();
    options.signal?.removeEventListener('abort', onAbort);
    stopped = true;
    await worker.terminate();
  }
}

function stalled(file: string, what: string, ms: number): LoaderError {
  return new LoaderError(
    'INPUT_UNREADABLE',
    `${file} is not a readable Parquet file: decoding ${what} made no progress in ${Math.round(ms / 1000)} s (a corrupt page header or count sends the decoder into a loop); check the file with another Parquet reader, or write it again`,
    { file },
  );
}

/**
 * The worker, from the built parquetWorker.js; when this module runs from its TypeScript source (the
 * tests), from parquetWorker.ts through tsx's loader.
 */
function startWorker(data: ParquetWorkerData): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./parquetWorker.js', here), { workerData: data });
  const tsx = pathToFileURL(
    createRequire(here)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const entry = new URL('./parquetWorker.ts', here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}
