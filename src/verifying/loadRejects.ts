import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { LoaderError } from '../shared/errors.js';

/** A load's reject or --condition-failures file, read. */
export interface LoadRowsFile {
  /** Its rows, by "file \0 line" (rowId). */
  rows: Set<string>;
  /** Whether the file exists. */
  found: boolean;
  /** With `withKeys`: each row's keys as its lines give them (keyText; null where a line has none; a row a transform split may have several). */
  keys?: Map<string, (string | null)[]>;
}

/**
 * The rows of a load's reject file, by "file \0 line"; none when the file does not exist (a clean load).
 * Its --condition-failures file has the same format (`option` names it in the errors); `withKeys` keeps
 * each row's key too, so that the file can be checked against the input (verify.ts).
 */
export async function readLoadRejects(path: string, option = '--rejects', withKeys = false): Promise<LoadRowsFile> {
  const rows = new Set<string>();
  const keys = withKeys ? new Map<string, (string | null)[]>() : undefined;
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    let number = 0;
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      number++;
      if (line.trim() === '') continue;
      let record: { file?: unknown; line?: unknown; key?: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        throw notARejectFile(path, number, option);
      }
      if (typeof record.file !== 'string' || typeof record.line !== 'number') throw notARejectFile(path, number, option);
      const id = rowId(record.file, record.line);
      rows.add(id);
      if (keys) {
        const key = record.key === undefined || record.key === null ? null : JSON.stringify(record.key);
        const known = keys.get(id);
        if (!known) keys.set(id, [key]);
        else if (!known.includes(key)) known.push(key);
      }
    }
    return { rows, found: true, ...(keys ? { keys } : {}) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { rows, found: false };
    if (error instanceof LoaderError) throw error;
    throw new LoaderError('INPUT_UNREADABLE', `cannot read the load's ${option} file ${path}: ${(error as Error).message}`, { file: path, cause: error });
  } finally {
    stream.destroy();
  }
}

/** The line number (from 1) of the first line of `path` that names row `id` with `key` (an error's pointer); 0 if none. */
export async function lineOfRow(path: string, id: string, key: string | null): Promise<number> {
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    let number = 0;
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      number++;
      if (line.trim() === '') continue;
      const record = JSON.parse(line) as { file: string; line: number; key?: unknown };
      const its = record.key === undefined || record.key === null ? null : JSON.stringify(record.key);
      if (rowId(record.file, record.line) === id && its === key) return number;
    }
    return 0;
  } finally {
    stream.destroy();
  }
}

/** A key as a reject file's line gives it (keyForDisplay's object), as text to compare. */
export const keyText = (key: Record<string, string> | undefined): string | null => (key === undefined ? null : JSON.stringify(key));

/** A row's identity in a reject file and in the input: its file and line. */
export const rowId = (file: string, line: number): string => `${file}\u0000${line}`;

function notARejectFile(path: string, line: number, option: string): LoaderError {
  return new LoaderError(
    'INPUT_HEADER',
    `${path} line ${line} is not a line of the load's ${option} file (a JSON object with "file" and "line"); give the file the load wrote with ${option}`,
    { file: path, line },
  );
}
