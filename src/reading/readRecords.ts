import type { SourceRecord } from '../typing/planRow.js';
import type { InputFormat } from '../load/options.js';
import type { OpenedInput } from './openInput.js';
import { readCsv } from './readCsv.js';
import { readJsonLines } from './readJsonLines.js';

/** The records of an opened input, by its format: CSV records, or JSON lines (plain or DynamoDB JSON). */
export function readRecords(input: OpenedInput, format: InputFormat, csv: { delimiter: string; columns: string[] | undefined }): AsyncGenerator<SourceRecord> {
  return format === 'csv' ? readCsv(input.stream, input.name, csv) : readJsonLines(input.stream, input.name);
}
