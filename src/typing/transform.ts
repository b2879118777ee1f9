import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { RowError } from '../shared/errors.js';
import { ownRecord, setOwn } from '../shared/ownRecord.js';
import type { Item } from '../shared/types.js';
import { parseDynamoNumber } from './number.js';
import { attributeWithLoneSurrogate } from './loneSurrogates.js';

/**
 * --transform: a user's function between typing and sharding (docs/LOADING.md, "Transforms"). Pure: what
 * the function may be given and return, and its return checked and copied into items the planner takes.
 * Loading the module is the load's (load/transformModule.ts); calling it is the stages' (load/stages.ts).
 */

/** Where the row a transform is given came from. */
export interface TransformOrigin {
  /** The input part (file or S3 object) the row is in. */
  file: string;
  /** 1-based line of the row in its part (a Parquet row's number). */
  line: number;
  /** The stripe of a striped read the row came from; absent otherwise (a transform's load is never striped). */
  part?: number;
  /** 'delete' when the row is a delete (--delete, --operation-column, an export's change record): its outputs are deletes too. */
  op: 'put' | 'delete';
}

/** What a transform returns: an item, several, or nothing (null, undefined or []) to skip the row. */
export type TransformResult = Item | readonly Item[] | null | undefined;

/**
 * A transform: takes a typed item (numbers as lib-dynamodb's NumberValue, binary as Uint8Array, sets as
 * Set) and its origin; returns (or resolves to) the items to write. It must be deterministic and pure: the
 * same item and origin give the same items, with no clock, randomness or state kept across rows, since a
 * resumed load makes the same batches only if every row transforms as it did before.
 */
export type TransformFunction = (item: Item, origin: TransformOrigin) => TransformResult | Promise<TransformResult>;

/** Nesting DynamoDB allows in an item (as json.ts's MAX_DYNAMO_JSON_DEPTH). */
const MAX_DEPTH = 32;
/** Items one row may become: a row split into more is a mistake, and each is held until the row is planned. */
export const MAX_TRANSFORM_OUTPUTS = 1000;

/**
 * The items a transform returned, each checked and copied: plain objects of DynamoDB-typed values (strings,
 * NumberValue or JS numbers and bigints, booleans, null, Uint8Array, non-empty Sets of one kind, arrays,
 * maps). Numbers are put in canonical form, so two spellings of one key are one key. An empty array, null and
 * undefined are no items (the row is skipped). Throws TRANSFORM_OUTPUT_INVALID, naming the output and
 * attribute, for anything else.
 */
export function transformOutputs(result: unknown): Item[] {
  if (result === null || result === undefined) return [];
  if (!Array.isArray(result)) return [outputItem(result, undefined)];
  if (result.length > MAX_TRANSFORM_OUTPUTS)
    throw invalid(`the transform returned ${result.length} items for one row; at most ${MAX_TRANSFORM_OUTPUTS} are taken (split the input instead)`);
  return result.map((value, index) => outputItem(value, index));
}

function outputItem(value: unknown, index: number | undefined): Item {
  const which = index === undefined ? 'the transform returned' : `the transform returned, as item ${index},`;
  if (!isPlainObject(value))
    throw invalid(`${which} ${describe(value)}; a transform returns an item (an object of attributes), an array of items, or null/undefined to skip the row`);
  const item = ownRecord<unknown>() as Item;
  for (const name of Object.keys(value)) {
    const element = value[name];
    if (element === undefined) continue;
    const path = index === undefined ? name : `[${index}].${name}`;
    setOwn(item, name, typedValue(element, path, 1, name));
  }
  const lone = attributeWithLoneSurrogate(item);
  if (lone !== undefined)
    throw invalid(
      `${which} an item whose "${lone}" holds a lone UTF-16 surrogate, which UTF-8 cannot encode: DynamoDB would not store what the transform returned`,
      lone,
    );
  return item;
}

function typedValue(value: unknown, path: string, depth: number, field: string): unknown {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value;
  if (isNumberValue(value)) return number(value.value, path, field);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(`the transform's output: "${path}" is ${value}, which DynamoDB cannot store as a number`, field);
    return number(String(value), path, field);
  }
  if (typeof value === 'bigint') return number(value.toString(), path, field);
  if (value instanceof Uint8Array) return value;
  if (depth >= MAX_DEPTH) throw new RowError('TOO_DEEP', `"${path}" nests deeper than DynamoDB's ${MAX_DEPTH} levels`, field);
  if (value instanceof Set) return typedSet(value as Set<unknown>, path, field);
  if (Array.isArray(value)) return value.map((element, i) => (element === undefined ? null : typedValue(element, `${path}[${i}]`, depth + 1, field)));
  if (isPlainObject(value)) {
    const map = ownRecord<unknown>();
    for (const name of Object.keys(value)) {
      const element = value[name];
      if (element !== undefined) setOwn(map, name, typedValue(element, `${path}.${name}`, depth + 1, field));
    }
    return map;
  }
  throw invalid(
    `the transform's output: "${path}" is ${describe(value)}, which is no DynamoDB type (string, number or NumberValue, boolean, null, Uint8Array, Set, array, object)`,
    field,
  );
}

/** A string, number or binary set: non-empty, one kind, numbers canonical (DynamoDB refuses an empty set). */
function typedSet(set: Set<unknown>, path: string, field: string): Set<unknown> {
  if (set.size === 0) throw invalid(`the transform's output: "${path}" is an empty Set, which DynamoDB refuses; leave the attribute out instead`, field);
  const kinds = new Set([...set].map(setKind));
  const kind = kinds.size === 1 ? [...kinds][0] : undefined;
  if (kind === undefined || kind === 'other')
    throw invalid(
      `the transform's output: "${path}" is a Set of ${[...kinds].join(' and ')} values; DynamoDB sets hold only strings, only numbers or only binary values`,
      field,
    );
  if (kind !== 'number') return new Set(set);
  const numbers = new Map<string, NumberValue>();
  for (const element of set) {
    const n = number(isNumberValue(element) ? element.value : String(element as number | bigint), path, field);
    numbers.set(n.value, n);
  }
  return new Set(numbers.values());
}

function setKind(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (isNumberValue(value) || typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value))) return 'number';
  if (value instanceof Uint8Array) return 'binary';
  return 'other';
}

function number(text: string, path: string, field: string): NumberValue {
  const parsed = parseDynamoNumber(text);
  if (typeof parsed === 'string') throw invalid(`the transform's output: "${path}": ${parsed}`, field);
  return new NumberValue(parsed.text);
}

/**
 * lib-dynamodb's NumberValue, also another copy's: a transform module that imports @aws-sdk/lib-dynamodb
 * from its own node_modules gets another class of the same name, whose instances are not ddb-spread's.
 */
function isNumberValue(value: unknown): value is { value: string } {
  return (
    value instanceof NumberValue ||
    (typeof value === 'object' &&
      value !== null &&
      (value as object).constructor?.name === 'NumberValue' &&
      typeof (value as { value?: unknown }).value === 'string')
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `a ${(value as object).constructor?.name ?? 'object'}`;
  return `a ${typeof value}`;
}

function invalid(message: string, field?: string): RowError {
  return new RowError('TRANSFORM_OUTPUT_INVALID', message, field);
}

/** A transform's throw (or rejected promise) as a row's reject: the message the function gave. */
export function transformFailure(error: unknown): RowError {
  const message = error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
  return new RowError('TRANSFORM_FAILED', `the transform threw: ${message}`);
}
