// One exit code for every failure. Permanent failures get sysexits.h's permanent codes,
// failures worth retrying 75 (EX_TEMPFAIL), so a scheduler can tell them apart.
import { describe, expect, it } from 'vitest';
import type { LoaderErrorCode } from '../../../src/shared/errors.js';
import {
  EXIT,
  EXIT_CODE_OF,
  PERMANENT_EXIT_CODES,
  exitCodeForError,
  exitCodeForEstimate,
  exitCodeForResult,
  exitCodeForUsage,
  type FinishedCounts,
} from '../../../src/cli/exitCodes.js';

describe('exit code of a LoaderError', () => {
  it.each<[LoaderErrorCode, number]>([
    ['INVALID_OPTION', 64],
    ['INPUT_HEADER', 65],
    ['MAX_REJECTS_REACHED', 65],
    ['INPUT_NOT_FOUND', 66],
    ['INPUT_UNREADABLE', 66],
    // A local file or S3 object changed mid-load: permanent until a person restores it, as S3's always was.
    ['INPUT_CHANGED', 66],
    ['BUG', 70],
    ['TEMP_FILES', 73],
    ['REJECTS_UNWRITABLE', 73],
    ['MANIFEST_UNWRITABLE', 73],
    ['CONDITION_FAILURES_UNWRITABLE', 73],
    ['CHECKPOINT_UNWRITABLE', 73],
    ['ENDPOINT_UNREACHABLE', 75],
    ['CREDENTIALS_UNAVAILABLE', 75],
    ['ACCESS_DENIED', 77],
    ['TABLE_NOT_FOUND', 78],
    ['CHECKPOINT_MISMATCH', 78],
    ['AWS_ERROR', 1],
    ['ABORTED', 1],
    ['CHECKPOINT_COMPLETE', 0],
  ])('%s -> %i', (code, exit) => {
    expect(exitCodeForError(code)).toBe(exit);
  });

  it('every fatal code that stops a load maps to a code a scheduler can act on (never 2, never a signal code)', () => {
    for (const [code, exit] of Object.entries(EXIT_CODE_OF)) {
      expect([EXIT.REJECTED, EXIT.SIGINT, EXIT.SIGTERM], code).not.toContain(exit);
    }
  });

  it('an error that is not a LoaderError is unclassified (1), not a usage error', () => {
    expect(exitCodeForError(undefined)).toBe(1);
  });

  it('--max-rejects reached only by rows throttled past --max-attempts is worth retrying (75)', () => {
    expect(exitCodeForError('MAX_REJECTS_REACHED', { rejected: 3, rejectedByReason: { RETRIES_EXHAUSTED: 3 } })).toBe(75);
    expect(exitCodeForError('MAX_REJECTS_REACHED', { rejected: 3, rejectedByReason: { RETRIES_EXHAUSTED: 2, TYPE_ERROR: 1 } })).toBe(65);
    expect(exitCodeForError('MAX_REJECTS_REACHED', { rejected: 0, rejectedByReason: {} })).toBe(65);
  });

  it('the permanent codes are exactly the non-zero codes of the table other than 1 and 75', () => {
    const fromTable = new Set(Object.values(EXIT_CODE_OF).filter((c) => c !== 0 && c !== 1 && c !== 75));
    expect([...fromTable].sort((a, b) => a - b)).toEqual([...PERMANENT_EXIT_CODES].sort((a, b) => a - b));
    expect(PERMANENT_EXIT_CODES).not.toContain(EXIT.TEMP_FAIL);
  });
});

describe('exit code of a finished load', () => {
  it.each<[string, { rejected: number; rejectedByReason: Record<string, number> }, number]>([
    ['no rejects', { rejected: 0, rejectedByReason: {} }, 0],
    ['bad rows', { rejected: 2, rejectedByReason: { TYPE_ERROR: 2 } }, 2],
    ['only throttled past --max-attempts', { rejected: 5, rejectedByReason: { RETRIES_EXHAUSTED: 5 } }, 75],
    ['throttled and bad rows: a person must look', { rejected: 6, rejectedByReason: { RETRIES_EXHAUSTED: 5, MISSING_KEY: 1 } }, 2],
  ])('%s -> %i', (_name, counts, exit) => {
    expect(exitCodeForResult(counts)).toBe(exit);
  });
});

