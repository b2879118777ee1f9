import { randomBytes } from 'node:crypto';
import { KEPT_RAW_BYTES, keptRaw } from './recordLimits.js';

/** A record the framer did not pass on because it was over the bound; a placeholder took its place. */
export interface OversizedRecord {
  /** Bytes of the record, its line break excluded. */
  bytes: number;
  /** Line breaks inside the record (in quoted fields), its own line break excluded. */
  innerBreaks: number;
  /** The record's first bytes, for the reject file. */
  raw: string;
  /** Bytes of the input it stood for, its line break included, less those of the placeholder put out in its place. */
  shift: number;
}

export interface CsvFramer {
  /** The bytes for csv-parse: the input without its BOM, each oversized record replaced by `placeholder`. */
  output: AsyncGenerator<Buffer>;
  /** The text of a placeholder record (one quoted field), unique to this read. */
  placeholder: string;
  /** Oversized records in input order; the reader takes each off when its placeholder comes out of csv-parse. */
  oversized: OversizedRecord[];
  /** Bytes of a BOM left out at the start (0 or 3): known once the first bytes are put out. */
  readonly bomBytes: number;
}

const CR = 13;
const LF = 10;
const QUOTE = 0x22;
const EMPTY = Buffer.alloc(0);

/**
 * Finds CSV record boundaries in the bytes ahead of csv-parse, by csv-parse's own rules (a quote opens a
 * field only at its start, "" inside quotes is a quote, any other byte after a closing quote ends the
 * quoting: relax_quotes; CR, LF and CRLF end a record), so a record is measured before it is parsed. A
 * record over `maxBytes` is never held: its first bytes are kept for the reject file, the rest is read
 * past (still following the quoting, so the lines of a long quoted field are not taken for rows), and a
 * one-field placeholder record goes to csv-parse in its place, so its reject comes out in input order.
 * Memory: at most one record of `maxBytes` plus the chunk at hand.
 *
 * Longer than ~100 lines on purpose: it is one byte-level state machine (quoting, the record held, the
 * carry between chunks) whose state the inner scan() shares by closure. Cut into functions, that state
 * would be passed to and returned from every call of the per-byte loop, which runs once per input byte.
 */
