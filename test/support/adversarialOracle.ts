/**
 * The adversarial suite's oracle (pure): replays generated rows one by one in input order, as a person writing them
 * with single PutItems would, and says what the table must hold and which lines must be rejected, why.
 *
 * Decisions where the input alone is ambiguous (what a person would expect):
 * - Line numbers are physical lines of the file, 1-based, the CSV header being line 1. "\n" and "\r\n"
 *   each end one line, also inside a quoted value (so a row after a value with an embedded newline
 *   starts lower); blank lines count; a BOM is not a line. A row's line is the line it starts on.
 * - A lone CR (not followed by LF) is never generated: whether it ends a line (old Mac files) or is a
 *   character is a choice the readers' owner documents; the suite stays out of it.
 * - Any mix of LF and CRLF within one file reads as the lines a person sees; the CR of a CRLF never ends
 *   up in a value. Inside quotes a value keeps its "\r\n" or "\n" exactly as written.
 * - An empty CSV cell is no attribute (the default --empty omit); an empty JSON string is an empty S.
 * - Invalid UTF-8 anywhere in a row rejects the row as INVALID_UTF8 (never a U+FFFD that could merge
 *   two keys); JSON nested deeper than DynamoDB's 32 levels rejects the row as TOO_DEEP. These two codes
 *   are the readers' reject codes; should they be renamed, change REJECT_CODES only.
 * - A put replaces the whole item: the last good row of a primary key is what the table holds.
 */
import type { BadKind, Column, FileModel, JsonTree, Row } from './adversarialRows.js';
import { setOwn, TOO_LARGE_TEXT } from './adversarialRows.js';
import type { PlainValue } from './plainItem.js';

/** The reject code each bad-row kind must get. */
export const REJECT_CODES: Record<BadKind, (format: FileModel['format']) => string> = {
  missingKey: () => 'MISSING_KEY',
  badNumber: () => 'TYPE_ERROR',
  syntax: (format) => (format === 'csv' ? 'CSV_SYNTAX' : 'JSON_SYNTAX'),
  notObject: () => 'NOT_AN_OBJECT',
  tooLarge: () => 'ITEM_TOO_LARGE',
  invalidUtf8: () => 'INVALID_UTF8',
  tooDeep: () => 'TOO_DEEP',
};

export type PlainItem = Record<string, PlainValue>;

/** What must become of one row. */
export type Fate = { line: number; written: PlainItem; key: string } | { line: number; rejected: string };

export interface Expected {
  /** One per row, in input order. */
  fates: Fate[];
  /** Primary key (pk + "\u0000" + sk) -> the item the table must hold. */
  table: Map<string, PlainItem>;
  /** Line -> reject code. */
  rejects: Map<number, string>;
  /** Rows that are not rejected (written or superseded). */
  good: number;
}

export const keyOf = (pk: string, sk: string) => `${pk}\u0000${sk}`;

export function plainJson(tree: JsonTree): PlainValue {
  if (typeof tree === 'string') return { S: tree };
  if (typeof tree === 'boolean') return { BOOL: tree };
  if (tree === null) return { NULL: true };
  if ('num' in tree) return { N: tree.num };
  if ('list' in tree) return { L: tree.list.map(plainJson) };
  const m: Record<string, PlainValue> = {};
  for (const [k, v] of tree.entries) setOwn(m, k, plainJson(v));
  return { M: sortedRecord(m) };
}

/** Attribute names in sorted order at every level, as plainItem() returns a scanned item. */
function sortedRecord(record: Record<string, PlainValue>): Record<string, PlainValue> {
  const out: Record<string, PlainValue> = {};
  for (const name of Object.keys(record).sort()) setOwn(out, name, record[name]!);
  return out;
}

/** The item a good row stores. */
export function expectedItem(row: Row, columns: Column[], format: FileModel['format']): PlainItem {
  const item: PlainItem = {};
  setOwn<PlainValue>(item, 'pk', { S: row.pk });
  setOwn<PlainValue>(item, 'sk', { N: String(row.sk) });
  columns.forEach((column, i) => {
    const cell = row.cells[i];
    if (cell === undefined) return;
    if (cell.kind === 'S') {
      if (cell.text === '' && format === 'csv') return;
      setOwn<PlainValue>(item, column.name, { S: cell.text });
    } else if (cell.kind === 'N') setOwn<PlainValue>(item, column.name, { N: cell.text });
    else setOwn(item, column.name, plainJson(cell.value));
  });
  return sortedRecord(item);
}

export function expectedOf(model: FileModel, lines: number[]): Expected {
  const fates: Fate[] = [];
  const table = new Map<string, PlainItem>();
  const rejects = new Map<number, string>();
  model.rows.forEach((row, r) => {
    const line = lines[r]!;
    if (row.bad !== undefined) {
      const code = REJECT_CODES[row.bad](model.format);
      fates.push({ line, rejected: code });
      rejects.set(line, code);
      return;
    }
    const key = keyOf(row.pk, String(row.sk));
    const item = expectedItem(row, model.columns, model.format);
    fates.push({ line, written: item, key });
    table.set(key, item);
  });
  return { fates, table, rejects, good: fates.filter((f) => 'written' in f).length };
}

/** For messages: a model without its 410 KB values. */
export function describeModel(model: FileModel): string {
  return JSON.stringify(model, (_k, v: unknown) => (v === TOO_LARGE_TEXT ? '<410 KB>' : v));
}
