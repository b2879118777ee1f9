/**
 * Where records start in a file's bytes, found without parsing them: the cut points of a striped read
 * (src/reading/stripes.ts), which starts a reader at each of several offsets of one file. A stripe must
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

  /**
   * @param targets offsets, ascending; for each, the first record start at or after it is found
   * @param delimiter the CSV delimiter's byte
   */
  constructor(syntax: RecordSyntax, targets: readonly number[], delimiter = 0x2c) {
    this.#syntax = syntax;
    this.#delimiter = delimiter;
    this.#targets = [...targets].sort((a, b) => a - b);
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
    let i = 0;
    if (this.#offset === 0 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    const n = chunk.length;
    for (; i < n && !this.done; i++) {
      if (this.#atRecordStart) this.#settleTargets(this.#offset + i);
      if (this.done) break;
      this.#atRecordStart = false;
      const c = chunk[i]!;
      if (this.#syntax === 'jsonl') {
        if (c === LF) {
          this.#breaks++;
          this.#atRecordStart = true;
        }
        continue;
      }
      this.#csvByte(c, this.#offset + i);
    }
    this.#offset += n;
  }

  /** The end of the file: targets past the last record start end there (an empty stripe). */
  end(): void {
    if (this.#atRecordStart || !this.done) this.#settleTargets(this.#offset, true);
  }

  #settleTargets(offset: number, eof = false): void {
    while (!this.done && (eof || this.#targets[this.#found.length]! <= offset)) {
      this.#found.push({ offset, line: this.#breaks + 1 });
    }
  }

  /** One CSV byte at file offset `at`. */
  #csvByte(c: number, at: number): void {
    if (this.#pendingCr) {
      this.#pendingCr = false;
      if (c === LF) {
        // The LF of a CRLF: the break was counted at the CR; outside quotes the record starts after it.
        this.#atRecordStart = !this.#quoting;
        return;
      }
      // A lone CR ended a record (outside quotes) just before this byte, which starts the next one.
      if (!this.#quoting) this.#settleTargets(at);
    }
    if (this.#pendingQuote) {
      this.#pendingQuote = false;
      if (c === QUOTE) return; // "" inside quotes: one quote of text
      this.#quoting = false; // the closing quote; this byte is read outside quotes
    }
    if (this.#quoting) {
      if (c === QUOTE) this.#pendingQuote = true;
      else if (c === CR) {
        this.#breaks++;
        this.#pendingCr = true;
      } else if (c === LF) this.#breaks++;
      return;
    }
    if (c === CR) {
      this.#breaks++;
      this.#fieldStarted = false;
      this.#pendingCr = true;
    } else if (c === LF) {
      this.#breaks++;
      this.#fieldStarted = false;
      this.#atRecordStart = true;
    } else if (c === QUOTE && !this.#fieldStarted) {
      this.#quoting = true;
      this.#fieldStarted = true;
    } else if (c === this.#delimiter) {
      this.#fieldStarted = false;
    } else {
      this.#fieldStarted = true;
    }
  }
}
