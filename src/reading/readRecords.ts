import type { InputFormat } from './inputFormat.js';
import type { OpenedInput } from './openInput.js';
import { readCsv, type ChunkedRecords, type CsvReadOptions } from './readCsv.js';
import { readIon } from './readIon.js';
import { readJsonLines } from './readJsonLines.js';
import type { ParquetThreadOptions } from './parquetThread.js';
import { readParquetInput } from './readParquetInput.js';

/** The records of an opened input, by its format: CSV records, JSON lines (plain or DynamoDB JSON), Ion lines or Parquet rows. */
export function readRecords(
  input: OpenedInput,
  format: InputFormat,
  csv: Pick<CsvReadOptions, 'delimiter' | 'columns' | 'firstLine' | 'onHeader' | 'firstByte'>,
  parquet: Pick<ParquetThreadOptions, 'signal' | 'stallBaseMs'> = {},
): ChunkedRecords {
  switch (format) {
    case 'csv':
      return readCsv(input.stream, input.name, csv);
    case 'parquet':
      return readParquetInput(input, parquet);
    case 'ion':
      return readIon(input.stream, input.name);
    default:
      return readJsonLines(input.stream, input.name);
  }
}
