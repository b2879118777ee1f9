import { isAscii, isUtf8 } from 'node:buffer';

/**
 * One column's cell of each CSV record, read without parsing the records: what the cut of a striped read
 * needs from the head of a range (src/ordering/stripes/stripedRecords.ts), which is where one partition key ends. The
 * cut read each head through readCsv, a record object of every cell per row: ~0.45 s of a 200k-row load
 * before its first write, about a sixth of the file parsed once for the cut and again by the stripes.
 *
 * Only records whose reading leaves no room for doubt are read here; any other record makes the scan
 * stop as `unclear`, and the caller reads the range through readCsv as before. Clear means: every field
 * is either unquoted (quotes inside are text, as csv-parse's relax_quotes reads them) or quoted from its
 * first byte to a closing quote followed by the delimiter or the end of the record ("" inside is a quote);
 * the record has as many fields as there are columns; its bytes are valid UTF-8; it is under the record
 * size bound. For such records readCsv's cells, raw text and line numbers are known exactly (the property
 * test in test/unit/reading/keyCells.test.ts holds the two readers to it). Blank lines are no records,
 * as for csv-parse's skip_empty_lines; their line breaks count.
 *
 * Written by hand: csv-parse has no mode that skips the cells it is not asked for, and this is a byte
 * loop over a few records per range. Pure: the caller feeds the bytes in order.
 */

const CR = 13;
const LF = 10;
const QUOTE = 0x22;

/** A record read: its cell in the column asked for, where it starts, its line and its text. */
export interface KeyCellRow {
  /** The cell's text ('' for an empty cell). */
  cell: string;
  /** Offset of the record's first byte from the first byte fed (blank lines before it are not part of it). */
  offset: number;
  /** Line breaks before the record's first byte (its line is the first line's number plus this). */
  breaksBefore: number;
  /** The record's text without its line break: readCsv's `origin.raw`. */
  raw: string;
}

export class KeyCellScanner {
  readonly #column: number;
  readonly #columns: number;
  readonly #delimiter: number;
  readonly #maxBytes: number;
  /** Bytes fed and not yet made rows of (the start of an unfinished record). */
  #held: Buffer = Buffer.alloc(0);
  /** Offset of #held's first byte. */
  #base = 0;
  #breaks = 0;
  /** Set once a record is not clear: nothing more is read. */
  unclear = false;

  /**
   * @param column index of the cell wanted; @param columns fields a record must have;
   * @param delimiter the delimiter's byte; @param maxBytes records over this are not clear
   */
  constructor(column: number, columns: number, delimiter: number, maxBytes: number) {
    this.#column = column;
    this.#columns = columns;
    this.#delimiter = delimiter;
    this.#maxBytes = maxBytes;
  }

  /**
   * The rows of the records the bytes fed so far complete, in order; `end` when no bytes follow. After a
   * record that is not clear, `unclear` is set and no more rows come.
   */
  feed(chunk: Buffer, end = false): KeyCellRow[] {
    const rows: KeyCellRow[] = [];
    if (this.unclear) return rows;
    const buf = this.#held.length > 0 ? Buffer.concat([this.#held, chunk]) : chunk;
    const n = buf.length;
    let at = 0;
    while (at < n) {
      const c = buf[at]!;
      // A blank line: its break counts, and no record starts.
      if (c === LF || c === CR) {
        if (c === CR && at + 1 >= n && !end) break;
        at += c === CR && buf[at + 1] === LF ? 2 : 1;
        this.#breaks++;
        continue;
      }
      const record = this.#record(buf, at, end);
      if (record === 'more') break;
      if (record === 'unclear') {
        this.unclear = true;
        return rows;
      }
      rows.push({ cell: record.cell, offset: this.#base + at, breaksBefore: this.#breaks, raw: record.raw });
      this.#breaks += record.breaks;
      at = record.next;
    }
    if (!end && n - at > this.#maxBytes) {
      this.unclear = true;
      return rows;
    }
    this.#held = end ? Buffer.alloc(0) : Buffer.from(buf.subarray(at));
    this.#base += at;
    return rows;
  }

  /**
   * The record starting at `start`: its cell, text, line breaks (its own included) and where the next
   * starts; 'more' when its end is not in the bytes yet; 'unclear' when it is not clear.
   */
  #record(buf: Buffer, start: number, end: boolean): { cell: string; raw: string; breaks: number; next: number } | 'more' | 'unclear' {
    const n = buf.length;
    const delimiter = this.#delimiter;
    let field = 0;
    let cell = '';
    let breaks = 0;
    let i = start;
    for (;;) {
      // One field from i: it ends at a delimiter (another field follows) or at the record's end.
      let value = '';
      let after: number;
      if (buf[i] === QUOTE) {
        let from = i + 1;
        let text = '';
        for (;;) {
          const q = buf.indexOf(QUOTE, from);
          if (q === -1 || q + 1 >= n) {
            if (!end) return 'more';
            // A quote left open to the end, or closed at the very end of the input: readCsv's to judge.
            return 'unclear';
          }
          breaks += breaksIn(buf, from, q);
          if (field === this.#column) text += buf.toString('latin1', from, q);
          if (buf[q + 1] === QUOTE) {
            if (field === this.#column) text += '"';
            from = q + 2;
            continue;
          }
          after = q + 1;
          break;
        }
        value = text;
        const c = buf[after];
        if (c !== delimiter && c !== CR && c !== LF) return 'unclear';
      } else {
        after = i;
        while (after < n) {
          const c = buf[after]!;
          if (c === delimiter || c === CR || c === LF) break;
          after++;
        }
        if (after >= n && !end) return 'more';
        if (field === this.#column) value = buf.toString('latin1', i, after);
      }
      if (field === this.#column) cell = value;
      field++;
      if (after - start > this.#maxBytes) return 'unclear';
      if (after < n && buf[after] === delimiter) {
        i = after + 1;
        continue;
      }
      // The record ends at `after`: a line break, or the end of the input.
      if (field !== this.#columns) return 'unclear';
      let next = after;
      if (after < n) {
        if (buf[after] === CR && after + 1 >= n && !end) return 'more';
        next = after + (buf[after] === CR && buf[after + 1] === LF ? 2 : 1);
        breaks++;
      }
      const bytes = buf.subarray(start, after);
      if (isAscii(bytes)) return { cell, raw: bytes.toString('latin1'), breaks, next };
      if (!isUtf8(bytes)) return 'unclear';
      // The cell's bytes were kept as latin1 (a character a byte): decoded as UTF-8 here, as readCsv does.
      return { cell: Buffer.from(cell, 'latin1').toString('utf8'), raw: bytes.toString('utf8'), breaks, next };
    }
  }
}

/** Line breaks in buf[from, to): CRLF, a lone CR and LF each count one. */
function breaksIn(buf: Buffer, from: number, to: number): number {
  let count = 0;
  for (let k = from; k < to; k++) {
    const c = buf[k];
    if (c === LF) count++;
    else if (c === CR) {
      count++;
      if (buf[k + 1] === LF && k + 1 < to) k++;
    }
  }
  return count;
}
