import type { KeySchema } from '../shared/types.js';
import type { IndexKeyAttribute } from './indexKeys.js';

/**
 * Mistakes the input's header (or first rows) already shows, found before the first write: a key column
 * that is not there, a column named by an option that no part has. Without this, each of them costs a
 * reject per row (a ';'-separated file read with ',' is one MISSING_KEY per row), or nothing at all (a
 * --types typo types no column and the load ends complete with every value a string). Pure: the names
 * come from reading/partHeads.ts.
 */

/** The attribute names one part's records carry, and how sure that is. */
export interface PartColumns {
  file: string;
  /**
   * `header`: a CSV part's header row (every row has exactly these); `columns`: --columns; `rows`: the
   * attribute names seen in a JSON or Ion part's first rows (other rows may have others).
   */
  source: 'header' | 'columns' | 'rows';
  names: readonly string[];
  /** The CSV delimiter the header was split with. */
  delimiter?: string;
  /** The header row's line (CSV). */
  line?: number;
  /** For `columns`: the first row's cells, in order (a header row read as data shows here). */
  firstRow?: readonly string[];
  /** For `rows`: how many rows were looked at, and the names every one of them has. */
  rows?: number;
  everyRow?: readonly string[];
  /** For `rows`: how many of them carry their own condition beside their Item (itemCondition.ts). */
  conditionedRows?: number;
  /** For `rows`: the part is read as plain JSON (not DynamoDB JSON), so a line's Item is not unwrapped. */
  plainJson?: boolean;
}

export interface ColumnCheckOptions {
  keySchema: KeySchema;
  /** GSI key attributes: a missing one leaves the item out of the index (sparse), so only a near miss is a mistake. */
  indexKeys: readonly IndexKeyAttribute[];
  /** Attributes named by options, each with the option that named it (--types, --operation-column, --shard). */
  named: readonly { name: string; option: string }[];
  /** Every part's columns are known for sure (all CSV): only then is a name no part has a mistake. */
  everyPartKnown: boolean;
}

/** A mistake, with where it is and what to do; the caller throws it as a LoaderError. */
export interface ColumnProblem {
  /** `input`: the input is at fault (its header or rows); `option`: an option names what is not there. */
  kind: 'input' | 'option';
  file?: string;
  line?: number;
  field: string;
  message: string;
}

/** The first mistake the parts' names show, or undefined. Parts are looked at in order, so the message names the first bad part. */
export function checkColumns(parts: readonly PartColumns[], options: ColumnCheckOptions): ColumnProblem | undefined {
  for (const part of parts) {
    const problem = checkPart(part, options);
    if (problem) return problem;
  }
  return checkNamed(parts, options);
}

function checkPart(part: PartColumns, { keySchema, indexKeys }: ColumnCheckOptions): ColumnProblem | undefined {
  const keys = [
    { name: keySchema.partitionKey.name, role: "the table's partition key" },
    ...(keySchema.sortKey ? [{ name: keySchema.sortKey.name, role: "the table's sort key" }] : []),
  ];
  const has = new Set(part.names);
  for (const key of keys) {
    if (has.has(key.name)) continue;
    const near = nearMiss(key.name, part.names);
    if (part.source === 'rows') {
      // Rows may leave the key out one by one (each is then rejected); only a near miss in the rows seen says the file spells it otherwise.
      if (near === undefined || (part.everyRow && part.everyRow.includes(key.name))) continue;
      return problemAt(
        part,
        key.name,
        `${(part.rows ?? 1) === 1 ? 'the first row has' : `the first ${part.rows} rows have`} no attribute "${key.name}" (${key.role}), but ${(part.rows ?? 1) === 1 ? 'has' : 'have'} ${quote(near)}, ${howNear(near, key.name)}: DynamoDB names are exact, so every row would be rejected; rename the attribute to "${key.name}" in the input`,
      );
    }
    return problemAt(
      part,
      key.name,
      missingKeyMessage(
        part,
        key,
        near,
        keys.some((k) => k.name !== key.name && has.has(k.name)),
      ),
    );
  }
  if (part.source === 'rows') return undefined;
  if (part.source === 'columns' && part.firstRow && looksLikeHeader(part.firstRow, part.names)) {
    return {
      kind: 'option',
      file: part.file,
      line: 1,
      field: keySchema.partitionKey.name,
      message: `${part.file}: its first row (${listed(part.firstRow)}) is a header row, but --columns reads it as data and would write it as an item; drop --columns (the header names the columns)`,
    };
  }
  for (const index of indexKeys) {
    if (has.has(index.name)) continue;
    const near = nearMiss(index.name, part.names);
    // No such column: the index is sparse for these rows, as DynamoDB allows. A near miss is a spelling mistake.
    if (near === undefined) continue;
    return problemAt(
      part,
      index.name,
      `${columnsOf(part)} no column "${index.name}" (a key of index ${index.index}), but has ${quote(near)}, ${howNear(near, index.name)}: the rows would be written without "${index.name}" and left out of the index; rename the column to "${index.name}"${part.source === 'columns' ? ' in --columns' : ' in the header row'}`,
    );
  }
  return undefined;
}

