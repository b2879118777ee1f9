import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { LoaderError } from '../shared/errors.js';

export interface OpenedInput {
  /** Decompressed bytes of the input. */
  stream: Readable;
  /** Name used in messages and reject records ("-" reads stdin and is shown as "stdin"). */
  name: string;
  /** Size of the file on disk (compressed size for .gz), when known, for progress. */
  totalBytes: number | undefined;
  /** Bytes read from the file or stdin so far (before decompression), for progress. */
  bytesRead(): number;
}

/**
 * Opens a file or stdin for streaming. Gzip is recognised by its magic bytes (1f 8b), so `.gz` files and
 * gzipped stdin both work without a flag. Backpressure flows through: nothing is read ahead of the parser
 * beyond the streams' high-water marks.
 */
export async function openInput(path: string, stdin: Readable = process.stdin): Promise<OpenedInput> {
  let source: Readable;
  let totalBytes: number | undefined;
  let name = path;
  if (path === '-') {
    source = stdin;
    name = 'stdin';
  } else {
    try {
      const info = await stat(path);
      if (info.isDirectory()) throw new LoaderError('INPUT_UNREADABLE', `${path} is a directory; pass a CSV or JSONL file`, { file: path });
      totalBytes = info.size;
    } catch (error) {
      if (error instanceof LoaderError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new LoaderError(
        code === 'ENOENT' ? 'INPUT_NOT_FOUND' : 'INPUT_UNREADABLE',
        code === 'ENOENT' ? `input file ${path} does not exist` : `cannot read ${path}: ${(error as Error).message}`,
        { file: path, cause: error },
      );
    }
    source = createReadStream(path, { highWaterMark: 256 * 1024 });
  }

  let bytes = 0;
  const counted = new PassThrough({ highWaterMark: 256 * 1024 });
  source.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  source.on('error', (error) => counted.destroy(new LoaderError('INPUT_UNREADABLE', `cannot read ${name}: ${error.message}`, { file: name, cause: error })));
  source.pipe(counted);

  const stream = await gunzipIfNeeded(counted);
  return { stream, name, totalBytes, bytesRead: () => bytes };
}

/** The stream, gunzipped when it starts with gzip's magic bytes (1f 8b). */
export async function gunzipIfNeeded(input: Readable): Promise<Readable> {
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head = await chunks.next();
  if (head.done) return Readable.from([]);
  const first = head.value;
  // The first chunk has been taken off the stream; put it back in front of the rest (an unshift would
  // lose it if the stream already ended, as a short stdin does).
  const whole = Readable.from(
    (async function* () {
      try {
        yield first;
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
      } finally {
        await chunks.return?.();
      }
    })(),
    { objectMode: false },
  );
  if (first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b) {
    const gunzip = createGunzip();
    whole.on('error', (error) => gunzip.destroy(error));
    // A gunzip failure reaches the parser through `gunzip` itself; the reader names the file.
    return whole.pipe(gunzip);
  }
  return whole;
}
