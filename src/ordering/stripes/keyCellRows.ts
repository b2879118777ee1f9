import { open } from 'node:fs/promises';
import { KeyCellScanner } from './keyCells.js';
import { MAX_RECORD_BYTES } from '../../reading/recordLimits.js';
import type { ByteRange, RangeSyntax } from './ranges.js';

/** A row of a range as the cut's probe sees it: its key (undefined when it has none), its line and its text. */
export interface ProbedRow {
  group: string | undefined;
  line: number;
  raw: string;
}

/** Thrown by keyCellRows where KeyCellScanner cannot read a record for sure: the caller reads the range through readCsv. */
export const UNCLEAR = Symbol('unclear');

/** Bytes read at a time. */
const CHUNK = 64 * 1024;

/**
 * The rows of a range past its first byte (not range 0: its header is readCsv's), each with the probe's key
 * of a CSV string partition key (recordGroup: the cell as it is, none when empty), read by KeyCellScanner
 * without a record object per row; undefined when the columns do not name `keyColumn` exactly once. Throws
 * UNCLEAR at the first record the scanner cannot read for sure, after the rows before it, and where the file
 * cannot be read.
 */
export function keyCellRows(path: string, range: ByteRange, how: RangeSyntax, keyColumn: string): AsyncGenerator<ProbedRow> | undefined {
  const columns = how.columns ?? [];
  const column = columns.indexOf(keyColumn);
  if (how.syntax !== 'csv' || range.start === 0 || column === -1 || columns.lastIndexOf(keyColumn) !== column) return undefined;
  const scanner = new KeyCellScanner(column, columns.length, Buffer.from(how.delimiter, 'utf8')[0]!, MAX_RECORD_BYTES);
  return (async function* rows(): AsyncGenerator<ProbedRow> {
    // A file that cannot be opened or read is left to readCsv's reader too: its error names the file.
    const handle = await open(path, 'r').catch(() => {
      throw UNCLEAR;
    });
    try {
      const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, range.end - range.start)));
      for (let at = range.start; ;) {
        const { bytesRead } =
          at < range.end
            ? await handle.read(buffer, 0, Math.min(buffer.length, range.end - at), at).catch(() => {
                throw UNCLEAR;
              })
            : { bytesRead: 0 };
        at += bytesRead;
        const end = bytesRead === 0 || at >= range.end;
        for (const row of scanner.feed(buffer.subarray(0, bytesRead), end)) {
          yield { group: row.cell === '' ? undefined : `S${row.cell}`, line: range.line + row.breaksBefore, raw: row.raw };
        }
        if (scanner.unclear) throw UNCLEAR;
        if (end) return;
      }
    } finally {
      await handle.close();
    }
  })();
}
