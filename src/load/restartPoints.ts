import { Readable } from 'node:stream';
import type { RestartPoint } from '../checkpointing/checkpointState.js';
import { RecordStartScanner } from '../ordering/stripes/recordStarts.js';
import type { SetPosition } from '../reading/readInputSet.js';
import type { SideBySidePosition } from '../reading/sideBySide.js';
import { LoaderError } from '../shared/errors.js';

/**
 * Restart points: where a load that streams its input (orders input and window) with a checkpoint empties
 * its order and its batcher, so that nothing held crosses the point and the batches after it depend on
 * nothing before it. They fall at fixed places of the input (every part's start, and inside a part read
 * line by line every `every` records), so a resume that opens the input at one replays the very batches
 * the first run made after it, and skips those done by their index as before.
 */

/** Records between restart points inside a part: a partial batch and a window emptied this often cost little. */
export const RESTART_EVERY_ROWS = 65_536;

/** Whether the record at `at` (not yet planned) starts a restart point. The input's first record is the start itself. */
export function isRestartPoint(at: SetPosition, every: number): boolean {
  if (at.row === 0) return at.part > 0;
  return at.withinPart && every > 0 && at.row % every === 0;
}

/** What the stages need to make restart points and resume at one. */
export interface Restarts {
  every: number;
  /** Where the read starts (a resume), or undefined: at the input's start. */
  from: RestartPoint | undefined;
  position: () => SetPosition;
  /** Where files read side by side stand before the record at position(); undefined outside such a read. */
  sideBySide: () => SideBySidePosition | undefined;
  reached: (point: RestartPoint) => void;
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
