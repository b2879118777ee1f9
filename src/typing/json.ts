import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { parse as parseLossless } from 'lossless-json';
import { RowError } from '../shared/errors.js';
import { checkJsonDepth, MAX_NESTING } from './jsonDepth.js';
import { isTooManyDigits, parseDynamoNumber, plainNumberSize } from './number.js';
import type { Item } from '../shared/types.js';
import { setOwn } from '../shared/ownRecord.js';

/**
 * A digit run long enough that a JS double might not hold it exactly (more than 15 significant digits),
 * or an exponent large enough to overflow. Only such texts take the slower lossless parser.
 */
const RISKY_NUMBER = /[0-9][0-9.]{15,}|[eE][+-]?[0-9]{3}/;

/**
 * JSON.parse, except that no number loses a digit: numbers that a double can't hold come back as NumberValue.
 * Text nested deeper than `maxDepth` brackets is refused (TOO_DEEP) before parsing, so no parser or walk
 * after it can overflow the stack; the default fits an item (one object) holding DynamoDB's 32 levels.
 */
export function parseJsonPrecise(text: string, maxDepth = MAX_NESTING + 1): unknown {
  checkJsonDepth(text, maxDepth);
  if (!RISKY_NUMBER.test(text)) return JSON.parse(text);
  return parseLossless(text, null, (digits) => new NumberValue(digits));
}

/**
 * Plain JSON value -> native attribute value. Every number becomes a validated, canonical NumberValue.
 * `level` is the nesting level of a map or list value (1 for an attribute's own value): deeper than
 * DynamoDB's 32 is TOO_DEEP, so the recursion is bounded whatever the value.
 */
export function fromJson(value: unknown, field: string, level = 1): unknown {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value;
  // --types names top-level attributes only: a nested number's fix is in the input.
  const retype = level === 1 ? `--types ${field}:S` : NESTED_NUMBER_FIX;
  if (typeof value === 'number') return toNumberValue(String(value), field, retype);
  if (value instanceof NumberValue) return toNumberValue(value.value, field, retype);
  if (typeof value === 'object' && level > MAX_NESTING) throw tooDeep(field);
  if (Array.isArray(value)) return value.map((element, i) => fromJson(element, `${field}[${i}]`, level + 1));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, element] of Object.entries(value as Record<string, unknown>)) {
      setOwn(out, name, fromJson(element, `${field}.${name}`, level + 1));
    }
    return out;
  }
  throw new RowError('TYPE_ERROR', `unsupported JSON value in "${field}"`, field);
}

/**
 * A top-level JSON object -> item. An attribute `stringTypes` declares S keeps a number's text exactly as
 * written, unchecked as a DynamoDB number: that is how a number DynamoDB cannot hold (over 38 digits) is
 * stored, as the TYPE_ERROR's hint says.
 */
