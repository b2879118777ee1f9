import { createHash } from 'node:crypto';
import type { RejectFileState, RestartPoint } from './checkpointState.js';
import { handedOnBefore } from '../ordering/stripes/stripeResume.js';

export type { RejectFileState } from './checkpointState.js';

/** A reject file with nothing in it. */
export const EMPTY_REJECT_FILE: RejectFileState = { bytes: 0, sha256: createHash('sha256').digest('hex') };

/** The lines of the reject file a resume at a restart point keeps: the rejects of rows before the point, as written. */
export interface KeptRejects {
  /** Each line without its newline. */
  lines: string[];
  /** Each line's reason code, for the counters. */
  codes: string[];
}

/**
 * The rejects a resume at `point` keeps from the reject file `text` the checkpoint recorded as `state`:
 * the rows before the point are not read again, so their rejects (of the reading, and of the writing in
 * the batches before the point, all done) can only come from the file. The rows after the point are read
 * again and rejected again, so theirs are dropped, as a resume from the input's start drops them all.
 * Returns why the file cannot serve (changed, cut, not ours) instead: the resume then starts from the
 * input's start, which finds every reject again. `partOf` maps a record's file and line to its part in the
 * set (a file may be several parts: byte ranges of it, each from its own line on).
 */
export function rejectsBeforePoint(
  text: Buffer,
  state: RejectFileState,
  point: RestartPoint,
  partOf: (file: string, line: number) => number | undefined,
): KeptRejects | { refused: string } {
  if (text.length < state.bytes) return { refused: `it holds ${text.length} bytes, fewer than the ${state.bytes} the checkpoint recorded` };
  const recorded = text.subarray(0, state.bytes);
  if (createHash('sha256').update(recorded).digest('hex') !== state.sha256) return { refused: 'its first bytes differ from those the checkpoint recorded' };
  const kept: KeptRejects = { lines: [], codes: [] };
  const body = recorded.toString('utf8');
  if (body.length > 0 && !body.endsWith('\n')) return { refused: 'the part the checkpoint recorded ends inside a line' };
  for (const line of body.split('\n')) {
    if (line === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      return { refused: 'a line of it is not JSON' };
    }
    const { file, line: at, code } = (record ?? {}) as { file?: unknown; line?: unknown; code?: unknown };
    if (typeof file !== 'string' || typeof at !== 'number' || typeof code !== 'string') return { refused: 'a line of it is not a reject record' };
    const part = partOf(file, at);
    if (part === undefined) return { refused: `it names ${file}, which is not a part of this input` };
    if (!before(part, at, point)) continue;
    kept.lines.push(line);
    kept.codes.push(code);
  }
  return kept;
}

/**
 * Whether the record at `line` of part `part` comes before the restart point. In a part read alone, the
 * point's line is the first record after it. In files read side by side (a contiguous group of parts from
 * the point's part), a file still open holds the records up to the line of its last record read; one
 * opened and finished holds none after; one not yet opened holds none before. In a striped read, a row
 * is before the point when its stripe had handed it on (handedOnBefore).
 */
export function before(part: number, line: number, point: RestartPoint): boolean {
  if (point.stripes) return handedOnBefore([part, line], point.stripes);
  if (part < point.part) return true;
  const side = point.sideBySide;
  if (!side) return part === point.part && line < point.line;
  if (part >= point.part + side.opened) return false;
  const open = side.files.find((file) => file.part === part);
  return open === undefined || line <= open.line;
}
