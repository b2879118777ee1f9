import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { LoaderError } from '../shared/errors.js';
import type { SourceRecord } from '../typing/planRow.js';
import type { InputFormat } from '../load/options.js';
import type { InputSet, ListedPart, PartFormat } from './inputSet.js';
import { gunzipIfNeeded } from './openInput.js';
import { readCsv } from './readCsv.js';
import { readJsonLines } from './readJsonLines.js';

/** What the load reads: every part of the input set, one after another, as one stream of records. */
export interface OpenedInputSet {
  /** The inputs as given, for messages. */
  name: string;
  /** Bytes of all parts (compressed sizes), when every size is known. */
  totalBytes: number | undefined;
  /** Bytes read so far over all parts (before decompression). */
  bytesRead(): number;
  records: AsyncGenerator<SourceRecord>;
  /** Stops reading (closes the part being read). */
  close(): void;
}

export interface ReadSetOptions {
  /** --input-format: every part is read so; undefined: each by its name. */
  format: InputFormat | undefined;
  csv: { delimiter: string; columns: string[] | undefined };
}

/**
 * A part's records by its format. The seam for other formats: a DynamoDB export in ION (issue 17's ION
 * reader) plugs in here with its own reader of a data file's decompressed stream.
 */
export function recordsOfPart(stream: Readable, name: string, format: PartFormat, csv: ReadSetOptions['csv']): AsyncGenerator<SourceRecord> {
  switch (format) {
    case 'csv':
      return readCsv(stream, name, csv);
    case 'jsonl':
    case 'ddb-json':
      return readJsonLines(stream, name);
    case 'export-full':
    case 'export-incremental':
      return tagged(readJsonLines(stream, name), format);
    case 'export-full-ion':
    case 'export-incremental-ion':
      throw ionUnsupported(name);
  }
}

/** Until the ION reader (issue 17) plugs into recordsOfPart. */
function ionUnsupported(name: string): LoaderError {
  return new LoaderError('INPUT_UNREADABLE', `${name} is a DynamoDB export data file in ION format, which this version cannot read; export in DYNAMODB_JSON`, {
    file: name,
  });
}

/** JSON lines of an export: the planner reads them as export items or change records. */
async function* tagged(records: AsyncGenerator<SourceRecord>, format: 'export-full' | 'export-incremental'): AsyncGenerator<SourceRecord> {
  for await (const record of records) yield record.kind === 'json' ? { ...record, flavor: format === 'export-full' ? 'ddb-export' : 'ddb-change' } : record;
}

/** The format of a part: its export's, --input-format, or its name's. */
export function formatOfPart(listed: ListedPart, forced: InputFormat | undefined): PartFormat {
  if (listed.format !== undefined) return listed.format;
  if (forced !== undefined) return forced;
  const name = listed.part.name.toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.csv') || name.endsWith('.tsv')) return 'csv';
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || name.endsWith('.json')) return 'jsonl';
  throw new LoaderError('INVALID_OPTION', `cannot tell the format of ${listed.part.name} from its name; pass --input-format csv, jsonl or ddb-json`, {
    file: listed.part.name,
  });
}

/** Opens the set for reading: parts are opened one at a time, as the records reach them. */
export function readInputSet(set: InputSet, options: ReadSetOptions): OpenedInputSet {
  let bytes = 0;
  let current: Readable | undefined;
  // Formats first: a part of unknown format fails before any row.
  const formats = set.parts.map((p) => formatOfPart(p, options.format));
  // Refused before any row is read.
  for (const [i, listed] of set.parts.entries()) if (formats[i]!.endsWith('-ion')) throw ionUnsupported(listed.part.name);
  async function* records(): AsyncGenerator<SourceRecord> {
    for (const [i, listed] of set.parts.entries()) {
      const { part, expected } = listed;
      const raw = await part.open(0);
      const md5 = expected?.md5 !== undefined ? createHash('md5') : undefined;
      const counted = new PassThrough({ highWaterMark: 256 * 1024 });
      raw.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        md5?.update(chunk);
      });
      raw.on('error', (error) =>
        counted.destroy(
          error instanceof LoaderError
            ? error
            : new LoaderError('INPUT_UNREADABLE', `cannot read ${part.name}: ${error.message}`, { file: part.name, cause: error }),
        ),
      );
      raw.pipe(counted);
      current = raw;
      const stream = await gunzipIfNeeded(counted);
      let count = 0;
      for await (const record of recordsOfPart(stream, part.name, formats[i]!, options.csv)) {
        count++;
        yield record;
      }
      if (expected) checkPart(part.name, expected, count, md5?.digest('hex'));
    }
  }
  return {
    name: set.name,
    totalBytes: set.totalBytes,
    bytesRead: () => bytes,
    records: records(),
    close: () => current?.destroy(),
  };
}

/** An export data file holds what its manifest says: its count of items, and its MD5 when given. */
function checkPart(name: string, expected: NonNullable<ListedPart['expected']>, count: number, md5: string | undefined): void {
  if (count !== expected.items)
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `${name} holds ${count} records, but the export's manifest-files.json says ${expected.items}: the export is incomplete or altered`,
      {
        file: name,
      },
    );
  if (expected.md5 !== undefined && md5 !== expected.md5)
    throw new LoaderError('INPUT_UNREADABLE', `${name} does not match the MD5 in the export's manifest-files.json: the file is damaged or altered`, {
      file: name,
    });
}
