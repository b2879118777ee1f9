import type { Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';
import type { SourceRecord } from '../typing/planRow.js';
import { keptRaw, MAX_RECORD_BYTES, tooLargeMessage } from './recordLimits.js';
import { invalidUtf8At } from './utf8.js';

export interface JsonDocumentReadOptions {
  /** An element over this many bytes is rejected as RECORD_TOO_LARGE and skipped unheld. @default MAX_RECORD_BYTES */
  maxRecordBytes?: number;
}

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const NEWLINE = 0x0a;

/**
 * Streams the items of a JSON document whose shape jsonShape.ts found: the elements of a top-level array
 * (`array`), or of the `Items` array of `aws dynamodb scan` output (`scan`, its items DynamoDB JSON). Each
 * element becomes one record, like a JSON line: its raw text, and the line it starts on. Elements are cut
 * by bytes (strings and nesting followed), never parsed here: parsing is the planner's, so a bad element
 * is a reject with its line. Bounded memory: one element at a time, and an element over `maxRecordBytes`
 * is skipped holding only its first bytes. A document that ends before its array closes was cut short:
 * that is an error, since rows it lost could otherwise go unreported.
 */
export async function* readJsonDocument(
  stream: Readable,
  file: string,
  shape: 'array' | 'scan',
  options: JsonDocumentReadOptions = {},
): AsyncGenerator<SourceRecord> {
  const maxBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
  const flavor = shape === 'scan' ? { flavor: 'ddb-json' as const } : {};
  /**
   * before: up to the array's "["; between: between elements; element: inside one; rest: past the Items
   * array's "]", inside scan output's object (Count, LastEvaluatedKey...); done: past the document.
   */
  let phase: 'before' | 'between' | 'element' | 'rest' | 'done' = 'before';
  let line = 1;
  let elementLine = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: Buffer[] = [];
  let held = 0;
  let elementBytes = 0;
  let count = 0;
  let trailing: number | undefined;
  /** Where the items' array closing leads: the rest of scan output's object, or the end of the document. */
  const closed = shape === 'scan' ? ('rest' as const) : ('done' as const);
  const take = (buf: Buffer, from: number, to: number) => {
    if (to <= from) return;
    elementBytes += to - from;
    if (held >= maxBytes + 1) return;
    // Beyond the bound only the first bytes are kept, for the reject file.
    const keep = Math.min(to - from, maxBytes + 1 - held);
    parts.push(buf.subarray(from, from + keep));
    held += keep;
  };
  const finish = (): SourceRecord => {
    count++;
    const bytes = Buffer.concat(parts, held);
    parts = [];
    held = 0;
    const size = elementBytes;
    elementBytes = 0;
    const origin = (raw: string) => ({ file, line: elementLine, raw });
    if (size > maxBytes) {
      return {
        kind: 'unparsable',
        origin: origin(keptRaw(bytes)),
        code: 'RECORD_TOO_LARGE',
        message: tooLargeMessage(`the item at line ${elementLine}`, size, maxBytes),
      };
    }
    const bad = invalidUtf8At(bytes);
    const raw = bytes.toString('utf8').trimEnd();
    if (bad !== -1) {
      return {
        kind: 'unparsable',
        origin: origin(raw),
        code: 'INVALID_UTF8',
        message: `byte ${bad + 1} of the item (0x${bytes[bad]!.toString(16).padStart(2, '0')}) is not UTF-8; save the file as UTF-8 (the reject file shows the bad bytes as U+FFFD)`,
      };
    }
    return { kind: 'json', origin: origin(raw), ...flavor };
  };
  try {
    for await (const chunk of stream) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      const records: SourceRecord[] = [];
      let start = 0;
      for (let i = 0; i < buf.length; i++) {
        const c = buf[i]!;
        if (phase === 'element') {
          if (inString) {
            if (escaped) escaped = false;
            else if (c === BACKSLASH) escaped = true;
            else if (c === QUOTE) inString = false;
          } else if (c === QUOTE) inString = true;
          else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
          else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) depth--;
          else if (depth === 0 && (c === COMMA || c === CLOSE_BRACKET)) {
            take(buf, start, i);
            records.push(finish());
            // Back inside scan output's object, past its Items array.
            if (c === CLOSE_BRACKET) {
              depth = 1;
              inString = false;
            }
            phase = c === COMMA ? 'between' : closed;
          }
        } else if (phase === 'before') {
          // jsonShape.ts found "[" first, or `{"Items": [` (no other "[" before it).
          if (c === OPEN_BRACKET) phase = 'between';
        } else if (phase === 'between') {
          if (c === CLOSE_BRACKET) {
            phase = closed;
            depth = 1;
            inString = false;
          } else if (c !== COMMA && c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== NEWLINE) {
            phase = 'element';
            elementLine = line;
            start = i;
            depth = c === OPEN_BRACE || c === OPEN_BRACKET ? 1 : 0;
            inString = c === QUOTE;
            escaped = false;
          }
        } else if (phase === 'rest') {
          // The scan output's object goes on to its end; anything after it is another document.
          if (inString) {
            if (escaped) escaped = false;
            else if (c === BACKSLASH) escaped = true;
            else if (c === QUOTE) inString = false;
          } else if (c === QUOTE) inString = true;
          else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
          else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
            depth--;
            if (depth === 0) phase = 'done';
          }
        } else if (trailing === undefined && c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== NEWLINE) {
          trailing = line;
        }
        if (c === NEWLINE) line++;
      }
      if (phase === 'element') take(buf, start, buf.length);
      yield* records;
    }
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    throw new LoaderError('INPUT_UNREADABLE', `cannot read ${file}: ${(error as Error).message}`, { file, cause: error });
  }
  const what = shape === 'scan' ? 'its "Items" array' : 'its JSON array';
  // Set inside the loop above, which the compiler's narrowing does not follow.
  const ended = phase as typeof phase | 'rest' | 'done';
  if (ended !== 'done') {
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `${file} ends inside ${ended === 'rest' ? 'its scan output object' : what} (after ${count} item${count === 1 ? '' : 's'}, at line ${line}): the file is cut short; load it again complete`,
      { file, line },
    );
  }
  if (trailing !== undefined) {
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `${file} holds more after ${what} closes (line ${trailing}): one JSON document is read as one array; join the arrays (jq -s 'add') or write one item per line (jq -c '.[]')`,
      { file, line: trailing },
    );
  }
}
