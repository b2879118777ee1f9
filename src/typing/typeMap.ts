import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { RowError } from '../shared/errors.js';
import { parseDynamoNumber, plainNumberSize } from './number.js';
import { MAX_NESTING } from './jsonDepth.js';
import { decodeBase64, fromJson, makeSet, parseJsonPrecise, toNumberValue } from './json.js';
import { mergeOwn, ownRecord, ownValue, setOwn } from '../shared/ownRecord.js';
import type { Item, KeySchema } from '../shared/types.js';

import type { ColumnType, EmptyPolicy } from './typeNames.js';

export { COLUMN_TYPES, EMPTY_POLICIES, type ColumnType, type EmptyPolicy } from './typeNames.js';

export interface TypeMapOptions {
  keySchema: KeySchema;
  /** Explicit attribute types; key attributes default to the table's key types. */
  types: Readonly<Record<string, ColumnType>>;
  /** Safe inference for CSV cells of columns without an explicit type. */
  infer: boolean;
  empty: EmptyPolicy;
}

/** Columns that must be typed as the table's key, merged under the user's explicit types. */
export function effectiveTypes(options: Pick<TypeMapOptions, 'keySchema' | 'types'>): Record<string, ColumnType> {
  const types = ownRecord<ColumnType>();
  for (const attr of [options.keySchema.partitionKey, options.keySchema.sortKey]) {
    if (attr) types[attr.name] = attr.type;
  }
  return mergeOwn(types, options.types);
}

/* ==== CSV ==== */

const INTEGER = /^-?(?:0|[1-9]\d*)$/;
const DECIMAL = /^-?(?:0|[1-9]\d*)\.\d+$/;

/** Converts one CSV record (header name -> cell text) into an item. Throws RowError naming the column. */
export function itemFromCells(cells: Record<string, string>, options: TypeMapOptions, types: Record<string, ColumnType>): Item {
  // A plain object like every item; names are set with setOwn and read with ownValue, so `constructor` and `__proto__` are ordinary names.
  const item: Item = {};
  for (const name of Object.keys(cells)) {
    const text = cells[name]!;
    if (text === '') {
      if (options.empty === 'null') setOwn(item, name, null);
      else if (options.empty === 'string') setOwn(item, name, '');
      continue;
    }
    const type = ownValue(types, name);
    setOwn(item, name, type ? convertCell(text, type, name) : options.infer ? inferCell(text, name) : text);
  }
  return item;
}

/** Converts a cell to an explicit type. */
export function convertCell(text: string, type: ColumnType, field: string): unknown {
  switch (type) {
    case 'S':
      return text;
    case 'N':
      return toNumberValue(text, field);
    case 'BOOL':
      return toBoolean(text, field);
    case 'B':
      return decodeBase64(text, field);
    case 'SS':
    case 'NS':
    case 'BS':
      return makeSet(type, splitSetCell(text, field), field);
    case 'JSON':
    case 'M':
    case 'L':
      return checkShape(fromJson(parseJsonCell(text, field), field), type, field);
  }
}

/**
 * Safe inference: only values that come back unchanged are converted. Integers and decimals without
 * leading zeros (so "007" and "+1" stay strings) become N, with every digit kept; true/false become BOOL;
 * a JSON object or array becomes M or L. Anything else, including "1e5" and "NaN", stays a string.
 */
export function inferCell(text: string, field: string): unknown {
  const first = text.charCodeAt(0);
  if ((first >= 48 && first <= 57) || first === 45) {
    // Canonical plain decimals (most inferred numbers) are their own canonical text.
    if (plainNumberSize(text) !== 0) return new NumberValue(text);
    if (INTEGER.test(text) || DECIMAL.test(text)) {
      // Only numbers DynamoDB can hold exactly (38 digits, its range); anything else stays text.
      const parsed = text === '-0' ? 'negative zero' : parseDynamoNumber(text);
      if (typeof parsed !== 'string') return new NumberValue(parsed.text);
    }
    return text;
  }
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (first === 123 || first === 91) {
    try {
      return fromJson(parseJsonPrecise(text, MAX_NESTING), field);
    } catch {
      return text;
    }
  }
  return text;
}

function toBoolean(text: string, field: string): boolean {
  const lower = text.trim().toLowerCase();
  if (lower === 'true' || lower === '1') return true;
  if (lower === 'false' || lower === '0') return false;
  throw new RowError('TYPE_ERROR', `"${field}" must be true, false, 1 or 0 for BOOL, got "${clip(text)}"`, field);
}

/** A set cell is a JSON array (["a","b"]) or values separated by "|" (a|b). */
function splitSetCell(text: string, field: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const parsed = parseJsonCell(trimmed, field);
    if (!Array.isArray(parsed)) throw new RowError('TYPE_ERROR', `"${field}" must be a JSON array or values separated by "|"`, field);
    return parsed.map((e) => (e instanceof NumberValue ? e.value : typeof e === 'string' ? e : JSON.stringify(e)));
  }
  return trimmed.split('|');
}

function parseJsonCell(text: string, field: string): unknown {
  try {
    return parseJsonPrecise(text, MAX_NESTING);
  } catch (error) {
    // TOO_DEEP keeps its code; the column is the field.
    if (error instanceof RowError) throw new RowError(error.code, `"${field}" ${error.message.replace(/^.*? is nested/, 'is nested')}`, field);
    throw new RowError('TYPE_ERROR', `"${field}" is not valid JSON (${(error as Error).message})`, field);
  }
}

function checkShape(value: unknown, type: 'JSON' | 'M' | 'L', field: string): unknown {
  if (type === 'M' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new RowError('TYPE_ERROR', `"${field}" must be a JSON object for M`, field);
  }
  if (type === 'L' && !Array.isArray(value)) throw new RowError('TYPE_ERROR', `"${field}" must be a JSON array for L`, field);
  return value;
}

/* ==== JSON lines ==== */

/**
 * Applies explicit types to attributes of a JSON item: numbers in strings become N, base64 strings
 * become B, arrays become sets, JSON text becomes M/L. Values that already have the type pass through.
 */
export function coerceJsonItem(item: Item, types: Record<string, ColumnType>): Item {
  for (const name of Object.keys(types)) {
    const value = ownValue(item, name);
    if (value === undefined || value === null) continue;
    setOwn(item, name, coerceJsonValue(value, types[name]!, name));
  }
  return item;
}

function coerceJsonValue(value: unknown, type: ColumnType, field: string): unknown {
  if (typeof value === 'string') return value === '' && type !== 'S' ? value : convertCell(value, type, field);
  const wrong = () => new RowError('TYPE_ERROR', `"${field}" is declared ${type} but holds ${Array.isArray(value) ? 'an array' : typeof value}`, field);
  switch (type) {
    case 'S':
      if (value instanceof NumberValue) return value.value;
      if (typeof value === 'boolean') return String(value);
      throw wrong();
    case 'N':
      if (value instanceof NumberValue) return value;
      throw wrong();
    case 'BOOL':
      if (typeof value === 'boolean') return value;
      throw wrong();
    case 'SS':
    case 'NS':
    case 'BS':
      if (!Array.isArray(value)) throw wrong();
      return makeSet(
        type,
        value.map((e) => (e instanceof NumberValue ? e.value : String(e))),
        field,
      );
    case 'JSON':
      return value;
    case 'M':
    case 'L':
      return checkShape(value, type, field);
    case 'B':
      // Bytes from a typed input (Parquet binary, Ion blob) are already binary.
      if (value instanceof Uint8Array) return value;
      throw wrong();
  }
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}
