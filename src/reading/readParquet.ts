import { parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData, type ParquetParsers } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { LoaderError } from '../shared/errors.js';
import { columnShapes, shapeValue, withoutDecimalAnnotations, type ParquetShape } from '../typing/parquetValues.js';
import { Temporal } from '../typing/temporal.js';
import { InvalidJson, InvalidText, typedRowJson } from '../typing/typedValues.js';
import { parseJsonPrecise } from '../typing/json.js';
import type { SourceRecord } from '../typing/planRow.js';
import { asyncBufferOf, type ByteSource } from './byteSource.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * hyparquet's parsers, made exact: timestamps and dates become Temporal (a JS Date would drop micro- and
 * nanoseconds), JSON keeps every digit, and text that is not UTF-8 is kept as InvalidText so its row is
 * rejected (hyparquet's decoder would put U+FFFD in its place and store an altered value).
 */
export const EXACT_PARSERS: Partial<ParquetParsers> = {
  timestampFromMilliseconds: (count: bigint) => new Temporal('ms', BigInt(count)),
  timestampFromMicroseconds: (count: bigint) => new Temporal('us', BigInt(count)),
  timestampFromNanoseconds: (count: bigint) => new Temporal('ns', BigInt(count)),
  dateFromDays: (days: number) => new Temporal('days', BigInt(days)),
  stringFromBytes: (bytes: Uint8Array | undefined) => {
    if (!bytes) return bytes;
    try {
      return strictUtf8.decode(bytes);
    } catch {
      return new InvalidText(bytes);
    }
  },
  // JSON columns: numbers keep every digit (hyparquet's JSON.parse would round them to doubles).
  jsonFromBytes: (bytes: Uint8Array | undefined) => {
    if (!bytes) return bytes;
    let text: string;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      return new InvalidText(bytes);
    }
    try {
      return parseJsonPrecise(text);
    } catch (error) {
      return new InvalidJson(text, (error as Error).message);
    }
  },
};

/**
 * Streams a Parquet file's rows, one row group at a time: only the footer and the current row group's
 * column chunks are read (positional reads on `source`), so memory is bounded by the largest row group,
 * not the file. Each record's origin has `line` = the row's 1-based number in the file, and its messages
 * say "row group G row R" (both counted from 0, as Parquet tools count them); `raw` is the row as JSON.
 */
export async function* readParquet(source: ByteSource, file: string): AsyncGenerator<SourceRecord> {
  const buffer = asyncBufferOf(source);
  try {
    const metadata = await footerOf(buffer, file);
    const shapes = columnShapes(parquetSchema(metadata));
    const readable = withoutDecimalAnnotations(metadata);
    let rowStart = 0;
    for (const [group, rowGroup] of metadata.row_groups.entries()) {
      const count = Number(rowGroup.num_rows);
      const rows = await readRowGroup(buffer, readable, rowStart, count, file, group);
      for (let row = 0; row < rows.length; row++) {
        const values = shapedRow(rows[row]!, shapes);
        yield { kind: 'values', origin: { file, line: rowStart + row + 1, raw: typedRowJson(values) }, values, position: `row group ${group} row ${row}` };
      }
      rowStart += count;
    }
  } finally {
    await source.close();
  }
}

async function footerOf(buffer: AsyncBuffer, file: string): Promise<FileMetaData> {
  try {
    return await parquetMetadataAsync(buffer, { parsers: EXACT_PARSERS });
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    throw new LoaderError('INPUT_UNREADABLE', `${file} is not a readable Parquet file: ${(error as Error).message}`, { file, cause: error });
  }
}

async function readRowGroup(buffer: AsyncBuffer, metadata: FileMetaData, rowStart: number, count: number, file: string, group: number) {
  try {
    return await parquetReadObjects({
      file: buffer,
      metadata,
      rowStart,
      rowEnd: rowStart + count,
      compressors,
      utf8: false,
      parsers: EXACT_PARSERS,
    });
  } catch (error) {
    // The file changed under the read (byteSource.ts checks it): that error, not a damaged row group.
    if (error instanceof LoaderError) throw error;
    throw new LoaderError('INPUT_UNREADABLE', `cannot read row group ${group} of ${file}: ${(error as Error).message}`, { file, cause: error });
  }
}

function shapedRow(row: Record<string, unknown>, shapes: ReadonlyMap<string, ParquetShape>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    Object.defineProperty(out, name, { value: shapeValue(value, shapes.get(name) ?? { kind: 'plain' }), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
