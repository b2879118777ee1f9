import { parse, type CsvError, type Parser } from 'csv-parse';
import { formatCount } from '../shared/format.js';
import { isUtf8 } from 'node:buffer';
import { type Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';
import type { SourceRecord } from '../typing/planRow.js';
import { invalidUtf8At } from './utf8.js';
import { frameCsv } from './csvFramer.js';
import { FedBytes } from './fedBytes.js';
import { MAX_RECORD_BYTES, tooLargeMessage } from './recordLimits.js';

/**
 * csv-parse decodes as latin1, which maps each byte to one character and back, so every field and raw
 * text still holds the exact bytes; they are decoded as UTF-8 here, strictly. (`encoding: null` would
 * give bytes, but csv-parse's errors then fail to build.)
 */
type ParsedRecord = { record: Record<string, string>; raw: string; at: number };

export interface CsvReadOptions {
  /** Field delimiter. @default "," */
  delimiter: string;
  /** Attribute names for a file without a header row; when absent the first row is the header. */
  columns: string[] | undefined;
  /** A record over this many bytes is rejected as RECORD_TOO_LARGE and read past unheld. @default MAX_RECORD_BYTES */
  maxRecordBytes?: number;
  /** Line number of the stream's first byte, when it starts inside a file (a stripe; needs `columns`). @default 1 */
  firstLine?: number;
  /**
   * Called with the header row's names once it is read (a striped read hands them to its other stripes),
   * and the bytes of the input up to its end (a BOM and blank lines before it, its line break).
   */
  onHeader?: (names: string[], bytes: number) => void;
  /** Bytes parsed at a time: the records of one parse wait, undecoded, until taken. @default PARSE_SLICE */
  parseSlice?: number;
  /**
   * The offset in its file of the stream's first byte: each record's origin then says where it starts
   * (`offset`, past the blank lines before it), for a striped read's restart points. Absent: no offsets.
   */
  firstByte?: number;
}

/**
 * Streams CSV records through csv-parse (RFC 4180 quoting, UTF-8 BOM). Records csv-parse cannot read come
 * out as `unparsable` with the parser's message, in input order, instead of stopping the load. Line
 * numbers are counted here from each record's raw text, because csv-parse's own counter drifts after
 * quoted fields holding CRLF.
 *
 * Hostile input: LF, CRLF and a lone CR (old Mac exports) each end a record, mixed in any way
 * in one file, as an editor shows them; inside quotes they are kept exactly. Fields are decoded strictly,
 * so bytes that are not UTF-8 make an INVALID_UTF8 reject naming the column (never U+FFFD stored in their
 * place). A record over `maxRecordBytes` never reaches csv-parse (see csvFramer.ts): it comes out as
 * RECORD_TOO_LARGE with the lines it spans. A bad record spanning several lines (an unclosed quote) says
 * which lines it swallowed.
 */
export function readCsv(stream: Readable, file: string, options: CsvReadOptions): ChunkedRecords {
  const chunks = readCsvChunks(stream, file, options);
  return Object.assign(eachRecord(chunks), { chunks });
}

/**
 * Records one by one, and where the reader makes them in arrays (CSV) the same read in arrays (`chunks`),
 * for a caller that takes them so (readInputSet's chunks()): one await per array instead of one per record.
 * A caller takes one or the other, never both.
 */
export type ChunkedRecords = AsyncGenerator<SourceRecord> & { chunks?: AsyncGenerator<SourceRecord[]> };

/** Records in arrays, one by one. */
export async function* eachRecord(chunks: AsyncGenerator<SourceRecord[]>): AsyncGenerator<SourceRecord> {
  for await (const records of chunks) for (const record of records) yield record;
}

/**
 * readCsv's records in small arrays (DRAINED_CHUNK), as csv-parse makes them, so a
 * caller that takes them so (a load's stages, a striped read) pays one await per chunk instead of one per
 * record per layer (generator turns and microtasks).
 */
export async function* readCsvChunks(stream: Readable, file: string, options: CsvReadOptions): AsyncGenerator<SourceRecord[]> {
  const maxBytes = options.maxRecordBytes ?? MAX_RECORD_BYTES;
  const parseSlice = options.parseSlice ?? PARSE_SLICE;
  // Not 0 nor NaN: the loop below would spin on the first chunk, or skip every byte of it.
  if (!Number.isInteger(parseSlice) || parseSlice < 1) throw new Error(`readCsv: parseSlice must be a whole number of bytes, at least 1 (got ${parseSlice})`);
  // What csv-parse hands back, in input order: records, and the bad records it skips (on_skip is called
  // in the same pass, between the records around them).
  const parsed: (ParsedRecord | { skipped: CsvError; raw: string; at: number })[] = [];
  // Each record's raw text is cut from the bytes fed to csv-parse by its count of bytes read at the record's
  // end (`info.bytes`, set before a record or a record's error is handed on), instead of csv-parse's
  // `raw` option, which appends every byte to a buffer of its own: ~20% of csv-parse's time.
  // The text is the exact bytes (latin1), so blank lines before a record lead its raw text as they are.
  const fed = new FedBytes();
  let headerRead = false;
  const parser = csvParser(
    parse({
      // The framer removes the BOM: csv-parse would switch to decoding the fields itself after one.
      bom: false,
      encoding: 'latin1',
      delimiter: Buffer.from(options.delimiter, 'utf8').toString('latin1'),
      record_delimiter: ['\r\n', '\n', '\r'],
      columns: options.columns
        ? options.columns.map(safeColumn)
        : (header: string[]) => {
            // The header row, blank lines before it included, is no record's raw text; its line breaks (a
            // quoted name may hold one) put the first record past it.
            const headerText = fed.cut(parser.info.bytes);
            nextLine = 1 + countBreaks(headerText);
            headerRead = true;
            const names = checkHeader(header, file, framer.placeholder, maxBytes, headerLineOf(headerText));
            options.onHeader?.(names, framer.bomBytes + headerText.length);
            return names.map(safeColumn);
          },
      relax_quotes: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      on_skip: (error: CsvError | undefined) => {
        // Before the header row is read, only its unclosed quote (at the end of the input): the header's
        // error, as when it runs past the size bound, not one reject of the whole file with no header.
        if (error && !options.columns && !headerRead) {
          throw new LoaderError('INPUT_HEADER', `${file}: the header row has a quote left open, so it runs to the end of the file; close it`, {
            file,
            line: headerLineOf(fed.cut(fed.end)),
          });
        }
        // A record's error is raised at its end, save an unclosed quote, raised at the end of the input.
        if (error) {
          const at = fed.from;
          parsed.push({ skipped: error, raw: fed.cut(error.code === 'CSV_QUOTE_NOT_CLOSED' ? fed.end : parser.info.bytes), at });
        }
      },
    }),
  );
  // csv-parse's record delimiters as it normalised them (bytes), all three and LF alone: the parser reads
  // them from its options at each call, and a slice without a CR is parsed testing LF alone (csv-parse
  // tests each delimiter at every byte: ~10% of its time on a file of LF lines).
  const anyEnding = parser.options.record_delimiter;
  const lfOnly = anyEnding.filter((d) => d.length === 1 && d[0] === 10);
  const framer = frameCsv(stream as AsyncIterable<Buffer>, options.delimiter, maxBytes, (options.firstLine ?? 1) === 1);
  // Line numbers come from each record's raw text rather than csv-parse's `info` option (a record of
  // its figures made for every record costs ~15% of the parse, and its line count drifts after quoted
  // CRLF; only its byte count is read, above). With a header row, set past it when it is read.
  let nextLine = options.firstLine ?? 1;
  // A record's offset in the file: the bytes fed to csv-parse before it, those the framer left out before it
  // (a BOM, and each oversized record's bytes less its placeholder's) and the stream's own start.
  const firstByte = options.firstByte;
  let shifted = 0;
  const offsetOf = (at: number, lead: number) => firstByte! + framer.bomBytes + shifted + at + lead;
  const recordOf = (entry: ParsedRecord | { skipped: CsvError; raw: string; at: number }): SourceRecord => {
    const latin1 = entry.raw;
    // ASCII text reads the same in latin1 and UTF-8: most records need no second decoding.
    const ascii = !NON_ASCII.test(latin1);
    const rawBytes = ascii ? undefined : Buffer.from(latin1, 'latin1');
    const raw = rawBytes ? rawBytes.toString('utf8') : latin1;
    const lead = leadingLength(raw);
    // Blank lines before a record lead its raw text, each with its line break as in the file.
    const line = lead === 0 ? nextLine : nextLine + countBreaks(raw.slice(0, lead));
    const body = lead === 0 ? raw : raw.slice(lead);
    if (framer.oversized.length > 0 && body.startsWith(framer.placeholder)) {
      const big = framer.oversized.shift()!;
      nextLine = line + big.innerBreaks + 1;
      const origin = firstByte === undefined ? { file, line, raw: big.raw } : { file, line, raw: big.raw, offset: offsetOf(entry.at, lead) };
      shifted += big.shift;
      return {
        kind: 'unparsable',
        origin,
        code: 'RECORD_TOO_LARGE',
        message: `${tooLargeMessage(`the record at ${span(line, big.innerBreaks)}`, big.bytes, maxBytes)}${big.innerBreaks > 0 ? '; a quote left open makes a record run on: look for it at its first line' : ''}`,
      };
    }
    const innerBreaks = countBreaks(body) - (endsWithBreak(raw) ? 1 : 0);
    nextLine = line + innerBreaks + 1;
    const origin = firstByte === undefined ? { file, line, raw: trimBreak(body) } : { file, line, raw: trimBreak(body), offset: offsetOf(entry.at, lead) };
    if ('skipped' in entry) {
      const swallowed =
        innerBreaks > 0 ? `; this record spans ${span(line, innerBreaks)}: if that is more than you meant, a quote is left open at line ${line}` : '';
      return {
        kind: 'unparsable',
        origin,
        code: 'CSV_SYNTAX',
        message: `${entry.skipped.message.replace(/ (at|on) line \d+/, '')} (fix the quoting or the number of fields)${swallowed}`,
      };
    }
    return rawBytes
      ? decodeCells(entry, rawBytes, origin)
      : { kind: 'csv', origin, cells: Object.hasOwn(entry.record, PROTO_STANDIN) ? ownCells(entry.record) : entry.record };
  };
  const push = (record: Record<string, string>) => {
    const at = fed.from;
    parsed.push({ record, raw: fed.cut(parser.info.bytes), at });
  };
  /** The records parsed so far, in arrays of DRAINED_CHUNK, each decoded as it is handed on. */
  function* drain(): Generator<SourceRecord[]> {
    for (let from = 0; from < parsed.length; from += DRAINED_CHUNK) {
      const to = Math.min(parsed.length, from + DRAINED_CHUNK);
      const records: SourceRecord[] = new Array(to - from);
      for (let i = from; i < to; i++) records[i - from] = recordOf(parsed[i]!);
      yield records;
    }
    parsed.length = 0;
  }
  try {
    for await (const bytes of framer.output) {
      for (let at = 0; at < bytes.length; at += parseSlice) {
        const slice = bytes.subarray(at, at + parseSlice);
        // Bytes without a CR can only end records with LF: one delimiter to test per byte, not three.
        parser.options.record_delimiter = slice.indexOf(13) === -1 && !fed.holds(13) ? lfOnly : anyEnding;
        fed.feed(slice);
        const error = parser.parse(slice, false, push, noop);
        if (error !== undefined) throw error;
        // What csv-parse has not made a record of yet (the start of the next one) is all that is kept.
        fed.release();
        yield* drain();
      }
    }
    parser.options.record_delimiter = anyEnding;
    const error = parser.parse(undefined, true, push, noop);
    if (error !== undefined) throw error;
    yield* drain();
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    const code = (error as { code?: string }).code ?? '';
    throw new LoaderError(code.startsWith('CSV_') ? 'INPUT_HEADER' : 'INPUT_UNREADABLE', `cannot read ${file} as CSV: ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
}

/**
 * Records taken from csv-parse at a time. Small: what is taken is decoded into records at once, and
 * records still held when the young heap is collected are copied, then moved to the old heap. Measured on
 * a 200k-row load into the instant sink (54 stripes): 300 at a time (all csv-parse holds) raised the
 * striped parse-only peak RSS by ~90 MB; 32 by ~20 MB with the GC's share of the load 15% against 8%
 * before; 8 keeps the RSS and GC as they were and most of the saving.
 */
const DRAINED_CHUNK = 8;

/**
 * Bytes parsed at a time. The records of one parse wait, undecoded, while the ones before them go through
 * the load's stages; a whole 64 KB read (~250 rows) waited long enough to be promoted, and a dry run in
 * `--order spread` of 1M rows peaked at 301-321 MB of RSS (heapUsed 77 MB at the peak) against 249-261 MB
 * with csv-parse's stream. 8 KB at a time: 251-257 MB, heapUsed 35 MB, CPU the same.
 */
const PARSE_SLICE = 8 * 1024;

/**
 * csv-parse's parser proper: one call parses the bytes given and hands back every record they complete;
 * `info.bytes` is the count of bytes read up to the end of the record (or error) being handed on.
 */
interface CsvApi {
  parse(bytes: Buffer | undefined, end: boolean, push: (record: Record<string, string>) => void, close: () => void): CsvError | undefined;
  info: { bytes: number };
  /** The record delimiters, normalised to bytes, read by each `parse` call. */
  options: { record_delimiter: Buffer[] };
}

const noop = () => undefined;

/**
 * csv-parse's parser without its stream: the `api` a Parser wraps (its Transform stream and its sync API
 * both call `api.parse`). Driven directly, a chunk's bytes are parsed the moment they are read and nothing
 * waits in a stream's buffers: a striped read has a reader per stripe, and chunks queued in a writable and
 * a readable buffer per stripe outlived the young generation, so the garbage collector moved them to the old
 * heap and they stayed until a full collection (~50 MB of buffers, ~0.3 s of GC on the bench's 64-stripe
 * read). `api` is not in csv-parse's typings: checked here, so a release without it fails every read at once
 * with this message, never parses wrong.
 */
function csvParser(parser: Parser): CsvApi {
  const api = (parser as unknown as { api?: Partial<CsvApi> }).api;
  const delimiters = api?.options?.record_delimiter;
  if (
    typeof api?.parse !== 'function' ||
    typeof api.info?.bytes !== 'number' ||
    !Array.isArray(delimiters) ||
    delimiters.length !== 3 ||
    !delimiters.every((d) => Buffer.isBuffer(d))
  )
    throw new Error(
      'csv-parse no longer has Parser.api.parse, api.info.bytes and api.options.record_delimiter as bytes: ddb-spread needs a csv-parse it was built for (6.x)',
    );
  decodeFieldsInPlace(api as CsvApi & FieldState);
  return api as CsvApi;
}

/** csv-parse's buffer of the field being read (its ResizeableBuffer): bytes [0, length) of `buf`. */
interface FieldState {
  state?: { field?: { buf?: unknown; length?: unknown; toString(encoding?: BufferEncoding): unknown } };
}

/**
 * csv-parse decodes each field as `buf.slice(0, length).toString(encoding)`: a Buffer object made per field
 * only to be read once, about 6% of the estimate's planning thread on the flights file. This parser's field
 * buffer decodes the same bytes in place instead (`buf.toString(encoding, 0, length)`, the same text). Left
 * as csv-parse made it if its field buffer is not as 6.x has it.
 */
function decodeFieldsInPlace(api: FieldState): void {
  const field = api.state?.field;
  if (!field || !Buffer.isBuffer(field.buf) || typeof field.length !== 'number') return;
  const decode = field.toString;
  const own = field as { buf: Buffer; length: number; toString(encoding?: BufferEncoding): unknown };
  own.toString = function (this: { buf: Buffer; length: number }, encoding?: BufferEncoding) {
    return encoding ? this.buf.toString(encoding, 0, this.length) : decode.call(this);
  };
}

/**
 * csv-parse builds each record with `record[name] = cell`, which for a column named `__proto__` sets the
 * record's prototype and loses the cell. That one name goes through csv-parse as a stand-in
 * no header can hold and is given back its name in a prototype-free record. A lone surrogate: a header is
 * decoded strictly from UTF-8, which holds none (a NUL, the stand-in before, is a valid UTF-8 name).
 */
const PROTO_STANDIN = '\ud800__proto__';

function safeColumn(name: string): string {
  return name === '__proto__' ? PROTO_STANDIN : name;
}

function ownCells(record: Record<string, string>): Record<string, string> {
  const cells = Object.create(null) as Record<string, string>;
  for (const name of Object.keys(record)) cells[name === PROTO_STANDIN ? '__proto__' : name] = record[name]!;
  return cells;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** "line 7" or "lines 7-9 (3 lines)". */
function span(line: number, innerBreaks: number): string {
  return innerBreaks === 0 ? `line ${line}` : `lines ${line}-${line + innerBreaks} (${formatCount(innerBreaks + 1)} lines)`;
}

/** Cells as text; the first cell that is not UTF-8 makes the row an INVALID_UTF8 reject naming its column. */
function decodeCells(entry: ParsedRecord, rawBytes: Uint8Array, origin: { file: string; line: number; raw: string }): SourceRecord {
  const cells: Record<string, string> = {};
  const valid = isUtf8(rawBytes);
  for (const name in entry.record) {
    const text = entry.record[name]!;
    if (!NON_ASCII.test(text)) {
      cells[name] = text;
      continue;
    }
    const bytes = Buffer.from(text, 'latin1');
    const bad = valid ? -1 : invalidUtf8At(bytes);
    if (bad !== -1) {
      return {
        kind: 'unparsable',
        origin,
        code: 'INVALID_UTF8',
        field: name,
        message: `column "${name}" is not UTF-8 (byte ${bad + 1} of the cell is 0x${bytes[bad]!.toString(16).padStart(2, '0')}); save the file as UTF-8 (the reject file shows the bad bytes as U+FFFD)`,
      };
    }
    cells[name] = bytes.toString('utf8');
  }
  return { kind: 'csv', origin, cells: Object.hasOwn(cells, PROTO_STANDIN) ? ownCells(cells) : cells };
}

/** The line of the header row: 1, past the blank lines before it (its text from the start of the input). */
function headerLineOf(text: string): number {
  return 1 + countBreaks(text.slice(0, leadingLength(text)));
}

function checkHeader(cells: string[], file: string, placeholder: string, maxBytes: number, line: number): string[] {
  const seen = new Set<string>();
  const header = cells.map((cell, i) => {
    const bytes = Buffer.from(cell, 'latin1');
    if (invalidUtf8At(bytes) !== -1) {
      throw new LoaderError('INPUT_HEADER', `${file}: column ${i + 1} of the header row is not UTF-8; save the file as UTF-8`, { file, line });
    }
    return bytes.toString('utf8');
  });
  if (header.length === 1 && `"${header[0]}"` === placeholder) {
    throw new LoaderError(
      'INPUT_HEADER',
      `${file}: the header row is over ${formatCount(maxBytes)} bytes; is this a CSV file? (a quote left open in it runs on)`,
      { file, line },
    );
  }
  header.forEach((name, i) => {
    if (name.trim() === '') {
      throw new LoaderError('INPUT_HEADER', `${file}: column ${i + 1} of the header row has no name; name it, or pass --columns for a file without a header`, {
        file,
        line,
      });
    }
    if (seen.has(name)) {
      throw new LoaderError('INPUT_HEADER', `${file}: the header names column "${name}" twice; attribute names must be unique`, { file, line, field: name });
    }
    seen.add(name);
  });
  return header;
}

/**
 * Line breaks in raw text: "\n", "\r\n" and a lone "\r" each count once. By indexOf, which jumps over the
 * text between breaks (a record usually has one, at its end): a loop over every character cost ~10% of a
 * parse-only run.
 */
export function countBreaks(raw: string): number {
  let n = 0;
  for (let i = raw.indexOf('\n'); i !== -1; i = raw.indexOf('\n', i + 1)) n++;
  for (let i = raw.indexOf('\r'); i !== -1; i = raw.indexOf('\r', i + 1)) if (raw.charCodeAt(i + 1) !== 10) n++;
  return n;
}

function leadingLength(raw: string): number {
  let i = 0;
  while (i < raw.length && (raw.charCodeAt(i) === 10 || raw.charCodeAt(i) === 13)) i++;
  return i;
}

function endsWithBreak(raw: string): boolean {
  const c = raw.charCodeAt(raw.length - 1);
  return c === 10 || c === 13;
}

/** The text without its one final line break ("\r\n", "\n" or "\r"). */
export function trimBreak(raw: string): string {
  const last = raw.charCodeAt(raw.length - 1);
  if (last === 13) return raw.slice(0, -1);
  if (last !== 10) return raw;
  return raw.slice(0, raw.charCodeAt(raw.length - 2) === 13 ? -2 : -1);
}
