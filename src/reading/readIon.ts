import type { Readable } from 'node:stream';
import type { SourceRecord } from '../typing/planRow.js';
import { readJsonLines, type JsonLinesReadOptions } from './readJsonLines.js';

/**
 * Streams text Amazon Ion as DynamoDB's ION exports write it: one value per line (`$ion_1_0
 * {Item:{...}}`). Lines are framed, bounded and strictly UTF-8-checked exactly as JSON Lines are (this
 * reuses that reader), and each is parsed by the planner (typing/ionItem.ts), so a bad line is a reject
 * with its line number. A value spread over several lines is not read as one: each line must hold a
 * whole value, as DynamoDB writes them.
 */
export async function* readIon(stream: Readable, file: string, options: Pick<JsonLinesReadOptions, 'firstLine'> = {}): AsyncGenerator<SourceRecord> {
  for await (const record of readJsonLines(stream, file, options)) {
    yield record.kind === 'json' ? { kind: 'ion', origin: record.origin } : record;
  }
}