export function frameCsv(input: AsyncIterable<Buffer>, delimiter: string, maxBytes: number, atFileStart = true): CsvFramer {
  const placeholder = `"ddb-spread oversized record ${randomBytes(12).toString('hex')}"`;
  const oversized: OversizedRecord[] = [];
  const delim = Buffer.from(delimiter, 'utf8');
  const d0 = delim[0]!;

  // State carried across chunks.
  let quoting = false;
  /** The current field has content, so a quote in it is text. */
  let fieldStarted = false;
  /** Bytes of the current record held from earlier chunks (not while skipping). */
  let held: Buffer[] = [];
  /** Bytes of the current record before the chunk at hand. */
  let recordBytes = 0;
  let innerBreaks = 0;
  /** The last byte read was a line break inside quotes (at the end of the file it ends no line of its own). */
  let trailingBreak = false;
  let skipping = false;
  let kept: Buffer = EMPTY;
  /** Bytes at the end of a chunk whose meaning depends on the next chunk (a CR, a quote, part of a delimiter). */
  let carry: Buffer = EMPTY;

  function* scan(chunk: Buffer, end: boolean): Generator<Buffer> {
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    carry = EMPTY;
    const n = buf.length;
    const out: Buffer[] = [];
    /** Start of the current record's bytes in this buffer. */
    let start = 0;
    /**
     * Start of the finished records not yet put out: they are passed on as one slice of `buf`, not one
     * subarray each (a subarray per record cost 6% of reading a CSV).
     */
    let passFrom = -1;
    let i = 0;
    const flushPassed = () => {
      if (passFrom !== -1 && start > passFrom) out.push(buf.subarray(passFrom, start));
      passFrom = -1;
    };
    const finishRecord = (breakAt: number, breakLength: number) => {
      // A quote left open to the end: a final line break there starts no further line.
      if (breakLength === 0 && quoting && trailingBreak) innerBreaks--;
      const size = recordBytes + breakAt - start;
      if (!skipping && size > maxBytes) startSkipping(buf.subarray(start, breakAt));
      if (skipping) {
        flushPassed();
        const stand = Buffer.from(breakLength > 0 ? `${placeholder}\n` : placeholder);
        oversized.push({ bytes: size, innerBreaks, raw: keptRaw(kept), shift: size + breakLength - stand.length });
        out.push(stand);
        skipping = false;
        kept = EMPTY;
      } else {
        if (held.length > 0) {
          flushPassed();
          for (const piece of held) out.push(piece);
        }
        if (passFrom === -1) passFrom = start;
      }
      held = [];
      recordBytes = 0;
      innerBreaks = 0;
      fieldStarted = false;
      start = breakAt + breakLength;
    };
    const startSkipping = (tail: Buffer) => {
      skipping = true;
      kept = Buffer.from(Buffer.concat([...held, tail.subarray(0, KEPT_RAW_BYTES * 4)]).subarray(0, KEPT_RAW_BYTES * 4));
      held = [];
    };
    // Where the next quote, CR and LF are (n: none left): found by indexOf, then reused until passed.
    let nextQuote = -1;
    let nextCr = -1;
    let nextLf = -1;
    // Outside quotes only with a one-byte delimiter: a longer one may straddle the bytes jumped over.
    const jumps = delim.length === 1;
    scanning: for (; i < n; i++) {
      if (jumps || quoting) {
        // Other bytes change nothing but fieldStarted (outside quotes) and trailingBreak (inside): jump to
        // the next quote or line break instead of reading every byte (the byte loop cost ~6% of a load).
        if (nextQuote < i) nextQuote = indexOrEnd(buf, QUOTE, i);
        if (nextCr < i) nextCr = indexOrEnd(buf, CR, i);
        if (nextLf < i) nextLf = indexOrEnd(buf, LF, i);
        const stop = Math.min(nextQuote, nextCr, nextLf);
        if (stop > i) {
          if (quoting) trailingBreak = false;
          else fieldStarted = buf[stop - 1] !== d0;
          i = stop - 1;
          continue;
        }
      }
      const c = buf[i]!;
      if (quoting) {
        trailingBreak = c === CR || c === LF;
        if (c === QUOTE) {
          if (i + 1 >= n && !end) break scanning;
          if (buf[i + 1] === QUOTE) i++;
          else quoting = false;
        } else if (c === CR) {
          if (i + 1 >= n && !end) break scanning;
          innerBreaks++;
          if (buf[i + 1] === LF) i++;
        } else if (c === LF) {
          innerBreaks++;
        }
        continue;
      }
      if (c === CR || c === LF) {
        if (c === CR && i + 1 >= n && !end) break scanning;
        finishRecord(i, c === CR && buf[i + 1] === LF ? 2 : 1);
        i = start - 1;
        continue;
      }
      if (c === QUOTE && !fieldStarted) {
        quoting = true;
        fieldStarted = true;
      } else if (c === d0 && delim.length > 1 && i + delim.length > n && !end) {
        break scanning;
      } else if (c === d0 && matchesDelimiter(buf, i)) {
        fieldStarted = false;
        i += delim.length - 1;
      } else {
        fieldStarted = true;
      }
    }
    // Bytes from `i` on wait for the next chunk; those before it belong to the unfinished record.
    carry = i < n ? Buffer.from(buf.subarray(i)) : EMPTY;
    if (end && (start < n || recordBytes > 0 || skipping)) {
      finishRecord(n, 0);
    }
    flushPassed();
    if (end) {
      // Nothing is left to hold.
    } else if (i > start) {
      const piece = buf.subarray(start, i);
      if (!skipping && recordBytes + piece.length > maxBytes) startSkipping(piece);
      else if (!skipping) held.push(piece);
      recordBytes += piece.length;
    }
    if (out.length > 0) yield out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  function indexOrEnd(buf: Buffer, byte: number, from: number): number {
    const at = buf.indexOf(byte, from);
    return at === -1 ? buf.length : at;
  }

  function matchesDelimiter(buf: Buffer, i: number): boolean {
    for (let k = 1; k < delim.length; k++) if (buf[i + k] !== delim[k]) return false;
    return true;
  }

  let bomBytes = 0;
  const withoutBom = (head: Buffer): Buffer => {
    if (head[0] !== 0xef || head[1] !== 0xbb || head[2] !== 0xbf) return head;
    bomBytes = 3;
    return head.subarray(3);
  };

  async function* output(): AsyncGenerator<Buffer> {
    let head: Buffer = EMPTY;
    // Only a file's first bytes can be a BOM: a stream that starts mid-file (a stripe) keeps them as text.
    let bomChecked = !atFileStart;
    for await (const chunk of input) {
      let bytes = chunk;
      if (!bomChecked) {
        head = head.length > 0 ? Buffer.concat([head, chunk]) : chunk;
        if (head.length < 3) continue;
        bomChecked = true;
        bytes = withoutBom(head);
      }
      yield* scan(bytes, false);
    }
    if (!bomChecked && head.length > 0) yield* scan(withoutBom(head), false);
    yield* scan(EMPTY, true);
  }

  return {
    output: output(),
    placeholder,
    oversized,
    get bomBytes() {
      return bomBytes;
    },
  };
}
