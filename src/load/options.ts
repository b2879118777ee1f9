import { checkEndpointUrl, DYNAMODB, S3 } from '../aws/awsSettings.js';
import { LoaderError } from '../shared/errors.js';
import { ownRecord, ownValue } from '../shared/ownRecord.js';
import { DEFAULT_WINDOW_ROWS, ORDER_MODES, type OrderMode } from '../ordering/order.js';
import { parseWcuSpec, type WcuSpec } from '../pacing/rateChoice.js';
import { parseSegment, type Segment } from './segment.js';
import { DEFAULT_KEY_WCU } from '../pacing/rateControl.js';
import { DEFAULT_SHARD_SEPARATOR, parseShardRule, type ShardRule, type SuffixBase } from '../sharding/shardRule.js';
import { conditionFailuresPathOf, defaultOutputPath } from './outputPaths.js';
import { COLUMN_TYPES, EMPTY_POLICIES, TIMESTAMP_MODES, type ColumnType, type EmptyPolicy, type TimestampMode } from '../typing/typeNames.js';
import type { KeySchema } from '../shared/types.js';
import type { LoadedTransform, TransformSource } from './transformModule.js';
import { DEFAULT_OUTAGE_TIMEOUT_MS } from '../writing/outage.js';
import { expressionProblem, type WriteCondition } from '../writing/conditionOption.js';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { formatFromName, INPUT_FORMATS, type InputFormat } from '../reading/inputFormat.js';
import { DEFAULT_PRICES, type Prices, type ReadPrices } from '../pacing/unitPrices.js';

/** Batches in flight by default; measured with `npm run bench` (see docs/REFERENCE.md, "Concurrency and memory"). */
export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_MAX_ATTEMPTS = 15;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export { DEFAULT_OUTAGE_TIMEOUT_MS };
/** Memory the write order may hold before it goes through temporary files (see docs/REFERENCE.md, "Write order"). */
export const DEFAULT_MEMORY_BYTES = 128 * 1024 * 1024;
export const MIN_MEMORY_BYTES = 64 * 1024;

/** The ranges of the integer options: normalizeOptions checks them, and the CLI's parsers and help take them from here. */
export const INTEGER_RANGES = {
  concurrency: [1, 256],
  maxAttempts: [1, 100],
  requestTimeoutMs: [100, 600_000],
  outageTimeoutMs: [100, 86_400_000],
  window: [2, 100_000_000],
  memoryBytes: [MIN_MEMORY_BYTES, Number.MAX_SAFE_INTEGER],
  maxRejects: [1, Number.MAX_SAFE_INTEGER],
  shardSeed: [0, 0xffffffff],
  shardSuffixBase: [0, 1],
} as const satisfies Partial<Record<keyof LoadOptions, readonly [number, number]>>;