/** Every name an option gives must be a column of some part, when every part's columns are known (CSV). */
function checkNamed(parts: readonly PartColumns[], { named, keySchema, everyPartKnown }: ColumnCheckOptions): ColumnProblem | undefined {
  if (!everyPartKnown || parts.length === 0 || parts.some((p) => p.source === 'rows')) return undefined;
  const all = [...new Set(parts.flatMap((p) => p.names))];
  const known = new Set(all);
  for (const { name, option } of named) {
    if (known.has(name)) continue;
    // A key attribute's absence is reported by checkPart with its own fix.
    if (name === keySchema.partitionKey.name || name === keySchema.sortKey?.name) continue;
    const near = nearMiss(name, all) ?? closest(name, all);
    const where = parts.length === 1 ? `the columns of ${parts[0]!.file}` : `the columns of any of the ${parts.length} files`;
    return {
      kind: 'option',
      field: name,
      // Left as it is, the option would silently apply to nothing (every value of the column meant stays as it was).
      message: `${option} names "${name}", which is not among ${where}${near === undefined ? ` (${listed(all)}): correct the name` : `: did you mean ${quote(near)}?`}`,
    };
  }
  return undefined;
}

function missingKeyMessage(part: PartColumns, key: { name: string; role: string }, near: string | undefined, otherKeyPresent: boolean): string {
  const what = `${columnsOf(part)} no column "${key.name}" (${key.role}), so every row would be rejected`;
  if (near !== undefined) {
    const where = part.source === 'columns' ? 'in --columns' : 'in the header row';
    return `${what}; it has ${quote(near)}, ${howNear(near, key.name)}: DynamoDB names are exact, rename it to "${key.name}" ${where}`;
  }
  const split = part.source === 'header' ? splitByOtherDelimiter(part, key.name) : undefined;
  if (split !== undefined) {
    return `${what}; the header row was split on ${delimiterName(part.delimiter ?? ',')} into ${listed(part.names)}, but ${delimiterName(split)} splits it into columns that include "${key.name}": pass --delimiter ${delimiterFlag(split)}`;
  }
  const typo = closest(key.name, part.names);
  const where = part.source === 'columns' ? 'in --columns' : 'in the header row';
  if (typo !== undefined) return `${what}; it has ${quote(typo)}: if that is the key, rename it to "${key.name}" ${where}`;
  if (part.source === 'columns') return `${what}; add "${key.name}" to --columns at its place in the rows`;
  // The other key is there: the file is for another table, or lacks one key; a header that is data lacks both.
  if (otherKeyPresent)
    return `${what}; the header row has ${listed(part.names)}: every item of this table needs "${key.name}", so add the column (or load into the table the file is for)`;
  return `${what}; the header row has ${listed(part.names)}. If the file has no header row, name its columns with --columns (the first row is data then)`;
}

/** `file: the header row has` / `--columns for file names`: the start of a message about one part's columns. */
function columnsOf(part: PartColumns): string {
  return part.source === 'columns' ? `--columns (for ${part.file}) names` : 'the header row has';
}

function problemAt(part: PartColumns, field: string, message: string): ColumnProblem {
  return {
    // --columns is the user's word, not the file's: its mistake is a usage error.
    kind: part.source === 'columns' ? 'option' : 'input',
    file: part.file,
    ...(part.line === undefined ? {} : { line: part.line }),
    field,
    message: part.source === 'columns' ? message : `${part.file}${part.line === undefined ? '' : ` line ${part.line}`}: ${message}`,
  };
}

/** A first row whose every cell is its --columns name (but for case and spaces): the file's own header. */
function looksLikeHeader(cells: readonly string[], names: readonly string[]): boolean {
  const fold = (s: string) => s.trim().toLowerCase();
  return cells.length === names.length && cells.every((cell, i) => fold(cell) === fold(names[i]!));
}

/** A name that differs from `wanted` only by case or by spaces around it (or both). */
export function nearMiss(wanted: string, names: readonly string[]): string | undefined {
  const fold = (s: string) => s.trim().toLowerCase();
  return names.find((n) => n !== wanted && fold(n) === fold(wanted));
}

function howNear(found: string, wanted: string): string {
  const spaced = found.trim() !== found;
  const cased = found.trim() !== wanted;
  return spaced && cased ? 'which differs by case and by spaces around it' : spaced ? 'which has spaces around it' : 'which differs only by case';
}

/** The closest name by edit distance, when close enough to be a typo (at most a third of the name, and 2). */
export function closest(wanted: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.floor(wanted.length / 3));
  for (const name of names) {
    const d = editDistance(wanted.toLowerCase(), name.toLowerCase());
    if (d <= bestDistance && (best === undefined || d < bestDistance)) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/** Delimiters a CSV file is often written with. */
const OTHER_DELIMITERS = [';', '\t', '|', ','] as const;

/** Another delimiter that splits the header row into columns holding `key` (exactly, or nearly). */
export function splitByOtherDelimiter(part: Pick<PartColumns, 'names' | 'delimiter'>, key: string): string | undefined {
  const used = part.delimiter ?? ',';
  const text = part.names.join(used);
  for (const candidate of OTHER_DELIMITERS) {
    if (candidate === used || !text.includes(candidate)) continue;
    const cells = text.split(candidate).map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
    if (cells.includes(key)) return candidate;
  }
  return undefined;
}

function delimiterName(d: string): string {
  return d === '\t' ? 'tabs' : `"${d}"`;
}

function delimiterFlag(d: string): string {
  return d === '\t' ? 'tab' : `'${d}'`;
}

function quote(name: string): string {
  return JSON.stringify(name);
}

/** Names for a message: all of a short list, the first 8 of a long one. */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, 8).map(quote).join(', ');
  return names.length > 8 ? `${shown} and ${names.length - 8} more` : shown;
}
