import { CHECKPOINT_VERSION, type CheckpointFile } from './checkpointState.js';
import { LoaderError } from '../shared/errors.js';

/**
 * Reads a checkpoint file's text into a CheckpointFile, checking every field's type, so a file that
 * is not one ddb-spread wrote (null, a truncated write by another tool, a hand edit) is refused with a
 * message naming the file and the field, never a crash later on. Pure.
 */
export function parseCheckpoint(text: string, path: string): CheckpointFile {
  const invalid = (what: string, cause?: unknown) =>
    new LoaderError(
      'CHECKPOINT_INVALID',
      `checkpoint ${path} is not a valid ddb-spread checkpoint (${what}); delete it (the load then starts over) or pass another --checkpoint`,
      { file: path, ...(cause === undefined ? {} : { cause }) },
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON: ${(error as Error).message}`, error);
  }
  if (!isRecord(value)) throw invalid(`expected a JSON object, found ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  if (value['version'] !== CHECKPOINT_VERSION) {
    const found = typeof value['version'] === 'number' ? `format ${value['version']}` : 'no format version';
    throw new LoaderError(
      'CHECKPOINT_MISMATCH',
      `checkpoint ${path} was not written by this version of ddb-spread (${found}, this one reads ${CHECKPOINT_VERSION}); delete it (the load then starts over) or pass another --checkpoint`,
      { file: path },
    );
  }
  const field = (
    name: string,
    check: (v: unknown) => boolean,
    expected: string,
    from: Record<string, unknown> = value as Record<string, unknown>,
    prefix = '',
  ) => {
    if (!check(from[name])) throw invalid(`field ${prefix}${name} should be ${expected}, found ${describe(from[name])}`);
  };
  field('status', (v) => v === 'running' || v === 'stopped' || v === 'complete', '"running", "stopped" or "complete"');
  field('createdAt', isString, 'a string');
  field('updatedAt', isString, 'a string');
  field('input', isRecord, 'an object');
  const input = value['input'] as Record<string, unknown>;
  field('path', isString, 'a string', input, 'input.');
  field('size', isCount, 'a whole number', input, 'input.');
  field('mtimeMs', isNumber, 'a number', input, 'input.');
  field('edgesSha256', isHash, 'a SHA-256 in hex', input, 'input.');
  field('sha256', (v) => v === undefined || isHash(v), 'a SHA-256 in hex', input, 'input.');
  field('parts', (v) => v === undefined || (Array.isArray(v) && v.every(isPart)), 'a list of parts (name, size, mtimeMs, edges, hash)', input, 'input.');
  field('options', isRecord, 'an object');
  field('shardSeed', (v) => v === undefined || isCount(v), 'a whole number');
  field('batchesDone', isCount, 'a whole number');
  field('doneAbove', (v) => isRanges(v, value['batchesDone'] as number), 'sorted, disjoint [from, to] ranges above batchesDone');
  for (const name of ['written', 'writeRejects', 'writeRejectLogBytes']) field(name, isCount, 'a whole number');
  for (const name of ['plannedWcu', 'consumedWcu']) field(name, (v) => isNumber(v) && v >= 0, 'a number from 0');
  field('revived', (v) => v === undefined || isCount(v), 'a whole number');
  field('deleted', (v) => v === undefined || isCount(v), 'a whole number');
  field('conditionFailed', (v) => v === undefined || isCount(v), 'a whole number');
  field('restartEveryRows', isCount, 'a whole number');
  field('manifestBatches', (v) => v === undefined || isCount(v), 'a whole number');
  field('notGrouped', (v) => v === undefined || v === true, 'true when present');
  field('tableIdentity', (v) => v === undefined || (typeof v === 'string' && v.length > 0), 'a non-empty string');
  field('rejectsFile', (v) => v === undefined || (isRecord(v) && isCount(v['bytes']) && isHash(v['sha256'])), "the reject file's bytes and SHA-256");
  field(
    'conditionFailuresFile',
    (v) => v === undefined || (isRecord(v) && isCount(v['bytes']) && isHash(v['sha256'])),
    "the --condition-failures file's bytes and SHA-256",
  );
  field('restarts', (v) => Array.isArray(v) && v.every(isRestartPoint), 'a list of restart points (part, row, line, batch and counters)');
  field('stripePlan', (v) => v === undefined || isStripePlan(v), "a striped read's stripes (pieces of byte ranges)");
  field('outcome', (v) => (v === undefined ? value['status'] !== 'complete' : isRecord(v)), 'an object (a finished checkpoint records its outcome)');
  if (isRecord(value['outcome'])) {
    const outcome = value['outcome'];
    for (const name of ['rowsRead', 'written', 'superseded', 'rejected', 'otherSegments', 'batches'])
      field(name, isCount, 'a whole number', outcome, 'outcome.');
    field('rejectedByReason', (v) => isRecord(v) && Object.values(v).every(isCount), 'an object of counts', outcome, 'outcome.');
    field('skippedExpired', (v) => v === undefined || isCount(v), 'a whole number', outcome, 'outcome.');
    field('conditionFailed', (v) => v === undefined || isCount(v), 'a whole number', outcome, 'outcome.');
    for (const name of TRANSFORM_COUNTS) field(name, (v) => v === undefined || isCount(v), 'a whole number', outcome, 'outcome.');
  }
  return value as unknown as CheckpointFile;
}

/** --transform's counters, in an outcome and a restart point when the load has a transform. */
const TRANSFORM_COUNTS = ['skippedByTransform', 'transformOutputs', 'splitWrites'];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
const isString = (v: unknown) => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isHash = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);