/** Options of load(), as a caller writes them. */
export interface LoadOptions {
  /**
   * What to read: a CSV or JSONL file (optionally gzipped), "-" for stdin, or several inputs read as one
   * load: files, folders, globs, s3://bucket/key, s3://bucket/prefix/ and DynamoDB export folders.
   */
  input: string | readonly string[];
  /** Target table name. */
  table: string;
  /** Input format. @default from each file's extension (.csv/.tsv, .jsonl/.ndjson/.json, optionally .gz) */
  inputFormat?: InputFormat;
  /** CSV field delimiter, for every part. @default each part's by its name: "\t" for .tsv (compressed or not), else "," */
  delimiter?: string;
  /** Attribute names for a CSV file without a header row. */
  columns?: string[];
  /** Attribute types, e.g. { price: 'N', active: 'BOOL' }. Key attributes default to the table's key types. */
  types?: Record<string, ColumnType>;
  /** Infer N, BOOL, M and L from CSV cells, safely (never losing digits). @default false */
  infer?: boolean;
  /** What an empty CSV cell (or a Parquet null) becomes. @default 'omit' */
  empty?: EmptyPolicy;
  /** Parquet and Ion timestamps and dates: ISO-8601 text, or epoch seconds or milliseconds (exact). @default 'iso' */
  timestamps?: TimestampMode;
  /** Batches in flight. @default 8 */
  concurrency?: number;
  /** Sends per item before it is rejected. @default 15 */
  maxAttempts?: number;
  /** Timeout of one BatchWriteItem call, in ms. @default 30000 */
  requestTimeoutMs?: number;
  /**
   * How long to wait for an endpoint that cannot be reached (every call failing without an answer, or
   * with a 5xx) before the load stops with ENDPOINT_UNREACHABLE; its rows are never rejected for it. In ms.
   * @default 300000
   */
  outageTimeoutMs?: number;
  /**
   * Reject file (JSON lines). @default "<input path>.rejects.jsonl" next to the input ("<input
   * path>.seg-i-of-N.rejects.jsonl" with a segment, ".dry-run.rejects.jsonl" for a dry run, stdin.rejects.jsonl
   * in the working directory for stdin)
   */
  rejectsPath?: string;
  /** Stop the load once this many rows are rejected. @default Infinity */
  maxRejects?: number;
  /**
   * Write order. @default 'auto': decided from the data (stripes where a file can be cut and its keys come
   * in runs, else the window, going over to round-robin if the keys turn out to come in runs)
   */
  order?: OrderMode;
  /** Rows held by the window order. @default 50000 */
  window?: number;
  /** Bytes the write order may hold in memory; beyond it, temporary files. @default 128 MiB */
  memoryBytes?: number;
  /** Folder for the temporary files of the write order. @default the system's temporary folder */
  tempDir?: string;
  /** Write-sharding rules, applied in order (objects, or the CLI's text such as "hash:4:orderId"). */
  shard?: (ShardRule | string)[];
  /** Between the key and each shard suffix. @default "#" */
  shardSeparator?: string;
  /** Shard only these partition key values; every key when not given. */
  shardKeys?: string[];
  /** Attribute that keeps the unsharded partition key value. */
  keepOriginalKey?: string;
  /** Seed of random:N suffixes. @default a random seed, recorded in the manifest */
  shardSeed?: number;
  /** The first number suffix of random:N and hash:N: 0 (k#0 … k#N-1) or 1 (k#1 … k#N). @default 0 */
  shardSuffixBase?: SuffixBase;
  /** Where the shard manifest is written. @default "<input path>.<table>.shards.json" next to the input (".<table>.seg-i-of-N.shards.json" with a segment) */
  shardManifestPath?: string;
  /**
   * Target write units per second for the whole load (table and GSIs): a number, 'auto' (80% of the
   * table's provisioned WCU, or an on-demand table's warm throughput, growing as DynamoDB allows) or
   * 'auto:P%'. @default no target: as fast as the table takes it, slowing on throttles
   */
  wcu?: number | string | WcuSpec;
  /** No partition key is written faster than this many write units per second. @default 1000 */
  keyWcu?: number;
  /**
   * Rate control on or off. Off: no --wcu or --key-wcu pacing and no slowing on throttles, only backoff
   * of what was refused, as other loaders do; for comparison. @default true
   */
  pacing?: boolean;
  /**
   * Before the first write, raise the on-demand table's (and each GSI's) warm write throughput to the
   * load's target rate with UpdateTable, and wait until they are ACTIVE again. Billed by AWS. Needs wcu or
   * totalWcu. @default false
   */
  prewarm?: boolean;
  /** Load only the partition keys of segment i of N ("i/N", 0-based): one of N workers over the same file. */
  segment?: string | Segment;
  /**
   * With segment: the rate of all N workers together, a number or "auto"/"auto:P%" of the table; shared by the
   * workers running when they share a listing, else totalWcu / N each. Instead of wcu.
   */
  totalWcu?: number | string | WcuSpec;
  /**
   * A checkpoint file: saved while the load runs and at every stop; running the same load again with it
   * resumes where it stopped (after a crash, kill -9 or a lost machine). A file input only.
   */
  checkpointPath?: string;
  /**
   * Where the workers of one load share its listing (a file on a shared volume, or s3://bucket/key): the
   * first to get there lists the input and writes it, every worker loads exactly its parts. Needed with
   * `segment` over a folder, glob or S3 prefix, whose parts could change between two workers' listings.
   */
  listing?: string;
  /**
   * With `segment` over several parts: no primary key is in two parts (each part holds its own items), so
   * the workers divide the parts between them and each reads only its share, instead of every worker
   * reading everything. A key in two parts is then written by two workers in no set order.
   */
  partsDisjoint?: boolean;
  region?: string;
  profile?: string;
  endpoint?: string;
  /** A PEM file of CA certificates to trust for DynamoDB's TLS (AWS_CA_BUNDLE otherwise). */
  caBundle?: string;
  /** Endpoint of S3 for s3:// inputs. @default AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, or AWS's */
  s3Endpoint?: string;
  /** Path-style S3 addressing (bucket in the path), for S3-compatible servers. @default false */
  s3PathStyle?: boolean;
  /**
   * Load DynamoDB exports in the order given even when their manifests say they are not one chain (out of
   * order, a gap or overlap between windows, two full exports, several tables): the table may then miss
   * changes, keep deleted or older items, or mix tables. @default false: such a load is refused
   */
  allowBrokenExportChain?: boolean;
  /** Every row is a delete of its key (a delete list): DeleteRequest instead of PutRequest. @default false */
  delete?: boolean;
  /** The attribute that says "put" or "delete" per row; dropped from the item. */
  operationColumn?: string;
  /**
   * The TTL attribute: rows whose value is a Number of epoch seconds already past at the load time (and no more
   * than five years past, as DynamoDB's TTL rules say) are not written, counted as `skippedExpired`.
   */
  skipExpired?: string;
  /**
   * The load time --skip-expired judges against, in epoch seconds. @default when the load starts; a resumed
   * load keeps its checkpoint's, so it makes the same batches
   */
  skipExpiredAt?: number;
  /**
   * Write a row only where its key is absent: one PutItem (DeleteItem) per row with attribute_not_exists on the
   * partition key; a row whose key exists is counted as `conditionFailed`. @default false
   */
  ifNotExists?: boolean;
  /**
   * Write a row only where the stored item has no such attribute or a smaller value than the row's (Numbers
   * numerically, Strings by their bytes, as ISO-8601 times in one format order); a row without it is rejected.
   */
  ifNewer?: string;
  /**
   * A condition expression every row's PutItem/DeleteItem carries (`--condition`), e.g.
   * `attribute_not_exists(#s) OR #s <> :locked`, with `conditionNames` (`{"#s": "status"}`) and
   * `conditionValues` in DynamoDB JSON (`{":locked": {"S": "locked"}}`); a false one is counted as `conditionFailed`.
   */
  conditionExpression?: string;
  conditionNames?: Record<string, string>;
  conditionValues?: Record<string, unknown>;
  /**
   * Each DynamoDB JSON line's own condition (`ConditionExpression`, `ExpressionAttributeNames`,
   * `ExpressionAttributeValues` beside `Item`, as in a PutItem request) goes with its row's PutItem/DeleteItem;
   * a false one is counted as `conditionFailed`. Without it, a line that carries a condition is rejected
   * (ITEM_CONDITION). Not with the other conditions or `transform`. @default false
   */
  itemConditions?: boolean;
  /**
   * With a condition: the rows whose condition was false, one JSON line each in the reject file's format (file,
   * line, key, code CONDITION_FAILED, the condition, the row's text), 0600. With `segment`, each worker's own:
   * `.seg-i-of-N` goes before the path's `.jsonl` (or at its end). A checkpoint records the file and resumes it.
   */
  conditionFailuresPath?: string;
  /**
   * The cost guard, in USD: the load refuses to start when the first rows price the whole input above it, and
   * stops before the write units it counts would pass it (docs/REFERENCE.md, "Cost guard").
   */
  maxCostUsd?: number;
  /**
   * The write units an estimate of this input counted (`ddb-spread estimate --json`: writeUnits.total), and
   * where it is: the cost guard refuses by them before the first row is read, instead of pricing the first rows.
   */
  maxCostEstimate?: { writeUnits: number; source: string };
  /** Unit prices for the estimate and the cost guard; the read prices price the estimate's verify. @default us-east-1's (pacing/unitPrices.ts) */
  prices?: Partial<Prices & ReadPrices>;
  /**
   * A transform between typing and sharding: the path of a module (relative to the working directory) whose
   * default export is the function, or the function. It takes each typed item and its origin and returns
   * an item, several, or nothing to skip the row; it must be deterministic (docs/REFERENCE.md, "Transforms").
   */
  transform?: TransformSource;
}

