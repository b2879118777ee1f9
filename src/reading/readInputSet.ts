import { createHash, type Hash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { LoaderError, bug } from '../shared/errors.js';
import type { RecordFlavor, SourceRecord } from '../typing/planRow.js';
import { delimiterOf, formatFromName, type InputFormat, type PartFormat } from './inputFormat.js';
import { detectFormat } from './detectFormat.js';
import type { InputPart } from './inputPart.js';
import type { InputSet } from './inputSet.js';
import type { ListedPart } from './inputPart.js';
import { buffered, decompressIfNeeded, type OpenedInput } from './openInput.js';
import { readIon } from './readIon.js';
import { readJsonLines } from './readJsonLines.js';
import { readJsonDocument } from './readJsonDocument.js';
import { jsonDocumentFormat } from './jsonDocumentFormat.js';
import { readCsvChunks, type ChunkedRecords } from './readCsv.js';
import { readRecords } from './readRecords.js';
import { SideBySide, type SideBySidePosition } from './sideBySide.js';
import { skipLines } from './skipLines.js';

/** What the load reads: every part of the input set, one after another, as one stream of records. */
export interface OpenedInputSet {
  /** The inputs as given, for messages. */
  name: string;
  /** Bytes of all parts (compressed sizes), when every size is known. */
  totalBytes: number | undefined;
  /** Bytes read so far over all parts (before decompression). */
  bytesRead(): number;
  records: AsyncGenerator<SourceRecord>;
  /**
   * The same records, in the arrays a part's reader makes where it makes them (CSV), else one by one: one
   * await per array. Taken instead of `records`, never beside it; `position()` then says where the last
   * array ends. For a reader that keeps no restart points (an estimate's planning thread).
   */
  chunks(): AsyncGenerator<SourceRecord | SourceRecord[]>;
  /** Where the record last given is: its part, its index in the part, and whether its part can be resumed inside. */
  position(): SetPosition;
  /** Stops reading (closes the parts being read). */
  close(): void;
  /** Where the files read side by side stand before the record last given; undefined when it came from a part read alone. */
  sideBySide(): SideBySidePosition | undefined;
}

/**
 * A record's place in the set (see OpenedInputSet.position). Files read side by side (an export's data
 * files) count as one part: the first of them, and the record's index among all their records.
 */
export interface SetPosition {
  part: number;
  /** Index of the record in its part (0: the part's first). */
  row: number;
  /** The part is read line by line (CSV, JSON lines, uncounted; an export's files side by side): a resume can start inside it. */
  withinPart: boolean;
}

/** Where a resumed read starts: a part, and in it the record at `row` whose first line is `line` (for files side by side: `sideBySide`). */
export interface ResumeAt {
  part: number;
  row: number;
  line: number;
  /** Where that record's line starts in the part, in bytes: the part is opened there (a plain part only). */
  offset?: number | undefined;
  sideBySide?: SideBySidePosition | undefined;
}

/** The decompressed bytes of a part from the start of line `line` on, a record starting there (for `syntax`). */
export type SkipToLine = (stream: Readable, line: number, syntax: 'csv' | 'jsonl', delimiter: string) => Promise<Readable>;

export interface ReadSetOptions {
  /** --input-format: every part is read so; undefined: each by its name, else its first bytes. */
  format: InputFormat | undefined;
  /**
   * `delimiter`: --delimiter for every part; undefined: each part's by its own name (delimiterOf).
   * `checkHeader`: told each CSV header row read from a part's start, before its first row is handed on.
   */
  csv: { delimiter: string | undefined; columns: string[] | undefined; checkHeader?: (file: string, names: string[], delimiter: string) => void };
  /** The load's abort signal: stops a read that waits on a decoder (Parquet's worker). */
  signal?: AbortSignal;
  /** How long a Parquet row group may take at the least (parquetThread.ts; tests shorten it). */
  parquetStallMs?: number;
  /** A resume: start here, not at the first part's first byte; `skipToLine` finds a line inside a part. */
  from?: { at: ResumeAt; skipToLine: SkipToLine } | undefined;
  /** Read each DynamoDB export's data files side by side (exportGroups), not one after another. */
  interleaveExports?: boolean;
}

/**
 * A part's records by its format, from the part opened and decompressed (reading/readRecords.ts for the
 * plain formats; a Parquet part is read again at offsets from its path). A DynamoDB export's data file is
 * JSON lines or Ion lines, tagged so the planner reads each as an export item or change record.
 */
export function recordsOfPart(
  opened: OpenedInput,
  format: PartFormat,
  csv: ReadSetOptions['csv'],
  {
    signal,
    parquetStallMs,
    firstLine,
    firstByte,
  }: Pick<ReadSetOptions, 'signal' | 'parquetStallMs'> & {
    firstLine?: number;
    /** The stream is the part's own bytes from this offset (not decompressed): each record then says where it starts (RowOrigin.offset). */
    firstByte?: number;
  } = {},
): ChunkedRecords {
  // Read from a line inside the part (a resume): its line numbers go on from there, CSV's columns given.
  const lines = { ...(firstLine === undefined ? {} : { firstLine }), ...(firstByte === undefined ? {} : { firstByte }) };
  switch (format) {
    case 'export-full':
    case 'export-incremental':
      return tagged(readJsonLines(opened.stream, opened.name, lines), format === 'export-full' ? 'ddb-export' : 'ddb-change');
    case 'export-full-ion':
    case 'export-incremental-ion':
      return tagged(readIon(opened.stream, opened.name, lines), format === 'export-full-ion' ? 'ddb-export' : 'ddb-change');
    case 'ddb-json':
      // Tagged: in a set, a part found to be DynamoDB JSON by its first bytes is read so whatever the others are.
      return tagged(readJsonLines(opened.stream, opened.name, lines), 'ddb-json');
    case 'jsonl':
      return readJsonLines(opened.stream, opened.name, lines);
    case 'json-array':
      return readJsonDocument(opened.stream, opened.name, 'array');
    case 'ddb-json-array':
      return tagged(readJsonDocument(opened.stream, opened.name, 'array'), 'ddb-json');
    case 'scan-output':
      return readJsonDocument(opened.stream, opened.name, 'scan');
    default: {
      // Each part's delimiter by its own name (a.csv and b.tsv in one set), unless --delimiter says for all.
      const delimiter = delimiterOf(opened.name, csv.delimiter);
      const check = csv.checkHeader;
      return readRecords(
        opened,
        format,
        {
          delimiter,
          columns: csv.columns,
          ...lines,
          ...(check && firstLine === undefined ? { onHeader: (names: string[]) => check(opened.name, names, delimiter) } : {}),
        },
        {
          ...(signal ? { signal } : {}),
          ...(parquetStallMs !== undefined ? { stallBaseMs: parquetStallMs } : {}),
        },
      );
    }
  }
}

/** JSON or Ion lines read in a flavor of their own (an export's line, DynamoDB JSON). */
async function* tagged(records: AsyncGenerator<SourceRecord>, flavor: RecordFlavor): AsyncGenerator<SourceRecord> {
  for await (const record of records) yield record.kind === 'json' || record.kind === 'ion' ? { ...record, flavor } : record;
}

/** The format of a part: its export's, --input-format, or its name's; undefined: its first bytes decide. */
export function formatOfPart(listed: ListedPart, forced: InputFormat | undefined): PartFormat | undefined {
  return listed.format ?? forced ?? formatFromName(listed.part.name);
}

/** Parquet is read at offsets from a local path: an S3 object or stdin cannot be, and is refused before any row. */
function checkParquetPart(part: InputPart): void {
  if (part.path !== undefined) return;
  throw new LoaderError(
    'INVALID_OPTION',
    part.name === 'stdin'
      ? 'Parquet cannot be read from stdin: its index is at the end of the file; pass the file path instead'
      : `${part.name} is Parquet, which ddb-spread reads from local files only (its index is at the end of the object); copy it locally first (aws s3 cp)`,
    { file: part.name },
  );
}

/** Formats read line by line, whose records a resume can find again from a line number (RecordStartScanner's syntaxes). */
const LINE_FORMATS: ReadonlySet<PartFormat> = new Set(['csv', 'jsonl', 'ddb-json']);

/**
 * Opens the set for reading: parts are opened one at a time, as the records reach them. A resume starts
 * at a part (the ones before are not opened), and inside it at a line: the part is read from its first
 * byte, its bytes up to that line only scanned for where records start, never parsed. An export's data
 * files read side by side resume each at its own line, in the same rotation.
 */
export function readInputSet(set: InputSet, options: ReadSetOptions): OpenedInputSet {
  const from = options.from?.at;
  // Bytes of the parts a resume does not open count as read, for progress (a byte range of a part: its own bytes).
  let done = set.parts.slice(0, from?.part ?? 0).reduce((sum, p) => sum + (p.range ? p.range.end - p.range.start : (p.part.size ?? 0)), 0);
  /** The parts open now (one at a time, or an export's data files side by side), raw and decompressed. */
  const reading = new Set<{ raw: Readable; opened: OpenedInput }>();
  let position: SetPosition = { part: from?.part ?? 0, row: -1, withinPart: false };
  // Formats first: a part named in an unreadable way fails before any row.
  const formats = set.parts.map((p) => formatOfPart(p, options.format));
  for (const [i, listed] of set.parts.entries()) if (formats[i] === 'parquet') checkParquetPart(listed.part);
  // A resume starts at its part (the first of a group read side by side): the ones before are not opened.
  const groups = (options.interleaveExports ? exportGroups(set) : set.parts.map((_, i) => [i])).filter((group) => group[0]! >= (from?.part ?? 0));
  if (from && groups[0]?.[0] !== from.part) throw bug(`a resume starts at part ${from.part}, which does not begin a group of parts read together`);
  /** The read of the group of files side by side now being read, if any. */
  let side: SideBySide | undefined;

  /** A part's records, from its start or (a resume inside it) from the record `at.row` at line `at.line` (side by side: past it). */
  function partRecords(i: number, at?: { row: number; line: number; offset?: number | undefined; byLine: boolean }): AsyncGenerator<SourceRecord> {
    return partEntries(i, at, false) as AsyncGenerator<SourceRecord>;
  }
  /** A part's records, in arrays where its reader makes them and `chunked` asks for them. */
  async function* partEntries(
    i: number,
    at: { row: number; line: number; offset?: number | undefined; byLine: boolean } | undefined,
    chunked: boolean,
  ): AsyncGenerator<SourceRecord | SourceRecord[]> {
    const { part, expected, range, header } = set.parts[i]!;
    const named = formats[i];
    // A range past the part's first byte (a worker's share of a part cut by range): opened where its first record starts.
    if (range && range.start > 0 && !(at && at.row > 0)) {
      if (named === undefined || !LINE_FORMATS.has(named)) throw bug(`${part.name} is cut into ranges but is not read as lines`);
      yield* partFromOffset(i, named, { row: 0, line: range.line, offset: range.start }, false);
      return;
    }
    // A resume at a record's byte offset opens the part there (it was read plain, by its name's format, by the run that recorded it).
    if (
      at &&
      at.row > 0 &&
      !at.byLine &&
      at.offset !== undefined &&
      at.offset > 0 &&
      named !== undefined &&
      LINE_FORMATS.has(named) &&
      expected === undefined
    ) {
      yield* partFromOffset(i, named, { row: at.row, line: at.line, offset: at.offset });
      return;
    }
    const raw = await part.open(0, range?.end);
    const opened = await openPart(part, raw, expected?.md5 !== undefined);
    const open = { raw, opened };
    reading.add(open);
    let format = formats[i];
    if (format === undefined) {
      format = await detectFormat(opened);
      if (format === 'parquet') checkParquetPart(part);
    }
    // A JSON document is read as one, not as lines (partHeads.ts marks the parts it can open twice; stdin is found here).
    if (format === 'jsonl' || format === 'ddb-json') format = await jsonDocumentFormat(opened, format);
    // An export's data file is checked against its record count and MD5 as a whole: read whole, or side by side.
    const withinPart = LINE_FORMATS.has(format) && expected === undefined;
    let records: ChunkedRecords;
    if (at && at.row > 0) {
      if (at.byLine) {
        // A file side by side: one record a line, so it goes on past its last record's line break.
        const rest = await skipLines(opened.stream, at.line);
        records = recordsOfPart({ ...opened, stream: rest }, format, options.csv, { ...options, firstLine: at.line + 1 });
      } else {
        if (!withinPart) throw bug(`a resume starts inside ${part.name}, which is read whole`);
        const delimiter = delimiterOf(part.name, options.csv.delimiter);
        const columns = format === 'csv' ? (options.csv.columns ?? header?.slice() ?? (await headerOf(part, delimiter))) : undefined;
        const rest = await options.from!.skipToLine(opened.stream, at.line, format === 'csv' ? 'csv' : 'jsonl', delimiter);
        records = recordsOfPart({ ...opened, stream: rest }, format, { delimiter, columns }, { ...options, firstLine: at.line });
      }
    } else {
      // A plain part whose format its name gives: each record's byte offset is kept, so a restart point inside it records where it is.
      const plain = named !== undefined && withinPart && opened.compression === undefined;
      records = recordsOfPart(opened, format, options.csv, { ...options, ...(plain ? { firstByte: 0 } : {}) });
    }
    let row = at?.row ?? 0;
    // Records skipped count toward the manifest's: the file is checked whole.
    let count = at?.row ?? 0;
    if (chunked && records.chunks) {
      for await (const chunk of records.chunks) {
        if (chunk.length === 0) continue;
        row += chunk.length;
        position = { part: i, row: row - 1, withinPart };
        count += chunk.length;
        yield chunk;
      }
    } else {
      for await (const record of records) {
        position = { part: i, row: row++, withinPart };
        count++;
        yield record;
      }
    }
    done += opened.bytesRead();
    reading.delete(open);
    if (expected) checkPart(part.name, expected, count, opened.md5?.digest('hex'));
  }
  /**
   * A plain part from a restart point's byte offset on, not from its start: nothing before it is read. It
   * is opened a byte early, a line early: the byte before a record's line is a line break, which reads as
   * an empty line, and the record comes out on its own line; any other byte means the offset is not this
   * part's, and the resume stops there, before any row of it is handed on.
   */
  async function* partFromOffset(
    i: number,
    format: PartFormat,
    at: { row: number; line: number; offset: number },
    resumed = true,
  ): AsyncGenerator<SourceRecord> {
    const { part, range, header } = set.parts[i]!;
    const delimiter = delimiterOf(part.name, options.csv.delimiter);
    const columns = format === 'csv' ? (options.csv.columns ?? header?.slice() ?? (await headerOf(part, delimiter))) : undefined;
    const start = at.offset - 1;
    // A range's reading ends where the next worker's starts; its bytes count from its own start (its share's total).
    const raw = await part.open(start, range?.end);
    const opened = plainPart(part, raw, start - (range ? range.start : 0));
    const open = { raw, opened };
    reading.add(open);
    const records = recordsOfPart(opened, format, { delimiter, columns }, { ...options, firstLine: at.line - 1, firstByte: start });
    let row = at.row;
    // A range's first record may be past blank lines (no records): only a restart point names a record's own line.
    let first = resumed;
    for await (const record of records) {
      if (first && (record.origin.line !== at.line || record.origin.offset !== at.offset)) {
        throw new LoaderError(
          'INPUT_CHANGED',
          `cannot resume inside ${part.name}: no record starts at line ${at.line} (byte ${at.offset}), where the checkpoint says one does`,
          { file: part.name, line: at.line },
        );
      }
      first = false;
      position = { part: i, row: row++, withinPart: true };
      yield record;
    }
    done += opened.bytesRead();
    reading.delete(open);
  }
  async function* records(chunked: boolean): AsyncGenerator<SourceRecord | SourceRecord[]> {
    for (const group of groups) {
      const resumed = from && group[0] === from.part && from.row > 0 ? from : undefined;
      // An export's data file alone (an export of one file) is a group of one: restart points inside it as well.
      const exported = options.interleaveExports === true && LINE_SIDE_FORMATS.has(formats[group[0]!]!) && set.parts[group[0]!]!.expected !== undefined;
      if (group.length === 1 && !exported) {
        yield* partEntries(group[0]!, resumed ? { row: resumed.row, line: resumed.line, offset: resumed.offset, byLine: false } : undefined, chunked);
        continue;
      }
      const at = resumed?.sideBySide;
      if (resumed && !at) throw bug(`a resume starts inside the files read side by side from part ${resumed.part}, without their places`);
      // Files read side by side make restart points inside them when each is read one record a line.
      const byLine = group.every((i) => LINE_SIDE_FORMATS.has(formats[i]!));
      // The files opened before the point and done are not opened again.
      if (at) for (const i of group.slice(0, at.opened)) if (!at.files.some((f) => f.part === i)) done += set.parts[i]!.part.size ?? 0;
      side = new SideBySide(group, (i, place) => partRecords(i, place ? { ...place, byLine: true } : undefined), at);
      let row = resumed?.row ?? 0;
      for await (const record of side.records()) {
        position = { part: group[0]!, row: row++, withinPart: byLine };
        yield record;
      }
      side = undefined;
    }
  }
  return {
    name: set.name,
    totalBytes: set.totalBytes,
    bytesRead: () => done + [...reading].reduce((sum, r) => sum + r.opened.bytesRead(), 0),
    records: records(false) as AsyncGenerator<SourceRecord>,
    chunks: () => records(true),
    position: () => position,
    sideBySide: () => side?.before(),
    close: () => {
      for (const { raw, opened } of reading) {
        raw.destroy();
        opened.stream.destroy();
      }
    },
  };
}

/** The formats of an export's data files, one record a line, that a read side by side can resume inside (skipLines). */
const LINE_SIDE_FORMATS: ReadonlySet<PartFormat> = new Set(['export-full', 'export-incremental', 'export-full-ion', 'export-incremental-ion']);

/**
 * The parts in reading order, grouped: the data files of one DynamoDB export together (a group read side
 * by side), every other part alone. An export writes each item collection's items together, in hash
 * order, so a table with large collections comes out in long runs of one key, file after file; read side
 * by side, the files' keys mix. Safe whatever the files hold: an export has each primary key once (a
 * full export's snapshot, or an incremental export's last change of each item), so its items may be
 * written in any order. Exports of a chain stay one after another, as the chain's order needs.
 */
function exportGroups(set: InputSet): number[][] {
  const groups: number[][] = [];
  let folder: string | undefined;
  set.parts.forEach((listed, i) => {
    const exported = listed.expected !== undefined && (listed.format?.startsWith('export-') ?? false);
    const at = exported ? listed.part.name.slice(0, listed.part.name.lastIndexOf('/') + 1) : undefined;
    if (at !== undefined && at === folder) groups.at(-1)!.push(i);
    else groups.push([i]);
    folder = at;
  });
  return groups;
}

/** The names of a CSV part's header row, read from the part's start (a resume inside the part parses from past it). */
async function headerOf(part: InputPart, delimiter: string): Promise<string[]> {
  const raw = await part.open(0);
  const opened = await openPart(part, raw, false);
  let names: string[] | undefined;
  const records = readCsvChunks(opened.stream, part.name, { delimiter, columns: undefined, onHeader: (found) => (names = found) });
  try {
    await records.next();
  } finally {
    await records.return(undefined);
    raw.destroy();
    opened.stream.destroy();
  }
  if (!names) throw bug(`${part.name} was read from a line inside it, but has no header row`);
  return names;
}

/** A part's own bytes from `start` on, read as they are (a plain part resumed at an offset): its bytes before count as read. */
function plainPart(part: InputPart, raw: Readable, start: number): OpenedInput {
  let bytes = start;
  const counted = new PassThrough({ highWaterMark: 256 * 1024 });
  raw.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  raw.on('error', (error) =>
    counted.destroy(
      error instanceof LoaderError
        ? error
        : new LoaderError('INPUT_UNREADABLE', `cannot read ${part.name}: ${error.message}`, { file: part.name, cause: error }),
    ),
  );
  raw.pipe(counted);
  return {
    stream: counted,
    name: part.name,
    totalBytes: part.size,
    bytesRead: () => bytes - buffered(counted),
    path: part.path ?? part.name,
    compression: undefined,
  };
}

/** A part's raw bytes counted (and hashed for an export's MD5), then decompressed by their magic bytes. */
export async function openPart(part: InputPart, raw: Readable, hashed: boolean): Promise<OpenedInput & { md5: Hash | undefined }> {
  let bytes = 0;
  const md5 = hashed ? createHash('md5') : undefined;
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
  const { stream, compression } = await decompressIfNeeded(counted);
  // readParquetInput replaces bytesRead with its positional reads' count.
  return {
    stream,
    name: part.name,
    totalBytes: part.size,
    bytesRead: () => bytes - buffered(counted),
    path: part.path ?? part.name,
    compression,
    md5,
    pin: part.pin,
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
