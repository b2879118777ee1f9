/**
 * Where records start in a file's bytes, found without parsing them: the cut points of a striped read
 * (src/ordering/stripes/ranges.ts), which starts a reader at each of several offsets of one file. A stripe must
 * start exactly where a record starts, and know its line number, or its rows would be parsed wrong or
 * named wrong in the reject file; the only way to know where records start in CSV is to follow the
 * quoting from the first byte, so every byte before the last cut point goes through this scanner once.
 *
 * CSV follows csvFramer.ts's rules, which are csv-parse's (relax_quotes): a quote opens a field only at
 * its start, "" inside quotes is a quote, any other byte after a closing quote ends the quoting; CR, LF
 * and CRLF end a record outside quotes and count as one line each inside or outside. A single-byte
 * delimiter only (the caller does not stripe otherwise). JSON Lines: a record ends at LF; a lone CR is
 * JSON whitespace and no line break.
 *
 * Pure: the caller feeds the bytes in order.
 */

const CR = 13;
const LF = 10;
const QUOTE = 0x22;

export type RecordSyntax = 'csv' | 'jsonl';

/**
 * What the scanner knows between two bytes: all that decides how the next byte is read. A scan that
 * starts mid-file (one segment of an S3 object scanned apart from the others, objectCuts.ts) starts from
 * each state it may be in there, since only the bytes before would say which.
 */
export interface ScanState {
  quoting: boolean;
  fieldStarted: boolean;
  pendingQuote: boolean;
  pendingCr: boolean;
  atRecordStart: boolean;
}

/** The first record start at or after a target offset, and the line it is on (1-based). */
export interface RecordStart {
  offset: number;
  line: number;
}

export class RecordStartScanner {
  readonly #syntax: RecordSyntax;
  readonly #delimiter: number;
  readonly #targets: number[];
  readonly #found: RecordStart[] = [];
  /** Bytes fed so far: the offset of the next byte. */
  #offset = 0;
  /** Line breaks seen so far. */
  #breaks = 0;
  #quoting = false;
  #fieldStarted = false;
  /** The last byte was a quote inside quotes: the next byte decides whether it closes them. */
  #pendingQuote = false;
  /** The last byte was a CR: an LF next belongs to the same line break. */
  #pendingCr = false;
  /** The last byte fed was the end of a record (outside quotes). */
  #atRecordStart = true;

  /** Targets are line numbers (the first record start on or after each line), not offsets. */
  readonly #byLine: boolean;
  /** The first bytes fed may be a UTF-8 BOM (false when the bytes start mid-file, where they are text). */
  readonly #atFileStart: boolean;
  /** Follow the bytes past the last target, so that `state` and `breaks` hold at the end of what was fed. */
  readonly #toEnd: boolean;

  /**
   * @param targets offsets, ascending; for each, the first record start at or after it is found
   * @param delimiter the CSV delimiter's byte
   * @param options.byLine the targets are 1-based line numbers of the bytes fed, not offsets
   * @param options.from the state before the first byte fed (a record start when not given)
   * @param options.toEnd keep following the bytes once every target is found (for `state` and `breaks`)
   */
  constructor(
    syntax: RecordSyntax,
    targets: readonly number[],
    delimiter = 0x2c,
    options: { byLine?: boolean; atFileStart?: boolean; from?: ScanState; toEnd?: boolean } = {},
  ) {
    this.#syntax = syntax;
    this.#delimiter = delimiter;
    this.#targets = [...targets].sort((a, b) => a - b);
    this.#byLine = options.byLine ?? false;
    this.#atFileStart = options.atFileStart ?? true;
    this.#toEnd = options.toEnd ?? false;
    if (options.from) {
      this.#quoting = options.from.quoting;
      this.#fieldStarted = options.from.fieldStarted;
      this.#pendingQuote = options.from.pendingQuote;
      this.#pendingCr = options.from.pendingCr;
      this.#atRecordStart = options.from.atRecordStart;
    }
  }

  /** The state after the last byte fed (exact with `toEnd`, or while targets are left). */
  get state(): ScanState {
    return {
      quoting: this.#quoting,
      fieldStarted: this.#fieldStarted,
      pendingQuote: this.#pendingQuote,
      pendingCr: this.#pendingCr,
      atRecordStart: this.#atRecordStart,
    };
  }

  /** Line breaks in the bytes fed (exact with `toEnd`, or while targets are left). */
  get breaks(): number {
    return this.#breaks;
  }

  /** True once every target has its record start. */
  get done(): boolean {
    return this.#found.length === this.#targets.length;
  }

  /** The record starts found, one per target, in target order (after end(), one for every target). */
  get starts(): readonly RecordStart[] {
    return this.#found;
  }

