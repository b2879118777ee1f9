import { LoaderError } from './errors.js';
import { COLUMN_TYPES, EMPTY_POLICIES, type ColumnType, type EmptyPolicy } from './typeMap.js';
import type { KeySchema } from './types.js';

export const INPUT_FORMATS = ['csv', 'jsonl', 'ddb-json'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

/** Batches in flight by default; measured with `npm run bench` (see README, "Concurrency"). */
export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_MAX_ATTEMPTS = 15;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Options of load(), as a caller writes them. */
export interface LoadOptions {
  /** Path of a CSV or JSONL file (optionally gzipped), or "-" for stdin. */
  input: string;
  /** Target table name. */
  table: string;
  /** Input format. @default from the file extension (.csv/.tsv, .jsonl/.ndjson/.json, optionally .gz) */
  inputFormat?: InputFormat;
  /** CSV field delimiter. @default "," ("\t" for .tsv) */
  delimiter?: string;
  /** Attribute names for a CSV file without a header row. */
  columns?: string[];
  /** Attribute types, e.g. { price: 'N', active: 'BOOL' }. Key attributes default to the table's key types. */
  types?: Record<string, ColumnType>;
  /** Infer N, BOOL, M and L from CSV cells, safely (never losing digits). @default false */
  infer?: boolean;
  /** What an empty CSV cell becomes. @default 'omit' */
  empty?: EmptyPolicy;
  /** Batches in flight. @default 8 */
  concurrency?: number;
  /** Sends per item before it is rejected. @default 15 */
  maxAttempts?: number;
  /** Timeout of one BatchWriteItem call, in ms. @default 30000 */
  requestTimeoutMs?: number;
  /** Reject file (JSON lines). @default "<input name>.rejects.jsonl" in the working directory */
  rejectsPath?: string;
  /** Stop the load once this many rows are rejected. @default Infinity */
  maxRejects?: number;
  region?: string;
  profile?: string;
  endpoint?: string;
}

/** LoadOptions with every default applied and every value checked. */
export interface NormalizedLoadOptions {
  input: string;
  table: string;
  inputFormat: InputFormat;
  delimiter: string;
  columns: string[] | undefined;
  types: Record<string, ColumnType>;
  infer: boolean;
  empty: EmptyPolicy;
  concurrency: number;
  maxAttempts: number;
  requestTimeoutMs: number;
  rejectsPath: string;
  maxRejects: number;
  region: string | undefined;
  profile: string | undefined;
  endpoint: string | undefined;
}

const invalid = (name: string, expected: string, value: unknown) =>
  new LoaderError('INVALID_OPTION', `Expected \`${name}\` to be ${expected}, got \`${String(value)}\` (${typeof value})`);

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(name, `an integer from ${min} to ${max}`, value);
  }
  return value;
}