export function itemFromJson(value: unknown, stringTypes: Readonly<Record<string, string>> = {}): Item {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RowError('NOT_AN_OBJECT', `each line must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  const item: Item = {};
  for (const [name, element] of Object.entries(value as Record<string, unknown>)) {
    const asText = element instanceof NumberValue && Object.hasOwn(stringTypes, name) && stringTypes[name] === 'S';
    setOwn(item, name, asText ? element.value : fromJson(element, name));
  }
  return item;
}

/** What a number nested in a map or list can do instead of --types, which names top-level attributes only. */
const NESTED_NUMBER_FIX = 'a nested number cannot be retyped with --types: quote it in the input to keep it as a string';

/**
 * Text -> a validated, canonical NumberValue. `retype` is the fix a number over DynamoDB's 38 digits is
 * told (the --types entry that keeps it as text, or what to do where --types cannot reach).
 */
export function toNumberValue(text: string, field: string, retype: string = `--types ${field}:S`): NumberValue {
  // Text already in canonical form (most CSV numbers) is its own canonical text.
  if (plainNumberSize(text) !== 0) return new NumberValue(text);
  const parsed = parseDynamoNumber(text);
  if (typeof parsed === 'string') {
    const fix = !isTooManyDigits(parsed) ? '' : retype.startsWith('--types') ? ` (store it as a string with ${retype})` : `; ${retype}`;
    throw new RowError('TYPE_ERROR', `"${field}" must be a number: ${parsed}${fix}`, field);
  }
  return new NumberValue(parsed.text);
}

const TYPE_TAGS = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'M', 'L', 'SS', 'NS', 'BS']);

/** True if the object is a DynamoDB-JSON attribute value such as {"S": "x"}. */
function isDescriptor(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && TYPE_TAGS.has(keys[0]!);
}

/** True if every attribute of the object is a DynamoDB-JSON attribute value: a whole DynamoDB-JSON item. */
export function isDynamoJsonItem(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const values = Object.values(value);
  return values.length > 0 && values.every(isDescriptor);
}

/**
 * A DynamoDB-JSON line -> item. Accepts both a bare item ({"pk":{"S":"a"}}) and DynamoDB's S3 export
 * line ({"Item":{"pk":{"S":"a"}}}). Binary values are base64 text, as in the AWS CLI and S3 exports.
 */
export function itemFromDynamoJson(value: unknown): Item {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RowError('NOT_AN_OBJECT', 'each line must be a DynamoDB-JSON object such as {"pk":{"S":"a"}}');
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const body = keys.length === 1 && keys[0] === 'Item' && isDynamoJsonItem(record.Item) ? record.Item : record;
  return itemFromAttributeValues(body);
}

/** A DynamoDB-JSON attribute map (no `Item` wrapper) -> item. */
export function itemFromAttributeValues(body: Record<string, unknown>): Item {
  const item: Item = {};
  for (const [name, av] of Object.entries(body)) setOwn(item, name, fromAttributeValue(av, name));
  return item;
}

/**
 * Item -> DynamoDB JSON as the AWS CLI and S3 exports write it (numbers as strings, binary as base64),
 * the inverse of itemFromAttributeValues: no digit or byte is lost in the round trip.
 */
export function itemToDynamoJson(item: Item): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) setOwn(out, name, toAttributeValue(value));
  return out;
}

function toAttributeValue(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return { S: value };
  if (value instanceof NumberValue) return { N: value.value };
  if (typeof value === 'number' || typeof value === 'bigint') return { N: String(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  if (value === null || value === undefined) return { NULL: true };
  if (value instanceof Uint8Array) return { B: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { L: value.map(toAttributeValue) };
  if (value instanceof Set) {
    const elements = [...value];
    const first = elements[0];
    if (typeof first === 'string') return { SS: elements };
    if (first instanceof Uint8Array) return { BS: elements.map((e) => Buffer.from(e as Uint8Array).toString('base64')) };
    return { NS: elements.map((e) => (e instanceof NumberValue ? e.value : String(e))) };
  }
  const out: Record<string, unknown> = {};
  for (const [name, element] of Object.entries(value as Record<string, unknown>)) setOwn(out, name, toAttributeValue(element));
  return { M: out };
}

/** The field is the top-level attribute: a path 33 levels long says nothing more to a person. */
function tooDeep(path: string): RowError {
  const field = /^[^.[]*/.exec(path)?.[0] ?? path;
  return new RowError('TOO_DEEP', `"${field}" is nested more than ${MAX_NESTING} levels deep; DynamoDB allows ${MAX_NESTING} levels of maps and lists`, field);
}

/** Bracket depth of a DynamoDB-JSON item holding 32 levels: the item, then a descriptor and a container per level. */
export const MAX_DYNAMO_JSON_DEPTH = 2 * MAX_NESTING + 2;

function fromAttributeValue(av: unknown, field: string, level = 1): unknown {
  if (!isDescriptor(av)) {
    throw new RowError(
      'TYPE_ERROR',
      `"${field}" is not a DynamoDB-JSON attribute value like {"S":"text"} (is this plain JSON? then use --input-format jsonl)`,
      field,
    );
  }
  const [tag, v] = Object.entries(av)[0]!;
  const bad = (what: string) => new RowError('TYPE_ERROR', `"${field}": ${tag} must be ${what}`, field);
  switch (tag) {
    case 'S':
      if (typeof v !== 'string') throw bad('a string');
      return v;
    case 'N':
      if (typeof v !== 'string') throw bad('a number in a string, like {"N":"1.5"}');
      return toNumberValue(v, field);
    case 'B':
      if (typeof v !== 'string') throw bad('base64 text');
      return decodeBase64(v, field);
    case 'BOOL':
      if (typeof v !== 'boolean') throw bad('true or false');
      return v;
    case 'NULL':
      if (v !== true) throw bad('true');
      return null;
    case 'L':
      if (!Array.isArray(v)) throw bad('an array');
      if (level > MAX_NESTING) throw tooDeep(field);
      return v.map((element, i) => fromAttributeValue(element, `${field}[${i}]`, level + 1));
    case 'M': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('an object');
      if (level > MAX_NESTING) throw tooDeep(field);
      const out: Record<string, unknown> = {};
      for (const [name, element] of Object.entries(v)) setOwn(out, name, fromAttributeValue(element, `${field}.${name}`, level + 1));
      return out;
    }
    case 'SS':
    case 'NS':
    case 'BS': {
      if (!Array.isArray(v) || v.length === 0 || !v.every((e) => typeof e === 'string')) throw bad('a non-empty array of strings');
      return makeSet(tag, v as string[], field);
    }
  }
  throw bad('a known type');
}

/** Builds a DynamoDB set; duplicates collapse (it is a set), an empty set is an error (DynamoDB has none). */
export function makeSet(type: 'SS' | 'NS' | 'BS', elements: readonly string[], field: string): Set<unknown> {
  if (elements.length === 0) throw new RowError('TYPE_ERROR', `"${field}": a ${type} set cannot be empty (DynamoDB has no empty sets)`, field);
  if (type === 'SS') return new Set(elements);
  const seen = new Map<string, unknown>();
  for (const element of elements) {
    if (type === 'NS') {
      const n = toNumberValue(element, field, `--types ${field}:SS`);
      seen.set(n.value, n);
    } else {
      const bytes = decodeBase64(element, field);
      seen.set(Buffer.from(bytes).toString('base64'), bytes);
    }
  }
  return new Set(seen.values());
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function decodeBase64(text: string, field: string): Uint8Array {
  const compact = text.trim();
  if (!BASE64.test(compact)) throw new RowError('TYPE_ERROR', `"${field}" is not valid base64`, field);
  return new Uint8Array(Buffer.from(compact, 'base64'));
}
