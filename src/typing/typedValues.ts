import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { RowError } from '../shared/errors.js';
import { MAX_NESTING } from './jsonDepth.js';
import { toNumberValue } from './json.js';
import { Temporal, temporalValue, type TimestampMode } from './temporal.js';
import type { EmptyPolicy } from './typeMap.js';
import type { Item } from '../shared/types.js';
import { setOwn } from '../shared/ownRecord.js';

/** Text whose bytes are not UTF-8: kept as the bytes so the row is rejected, never stored with U+FFFD. */
export class InvalidText {
  constructor(readonly bytes: Uint8Array) {}
}

/** A JSON column whose text does not parse: the row is rejected (the reader cannot throw without losing the row group). */
export class InvalidJson {
  constructor(
    readonly text: string,
    readonly reason: string,
  ) {}
}

export interface TypedValueOptions {
  /** What a null becomes in a row or a map (a list keeps NULL). */
  empty: EmptyPolicy;
  timestamps: TimestampMode;
}

/**
 * A row of a typed input (Parquet: column name -> value, already exact: decimals as NumberValue, dates
 * and timestamps as Temporal) -> item. Strings are S, every number N (a double by its shortest exact
 * text, an integer of any size by its digits), booleans BOOL, bytes B, arrays L, objects M. NaN and
 * infinities have no DynamoDB number and reject the row. Nesting past DynamoDB's 32 levels is TOO_DEEP.
 */
export function itemFromTypedValues(row: Record<string, unknown>, options: TypedValueOptions): Item {
  const item: Item = {};
  for (const [name, value] of Object.entries(row)) {
    if (value === null || value === undefined) {
      if (options.empty === 'null') setOwn(item, name, null);
      else if (options.empty === 'string') setOwn(item, name, '');
      continue;
    }
    setOwn(item, name, typedValue(value, name, options, 1));
  }
  return item;
}

const TYPED_NUMBER_FIX = 'write the column as a string where the file is made (--types cannot change a typed column before it is read)';

function typedValue(value: unknown, field: string, options: TypedValueOptions, level: number): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RowError('TYPE_ERROR', `"${field}" is ${value}, which DynamoDB cannot store as a number`, field);
    return toNumberValue(String(value), field);
  }
  // A typed column's number is read as a number before --types applies: its fix is in the file.
  if (typeof value === 'bigint') return toNumberValue(value.toString(), field, TYPED_NUMBER_FIX);
  if (value instanceof NumberValue) return toNumberValue(value.value, field, TYPED_NUMBER_FIX);
  if (value instanceof Temporal) return temporalValue(value, options.timestamps, field);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof InvalidText) {
    throw new RowError('INVALID_UTF8', `"${field}" is a string column whose bytes are not UTF-8; it would be stored altered`, field);
  }
  if (value instanceof InvalidJson) throw new RowError('TYPE_ERROR', `"${field}" is a JSON column that does not parse: ${value.reason}`, field);
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (typeof value !== 'object') throw new RowError('TYPE_ERROR', `"${field}" holds a value of type ${typeof value}, which has no DynamoDB type`, field);
  if (level > MAX_NESTING) throw new RowError('TOO_DEEP', `"${field}" is nested more than ${MAX_NESTING} levels deep`, field);
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    return Array.from(value as ArrayLike<unknown>, (element, i) => typedValue(element, `${field}[${i}]`, options, level + 1));
  }
  const out: Record<string, unknown> = {};
  for (const [name, element] of Object.entries(value as Record<string, unknown>)) {
    if ((element === null || element === undefined) && options.empty === 'omit') continue;
    setOwn(
      out,
      name,
      element === null || element === undefined ? (options.empty === 'string' ? '' : null) : typedValue(element, `${field}.${name}`, options, level + 1),
    );
  }
  return out;
}

/** A row as JSON for the reject file: numbers as their exact text, bytes as base64, times as ISO text. */
export function typedRowJson(row: Record<string, unknown>): string {
  return JSON.stringify(row, (_key, value: unknown) => {
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof NumberValue) return value.value;
    if (value instanceof Temporal) return `${value.count.toString()} ${value.unit} since 1970-01-01`;
    if (value instanceof InvalidText) return Buffer.from(value.bytes).toString('latin1');
    if (value instanceof InvalidJson) return value.text;
    if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
    if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>, (n) => (typeof n === 'bigint' ? String(n) : n));
    return value;
  });
}
