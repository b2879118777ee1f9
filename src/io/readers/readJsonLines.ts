import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { LoaderError } from '../../core/errors.js';
import type { SourceRecord } from '../../core/planRow.js';

/** A line longer than this is not JSON Lines (DynamoDB items are at most 400 KB). */
const MAX_LINE_CHARS = 16 * 1024 * 1024;

/**
 * Streams JSON Lines: one record per non-blank line, with its 1-based line number. Parsing happens in the
 * planner, so a bad line becomes a reject with its location rather than a silent skip (dynein drops
 * such lines). Pull-based: the file is read only as fast as records are consumed.
 */
export async function* readJsonLines(stream: Readable, file: string): AsyncGenerator<SourceRecord> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let line = 0;
  try {
    for await (const chunk of stream) {
      pending += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
      let start = 0;
      let newline: number;
      while ((newline = pending.indexOf('\n', start)) !== -1) {
        line++;
        const text = pending.slice(start, newline);
        start = newline + 1;
        const record = toRecord(text, file, line);
        if (record) yield record;
      }
      pending = pending.slice(start);
      if (pending.length > MAX_LINE_CHARS) {
        throw new LoaderError('INPUT_UNREADABLE', `${file}: line ${line + 1} is longer than 16 MB; is this really JSON Lines (one object per line)?`, { file, line: line + 1 });
      }
    }
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    throw new LoaderError('INPUT_UNREADABLE', `cannot read ${file}: ${(error as Error).message}`, { file, cause: error });
  }
  pending += decoder.end();
  if (pending.length > 0) {
    const record = toRecord(pending, file, line + 1);
    if (record) yield record;
  }
}

function toRecord(text: string, file: string, line: number): SourceRecord | undefined {
  let raw = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (line === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
  if (raw.trim() === '') return undefined;
  return { kind: 'json', origin: { file, line, raw } };
}
