/**
 * One error class for everything ddb-spread reports, modelled on csv-parse's CsvError: a typed `code`
 * plus context fields, so tests and callers match on `code` and location, never on prose.
 */

/** Codes of problems that stop a whole load (configuration, table, credentials, bugs). */
export type FatalCode =
  | 'INVALID_OPTION'
  | 'INPUT_NOT_FOUND'
  | 'INPUT_UNREADABLE'
  /** A part changed while it was being read (a local file's identity, an S3 object's ETag or size). */
  | 'INPUT_CHANGED'
  | 'INPUT_HEADER'
  | 'TEMP_FILES'
  | 'TABLE_NOT_FOUND'
  | 'ACCESS_DENIED'
  | 'ENDPOINT_UNREACHABLE'
  /** The credential provider failed in a way that may pass (endpoint timeout, 5xx, throttled SSO refresh). */
  | 'CREDENTIALS_UNAVAILABLE'
  /** The credential chain found no credentials (nothing was refused): none configured, or a profile that gives none. */
  | 'CREDENTIALS_MISSING'
  /** The endpoint answered, but not as DynamoDB: plain HTTP to https://, an untrusted certificate, another server's answer. */
  | 'ENDPOINT_NOT_DYNAMODB'
  | 'AWS_ERROR'
  | 'REJECTS_UNWRITABLE'
  | 'MANIFEST_UNWRITABLE'
  /** --condition-failures cannot be written, or a resume finds it changed or gone since the checkpoint. */
  | 'CONDITION_FAILURES_UNWRITABLE'
  /** The shard manifest given to query or get is not one ddb-spread wrote, or cannot answer the question. */
  | 'MANIFEST_INVALID'
  /** --report cannot be created where it was asked for. */
  | 'REPORT_UNWRITABLE'
  | 'CHECKPOINT_MISMATCH'
  | 'CHECKPOINT_UNWRITABLE'
  /** Another running load holds the lock of this reject file or checkpoint. */
  | 'OUTPUT_LOCKED'
  /** Another worker of an export chain stopped on what no retry fixes before it had written an export this worker must wait for. */
  | 'PEER_STOPPED'
  /** The checkpoint file is not one ddb-spread wrote (malformed, truncated, wrong types). */
  | 'CHECKPOINT_INVALID'
  /** The checkpoint says this load already completed: nothing to do. */
  | 'CHECKPOINT_COMPLETE'
  | 'MAX_REJECTS_REACHED'
  /** A striped read found the input not grouped by partition key (load() then reads it again in round-robin order). */
  | 'ORDER_NOT_GROUPED'
  /** Another process writes the same worker's state: two workers were given one --segment i/N. */
  | 'WORKER_DUPLICATED'
  /** --max-cost: the first rows price the whole input above the limit; nothing was written. */
  | 'COST_LIMIT_EXCEEDED'
  /** --max-cost: the load stopped before its counted write units would pass the limit; the checkpoint is saved. */
  | 'COST_LIMIT_REACHED'
  | 'ABORTED'
  | 'BUG';

/** Codes of problems with one row: the row is rejected and written to the reject file. */
export type RejectCode =
  | 'CSV_SYNTAX'
  | 'JSON_SYNTAX'
  /** An Amazon Ion value that does not parse, or more than one on a line. */
  | 'ION_SYNTAX'
  | 'NOT_AN_OBJECT'
  | 'MISSING_KEY'
  | 'KEY_TYPE_MISMATCH'
  | 'KEY_TOO_LONG'
  | 'TYPE_ERROR'
  | 'ITEM_TOO_LARGE'
  /** Bytes that are not UTF-8 (they would be stored altered, and two keys could merge). */
  | 'INVALID_UTF8'
  /** JSON nested deeper than DynamoDB's 32 levels. */
  | 'TOO_DEEP'
  /** A record whose raw text is over the reader's bound (MAX_RECORD_BYTES): it cannot be an item. */
  | 'RECORD_TOO_LARGE'
  | 'SHARD_ATTRIBUTE'
  /** An unsharded partition key value that reads as a value a --shard-keys key is written under: the suffixed write would overwrite it. */
  | 'SHARD_KEY_COLLISION'
  | 'WRITE_REJECTED'
  | 'RETRIES_EXHAUSTED'
  /** --transform threw (or its promise rejected) on the row. */
  | 'TRANSFORM_FAILED'
  /** --transform returned something that is not an item, an array of items or nothing. */
  | 'TRANSFORM_OUTPUT_INVALID'
  /** --if-newer: the row has no such attribute, or it is neither a Number nor a String. */
  | 'IF_NEWER_VALUE'
  /** A DynamoDB JSON line carries its own condition (ConditionExpression beside Item) and the load does not apply them (no --item-conditions). */
  | 'ITEM_CONDITION'
  /** A line's own condition DynamoDB would refuse, or fields beside Item that are neither the item nor its condition. */
  | 'INVALID_CONDITION';

export type LoaderErrorCode = FatalCode | RejectCode;

export interface LoaderErrorContext {
  file?: string;
  line?: number;
  /** The attribute (CSV column or JSON field) the problem is in. */
  field?: string;
  table?: string;
  cause?: unknown;
}

export class LoaderError extends Error {
  override name = 'LoaderError';
  readonly code: LoaderErrorCode;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly field: string | undefined;
  readonly table: string | undefined;
  // `result` (a stopped load's counters) is declared by reporting/result.ts, which owns LoadResult:
  // shared/ imports nothing from the stage folders.

  constructor(code: LoaderErrorCode, message: string, context: LoaderErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.code = code;
    this.file = context.file;
    this.line = context.line;
    this.field = context.field;
    this.table = context.table;
    // An own property from the start, as a class field would be (declared in reporting/result.ts).
    this.result = undefined;
  }
}

/** A problem with one row's content, raised by the pure conversion code and turned into a reject. */
export class RowError extends Error {
  override name = 'RowError';
  constructor(
    readonly code: RejectCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** An error that can only come from a bug in ddb-spread, worded as ncu does. */
export function bug(message: string): LoaderError {
  return new LoaderError('BUG', `${message}. This is probably a bug in ddb-spread; please file an issue with the command you ran.`);
}