describe('exit code of a command line commander refused', () => {
  it.each<[number | undefined, string | undefined, number]>([
    [0, 'commander.helpDisplayed', 0],
    [0, 'commander.version', 0],
    [1, 'commander.unknownOption', 64],
    [1, 'commander.invalidArgument', 64],
    [1, 'commander.missingMandatoryOptionValue', 64],
    [1, 'ddb-spread.invalidConfig', 78],
    [undefined, undefined, 64],
  ])('exitCode %s, code %s -> %i', (commanderExit, code, exit) => {
    expect(exitCodeForUsage(commanderExit, code)).toBe(exit);
  });
});

describe('rows only throttled past --max-attempts, with a checkpoint', () => {
  const throttledOnly = { rejected: 3, rejectedByReason: { RETRIES_EXHAUSTED: 3 }, checkpointPath: 'job.checkpoint.json' };
  it('a finished load is 2, not 75: running it again resumes past their batches and cannot store them', () => {
    expect(exitCodeForResult({ rejected: 3, rejectedByReason: { RETRIES_EXHAUSTED: 3 } })).toBe(75);
    expect(exitCodeForResult(throttledOnly)).toBe(2);
  });
  it('--max-rejects reached by them keeps its permanent code', () => {
    expect(exitCodeForError('MAX_REJECTS_REACHED', throttledOnly)).toBe(65);
  });
});

describe('--accept-rejects: a finished load whose rejected rows are all in the reject file exits 0', () => {
  const accept = { acceptRejects: true };
  const finished = (over: Partial<FinishedCounts>): FinishedCounts => ({
    rejected: 2,
    rejectedByReason: { TYPE_ERROR: 2 },
    notWritten: 0,
    rejectsPath: 'orders.rejects.jsonl',
    ...over,
  });
  it.each<[string, Partial<FinishedCounts>, number, number]>([
    ['bad rows in the reject file', {}, 2, 0],
    ['bad rows, with a checkpoint', { checkpointPath: 'job.json' }, 2, 0],
    ['no rejects', { rejected: 0, rejectedByReason: {}, rejectsPath: undefined }, 0, 0],
    ['a row neither stored nor rejected: never 0', { notWritten: 1 }, 2, 2],
    ['counts not known: never 0', { notWritten: undefined }, 2, 2],
    ['no reject file named (a finished checkpoint whose file was deleted)', { rejectsPath: undefined }, 2, 2],
    ['only throttled, no checkpoint: a retry stores them', { rejectedByReason: { RETRIES_EXHAUSTED: 2 } }, 75, 75],
    [
      'throttled beside bad rows, no checkpoint: the bad rows are accepted, the retry stores the rest',
      { rejected: 3, rejectedByReason: { RETRIES_EXHAUSTED: 2, TYPE_ERROR: 1 } },
      2,
      75,
    ],
    [
      'only throttled, with a checkpoint: a retry cannot store them; they are in the reject file',
      { rejectedByReason: { RETRIES_EXHAUSTED: 2 }, checkpointPath: 'job.json' },
      2,
      0,
    ],
  ])('%s: %i without, %i with', (_name, over, without, withFlag) => {
    expect(exitCodeForResult(finished(over))).toBe(without);
    expect(exitCodeForResult(finished(over), accept)).toBe(withFlag);
  });

  it('a stopped or failed load keeps its code: the flag only reaches a load that finished', () => {
    const counts = finished({});
    expect(exitCodeForError('MAX_REJECTS_REACHED', counts)).toBe(EXIT.DATA);
    expect(exitCodeForError('ABORTED', counts)).toBe(EXIT.FATAL);
  });

  it('a dry run exits as the load would', () => {
    expect(exitCodeForEstimate(3)).toBe(EXIT.REJECTED);
    expect(exitCodeForEstimate(3, accept)).toBe(EXIT.OK);
    expect(exitCodeForEstimate(0, accept)).toBe(EXIT.OK);
  });
});
