import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { LoaderError } from '../../shared/errors.js';
import type { SourceRecord } from '../../typing/planRow.js';
import { eachRecord, readCsvChunks } from '../../reading/readCsv.js';
import { readJsonLines } from '../../reading/readJsonLines.js';
import { buffered } from '../../reading/openInput.js';
import { composeCuts, SegmentScan } from './objectCuts.js';
import { RecordStartScanner, type RecordStart, type RecordSyntax } from './recordStarts.js';

/** A part of a file that starts where a record starts. */
export interface ByteRange {
  start: number;
  /** Exclusive. */
  end: number;
  /** Line number at `start` (1-based). */
  line: number;
}

/** How the records of a range are read. */
export interface RangeSyntax {
  syntax: RecordSyntax;
  /** CSV: the delimiter (one byte). */
  delimiter: string;
  /** CSV: the attribute names, from --columns or the header row; undefined for range 0 of a file with a header. */
  columns: string[] | undefined;
}

const SCAN_CHUNK = 1024 * 1024;
/**
 * Read-ahead of one range: small, as a striped read has one per stripe. Each chunk read ahead, and the rows
 * parsed from it, wait there while the other stripes are written; the bigger the chunk, the longer they
 * wait, past the young generation, to be freed only by a full collection. On the bench's 64-stripe read of
 * 200k rows with V8's default heap growth: 16 KB peaked at 195-203 MB RSS (~55 MB of it buffers waiting to
 * be collected), 8 KB at 151-168 MB, 4 KB at 141-147 MB with more CPU in reads. Since the CLI doubles the
 * live heap between full GCs (src/cli/heap.ts), they are collected sooner: the CLI's whole load of 200k rows
 * into the instant sink peaked at 175-181 MB at 8 KB, 181-187 MB at 32 KB and 196-200 MB at 64 KB, and
 * 32 KB took ~0.35 s less CPU than 8 KB (a quarter of the reads; five runs each, alternated).
 */
const RANGE_CHUNK = 32 * 1024;

/**
 * Bytes a range's reader parses at a time (readCsv's PARSE_SLICE is 8 KB). A striped read takes one row
 * from each of up to 64 stripes in turn, so the rows of one stripe's parse wait 64 times as long as in a
 * read from the start: with 8 KB (~32 rows of 250 bytes) they outlived a young-heap collection or two, and
 * a 200k-row load into the instant sink moved 160-240 MB of them to the old heap (`--trace-gc-nvp`,
 * `promoted`), with 16-19 full collections; 1 KB: ~50 MB and 9, and ~4% less CPU. Bytes wait, unparsed, in
 * the read-ahead buffers, where the collector does not copy them.
 */
const STRIPE_PARSE_SLICE = 1024;

/**
 * Cuts a file into `count` ranges of about equal size, each starting where a record starts (the first at
 * byte 0), by one pass over the bytes up to the last cut (RecordStartScanner). Empty ranges are dropped.
 */
export async function cutRanges(path: string, size: number, syntax: RecordSyntax, delimiter: string, count: number): Promise<ByteRange[]> {
  return (await cutFile(path, size, { syntax, delimiter }, count, 1)).ranges;
}

/**
 * cutRanges, and `marksPerRange - 1` more record starts inside each range from the same pass, with their
 * lines (ascending, some may repeat): where a later search of a range can start reading without scanning
 * the range again (src/ordering/stripes/stripeKeys.ts).
 */
export async function cutFile(
  path: string,
  size: number,
  how: Pick<RangeSyntax, 'syntax' | 'delimiter'>,
  count: number,
  marksPerRange: number,
): Promise<{ ranges: ByteRange[]; marks: RecordStart[] }> {
  const targets: number[] = [];
  const fine = count * marksPerRange;
  for (let k = 1; k < fine; k++) targets.push(Math.floor((size * k) / fine));
  const scanner = new RecordStartScanner(how.syntax, targets, Buffer.from(how.delimiter, 'utf8')[0]);
  if (targets.length > 0) await scan(path, { start: 0, end: size, line: 1 }, SCAN_CHUNK, scanner);
  scanner.end();
  const all = scanner.starts;
  const starts = [{ offset: 0, line: 1 }, ...all.filter((_, i) => (i + 1) % marksPerRange === 0)];
  const ranges: ByteRange[] = [];
  starts.forEach((s, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.offset : size;
    if (end > s.offset || i === 0) ranges.push({ start: s.offset, end: Math.max(end, s.offset), line: s.line });
  });
  return { ranges, marks: all.filter((m) => m.offset < size) };
}

