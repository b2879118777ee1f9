import { parse, type CsvError, type Parser } from 'csv-parse';
import { Readable } from 'node:stream';

type ParsedRecord = { record: Record<string, string>; raw: string };
import { LoaderError } from '../../core/errors.js';
import type { SourceRecord } from '../../core/planRow.js';

export interface CsvReadOptions {
  /** Field delimiter. @default "," */
  delimiter: string;
  /** Attribute names for a file without a header row; when absent the first row is the header. */
  columns: string[] | undefined;
}

/**
 * Streams CSV records through csv-parse (RFC 4180 quoting, CRLF, UTF-8 BOM). Records csv-parse cannot
 * read come out as `unparsable` with the parser's message, in input order, instead of stopping the load.
 * Line numbers are counted here from each record's raw text, because csv-parse's own counter drifts
 * after quoted fields holding CRLF.
 */
export async function* readCsv(stream: Readable, file: string, options: CsvReadOptions): AsyncGenerator<SourceRecord> {
  // Bad records are pushed into the parser's own output, so they come out in input order between the
  // good ones (a side list would be drained late, because the stream reads ahead).
  const parser: Parser = parse({
    bom: true,
    delimiter: options.delimiter,
    columns: options.columns ?? ((header: string[]) => checkHeader(header, file)),
    raw: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (error: CsvError | undefined) => {
      if (error) parser.push({ skipped: error });
    },
  });
  // Blank lines before a header row are in no record's raw text, so they are counted on the way in.
  // (Without a header they lead the first record's raw text and are counted below like any others.)
  let blankLinesBeforeHeader = 0;
  const source = options.columns ? stream : Readable.from(countLeadingBreaks(stream, (n) => (blankLinesBeforeHeader = n)), { objectMode: false });
  source.on('error', (error) => parser.destroy(error));
  if (source !== stream) stream.on('error', (error) => source.destroy(error));
  const records = source.pipe(parser) as AsyncIterable<ParsedRecord | { skipped: CsvError }>;

  // Line numbers come from each record's raw text rather than csv-parse's `info` (which costs ~15% of
  // the parse and drifts after quoted CRLF). The header row takes line 1 unless --columns is given.
  let nextLine = options.columns ? 1 : 2;
  let first = true;
  try {
    for await (const entry of records) {
      const raw = 'skipped' in entry ? String((entry.skipped as { raw?: unknown }).raw ?? '') : entry.raw;
      if (first) nextLine += blankLinesBeforeHeader;
      first = false;
      const line = nextLine + leadingBreaks(raw);
      nextLine = line + countBreaks(raw.slice(leadingLength(raw))) + (endsWithBreak(raw) ? 0 : 1);
      const origin = { file, line, raw: trimBreak(raw.slice(leadingLength(raw))) };
      if ('skipped' in entry) {
        yield { kind: 'unparsable', origin, code: 'CSV_SYNTAX', message: `${entry.skipped.message.replace(/ (at|on) line \d+/, '')} (fix the quoting or the number of fields)` };
      } else {
        yield { kind: 'csv', origin, cells: entry.record };
      }
    }
  } catch (error) {
    if (error instanceof LoaderError) throw error;
    const code = (error as { code?: string }).code ?? '';
    throw new LoaderError(
      code.startsWith('CSV_') ? 'INPUT_HEADER' : 'INPUT_UNREADABLE',
      `cannot read ${file} as CSV: ${(error as Error).message}`,
      { file, cause: error },
    );
  }
}

function checkHeader(header: string[], file: string): string[] {
  const seen = new Set<string>();
  header.forEach((name, i) => {
    if (name.trim() === '') {
      throw new LoaderError('INPUT_HEADER', `${file}: column ${i + 1} of the header row has no name; name it, or pass --columns for a file without a header`, { file, line: 1 });
    }
    if (seen.has(name)) {
      throw new LoaderError('INPUT_HEADER', `${file}: the header names column "${name}" twice; attribute names must be unique`, { file, line: 1, field: name });
    }
    seen.add(name);
  });
  return header;
}

/** Line breaks in raw text: "\n", "\r\n" and a lone "\r" each count once. */
function countBreaks(raw: string): number {
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 10) n++;
    else if (c === 13 && raw.charCodeAt(i + 1) !== 10) n++;
  }
  return n;
}

function leadingLength(raw: string): number {
  let i = 0;
  while (i < raw.length && (raw.charCodeAt(i) === 10 || raw.charCodeAt(i) === 13)) i++;
  return i;
}

function leadingBreaks(raw: string): number {
  return countBreaks(raw.slice(0, leadingLength(raw)));
}

function endsWithBreak(raw: string): boolean {
  const c = raw.charCodeAt(raw.length - 1);
  return c === 10 || c === 13;
}

function trimBreak(raw: string): string {
  return raw.replace(/\r?\n?$|\r$/, '');
}

/** Passes chunks through unchanged, reporting the line breaks before the first other character (after a BOM). */
async function* countLeadingBreaks(stream: Readable, report: (breaks: number) => void): AsyncGenerator<Buffer> {
  let counting = true;
  let breaks = 0;
  let offset = 0;
  let previous = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (counting) {
      let i = 0;
      if (offset === 0 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
      for (; i < chunk.length; i++) {
        const c = chunk[i]!;
        if (c === 10) {
          if (previous !== 13) breaks++;
        } else if (c === 13) breaks++;
        else {
          counting = false;
          report(breaks);
          break;
        }
        previous = c;
      }
      offset += chunk.length;
    }
    yield chunk;
  }
  if (counting) report(breaks);
}