/** Sharding options after normalisation; resolved against the table's key schema by load(). */
export interface NormalizedShardOptions {
  rules: ShardRule[];
  separator: string;
  keys: ReadonlySet<string> | undefined;
  keepOriginalKey: string | undefined;
  seed: number | undefined;
  suffixBase: SuffixBase;
  manifestPath: string;
}

/** LoadOptions with every default applied and every value checked. */
export interface NormalizedLoadOptions {
  /** The input as given, or the inputs joined by spaces: for messages and default output paths. */
  input: string;
  /** Every input argument, in order. */
  inputs: string[];
  table: string;
  /** --input-format, else a single input's name; undefined: each file's by its name, else its first bytes (a DynamoDB export's from its manifest). */
  inputFormat: InputFormat | undefined;
  /** --delimiter, for every part; undefined: each part's by its own name (delimiterOf). */
  delimiter: string | undefined;
  columns: string[] | undefined;
  types: Record<string, ColumnType>;
  infer: boolean;
  empty: EmptyPolicy;
  timestamps: TimestampMode;
  concurrency: number;
  maxAttempts: number;
  requestTimeoutMs: number;
  outageTimeoutMs: number;
  rejectsPath: string;
  maxRejects: number;
  order: OrderMode;
  windowRows: number;
  memoryBytes: number;
  tempDir: string | undefined;
  shard: NormalizedShardOptions | undefined;
  wcu: WcuSpec | undefined;
  keyWcu: number;
  pacing: boolean;
  prewarm: boolean;
  segment: Segment | undefined;
  checkpointPath: string | undefined;
  listing: string | undefined;
  partsDisjoint: boolean;
  /**
   * --total-wcu: the budget of all the workers together (`wcu` is then undefined); also --wcu auto given to
   * one of several workers, which means the table's rate for all of them, not for each.
   */
  totalWcu: WcuSpec | undefined;
  region: string | undefined;
  profile: string | undefined;
  endpoint: string | undefined;
  caBundle: string | undefined;
  s3Endpoint: string | undefined;
  s3PathStyle: boolean;
  allowBrokenExportChain: boolean;
  /** --delete and --operation-column; undefined when neither is given. */
  deletes: { all: boolean; column: string | undefined } | undefined;
  /** --skip-expired: the TTL attribute, and the load time (set by the load when not given: prepareLoad, openCheckpoint). */
  skipExpired: { attribute: string; at: number | undefined } | undefined;
  /** --if-not-exists or --if-newer: every row one conditional PutItem/DeleteItem, none superseded (src/writing/condition.ts). */
  condition: WriteCondition | undefined;
  /** --condition-failures, with the segment in it (conditionFailuresPathOf); undefined when not given. */
  conditionFailuresPath: string | undefined;
  /** --max-cost and the unit prices it counts with. */
  maxCost:
    | { usd: number; prices: Pick<Prices, 'onDemandPerMillionWrites' | 'provisionedPerWcuHour'>; estimate: { writeUnits: number; source: string } | undefined }
    | undefined;
  /** --transform as given. */
  transform: TransformSource | undefined;
  /** The transform imported (load() sets it, after normalizing and before anything is listed). */
  transformLoaded?: LoadedTransform | undefined;
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

/**
 * Applies defaults and validates, one block per option (csv-parse's normalize_options). Pure. A dry run
 * (`context.dryRun`) has its own default reject file, so it never touches a real load's.
 */
export function normalizeOptions(raw: LoadOptions, context: { dryRun?: boolean } = {}): NormalizedLoadOptions {
  const inputs = typeof raw.input === 'string' ? [raw.input] : Array.isArray(raw.input) ? [...(raw.input as string[])] : [];
  if (inputs.length === 0 || inputs.some((i) => typeof i !== 'string' || i === ''))
    throw invalid('input', 'a file path, "-", or a list of paths and s3:// URLs', raw.input);
  if (inputs.length > 1 && inputs.includes('-')) throw invalid('input', 'stdin ("-") alone, not in a list of inputs', inputs.join(' '));
  const first = inputs[0]!;
  if (typeof raw.table !== 'string' || !/^[a-zA-Z0-9_.-]{3,255}$/.test(raw.table)) {
    throw invalid('table', 'a table name of 3 to 255 letters, digits, "_", "-" or "."', raw.table);
  }

  // undefined: several inputs, or a name that does not tell: each part's name, else its first bytes, decides.
  const inputFormat = raw.inputFormat ?? (inputs.length === 1 ? formatFromName(first) : undefined);
  if (inputFormat !== undefined && !INPUT_FORMATS.includes(inputFormat)) throw invalid('inputFormat', `one of ${INPUT_FORMATS.join(', ')}`, inputFormat);
  if (inputFormat === undefined && first === '-') {
    throw new LoaderError('INVALID_OPTION', `reading stdin needs --input-format (${INPUT_FORMATS.join(', ')})`);
  }

  // Given: the user's word for every part. Not given: each part's own name decides as it is read (delimiterOf).
  const delimiter = raw.delimiter;
  if (delimiter !== undefined && (typeof delimiter !== 'string' || delimiter.length === 0 || /[\r\n"]/.test(delimiter))) {
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

  const types = ownRecord<ColumnType>();
  for (const [name, type] of Object.entries(raw.types ?? {})) {
    if (!(COLUMN_TYPES as readonly string[]).includes(type)) throw invalid(`types.${name}`, `one of ${COLUMN_TYPES.join(', ')}`, type);
    types[name] = type;
  }

  const empty = raw.empty ?? 'omit';
  if (!EMPTY_POLICIES.includes(empty)) throw invalid('empty', `one of ${EMPTY_POLICIES.join(', ')}`, empty);

  const timestamps = raw.timestamps ?? 'iso';
  if (!TIMESTAMP_MODES.includes(timestamps)) throw invalid('timestamps', `one of ${TIMESTAMP_MODES.join(', ')}`, timestamps);

  const maxRejects = raw.maxRejects ?? Infinity;
  if (maxRejects !== Infinity) integer('maxRejects', maxRejects, 0, ...INTEGER_RANGES.maxRejects);

  const segment = normalizeSegment(raw.segment);

  const order = raw.order ?? 'auto';
  if (!ORDER_MODES.includes(order)) throw invalid('order', `one of ${ORDER_MODES.join(', ')}`, order);
  if (raw.window !== undefined && order !== 'window' && order !== 'auto') throw invalid('window', 'given only with order "window" or "auto"', raw.window);
  if (raw.tempDir !== undefined && (typeof raw.tempDir !== 'string' || raw.tempDir === '')) throw invalid('tempDir', 'a folder path', raw.tempDir);

  if (raw.s3Endpoint !== undefined && typeof raw.s3Endpoint !== 'string') throw invalid('s3Endpoint', 'an http:// or https:// URL', raw.s3Endpoint);
  // In the AWS CLI's words (awsSettings.ts), before anything is listed or read.
  if (raw.s3Endpoint !== undefined) checkEndpointUrl(raw.s3Endpoint, S3.flag);
  if (raw.endpoint !== undefined) checkEndpointUrl(raw.endpoint, DYNAMODB.flag);
  return {
    input: inputs.join(' '),
    inputs,
    table: raw.table,
    inputFormat,
    delimiter,
    columns,
    types,
    infer: raw.infer ?? false,
    empty,
    timestamps,
    concurrency: integer('concurrency', raw.concurrency, DEFAULT_CONCURRENCY, ...INTEGER_RANGES.concurrency),
    maxAttempts: integer('maxAttempts', raw.maxAttempts, DEFAULT_MAX_ATTEMPTS, ...INTEGER_RANGES.maxAttempts),
    requestTimeoutMs: integer('requestTimeoutMs', raw.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS, ...INTEGER_RANGES.requestTimeoutMs),
    outageTimeoutMs: integer('outageTimeoutMs', raw.outageTimeoutMs, DEFAULT_OUTAGE_TIMEOUT_MS, ...INTEGER_RANGES.outageTimeoutMs),
    rejectsPath: raw.rejectsPath ?? defaultOutputPath(first, 'rejects', { segment, dryRun: context.dryRun ?? false }),
    maxRejects,
    order,
    windowRows: integer('window', raw.window, DEFAULT_WINDOW_ROWS, ...INTEGER_RANGES.window),
    memoryBytes: integer('memoryBytes', raw.memoryBytes, DEFAULT_MEMORY_BYTES, ...INTEGER_RANGES.memoryBytes),
    tempDir: raw.tempDir,
    shard: normalizeShard(raw, segment),
    ...normalizeRates(raw),
    segment,
    checkpointPath: normalizeCheckpoint(raw),
    listing: normalizeListing(raw),
    partsDisjoint: normalizePartsDisjoint(raw),
    keyWcu: positive('keyWcu', raw.keyWcu, DEFAULT_KEY_WCU),
    pacing: normalizePacing(raw),
    prewarm: normalizePrewarm(raw),
    region: raw.region,
    profile: raw.profile,
    endpoint: raw.endpoint,
    caBundle: raw.caBundle,
    s3Endpoint: raw.s3Endpoint,
    s3PathStyle: raw.s3PathStyle ?? false,
    allowBrokenExportChain: raw.allowBrokenExportChain === true,
    deletes: normalizeDeletes(raw),
    skipExpired: normalizeSkipExpired(raw),
    condition: normalizeCondition(raw),
    conditionFailuresPath: normalizeConditionFailures(raw, segment),
    maxCost: normalizeMaxCost(raw),
    transform: normalizeTransform(raw, order),
  };
}

/** --condition-failures: a path, given with a condition only; a segment's own (conditionFailuresPathOf). */
function normalizeConditionFailures(raw: LoadOptions, segment: Segment | undefined): string | undefined {
  const path = raw.conditionFailuresPath;
  if (path === undefined) return undefined;
  if (typeof path !== 'string' || path === '') throw invalid('conditionFailuresPath', 'a file path', path);
  if (raw.ifNotExists !== true && raw.ifNewer === undefined && raw.conditionExpression === undefined && raw.itemConditions !== true)
    throw new LoaderError(
      'INVALID_OPTION',
      `--condition-failures ${path} lists the rows whose write condition was false, but no condition is given: add --if-not-exists, --if-newer <attribute>, --condition <expression> or --item-conditions, or leave --condition-failures out`,
    );
  return conditionFailuresPathOf(path, segment);
}

function normalizeCondition(raw: LoadOptions): WriteCondition | undefined {
  if (raw.ifNotExists !== undefined && typeof raw.ifNotExists !== 'boolean') throw invalid('ifNotExists', 'true or false', raw.ifNotExists);
  if (raw.itemConditions !== undefined && typeof raw.itemConditions !== 'boolean') throw invalid('itemConditions', 'true or false', raw.itemConditions);
  if (raw.itemConditions === true) {
    if (raw.ifNotExists === true || raw.ifNewer !== undefined || raw.conditionExpression !== undefined)
      throw invalid('itemConditions', 'not given with `ifNotExists`, `ifNewer` or `conditionExpression` (one kind of condition per load)', true);
    // A transform's items are not its row's line: which of them the line's condition would guard is not said.
    if (raw.transform !== undefined) throw invalid('itemConditions', 'not given with `transform`', true);
    return { kind: 'item' };
  }
  if (raw.ifNewer !== undefined && (typeof raw.ifNewer !== 'string' || raw.ifNewer === ''))
    throw invalid('ifNewer', 'the name of the version attribute', raw.ifNewer);
  if (raw.ifNotExists === true && raw.ifNewer !== undefined) throw invalid('ifNewer', 'not given with `ifNotExists` (one condition per load)', raw.ifNewer);
  const expression = raw.conditionExpression;
  if (expression === undefined) {
    if (raw.conditionNames !== undefined) throw invalid('conditionNames', 'given only with `conditionExpression`', JSON.stringify(raw.conditionNames));
    if (raw.conditionValues !== undefined) throw invalid('conditionValues', 'given only with `conditionExpression`', JSON.stringify(raw.conditionValues));
  } else {
    if (typeof expression !== 'string') throw invalid('conditionExpression', 'a DynamoDB condition expression', expression);
    if (raw.ifNotExists === true || raw.ifNewer !== undefined)
      throw invalid('conditionExpression', 'not given with `ifNotExists` or `ifNewer` (one condition per load)', expression);
    const isMap = (v: unknown) => v === undefined || (v !== null && typeof v === 'object' && !Array.isArray(v));
    if (!isMap(raw.conditionNames)) throw invalid('conditionNames', 'an object of "#name": "attribute"', JSON.stringify(raw.conditionNames));
    if (!isMap(raw.conditionValues)) throw invalid('conditionValues', 'an object of ":value": DynamoDB JSON', JSON.stringify(raw.conditionValues));
    const names = { ...(raw.conditionNames ?? {}) };
    const values = { ...(raw.conditionValues ?? {}) } as Record<string, AttributeValue>;
    const problem = expressionProblem(expression, names, values);
    if (problem !== undefined) throw new LoaderError('INVALID_OPTION', `--condition: ${problem}`);
    return { kind: 'expression', expression, names, values };
  }
  if (raw.ifNotExists === true) return { kind: 'ifNotExists' };
  if (raw.ifNewer !== undefined) return { kind: 'ifNewer', attribute: raw.ifNewer };
  return undefined;
}

function normalizeSkipExpired(raw: LoadOptions): NormalizedLoadOptions['skipExpired'] {
  if (raw.skipExpired !== undefined && (typeof raw.skipExpired !== 'string' || raw.skipExpired === ''))
    throw invalid('skipExpired', 'the name of the TTL attribute', raw.skipExpired);
  if (raw.skipExpiredAt !== undefined && !(typeof raw.skipExpiredAt === 'number' && Number.isSafeInteger(raw.skipExpiredAt) && raw.skipExpiredAt >= 0))
    throw invalid('skipExpiredAt', 'whole epoch seconds', raw.skipExpiredAt);
  if (raw.skipExpired === undefined) {
    if (raw.skipExpiredAt !== undefined) throw invalid('skipExpiredAt', 'given only with `skipExpired`', raw.skipExpiredAt);
    return undefined;
  }
  return { attribute: raw.skipExpired, at: raw.skipExpiredAt };
}

function normalizeMaxCost(raw: LoadOptions): NormalizedLoadOptions['maxCost'] {
  const given = raw.prices ?? {};
  for (const name of ['onDemandPerMillionWrites', 'provisionedPerWcuHour', 'onDemandPerMillionReads', 'provisionedPerRcuHour'] as const) {
    const price = given[name];
    if (price !== undefined && !(typeof price === 'number' && Number.isFinite(price) && price >= 0))
      throw invalid(`prices.${name}`, 'a price in USD from 0', price);
  }
  const estimate = raw.maxCostEstimate;
  if (
    estimate !== undefined &&
    !(
      typeof estimate === 'object' &&
      estimate !== null &&
      Number.isFinite(estimate.writeUnits) &&
      estimate.writeUnits >= 0 &&
      typeof estimate.source === 'string'
    )
  )
    throw invalid('maxCostEstimate', "an estimate's { writeUnits, source }", JSON.stringify(estimate));
  if (raw.maxCostUsd === undefined) {
    if (estimate !== undefined) throw invalid('maxCostEstimate', 'given only with `maxCostUsd`', JSON.stringify(estimate));
    return undefined;
  }
  if (!(typeof raw.maxCostUsd === 'number' && Number.isFinite(raw.maxCostUsd) && raw.maxCostUsd >= 0))
    throw invalid('maxCostUsd', 'a price in USD from 0', raw.maxCostUsd);
  return {
    usd: raw.maxCostUsd,
    prices: {
      onDemandPerMillionWrites: given.onDemandPerMillionWrites ?? DEFAULT_PRICES.onDemandPerMillionWrites,
      provisionedPerWcuHour: given.provisionedPerWcuHour ?? DEFAULT_PRICES.provisionedPerWcuHour,
    },
    estimate,
  };
}

function normalizeDeletes(raw: LoadOptions): NormalizedLoadOptions['deletes'] {
  if (raw.delete !== undefined && typeof raw.delete !== 'boolean') throw invalid('delete', 'true or false', raw.delete);
  if (raw.operationColumn !== undefined && (typeof raw.operationColumn !== 'string' || raw.operationColumn === ''))
    throw invalid('operationColumn', 'an attribute name', raw.operationColumn);
  if (!raw.delete && raw.operationColumn === undefined) return undefined;
  return { all: raw.delete ?? false, column: raw.operationColumn };
}

function normalizeCheckpoint(raw: LoadOptions): string | undefined {
  if (raw.checkpointPath === undefined) return undefined;
  if (typeof raw.checkpointPath !== 'string' || raw.checkpointPath === '') throw invalid('checkpointPath', 'a file path', raw.checkpointPath);
  if (raw.input === '-' || (Array.isArray(raw.input) && raw.input.includes('-')))
    throw invalid('checkpointPath', 'used with a file input (stdin cannot be read again to resume); save the input to a file first', raw.checkpointPath);
  return raw.checkpointPath;
}

function normalizeTransform(raw: LoadOptions, order: OrderMode): TransformSource | undefined {
  const { transform } = raw;
  if (transform === undefined) return undefined;
  if (typeof transform !== 'function' && (typeof transform !== 'string' || transform === ''))
    throw invalid('transform', "a module's path or a function", transform);
  // Stripes are cut by the input's keys, and a transform may change them: the auto order then reads through the window.
  if (order === 'stripes')
    throw new LoaderError(
      'INVALID_OPTION',
      '--order stripes cuts the input by its own partition keys, which --transform may change; use --order auto (which then reads through the window), window, input, round-robin or spread',
    );
  return transform;
}

function normalizePartsDisjoint(raw: LoadOptions): boolean {
  if (raw.partsDisjoint === undefined || raw.partsDisjoint === false) return false;
  if (raw.partsDisjoint !== true) throw invalid('partsDisjoint', 'true or false', raw.partsDisjoint);
  // The division of the parts is the listing's: workers that listed apart could deal different parts.
  if (raw.segment === undefined || raw.listing === undefined)
    throw invalid(
      'partsDisjoint',
      'given with `segment` and `listing` (--segment i/N --listing <shared file>): the workers divide the parts of the listing they share',
      true,
    );
  return true;
}

function normalizeListing(raw: LoadOptions): string | undefined {
  if (raw.listing === undefined) return undefined;
  if (typeof raw.listing !== 'string' || raw.listing === '' || raw.listing.endsWith('/'))
    throw invalid('listing', 'a file path or s3://bucket/key', raw.listing);
  if (raw.input === '-' || (Array.isArray(raw.input) && raw.input.includes('-')))
    throw invalid('listing', 'used with files, folders, globs or S3 prefixes (stdin cannot be shared by workers)', raw.listing);
  return raw.listing;
}

function normalizeSegment(value: LoadOptions['segment']): Segment | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return parseSegment(value);
  if (Number.isInteger(value.count) && Number.isInteger(value.index) && value.count >= 1 && value.index >= 0 && value.index < value.count) return value;
  throw invalid('segment', 'i/N with 0 <= i < N', JSON.stringify(value));
}

/**
 * This worker's --wcu, or the budget of all the workers of the load: --total-wcu, and --wcu auto given to
 * one of several workers (the table's rate is the whole load's: each worker taking all of it would ask N
 * times the table).
 */
export function normalizeRates(raw: Pick<LoadOptions, 'wcu' | 'totalWcu' | 'segment'>): { wcu: WcuSpec | undefined; totalWcu: WcuSpec | undefined } {
  const wcu = normalizeWcu(raw.wcu);
  const workers = normalizeSegment(raw.segment)?.count;
  if (raw.totalWcu === undefined)
    return wcu?.kind === 'auto' && workers !== undefined && workers > 1 ? { wcu: undefined, totalWcu: wcu } : { wcu, totalWcu: undefined };
  const total = normalizeWcu(raw.totalWcu, 'totalWcu');
  if (raw.segment === undefined) throw invalid('totalWcu', 'given together with `segment` (--segment i/N); without segments use --wcu', String(raw.totalWcu));
  if (raw.wcu !== undefined)
    throw invalid('wcu', 'left out when `totalWcu` is given (--total-wcu is the rate of all workers, --wcu of this one)', String(raw.wcu));
  return { wcu: undefined, totalWcu: total };
}

function normalizePacing(raw: LoadOptions): boolean {
  const pacing = raw.pacing ?? true;
  if (typeof pacing !== 'boolean') throw invalid('pacing', 'true or false', pacing);
  if (!pacing && raw.wcu !== undefined) throw invalid('wcu', 'left out when `pacing` is false (--no-pacing)', String(raw.wcu));
  if (!pacing && raw.keyWcu !== undefined) throw invalid('keyWcu', 'left out when `pacing` is false (--no-pacing)', raw.keyWcu);
  if (!pacing && raw.totalWcu !== undefined) throw invalid('totalWcu', 'left out when `pacing` is false (--no-pacing)', raw.totalWcu);
  return pacing;
}

/** --prewarm warms the table to the load's target: it needs one. */
function normalizePrewarm(raw: LoadOptions): boolean {
  const prewarm = raw.prewarm ?? false;
  if (typeof prewarm !== 'boolean') throw invalid('prewarm', 'true or false', prewarm);
  if (prewarm && raw.wcu === undefined && raw.totalWcu === undefined)
    throw invalid('prewarm', 'given with a target rate to warm the table to: --wcu (a rate, or auto) or --total-wcu', String(prewarm));
  return prewarm;
}

function normalizeWcu(value: LoadOptions['wcu'], name = 'wcu'): WcuSpec | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return { kind: 'fixed', wcu: positive(name, value, 1) };
  if (typeof value === 'string') return parseWcuSpec(value);
  if (value.kind === 'fixed') return { kind: 'fixed', wcu: positive(name, value.wcu, 1) };
  if (value.kind === 'auto' && value.percent > 0 && value.percent <= 100) return value;
  throw invalid(name, 'a number of write units per second, "auto" or "auto:P%"', JSON.stringify(value));
}

function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1) throw invalid(name, 'a number from 1 up', value);
  return value;
}