/**
 * An object read only by ranged GETs (S3) cut as cutFile cuts a file, into `count` ranges starting where
 * records start, with their lines: its `count` segments are scanned side by side, each by its own GET
 * through the part's pinned bytes (If-Match on its ETag), `limit` at a time (objectCuts.ts). Undefined when
 * the cut is not proved (the object is then read whole). The last segment is read only to its first record
 * start under every state it may be entered in.
 */
export async function cutObject(
  bytes: RangeBytes,
  size: number,
  how: Pick<RangeSyntax, 'syntax' | 'delimiter'>,
  count: number,
  limit: <T>(run: () => Promise<T>) => Promise<T>,
): Promise<ByteRange[] | undefined> {
  const starts = Array.from({ length: count }, (_, k) => Math.floor((size * k) / count));
  const delimiter = Buffer.from(how.delimiter, 'utf8')[0]!;
  const summaries = await Promise.all(
    starts.map((start, k) =>
      limit(async () => {
        const last = k + 1 === count;
        const scan = new SegmentScan(how.syntax, delimiter, k === 0);
        const stream = bytes.open(start, last ? size : starts[k + 1]!, SCAN_CHUNK);
        try {
          for await (const chunk of stream) {
            scan.feed(chunk as Buffer);
            if (last && scan.started) break;
          }
        } finally {
          stream.destroy();
        }
        return scan.summary();
      }),
    ),
  );
  return composeCuts(starts, size, summaries);
}

/**
 * Where line `line` starts in a range, when a record starts there: the offset of the first byte after
 * `line - range.line` line breaks from the range's start, found and checked by RecordStartScanner
 * following the quoting from the range's start (which is a record start). Undefined when no record starts
 * at the start of that line (the line is inside a quoted field, or past the range), so the caller reads
 * the range as before instead of cutting it there. A striped read cuts a range's head off here, so that
 * the head's rows are parsed once by the stripe that takes them and never by the one that starts after.
 */
export async function recordStartAtLine(
  path: string,
  range: ByteRange,
  line: number,
  how: Pick<RangeSyntax, 'syntax' | 'delimiter'>,
): Promise<number | undefined> {
  if (line <= range.line || range.end <= range.start) return undefined;
  const target = line - range.line + 1;
  const scanner = new RecordStartScanner(how.syntax, [target], Buffer.from(how.delimiter, 'utf8')[0], { byLine: true, atFileStart: range.start === 0 });
  await scan(path, range, RANGE_CHUNK * 4, scanner);
  scanner.end();
  const found = scanner.starts[0];
  return found && found.line === target && found.offset < range.end - range.start ? range.start + found.offset : undefined;
}

/**
 * Cuts a range into up to `count` parts of about equal size, each starting where a record starts (the
 * first at the range's start), as cutRanges cuts a file: one pass of RecordStartScanner over the range,
 * following the quoting from its start. Lines are the file's (the range's `line` at its start).
 */
export async function cutRange(path: string, range: ByteRange, how: Pick<RangeSyntax, 'syntax' | 'delimiter'>, count: number): Promise<ByteRange[]> {
  const size = range.end - range.start;
  const targets: number[] = [];
  for (let k = 1; k < count; k++) targets.push(Math.floor((size * k) / count));
  const scanner = new RecordStartScanner(how.syntax, targets, Buffer.from(how.delimiter, 'utf8')[0], { atFileStart: range.start === 0 });
  if (targets.length > 0 && size > 0) await scan(path, range, RANGE_CHUNK * 4, scanner);
  scanner.end();
  const starts = [{ offset: 0, line: 1 }, ...scanner.starts.filter((s) => s.offset < size)];
  const parts: ByteRange[] = [];
  starts.forEach((s, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.offset : size;
    if (end > s.offset) parts.push({ start: range.start + s.offset, end: range.start + end, line: range.line + s.line - 1 });
  });
  return parts;
}

