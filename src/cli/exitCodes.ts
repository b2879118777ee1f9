/**
 * Exit codes for schedulers (Kubernetes podFailurePolicy, AWS Batch evaluateOnExit, cron wrappers):
 * failures no retry can fix get the permanent codes of sysexits.h, failures worth retrying get 75
 * (EX_TEMPFAIL). Pure: one table from LoaderError code to exit code, and one rule for a finished load.
 */
import type { LoaderErrorCode } from '../shared/errors.js';

export const EXIT = {
  /** Every row was written (or superseded by a later row with the same key). */
  OK: 0,
  /** Unclassified failure (an unexpected DynamoDB error, a stop requested by a library caller). */
  FATAL: 1,
  /** The load finished, but rows were rejected: see the reject file. */
  REJECTED: 2,
  /** --max-cost: the load refused to start, its first rows pricing the whole input above the limit; nothing was written. */
  COST_REFUSED: 3,
  /** --max-cost: the load stopped before its write units would pass the limit; rows are left unwritten, the checkpoint saved. */
  COST_STOPPED: 4,
  /** verify: the table was read to the end, and some keys are not as the input leaves them (see the differences file). */
  DIFFERENT: 5,
  /** EX_USAGE: a bad option or argument. */
  USAGE: 64,
  /** EX_DATAERR: the input's data is at fault (a bad header, --max-rejects reached on bad rows). */
  DATA: 65,
  /** EX_NOINPUT: the input file does not exist or cannot be read. */
  NO_INPUT: 66,
  /** EX_SOFTWARE: a bug in ddb-spread. */
  SOFTWARE: 70,
  /** EX_CANTCREAT: an output file (rejects, manifest, checkpoint, report, temporary files) cannot be written. */
  CANT_CREATE: 73,
  /** EX_TEMPFAIL: worth retrying later (endpoint unreachable, throttled past --max-attempts, credentials not available yet). */
  TEMP_FAIL: 75,
  /** EX_NOPERM: the credentials are refused. */
  NO_PERM: 77,
  /** EX_CONFIG: the command does not fit its surroundings (no such table, no credentials, an endpoint that is not DynamoDB, a checkpoint of another load). */
  CONFIG: 78,
  SIGINT: 130,
  SIGTERM: 143,
} as const;

/** Exit codes a retry cannot change: a scheduler should fail the job at once on these. */
export const PERMANENT_EXIT_CODES = [
  EXIT.COST_REFUSED,
  EXIT.COST_STOPPED,
  EXIT.USAGE,
  EXIT.DATA,
  EXIT.NO_INPUT,
  EXIT.SOFTWARE,
  EXIT.CANT_CREATE,
  EXIT.NO_PERM,
  EXIT.CONFIG,
] as const;

