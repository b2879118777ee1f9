import { Readable } from 'node:stream';
import pLimit from 'p-limit';
import { LoaderError } from '../shared/errors.js';
import type { PartColumns } from '../typing/headerCheck.js';
import { itemFromIon } from '../typing/ionItem.js';
import { CONDITION_FIELDS } from '../typing/itemCondition.js';
import type { SourceRecord } from '../typing/planRow.js';
import { detectFormat } from './detectFormat.js';
import { delimiterOf, type InputFormat, type PartFormat } from './inputFormat.js';
import type { ListedPart } from './inputPart.js';
import type { InputSet } from './inputSet.js';
import { jsonDocumentFormat } from './jsonDocumentFormat.js';
import { readCsvChunks } from './readCsv.js';
import { readIon } from './readIon.js';
import { readJsonDocument } from './readJsonDocument.js';
import { readJsonLines } from './readJsonLines.js';
import { formatOfPart, openPart } from './readInputSet.js';

/** Rows of a JSON or Ion part looked at for its attribute names. */
const FIRST_ROWS = 20;
/** The first bytes of an S3 object in which its CSV header row is looked for first. */
const HEAD_LOOK_BYTES = 16 * 1024;

export interface PartHeadsOptions {
  /** --input-format. */
  format: InputFormat | undefined;
  csv: { delimiter: string | undefined; columns: string[] | undefined };
}

/** What the heads of a set's parts show: each part's columns, and the set with JSON documents marked as such. */
export interface PartHeads {
  columns: PartColumns[];
  /** Every part's columns are in `columns` (no part skipped or empty). */
  everyPartKnown: boolean;
  /**
   * The set, each part a JSON document (an array, scan output) given that format, so it is read as one, and
   * each CSV part given its header row (ListedPart.header).
   */
  set: InputSet;
}

/**
 * Each part's first bytes, read before the first write: a CSV part's header row (or --columns), the
 * attribute names of a JSON or Ion part's first rows, and whether a JSON part is a document rather than
 * lines. A part that is a request file or a pretty-printed document is refused here, naming it. Not
 * read: stdin (it cannot be read twice; its shape is found as it is read), exports (their items carry the
 * table's key by construction), Parquet (read by its own worker). A few parts at a time: an S3 object's
 * first bytes are a GET each. Errors a part's header row has (a duplicate name, an open quote) are thrown
 * here too, as the read would throw them, but before any row is written.
 */
export async function readPartHeads(set: InputSet, options: PartHeadsOptions): Promise<PartHeads> {
  const limit = pLimit(8);
  const heads = await Promise.all(set.parts.map((listed) => limit(() => headOf(listed, options))));
  const columns = heads.flatMap((h) => (h.columns ? [h.columns] : []));
  const headerOf = (i: number) => (heads[i]!.columns?.source === 'header' ? heads[i]!.columns!.names : undefined);
  const changed = heads.some((h, i) => h.format !== set.parts[i]!.format || headerOf(i) !== undefined);
  const parts = changed
    ? set.parts.map((listed, i): ListedPart => {
        const header = headerOf(i);
        if (heads[i]!.format === listed.format && header === undefined) return listed;
        return { ...listed, format: heads[i]!.format, ...(header ? { header } : {}) };
      })
    : set.parts;
  return { columns, everyPartKnown: columns.length === set.parts.length, set: changed ? { ...set, parts } : set };
}

async function headOf(listed: ListedPart, options: PartHeadsOptions): Promise<{ columns?: PartColumns; format: PartFormat | undefined }> {
  const { part } = listed;
  const named = formatOfPart(listed, options.format);
  const unchanged = { format: listed.format };
  if (listed.format !== undefined || named === 'parquet' || (part.path === undefined && part.etag === undefined)) return unchanged;
  // Read already where the part was cut into ranges (load/rangeCuts.ts): not looked at again.
  if (listed.header !== undefined && named === 'csv' && !options.csv.columns)
    return { ...unchanged, columns: { file: part.name, source: 'header', names: listed.header, delimiter: delimiterOf(part.name, options.csv.delimiter) } };
  if (named === 'csv' && !options.csv.columns && part.path === undefined && (part.size ?? 0) > HEAD_LOOK_BYTES) {
    const delimiter = delimiterOf(part.name, options.csv.delimiter);
    const names = await headerWithin(listed, delimiter, HEAD_LOOK_BYTES);
    if (names) return { ...unchanged, columns: { file: part.name, source: 'header', names, delimiter } };
  }
  const raw = await part.open(0);
  const opened = await openPart(part, raw, false);
  try {
    const format = named ?? (await detectFormat(opened));
    if (format === 'csv') {
      const delimiter = delimiterOf(part.name, options.csv.delimiter);
      if (options.csv.columns) {
        // --columns names every part's columns; the first row is read to see it is not a header after all.
        const firstRow = await firstCells(opened.stream, part.name, delimiter, options.csv.columns);
        return { ...unchanged, columns: { file: part.name, source: 'columns', names: options.csv.columns, ...(firstRow ? { firstRow } : {}) } };
      }
      const names = await headerRow(opened.stream, part.name, delimiter);
      return names ? { ...unchanged, columns: { file: part.name, source: 'header', names, delimiter } } : unchanged;
    }
    if (format === 'ion') return { ...unchanged, columns: await rowNames(readIon(opened.stream, part.name), part.name, 'ion') };
    if (format !== 'jsonl' && format !== 'ddb-json') return unchanged;
    const shape = await jsonDocumentFormat(opened, format);
    if (shape !== format) {
      // A document's first items, as a line's: an array of items or scan output's Items.
      const items = readJsonDocument(opened.stream, part.name, shape === 'scan-output' ? 'scan' : 'array');
      // Parsed as JSON either way; read as plain JSON only as an array of plain objects (not --input-format ddb-json's array, not scan output).
      const columns = await rowNames(items, part.name, 'jsonl', shape === 'json-array');
      return { format: shape, ...(columns ? { columns } : {}) };
    }
    return { ...unchanged, columns: await rowNames(readJsonLines(opened.stream, part.name), part.name, format) };
  } finally {
    raw.destroy();
    opened.stream.destroy();
  }
}