  /** Feeds the next bytes of the file (the first call's first bytes may be a UTF-8 BOM). */
  feed(chunk: Uint8Array): void {
    if (this.done && !this.#toEnd) return;
    const i = this.#offset === 0 && this.#atFileStart && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
    if (this.#syntax === 'jsonl') this.#feedLines(chunk, i);
    else this.#feedCsv(chunk, i);
    this.#offset += chunk.length;
  }

  /** JSON Lines: a record starts after every LF. */
  #feedLines(chunk: Uint8Array, from: number): void {
    const base = this.#offset;
    let i = from;
    if (this.#atRecordStart) this.#settleTargets(base + i);
    for (;;) {
      const lf = chunk.indexOf(LF, i);
      if (lf === -1) break;
      this.#breaks++;
      i = lf + 1;
      if (i < chunk.length) this.#settleTargets(base + i);
      if (this.done && !this.#toEnd) return;
    }
    this.#atRecordStart = chunk.length > 0 ? chunk[chunk.length - 1] === LF : this.#atRecordStart;
  }

  /**
   * CSV, byte by byte with the state in locals (a method call and private field reads per byte cost
   * ~5x). Only a record start at or past the next target is settled, so the loop tests one number there.
   */
  #feedCsv(chunk: Uint8Array, from: number): void {
    const base = this.#offset;
    const delimiter = this.#delimiter;
    const n = chunk.length;
    let quoting = this.#quoting;
    let fieldStarted = this.#fieldStarted;
    let pendingQuote = this.#pendingQuote;
    let pendingCr = this.#pendingCr;
    let atStart = this.#atRecordStart;
    let breaks = this.#breaks;
    // Past the last target (toEnd): no record start is settled any more.
    let next = this.#targets[this.#found.length] ?? Infinity;
    // Where the next quote and CR are (n: none left in this chunk): found once, then reused until passed.
    let nextQuote = -1;
    let nextCr = -1;
    const byLine = this.#byLine;
    for (let i = from; i < n; i++) {
      if (!pendingCr && !pendingQuote && !atStart) {
        // Bytes that are not a quote, CR or LF change nothing but fieldStarted: jump to the next one that does.
        if (nextQuote < i) nextQuote = indexOrEnd(chunk, QUOTE, i);
        if (nextCr < i) nextCr = indexOrEnd(chunk, CR, i);
        const stop = Math.min(nextQuote, nextCr, indexOrEnd(chunk, LF, i));
        if (stop > i) {
          if (!quoting) fieldStarted = chunk[stop - 1] !== delimiter;
          i = stop - 1;
          continue;
        }
      }
      const c = chunk[i]!;
      if (pendingCr) {
        pendingCr = false;
        if (c === LF) {
          // The LF of a CRLF: counted at the CR; outside quotes the record starts after it.
          atStart = !quoting;
          continue;
        }
        // A lone CR outside quotes ended a record just before this byte, which starts the next one.
        if (!quoting) atStart = true;
      }
      if (atStart) {
        atStart = false;
        if ((byLine ? breaks + 1 : base + i) >= next) {
          this.#breaks = breaks;
          this.#settleTargets(base + i);
          if (this.done && !this.#toEnd) return;
          next = this.#targets[this.#found.length] ?? Infinity;
        }
      }
      if (pendingQuote) {
        pendingQuote = false;
        if (c === QUOTE) continue; // "" inside quotes: one quote of text
        quoting = false; // the closing quote: this byte is read outside quotes
      }
      if (quoting) {
        if (c === QUOTE) pendingQuote = true;
        else if (c === CR) {
          breaks++;
          pendingCr = true;
        } else if (c === LF) breaks++;
        continue;
      }
      if (c === CR) {
        breaks++;
        fieldStarted = false;
        pendingCr = true;
      } else if (c === LF) {
        breaks++;
        fieldStarted = false;
        atStart = true;
      } else if (c === QUOTE && !fieldStarted) {
        quoting = true;
        fieldStarted = true;
      } else {
        fieldStarted = c !== delimiter;
      }
    }
    this.#quoting = quoting;
    this.#fieldStarted = fieldStarted;
    this.#pendingQuote = pendingQuote;
    this.#pendingCr = pendingCr;
    this.#atRecordStart = atStart;
    this.#breaks = breaks;
  }

  /** The end of the file: targets past the last record start end there (an empty stripe). */
  end(): void {
    if (this.#atRecordStart || !this.done) this.#settleTargets(this.#offset, true);
  }

  #settleTargets(offset: number, eof = false): void {
    const at = this.#byLine ? this.#breaks + 1 : offset;
    while (!this.done && (eof || this.#targets[this.#found.length]! <= at)) {
      this.#found.push({ offset, line: this.#breaks + 1 });
    }
  }
}

function indexOrEnd(chunk: Uint8Array, byte: number, from: number): number {
  const at = chunk.indexOf(byte, from);
  return at === -1 ? chunk.length : at;
}