function normalizeShard(raw: LoadOptions, segment: Segment | undefined): NormalizedShardOptions | undefined {
  const rules = (raw.shard ?? []).map((rule) => (typeof rule === 'string' ? parseShardRule(rule) : rule));
  if (rules.length === 0) {
    const stray = (['shardSeparator', 'shardKeys', 'keepOriginalKey', 'shardSeed', 'shardSuffixBase', 'shardManifestPath'] as const).find(
      (name) => raw[name] !== undefined,
    );
    if (stray) throw invalid(stray, 'given only together with `shard` (--shard)', raw[stray]);
    return undefined;
  }
  const separator = raw.shardSeparator ?? DEFAULT_SHARD_SEPARATOR;
  if (typeof separator !== 'string' || separator === '') throw invalid('shardSeparator', 'a non-empty string', separator);
  let keys: Set<string> | undefined;
  if (raw.shardKeys !== undefined) {
    if (!Array.isArray(raw.shardKeys) || raw.shardKeys.length === 0 || raw.shardKeys.some((k) => typeof k !== 'string' || k === '')) {
      throw invalid('shardKeys', 'a non-empty list of partition key values', raw.shardKeys);
    }
    keys = new Set(raw.shardKeys);
  }
  if (raw.keepOriginalKey !== undefined && (typeof raw.keepOriginalKey !== 'string' || raw.keepOriginalKey === '')) {
    throw invalid('keepOriginalKey', 'an attribute name', raw.keepOriginalKey);
  }
  const seed = raw.shardSeed === undefined ? undefined : integer('shardSeed', raw.shardSeed, 0, ...INTEGER_RANGES.shardSeed);
  if (seed === undefined && (raw.delete === true || raw.operationColumn !== undefined) && rules.some((rule) => rule.kind === 'random')) {
    // A random:N suffix follows from the seed and the key: a delete under a newly drawn seed would look
    // for its item under another suffix, find nothing, and still count as deleted.
    throw new LoaderError(
      'INVALID_OPTION',
      "deletes (--delete, --operation-column) with --shard random:N need --shard-seed: the seed the items were written with (their load's shard manifest records it), so each delete computes the suffix its item is under",
    );
  }
  const suffixBase = integer('shardSuffixBase', raw.shardSuffixBase, 0, ...INTEGER_RANGES.shardSuffixBase) as SuffixBase;
  return {
    rules,
    separator,
    keys,
    keepOriginalKey: raw.keepOriginalKey,
    seed,
    suffixBase,
    manifestPath:
      raw.shardManifestPath ?? defaultOutputPath(typeof raw.input === 'string' ? raw.input : (raw.input[0] ?? ''), 'shards', { segment, table: raw.table }),
  };
}

