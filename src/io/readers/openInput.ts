import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { LoaderError } from '../../core/errors.js';

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

async function gunzipIfNeeded(input: Readable): Promise<Readable> {
  const first = await readFirstChunk(input);
  if (first === null) return Readable.from([]);
  input.unshift(first);
  if (first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b) {
    const gunzip = createGunzip();
    input.on('error', (error) => gunzip.destroy(error));
    // A gunzip failure reaches the parser through `gunzip` itself; the reader names the file.
    return input.pipe(gunzip);
  }
  return input;
}

function readFirstChunk(input: Readable): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const onReadable = () => {
      const chunk = input.read() as Buffer | null;
      if (chunk !== null) {
        cleanup();
        resolve(chunk);
      }
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      input.off('readable', onReadable);
      input.off('end', onEnd);
      input.off('error', onError);
    };
    input.on('readable', onReadable);
    input.on('end', onEnd);
    input.on('error', onError);
  });
}