function isPart(v: unknown): boolean {
  return (
    isRecord(v) &&
    isString(v['name']) &&
    isCount(v['size']) &&
    isNumber(v['mtimeMs']) &&
    isString(v['edges']) &&
    (v['hash'] === undefined || isString(v['hash']))
  );
}

function isRestartPoint(v: unknown): boolean {
  return (
    isRecord(v) &&
    ['part', 'row', 'line', 'batch', 'rowsRead', 'otherSegments', 'superseded', 'rejected'].every((name) => isCount(v[name])) &&
    (v['line'] as number) >= 1 &&
    TRANSFORM_COUNTS.every((name) => v[name] === undefined || isCount(v[name])) &&
    (v['offset'] === undefined || isCount(v['offset'])) &&
    (v['skippedExpired'] === undefined || isCount(v['skippedExpired'])) &&
    (v['sideBySide'] === undefined || isSideBySide(v['sideBySide'], v['part'] as number)) &&
    (v['stripes'] === undefined || (Array.isArray(v['stripes']) && v['stripes'].length > 0 && v['stripes'].every(isStripeCursor)))
  );
}

/** A striped read's plan (StripePlanRecord): two stripes or more, each of pieces of byte ranges. */
function isStripePlan(v: unknown): boolean {
  if (!isRecord(v) || !Array.isArray(v['stripes']) || v['stripes'].length < 2) return false;
  const isPiece = (p: unknown) =>
    isRecord(p) &&
    ['start', 'end', 'line', 'skip'].every((name) => isCount(p[name])) &&
    (p['start'] as number) <= (p['end'] as number) &&
    (p['take'] === null || isCount(p['take'])) &&
    (p['part'] === undefined || isCount(p['part'])) &&
    (p['whole'] === undefined || p['whole'] === true);
  return v['stripes'].every(
    (s: unknown) =>
      isRecord(s) && isCount(s['firstLine']) && isCount(s['size']) && Array.isArray(s['pieces']) && s['pieces'].length > 0 && s['pieces'].every(isPiece),
  );
}

/** Where a stripe stood: places [part, line] or [part, line, offset], its piece (-1 before its first row) and counts. */
function isStripeCursor(v: unknown): boolean {
  const isPlace = (p: unknown) => Array.isArray(p) && (p.length === 2 || (p.length === 3 && isCount(p[2]))) && isCount(p[0]) && isCount(p[1]);
  if (!isRecord(v) || !isPlace(v['start']) || !isCount(v['taken']) || !isCount(v['read'])) return false;
  const piece = v['piece'];
  if (typeof piece !== 'number' || !Number.isInteger(piece) || piece < -1) return false;
  if (piece >= 0 !== (v['at'] !== undefined) || (v['at'] !== undefined && !isPlace(v['at']))) return false;
  const grouped = [v['first'], v['last']];
  return grouped.every((p) => p === undefined) || grouped.every(isPlace);
}

/** Files read side by side: parts at or after the group's first, each once, the rotation inside the list. */
function isSideBySide(v: unknown, first: number): boolean {
  if (!isRecord(v) || !Array.isArray(v['files']) || !isCount(v['next']) || !isCount(v['opened'])) return false;
  const files = v['files'] as unknown[];
  const parts = new Set<number>();
  for (const file of files) {
    if (!isRecord(file) || !['part', 'row', 'line'].every((name) => isCount(file[name]))) return false;
    const part = file['part'] as number;
    if (part < first || parts.has(part)) return false;
    parts.add(part);
  }
  return files.length > 0 && (v['next'] as number) < files.length;
}

function isRanges(v: unknown, mark: number): boolean {
  if (!Array.isArray(v)) return false;
  let last = mark;
  for (const range of v) {
    if (!Array.isArray(range) || range.length !== 2 || !isCount(range[0]) || !isCount(range[1])) return false;
    // Above K, sorted, not touching the previous range (a gap of at least one batch), not empty.
    if (range[0] <= last || range[1] <= range[0]) return false;
    last = range[1];
  }
  return true;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}