/** Parses a size such as 256MB, 1.5GB, 512k or a plain number of bytes (--memory). */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$/i.exec(text);
  const unit = (m?.[2] ?? '').toLowerCase().replace(/i?b$/, '');
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[unit];
  if (!m || scale === undefined) throw new LoaderError('INVALID_OPTION', `expected a size such as 256MB, 2GB or 512KB, got "${text}"`);
  return Math.round(Number(m[1]) * scale);
}

/** Explicit types that contradict the table's key types are a configuration error, found before any row. */
export function checkTypesAgainstKeys(types: Record<string, ColumnType>, schema: KeySchema, table: string): void {
  for (const attr of [schema.partitionKey, schema.sortKey]) {
    if (!attr) continue;
    const declared = ownValue(types, attr.name);
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
  const types = ownRecord<ColumnType>();
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = part.lastIndexOf(':');
    const name = part.slice(0, at).trim();
    const type = part
      .slice(at + 1)
      .trim()
      .toUpperCase();
    if (at <= 0 || name === '' || !(COLUMN_TYPES as readonly string[]).includes(type)) {
      throw new LoaderError('INVALID_OPTION', `--types entry "${part}" must be <attribute>:<type> with type one of ${COLUMN_TYPES.join(', ')}`);
    }
    types[name] = type as ColumnType;
  }
  return types;
}
