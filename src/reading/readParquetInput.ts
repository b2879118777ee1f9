import { LoaderError } from '../shared/errors.js';
import type { SourceRecord } from '../typing/planRow.js';
import { fileByteSource } from './byteSource.js';
import type { OpenedInput } from './openInput.js';
import { readParquet } from './readParquet.js';

/**
 * A Parquet input: Parquet needs random access (its footer holds the index), so the opened stream is
 * closed and the file is read again at offsets. stdin and compressed files cannot be read that way
 * (Parquet compresses inside the file; an outer .gz or .zst is refused with the fix).
 */
export async function* readParquetInput(input: OpenedInput): AsyncGenerator<SourceRecord> {
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
  const source = await fileByteSource(input.path, input.pin);
  input.bytesRead = () => source.bytesRead();
  yield* readParquet(source, input.name);
  // Every read was checked as it was made; the path must still name the file listed.
  await input.pin?.check();
}
