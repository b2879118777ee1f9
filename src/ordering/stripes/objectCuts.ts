import { RecordStartScanner, type RecordStart, type RecordSyntax, type ScanState } from './recordStarts.js';

/**
 * Where records start in an S3 object, found by scanning its segments side by side (one ranged GET each)
 * instead of one pass from its first byte, with the same rules as a local file's cut (RecordStartScanner).
 *
 * A range past an object's first must start exactly where a record starts, and know its line: every row is
 * named by its line (the reject file, --segment's share of the rows, the write-reject log a resume reads).
 * Neither can be known from bytes near the cut alone: in CSV a line break may sit inside a quoted field
 * opened any distance before (a text without quotes reads the same inside quotes as outside), and the line
 * is the count of every line break before. So every byte before the last cut is scanned once, but each
 * segment apart, from every state a scanner can be in at its first byte; the states that meet the same bytes
 * in the same state go on as one. Then, from the object's start, whose state is known, each segment's
 * summary for the state the segment before ended in gives the exact record start and line of the cut in it:
 * what one pass from the first byte would have found, never a guess. Pure.
 */

/** A range of the object as cut: bytes [start, end), the line at `start` (ranges.ts's ByteRange). */
export interface CutRange {
  start: number;
  end: number;
  line: number;
}

/** The state at a file's first byte: a record starts there. */
const FILE_START: ScanState = { quoting: false, fieldStarted: false, pendingQuote: false, pendingCr: false, atRecordStart: true };

/**
 * Every state a CSV scan can be in between two bytes (reachable from FILE_START: a unit test walks them):
 * outside quotes at a record start, after a CR, after a delimiter, inside a field; inside quotes, after a
 * quote there, after a CR there.
 */
const CSV_STATES: readonly ScanState[] = [
  FILE_START,
  { ...FILE_START, atRecordStart: false, pendingCr: true },
  { ...FILE_START, atRecordStart: false },
  { ...FILE_START, atRecordStart: false, fieldStarted: true },
  { ...FILE_START, atRecordStart: false, fieldStarted: true, quoting: true },
  { ...FILE_START, atRecordStart: false, fieldStarted: true, quoting: true, pendingQuote: true },
  { ...FILE_START, atRecordStart: false, fieldStarted: true, quoting: true, pendingCr: true },
];

/** JSON Lines: after an LF, or not. */
const JSONL_STATES: readonly ScanState[] = [FILE_START, { ...FILE_START, atRecordStart: false }];

/** The states a segment's first byte may be read in. */
export function entryStates(syntax: RecordSyntax): readonly ScanState[] {
  return syntax === 'csv' ? CSV_STATES : JSONL_STATES;
}

export function stateKey(s: ScanState): string {
  return [s.quoting, s.fieldStarted, s.pendingQuote, s.pendingCr, s.atRecordStart].map((b) => (b ? 1 : 0)).join('');
}

/** What a segment's bytes do to a scan that enters it in one state. */
export interface SegmentPass {
  /** The first record start in the segment (its offset in the segment; its line counted from the segment's first, 1), if any. */
  start: RecordStart | undefined;
  exit: ScanState;
  /** Line breaks in the segment. */
  breaks: number;
}

/** A segment's passes, by stateKey of the state it is entered in. */
export type SegmentSummary = ReadonlyMap<string, SegmentPass>;

interface Track {
  scanner: RecordStartScanner;
}

/** One entry state, read by a track: its own first record start once the track it follows had found another. */
interface Entry {
  state: ScanState;
  track: Track;
  /** Its line breaks minus the track's. */
  delta: number;
  own: RecordStart | undefined;
}

/** One segment's scan from every entry state (the file's start only, for the first segment). Feed its bytes in order. */
export class SegmentScan {
  readonly #entries: Entry[];
  /** The file's first bytes, held until there are three: a BOM is seen only whole in the first chunk fed. */
  #head: Uint8Array | undefined;