/**
 * Feeds a range's bytes to a scanner until it is done, through one buffer read into again and again: the
 * scanner keeps nothing of a chunk, and a buffer per chunk (a read stream's) is external memory that lives
 * until the next garbage collection. The cut of a 50 MB file left ~30 MB of such buffers behind it.
 */
async function scan(path: string, range: ByteRange, chunkBytes: number, scanner: RecordStartScanner): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(1, range.end - range.start)));
    for (let at = range.start; at < range.end && !scanner.done;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, range.end - at), at);
      if (bytesRead === 0) break;
      scanner.feed(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/**
 * A part's bytes [start, end) as a stream checked against the identity pinned when the part was listed: a
 * local file's FilePin, or an S3 object read by ranged GETs that ask for its ETag.
 */
export interface RangeBytes {
  open(start: number, end: number, chunkBytes: number): Readable;
}

/** A reader of one range: its records, the bytes it has read and a way to stop it. */
export interface RangeReader {
  /** The records one by one; or `chunks`, the same in arrays (read one or the other). */
  records: AsyncGenerator<SourceRecord>;
  chunks: AsyncGenerator<SourceRecord[]>;
  bytesRead(): number;
  close(): void;
}

/**
 * Reads the records of one range. Range 0 of a CSV file with a header reads the header (and reports it to
 * `onHeader`); every other range needs `columns`. Line numbers continue from the range's `line`. With the
 * part's pinned bytes (the rows the load writes: a FilePin, or an S3 object's), every chunk is checked
 * against the part as listed before it is parsed, and the range's end too: a part changed mid-load stops
 * it, never mixes versions. Without them, `path` is read as it is (the cut's probes).
 */
export function readRange(path: string, file: string, range: ByteRange, how: RangeSyntax, onHeader?: (names: string[]) => void, pin?: RangeBytes): RangeReader {
  const source: Readable =
    range.end <= range.start
      ? Readable.from([])
      : pin
        ? pin.open(range.start, range.end, RANGE_CHUNK)
        : createReadStream(path, { start: range.start, end: range.end - 1, highWaterMark: RANGE_CHUNK });
  let bytes = 0;
  // Counted on the way through, as openInput counts: a 'data' listener is only safe with the pipe beside it.
  const stream = new PassThrough({ highWaterMark: RANGE_CHUNK });
  source.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  source.on('error', (error) =>
    stream.destroy(error instanceof LoaderError ? error : new LoaderError('INPUT_UNREADABLE', `cannot read ${file}: ${error.message}`, { file, cause: error })),
  );
  source.pipe(stream);
  const chunks =
    how.syntax === 'jsonl'
      ? inArrays(readJsonLines(stream, file, { firstLine: range.line, firstByte: range.start }))
      : readCsvChunks(stream, file, {
          delimiter: how.delimiter,
          columns: how.columns,
          firstByte: range.start,
          ...(how.columns ? { firstLine: range.line } : {}),
          ...(onHeader ? { onHeader } : {}),
          parseSlice: STRIPE_PARSE_SLICE,
        });
  return {
    chunks,
    records: eachRecord(chunks),
    // Bytes still waiting in the pipe are behind no row yet (progress weighs rows read against bytes read).
    bytesRead: () => bytes - buffered(stream),
    close: () => {
      source.destroy();
      stream.destroy();
    },
  };
}

/** One record an array (JSON Lines is read a line at a time). */
async function* inArrays(records: AsyncGenerator<SourceRecord>): AsyncGenerator<SourceRecord[]> {
  for await (const record of records) yield [record];
}
