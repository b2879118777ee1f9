import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PassThrough, type Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';
import type { FilePin } from './filePin.js';
import { decompress } from './decompress.js';
import { compressionOf, type Compression } from './magic.js';
import { peekFirstChunk } from './peek.js';

export interface OpenedInput {
  /** Decompressed bytes of the input. */
  stream: Readable;
  /** Name used in messages and reject records ("-" reads stdin and is shown as "stdin"). */
  name: string;
  /** Size of the file on disk (compressed size for .gz), when known, for progress. */
  totalBytes: number | undefined;
  /** Bytes of the file or stdin (before decompression) handed to the parser so far, for progress. */
  bytesRead(): number;
  /** The path given ("-" for stdin): a reader that needs random access (Parquet) opens it again. */
  path: string;
  /** The compression recognised by its magic bytes, if any. */
  compression: Compression | undefined;
  /** A listed local file's identity, which a reader that opens the path again (Parquet) checks its reads against. */
  pin?: FilePin | undefined;
}

/**
 * Opens a file or stdin for streaming. gzip, zstd and bzip2 are recognised by their magic bytes
 * (src/reading/magic.ts), so compressed files and compressed stdin work without a flag. Backpressure flows through: nothing is read ahead of the parser
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

  const { stream, compression } = await decompressIfNeeded(counted);
  return { stream, name, totalBytes, bytesRead: () => bytes - buffered(counted), path, compression };
}

/**
 * Bytes read from the source but still waiting in `counted`'s buffers (up to 512 KB): not yet handed to
 * the parser, so not yet behind any row read. Progress weighs the rows read against the bytes behind them.
 */
export function buffered(counted: PassThrough): number {
  return counted.writableLength + counted.readableLength;
}

/** The stream decompressed when its first bytes are gzip's, zstd's or bzip2's magic (each part of an input set too). */
export async function decompressIfNeeded(input: Readable): Promise<{ stream: Readable; compression: Compression | undefined }> {
  const { head, stream } = await peekFirstChunk(input);
  const compression = compressionOf(head);
  // A decoder failure reaches the parser through the returned stream; the reader names the file.
  return { stream: compression ? decompress(stream, compression) : stream, compression };
}