  constructor(syntax: RecordSyntax, delimiter: number, atFileStart: boolean) {
    const states = atFileStart ? [FILE_START] : entryStates(syntax);
    this.#entries = states.map((state) => ({
      state,
      track: { scanner: new RecordStartScanner(syntax, [0], delimiter, { from: state, toEnd: true, atFileStart }) },
      delta: 0,
      own: undefined,
    }));
    if (atFileStart) this.#head = new Uint8Array(0);
  }

  /** Tracks still read (states that met are read once). */
  get tracks(): number {
    return new Set(this.#entries.map((e) => e.track)).size;
  }

  /** True once every entry state has its first record start (the exit states then still need the rest). */
  get started(): boolean {
    return this.#entries.every((e) => e.own !== undefined || e.track.scanner.done);
  }

  feed(bytes: Uint8Array): void {
    let chunk = bytes;
    if (this.#head) {
      chunk = Buffer.concat([this.#head, bytes]);
      this.#head = chunk.length < 3 ? chunk : undefined;
      if (this.#head) return;
    }
    this.#pass(chunk);
  }

  #pass(chunk: Uint8Array): void {
    const tracks = [...new Set(this.#entries.map((e) => e.track))];
    for (const t of tracks) t.scanner.feed(chunk);
    this.#join(tracks);
  }

  /**
   * Tracks in the same state read the same bytes the same way from here on: one follows the other, its
   * line breaks a constant apart. A track that has its first record start still to find is never made to
   * follow one that found it already (it would miss its own): the other way round.
   */
  #join(tracks: Track[]): void {
    const byState = new Map<string, Track>();
    for (const t of tracks) {
      const key = stateKey(t.scanner.state);
      const other = byState.get(key);
      if (!other) {
        byState.set(key, t);
        continue;
      }
      const [lead, follow] = other.scanner.done && !t.scanner.done ? [t, other] : [other, t];
      byState.set(key, lead);
      const delta = follow.scanner.breaks - lead.scanner.breaks;
      const found = follow.scanner.starts[0];
      for (const e of this.#entries) {
        if (e.track !== follow) continue;
        if (found && !e.own) e.own = { offset: found.offset, line: found.line + e.delta };
        e.delta += delta;
        e.track = lead;
      }
    }
  }

  summary(): SegmentSummary {
    if (this.#head) {
      this.#pass(this.#head);
      this.#head = undefined;
    }
    return new Map(
      this.#entries.map((e) => {
        const found = e.track.scanner.starts[0];
        const start = e.own ?? (found ? { offset: found.offset, line: found.line + e.delta } : undefined);
        return [stateKey(e.state), { start, exit: e.track.scanner.state, breaks: e.track.scanner.breaks + e.delta }];
      }),
    );
  }
}

/**
 * The ranges of an object cut at the first record start at or after each segment's first byte (the first at
 * byte 0), with their lines, from its segments' summaries in order; `starts` are the segments' first bytes
 * (0 first, ascending). A segment with no record start adds no cut (its target's start is a later one's).
 * Undefined when a segment has no pass for the state it is entered in: never the case, but a cut that is not
 * proved is never made.
 */
export function composeCuts(starts: readonly number[], size: number, summaries: readonly SegmentSummary[]): CutRange[] | undefined {
  let state = FILE_START;
  let breaks = 0;
  const cuts: RecordStart[] = [{ offset: 0, line: 1 }];
  for (const [k, summary] of summaries.entries()) {
    const pass = summary.get(stateKey(state));
    if (!pass) return undefined;
    if (k > 0 && pass.start) cuts.push({ offset: starts[k]! + pass.start.offset, line: breaks + pass.start.line });
    breaks += pass.breaks;
    state = pass.exit;
  }
  const ranges: CutRange[] = [];
  cuts.forEach((c, i) => {
    const end = i + 1 < cuts.length ? cuts[i + 1]!.offset : size;
    if (end > c.offset) ranges.push({ start: c.offset, end, line: c.line });
  });
  return ranges;
}