/** Applies defaults and validates, one block per option (csv-parse's normalize_options). Pure. */
export function normalizeOptions(raw: LoadOptions): NormalizedLoadOptions {
  if (typeof raw.input !== 'string' || raw.input === '') throw invalid('input', 'a file path or "-"', raw.input);
  if (typeof raw.table !== 'string' || !/^[a-zA-Z0-9_.-]{3,255}$/.test(raw.table)) {
    throw invalid('table', 'a table name of 3 to 255 letters, digits, "_", "-" or "."', raw.table);
  }

  const inputFormat = raw.inputFormat ?? formatFromName(raw.input);
  if (!INPUT_FORMATS.includes(inputFormat)) throw invalid('inputFormat', `one of ${INPUT_FORMATS.join(', ')}`, inputFormat);

  const delimiter = raw.delimiter ?? (/\.tsv(\.gz)?$/i.test(raw.input) ? '\t' : ',');
  if (typeof delimiter !== 'string' || delimiter.length === 0 || /[\r\n"]/.test(delimiter)) {
    throw invalid('delimiter', 'a non-empty string without quotes or line breaks', delimiter);
  }

  let columns: string[] | undefined;
  if (raw.columns !== undefined) {
    if (!Array.isArray(raw.columns) || raw.columns.length === 0 || raw.columns.some((c) => typeof c !== 'string' || c === '')) {
      throw invalid('columns', 'a non-empty list of attribute names', raw.columns);
    }
    const duplicate = raw.columns.find((c, i) => raw.columns!.indexOf(c) !== i);
    if (duplicate) throw invalid('columns', 'a list of unique names', `${duplicate} twice`);
    columns = [...raw.columns];
  }

  const types: Record<string, ColumnType> = {};
  for (const [name, type] of Object.entries(raw.types ?? {})) {
    if (!(COLUMN_TYPES as readonly string[]).includes(type)) throw invalid(`types.${name}`, `one of ${COLUMN_TYPES.join(', ')}`, type);
    types[name] = type;
  }

  const empty = raw.empty ?? 'omit';
  if (!EMPTY_POLICIES.includes(empty)) throw invalid('empty', `one of ${EMPTY_POLICIES.join(', ')}`, empty);

  const maxRejects = raw.maxRejects ?? Infinity;
  if (maxRejects !== Infinity) integer('maxRejects', maxRejects, 0, 1, Number.MAX_SAFE_INTEGER);

  return {
    input: raw.input,
    table: raw.table,
    inputFormat,
    delimiter,
    columns,
    types,
    infer: raw.infer ?? false,
    empty,
    concurrency: integer('concurrency', raw.concurrency, DEFAULT_CONCURRENCY, 1, 256),
    maxAttempts: integer('maxAttempts', raw.maxAttempts, DEFAULT_MAX_ATTEMPTS, 1, 100),
    requestTimeoutMs: integer('requestTimeoutMs', raw.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, 100, 600_000),
    rejectsPath: raw.rejectsPath ?? defaultRejectsPath(raw.input),
    maxRejects,
    region: raw.region,
    profile: raw.profile,
    endpoint: raw.endpoint,
  };
}

function formatFromName(input: string): InputFormat {
  const name = input.toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.csv') || name.endsWith('.tsv')) return 'csv';
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || name.endsWith('.json')) return 'jsonl';
  throw new LoaderError(
    'INVALID_OPTION',
    input === '-'
      ? 'reading stdin needs --input-format (csv, jsonl or ddb-json)'
      : `cannot tell the format of ${input} from its name; pass --input-format csv, jsonl or ddb-json`,
  );
}

function defaultRejectsPath(input: string): string {
  if (input === '-') return 'stdin.rejects.jsonl';
  const base = input.split(/[\\/]/).pop()!.replace(/\.gz$/i, '').replace(/\.[^.]*$/, '');
  return `${base}.rejects.jsonl`;
}

/** Explicit types that contradict the table's key types are a configuration error, found before any row. */
export function checkTypesAgainstKeys(types: Record<string, ColumnType>, schema: KeySchema, table: string): void {
  for (const attr of [schema.partitionKey, schema.sortKey]) {
    if (!attr) continue;
    const declared = types[attr.name];
    if (declared !== undefined && declared !== attr.type) {
      throw new LoaderError(
        'INVALID_OPTION',
        `--types gives key attribute "${attr.name}" type ${declared}, but table "${table}" defines it as ${attr.type}; drop it from --types (keys take the table's type)`,
        { table, field: attr.name },
      );
    }
  }
}

/** Parses "price:N,active:BOOL" (the --types flag). */
export function parseTypeList(text: string): Record<string, ColumnType> {
  const types: Record<string, ColumnType> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = part.lastIndexOf(':');
    const name = part.slice(0, at).trim();
    const type = part.slice(at + 1).trim().toUpperCase();
    if (at <= 0 || name === '' || !(COLUMN_TYPES as readonly string[]).includes(type)) {
      throw new LoaderError('INVALID_OPTION', `--types entry "${part}" must be <attribute>:<type> with type one of ${COLUMN_TYPES.join(', ')}`);
    }
    types[name] = type as ColumnType;
  }
  return types;
}
