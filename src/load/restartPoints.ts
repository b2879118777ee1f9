import { Readable } from 'node:stream';
import type { RestartPoint } from '../checkpointing/checkpointState.js';
import { RecordStartScanner } from '../ordering/stripes/recordStarts.js';
import type { SetPosition } from '../reading/readInputSet.js';
import type { SideBySidePosition } from '../reading/sideBySide.js';
import { LoaderError } from '../shared/errors.js';
import type { StripedRead } from '../ordering/stripes/stripedRecords.js';
import type { WriteOrderer } from '../ordering/writeOrderer.js';
import type { SourceRecord } from '../typing/planRow.js';

/**
 * Restart points: where a load that streams its input (orders input and window) with a checkpoint empties
 * its order and its batcher, so that nothing held crosses the point and the batches after it depend on
 * nothing before it. They fall at fixed places of the input (every part's start, and inside a part read
 * line by line every `every` records), so a resume that opens the input at one replays the very batches
 * the first run made after it, and skips those done by their index as before.
 */

/**
 * Records between restart points inside a part: a partial batch and a small window emptied this often cost
 * little, and a resume replays (reads and plans, not writes) at most this many rows before its first write:
 * about half a second. It was 65,536 rows: a resumed 16-part S3 prefix spent ~4 s replaying before it wrote.
 */
export const RESTART_EVERY_ROWS = 16_384;

/**
 * The spacing of restart points for a load: `--order window` holds up to --window rows, so a point (which
 * empties the window) comes no sooner than twice that many rows, or the order would be emptied before it
 * filled.
 */
export function restartSpacing(order: string, windowRows: number): number {
  return order === 'window' ? Math.max(RESTART_EVERY_ROWS, 2 * windowRows) : RESTART_EVERY_ROWS;
}

/** Whether the record at `at` (not yet planned) starts a restart point. The input's first record is the start itself. */
export function isRestartPoint(at: SetPosition, every: number): boolean {
  if (at.row === 0) return at.part > 0;
  return at.withinPart && every > 0 && at.row % every === 0;
}

/** Where a restart point is: what the stages add to it are the batches and the counters before it. */
export type PointPlace = Pick<RestartPoint, 'part' | 'row' | 'line' | 'offset' | 'sideBySide' | 'stripes'>;

/** What the stages need to make restart points and resume at one. */
export interface Restarts {
  every: number;
  /** Where the read starts (a resume), or undefined: at the input's start. */
  from: RestartPoint | undefined;
  /** The point before the `index`th record of `entry` (one record, or an array of a striped read), or undefined: none there. */
  pointBefore: (entry: SourceRecord | SourceRecord[], index: number) => PointPlace | undefined;
  reached: (point: RestartPoint) => void;
}

/**
 * Restart points of an input read whole (orders input and window): at fixed records of the input
 * (isRestartPoint), where `position` and `sideBySide` say the reader stands before each record.
 */
export function wholeInputPoints(every: number, position: () => SetPosition, sideBySide: () => SideBySidePosition | undefined): Restarts['pointBefore'] {
  return (entry, index) => {
    const at = position();
    if (!isRestartPoint(at, every)) return undefined;
    const record = Array.isArray(entry) ? entry[index]! : entry;
    const side = sideBySide();
    // (At a part's start, row 0, the part is read from its start: no offset.)
    const offset = at.row > 0 ? record.origin.offset : undefined;
    // A plain part's reader gives each record's byte offset: a resume opens the part there, reading nothing before.
    return { part: at.part, row: at.row, line: record.origin.line, ...(side ? { sideBySide: side } : offset !== undefined ? { offset } : {}) };
  };
}

/**
 * Restart points of a striped read: before the arrays the merge starts after a point (every `every` rows
 * handed on), with every stripe's place and where its grouping check stands.
 */
export function stripedPoints(
  pointAt: NonNullable<StripedRead['pointAt']>,
  groupingPlaces: () => ReturnType<WriteOrderer['groupingPlaces']>,
): Restarts['pointBefore'] {
  return (entry, index) => {
    if (index !== 0 || !Array.isArray(entry) || entry.length === 0) return undefined;
    const point = pointAt(entry, groupingPlaces());
    return point ? { part: 0, row: point.row, line: entry[0]!.origin.line, stripes: point.cursors } : undefined;
  };
}

/**
 * The bytes of a decompressed part from the start of line `line` on: the bytes before only go through
 * RecordStartScanner (the quoting followed from the part's first byte, as the striped read's cut does),
 * never the parser. A line where no record starts means the part is not the one the checkpoint read.
 */
export async function skipToLine(stream: Readable, line: number, syntax: 'csv' | 'jsonl', delimiter: string): Promise<Readable> {
  const scanner = new RecordStartScanner(syntax, [line], Buffer.from(delimiter, 'utf8')[0], { byLine: true, atFileStart: true });
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let fed = 0;
  for (;;) {
    const next = await chunks.next();
    if (next.done) break;
    const chunk = next.value;
    scanner.feed(chunk);
    if (scanner.done) {
      const found = scanner.starts[0]!;
      if (found.line !== line) break;
      const tail = chunk.subarray(found.offset - fed);
      return Readable.from(rest(tail, chunks), { objectMode: false });
    }
    fed += chunk.length;
  }
  scanner.end();
  stream.destroy();
  throw new LoaderError('INPUT_UNREADABLE', `cannot resume inside the input: no record starts at line ${line}, where the checkpoint says one did`);
}

async function* rest(first: Buffer, chunks: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  if (first.length > 0) yield first;
  for (;;) {
    const next = await chunks.next();
    if (next.done) return;
    yield next.value;
  }
}
