import type { Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';
import { attributeAt } from '../typing/jsonDepth.js';
import type { SourceRecord } from '../typing/planRow.js';
import { invalidUtf8At } from './utf8.js';
import { keptRaw, MAX_RECORD_BYTES, tooLargeMessage } from './recordLimits.js';

export interface JsonLinesReadOptions {
  /** A line over this many bytes is rejected as RECORD_TOO_LARGE and skipped unread. @default MAX_RECORD_BYTES */
  maxRecordBytes?: number;
  /** Line number of the stream's first byte, when it starts inside a file (a stripe). @default 1 */
  firstLine?: number;
  /** The offset in its file of the stream's first byte: each record's origin then says where its line starts (`offset`). */
  firstByte?: number;
}

/**
 * Streams JSON Lines: one record per non-blank line ("\n", or "\r\n"; a lone "\r" is JSON whitespace, not
 * a line break), with its 1-based line number. Lines are split as bytes and decoded one by one, strictly:
 * a line that is not UTF-8 comes out as INVALID_UTF8 (never with U+FFFD in place of its bytes, which would
 * store altered values and merge keys), and a line over `maxRecordBytes` as RECORD_TOO_LARGE, skipped to
 * its end while holding only its first bytes. Parsing happens in the planner, so a bad line becomes a
 * reject with its location rather than a silent skip (dynein drops such lines). Pull-based: the file is
 * read only as fast as records are consumed.
 */
export async function* readJsonLines(stream: Readable, file: string, options: JsonLinesReadOptions = {}): AsyncGenerator<SourceRecord> {
  const maxBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
  /** The current line's bytes so far (pieces of chunks), or, once it is too large, its first bytes only. */
  let parts: Buffer[] = [];
  let held = 0;
  /** Bytes of the current line, counted also while skipping. */
  let lineBytes = 0;
  let skipping = false;
  let line = (options.firstLine ?? 1) - 1;
  /** Where the current line starts in the file, when the caller asked for offsets (firstByte). */
  let lineStart = options.firstByte;
  const finish = (): SourceRecord | undefined => {
    line++;
    const offset = lineStart;
    if (lineStart !== undefined) lineStart += lineBytes + 1;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, held);
    const record = skipping
      ? {
          kind: 'unparsable' as const,
          origin: { file, line, raw: keptRaw(bytes) },
          code: 'RECORD_TOO_LARGE' as const,
          message: tooLargeMessage(`line ${line}`, lineBytes, maxBytes),
        }
      : toRecord(bytes, file, line);
    parts = [];
    held = 0;
    lineBytes = 0;
    skipping = false;
    if (record && offset !== undefined) record.origin.offset = offset;
    return record;
  };
  try {
    for await (const chunk of stream) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      let start = 0;
      for (;;) {
        const newline = buf.indexOf(10, start);
        const end = newline === -1 ? buf.length : newline;
        if (end > start) {
          lineBytes += end - start;
          if (!skipping && lineBytes > maxBytes) {
            // Keep what the reject file shows, drop the rest as it streams by.
            skipping = true;
            parts = [Buffer.from(Buffer.concat([...parts, buf.subarray(start, end)]).subarray(0, 4 * 1024))];
            held = parts[0]!.length;
          } else if (!skipping) {
            parts.push(buf.subarray(start, end));
            held += end - start;
          }
        }
        if (newline === -1) break;
        const record = finish();
        if (record) yield record;
        start = newline + 1;
      }
    }
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    throw new LoaderError('INPUT_UNREADABLE', `cannot read ${file}: ${(error as Error).message}`, { file, cause: error });
  }
  if (lineBytes > 0) {
    const record = finish();
    if (record) yield record;
  }
}

function toRecord(line: Buffer, file: string, number: number): SourceRecord | undefined {
  let bytes = line;
  if (number === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  if (bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, -1);
  const bad = invalidUtf8At(bytes);
  const raw = bytes.toString('utf8');
  if (bad !== -1) {
    const field = attributeAt(raw, bytes.subarray(0, bad).toString('utf8').length);
    return {
      kind: 'unparsable',
      origin: { file, line: number, raw },
      code: 'INVALID_UTF8',
      message: `byte ${bad + 1} of the line (0x${bytes[bad]!.toString(16).padStart(2, '0')}) is not UTF-8${field === undefined ? '' : ` (in "${field}")`}; save the file as UTF-8 (the reject file shows the bad bytes as U+FFFD)`,
      ...(field === undefined ? {} : { field }),
    };
  }
  if (raw.trim() === '') return undefined;
  return { kind: 'json', origin: { file, line: number, raw } };
}