/** The exit code of a load or estimate stopped by a LoaderError of each code. Exhaustive by type. */
export const EXIT_CODE_OF: Readonly<Record<LoaderErrorCode, number>> = {
  INVALID_OPTION: EXIT.USAGE,
  INPUT_NOT_FOUND: EXIT.NO_INPUT,
  INPUT_UNREADABLE: EXIT.NO_INPUT,
  // As an S3 object replaced mid-load always was: no retry helps until a person restores the input.
  INPUT_CHANGED: EXIT.NO_INPUT,
  INPUT_HEADER: EXIT.DATA,
  TEMP_FILES: EXIT.CANT_CREATE,
  TABLE_NOT_FOUND: EXIT.CONFIG,
  ACCESS_DENIED: EXIT.NO_PERM,
  ENDPOINT_UNREACHABLE: EXIT.TEMP_FAIL,
  CREDENTIALS_UNAVAILABLE: EXIT.TEMP_FAIL,
  // As the AWS CLI keeps "Unable to locate credentials" apart from a refusal: the machine lacks
  // configuration, no retry supplies it, and nothing was denied (77 would send a person to IAM).
  CREDENTIALS_MISSING: EXIT.CONFIG,
  // Another server (or plain HTTP) where DynamoDB was expected: the endpoint setting is wrong, no retry helps.
  ENDPOINT_NOT_DYNAMODB: EXIT.CONFIG,
  AWS_ERROR: EXIT.FATAL,
  REJECTS_UNWRITABLE: EXIT.CANT_CREATE,
  // Another load holds the reject file or the checkpoint: it will be free once that load ends.
  OUTPUT_LOCKED: EXIT.TEMP_FAIL,
  // This worker is sound and its checkpoint saved: it goes on once the other worker is fixed and run again.
  PEER_STOPPED: EXIT.TEMP_FAIL,
  MANIFEST_UNWRITABLE: EXIT.CANT_CREATE,
  CONDITION_FAILURES_UNWRITABLE: EXIT.CANT_CREATE,
  MANIFEST_INVALID: EXIT.CONFIG,
  REPORT_UNWRITABLE: EXIT.CANT_CREATE,
  CHECKPOINT_MISMATCH: EXIT.CONFIG,
  // Not a checkpoint ddb-spread wrote: no retry changes it.
  CHECKPOINT_INVALID: EXIT.CONFIG,
  CHECKPOINT_UNWRITABLE: EXIT.CANT_CREATE,
  CHECKPOINT_COMPLETE: EXIT.OK,
  MAX_REJECTS_REACHED: EXIT.DATA,
  ORDER_NOT_GROUPED: EXIT.DATA,
  // Two workers were given one --segment: the Job's configuration, which no retry changes.
  WORKER_DUPLICATED: EXIT.CONFIG,
  // The same limit refuses again, and stops again at once: a person raises --max-cost (and resumes) or lets it be.
  COST_LIMIT_EXCEEDED: EXIT.COST_REFUSED,
  COST_LIMIT_REACHED: EXIT.COST_STOPPED,
  ABORTED: EXIT.FATAL,
  BUG: EXIT.SOFTWARE,
  // Row codes are not thrown as a whole load's failure; listed so the table stays exhaustive.
  CSV_SYNTAX: EXIT.DATA,
  JSON_SYNTAX: EXIT.DATA,
  ION_SYNTAX: EXIT.DATA,
  NOT_AN_OBJECT: EXIT.DATA,
  MISSING_KEY: EXIT.DATA,
  KEY_TYPE_MISMATCH: EXIT.DATA,
  KEY_TOO_LONG: EXIT.DATA,
  TYPE_ERROR: EXIT.DATA,
  ITEM_TOO_LARGE: EXIT.DATA,
  INVALID_UTF8: EXIT.DATA,
  TOO_DEEP: EXIT.DATA,
  RECORD_TOO_LARGE: EXIT.DATA,
  SHARD_ATTRIBUTE: EXIT.DATA,
  SHARD_KEY_COLLISION: EXIT.DATA,
  WRITE_REJECTED: EXIT.DATA,
  RETRIES_EXHAUSTED: EXIT.TEMP_FAIL,
  TRANSFORM_FAILED: EXIT.DATA,
  IF_NEWER_VALUE: EXIT.DATA,
  ITEM_CONDITION: EXIT.DATA,
  INVALID_CONDITION: EXIT.DATA,
  TRANSFORM_OUTPUT_INVALID: EXIT.DATA,
};

/** The reject counters exitCodeFor* looks at (a LoadResult has them). */
export interface RejectCounts {
  rejected: number;
  rejectedByReason: Record<string, number>;
  /** Set when the load kept a checkpoint: its done batches are never sent again, rejected rows included. */
  checkpointPath?: string | undefined;
}

/**
 * True when every rejected row was only throttled or failing past --max-attempts (RETRIES_EXHAUSTED):
 * loading the same input again later would store them, so the outcome is worth a retry.
 */