/**
 * An S3 object's CSV header row from its first `bytes` bytes alone (one ranged GET), or undefined when they
 * do not show it whole (compressed, a header row running past them, or an error there): it is then read as
 * any part's head is. Read to its end, the object's stream would fetch its next window ahead (256 KB),
 * dropped once the header is found: a look at 16 parts of 1.5 MB fetched 5 MB for their headers.
 */
async function headerWithin(listed: ListedPart, delimiter: string, bytes: number): Promise<string[] | undefined> {
  const raw = await listed.part.open(0, bytes);
  const opened = await openPart(listed.part, raw, false);
  let names: string[] | undefined;
  let end = Infinity;
  try {
    if (opened.compression !== undefined) return undefined;
    const records = readCsvChunks(opened.stream, listed.part.name, {
      delimiter,
      columns: undefined,
      onHeader: (found, at) => {
        names = found;
        end = at;
      },
    });
    try {
      await records.next();
    } finally {
      await records.return(undefined);
    }
  } catch {
    // Thrown again by the whole read where it is the header's.
    return undefined;
  } finally {
    raw.destroy();
    opened.stream.destroy();
  }
  // Ended before the last byte read: its line break was read, so the row was whole (one ending at it may run on).
  return end < bytes ? names : undefined;
}

/** The header row's names in `bytes` (a CSV part's first bytes, to its first record after the header row), as a read finds them. */
export function headerRowOf(bytes: Buffer, file: string, delimiter: string): Promise<string[] | undefined> {
  return headerRow(Readable.from([bytes], { objectMode: false }), file, delimiter);
}

/** The header row's names, or undefined for a file with no rows. */
async function headerRow(stream: OpenedStream, file: string, delimiter: string): Promise<string[] | undefined> {
  let names: string[] | undefined;
  const records = readCsvChunks(stream, file, { delimiter, columns: undefined, onHeader: (found) => (names = found) });
  try {
    await records.next();
  } finally {
    await records.return(undefined);
  }
  return names;
}

/** The first row's cells in --columns order, or undefined when the file has none or it does not parse. */
async function firstCells(stream: OpenedStream, file: string, delimiter: string, columns: string[]): Promise<string[] | undefined> {
  const records = readCsvChunks(stream, file, { delimiter, columns });
  try {
    const first = await records.next();
    const row = first.done ? undefined : first.value[0];
    return row?.kind === 'csv' ? columns.map((name) => row.cells[name] ?? '') : undefined;
  } finally {
    await records.return(undefined);
  }
}

type OpenedStream = Parameters<typeof readCsvChunks>[0];

/** The attribute names of a part's first rows (the rows that parse as objects), for the key's spelling. */
async function rowNames(
  records: AsyncGenerator<SourceRecord>,
  file: string,
  format: 'jsonl' | 'ddb-json' | 'ion',
  /** The part is read as plain JSON (not DynamoDB JSON): JSON Lines, or an array of plain objects. */
  plain = format === 'jsonl',
): Promise<PartColumns | undefined> {
  const seen = new Set<string>();
  let every: Set<string> | undefined;
  let rows = 0;
  let conditionedRows = 0;
  try {
    for await (const record of records) {
      if (record.kind !== 'json' && record.kind !== 'ion') continue;
      if (format !== 'ion' && carriesCondition(record.origin.raw)) conditionedRows++;
      const names = namesOf(record.origin.raw, format);
      if (names === undefined) continue;
      rows++;
      for (const n of names) seen.add(n);
      every = every === undefined ? new Set(names) : new Set(names.filter((n) => every!.has(n)));
      if (rows >= FIRST_ROWS) break;
    }
  } catch (error) {
    // A read error is the read's to report, with its row; the names seen so far still count.
    if (!(error instanceof LoaderError)) throw error;
  } finally {
    await records.return(undefined);
  }
  if (rows === 0) return undefined;
  return {
    file,
    source: 'rows',
    names: [...seen],
    rows,
    everyRow: [...(every ?? [])],
    ...(conditionedRows > 0 ? { conditionedRows } : {}),
    ...(plain ? { plainJson: true } : {}),
  };
}

/** {"Item": {...}} with a condition field beside it (itemCondition.ts). */
function carriesCondition(raw: string): boolean {
  if (!raw.includes('"Item"')) return false;
  try {
    const value = JSON.parse(raw) as unknown;
    return (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.hasOwn(value, 'Item') &&
      CONDITION_FIELDS.some((f) => Object.hasOwn(value, f))
    );
  } catch {
    return false;
  }
}

/** A row's top-level attribute names (an export-style {"Item":{...}} unwrapped), or undefined when it does not parse as an object. */
function namesOf(raw: string, format: 'jsonl' | 'ddb-json' | 'ion'): string[] | undefined {
  if (format === 'ion') {
    try {
      return Object.keys(itemFromIon(raw));
    } catch {
      return undefined;
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const names = Object.keys(value);
  // {"Item": {...}}, with its own condition beside it or not (itemCondition.ts): the item's names.
  const wrapped = names.includes('Item') && names.every((n) => n === 'Item' || CONDITION_FIELDS.includes(n));
  const inner = wrapped ? (value as { Item: unknown }).Item : undefined;
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? Object.keys(inner) : names;
}
