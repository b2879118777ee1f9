import { LoaderError } from '../shared/errors.js';
import type { SourceRecord } from '../typing/planRow.js';
import type { OpenedInput } from './openInput.js';
import type { ParquetThreadOptions } from './parquetThread.js';

/**
 * A Parquet input: Parquet needs random access (its footer holds the index), so the opened stream is
 * closed and the file is read again at offsets. stdin and compressed files cannot be read that way
 * (Parquet compresses inside the file; an outer .gz or .zst is refused with the fix). Decoded in a worker
 * (parquetThread.ts): a corrupt file ends with an error naming it, and `signal` stops it at once.
 * `stallBaseMs`: how long a row group may take at the least (tests shorten it).
 */
export async function* readParquetInput(
  input: OpenedInput,
  { signal, stallBaseMs }: Pick<ParquetThreadOptions, 'signal' | 'stallBaseMs'> = {},
): AsyncGenerator<SourceRecord> {
  input.stream.destroy();
  if (input.path === '-') {
    throw new LoaderError('INVALID_OPTION', 'Parquet cannot be read from stdin: its index is at the end of the file; pass the file path instead');
  }
  if (input.compression) {
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `${input.name} is ${input.compression}-compressed Parquet; Parquet compresses its own pages, so decompress the file first (or write it with a Parquet codec)`,
      { file: input.name },
    );
  }
  let bytes = 0;
  input.bytesRead = () => bytes;
  // Loaded for the first Parquet input: hyparquet and its codecs are not needed otherwise.
  const { readParquetInWorker } = await import('./parquetThread.js');
  // The worker checks every read against the identity pinned when the file was listed: a file changed mid-load stops it.
  yield* readParquetInWorker(input.path, input.name, {
    ...(signal ? { signal } : {}),
    ...(stallBaseMs !== undefined ? { stallBaseMs } : {}),
    ...(input.pin ? { identity: input.pin.identity } : {}),
    onBytes: (read) => (bytes = read),
  });
  // Every read was checked as it was made; the path must still name the file listed.
  await input.pin?.check();
}