function onlyRetriesExhausted(counts: RejectCounts): boolean {
  // With a checkpoint, running the command again resumes past the batches of those rows (or reports a
  // finished load again): a retry cannot store them, so the outcome is 2, fix-and-feed-back.
  if (counts.checkpointPath !== undefined) return false;
  return counts.rejected > 0 && (counts.rejectedByReason['RETRIES_EXHAUSTED'] ?? 0) === counts.rejected;
}

/** What --accept-rejects needs to know of a finished load besides its rejects (a LoadResult has them). */
export interface FinishedCounts extends RejectCounts {
  /** Rows read and neither written, superseded, rejected nor another segment's; unknown counts as some. */
  notWritten?: number | undefined;
  /** The reject file, named when rejected rows went there. */
  rejectsPath?: string | undefined;
}

/** How a job wants a finished load's rejects counted. */
export interface ExitRules {
  /**
   * --accept-rejects: rows rejected into the reject file are the job's answer, not its failure, so a
   * Kubernetes Job or an AWS Batch job that ends with them succeeds (a person reads the reject file).
   */
  acceptRejects?: boolean | undefined;
}

/**
 * A load that finished: 0 without rejects; 75 when the only rejects are RETRIES_EXHAUSTED (a later
 * run stores them); otherwise 2 (rows a person must look at in the reject file), or under
 * --accept-rejects 0 when every row read is accounted for and the rejected ones are in the reject file.
 */
export function exitCodeForResult(counts: FinishedCounts, rules: ExitRules = {}): number {
  if (counts.rejected === 0) return EXIT.OK;
  if (onlyRetriesExhausted(counts)) return EXIT.TEMP_FAIL;
  if (rules.acceptRejects === true && rejectsAllReported(counts)) {
    // The bad rows are accepted; rows only throttled are not bad, and a run again stores them (no
    // checkpoint skips their batches), so the job is worth retrying, as without the bad rows.
    const throttled = counts.rejectedByReason['RETRIES_EXHAUSTED'] ?? 0;
    return throttled > 0 && counts.checkpointPath === undefined ? EXIT.TEMP_FAIL : EXIT.OK;
  }
  return EXIT.REJECTED;
}

/** Every row read is in the table, superseded, another segment's, or in the named reject file. */
function rejectsAllReported(counts: FinishedCounts): boolean {
  return counts.notWritten === 0 && counts.rejectsPath !== undefined;
}

/**
 * An estimate, or a load's --dry-run, that ran: 2 when rows would be rejected, as the load itself would
 * exit, so `ddb-spread estimate ... && ddb-spread load ...` stops before a load that cannot be clean
 * (a file whose every row is rejected exited 0); 0 otherwise, and under --accept-rejects, as that load would.
 */
export function exitCodeForEstimate(rejected: number, rules: ExitRules = {}): number {
  return rejected > 0 && rules.acceptRejects !== true ? EXIT.REJECTED : EXIT.OK;
}

/**
 * A load or estimate stopped by an error: the table above, except that --max-rejects reached only by
 * RETRIES_EXHAUSTED rows is temporary too. An error that is not a LoaderError is unclassified (1).
 */
export function exitCodeForError(code: LoaderErrorCode | undefined, counts?: RejectCounts): number {
  if (code === undefined) return EXIT.FATAL;
  if (code === 'MAX_REJECTS_REACHED' && counts && onlyRetriesExhausted(counts)) return EXIT.TEMP_FAIL;
  return EXIT_CODE_OF[code];
}

/**
 * Errors raised while parsing the command line: help and version 0; a --config job file that cannot be
 * read or holds a bad value 78; anything else commander refuses (unknown option, missing argument,
 * invalid value) 64.
 */
export function exitCodeForUsage(commanderExitCode: number | undefined, commanderCode?: string): number {
  if (commanderExitCode === 0) return EXIT.OK;
  return commanderCode === 'ddb-spread.invalidConfig' ? EXIT.CONFIG : EXIT.USAGE;
}
