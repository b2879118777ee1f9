import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { LoaderError } from '../shared/errors.js';

/**
 * The rows of a load's reject file, by "file \0 line"; none when the file does not exist (a clean load).
 * Its --condition-failures file has the same format (`option` names it in the errors).
 */
export async function readLoadRejects(path: string, option = '--rejects'): Promise<{ rows: Set<string>; found: boolean }> {
  const rows = new Set<string>();
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    let number = 0;
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      number++;
      if (line.trim() === '') continue;
      let record: { file?: unknown; line?: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        throw notARejectFile(path, number, option);
      }
      if (typeof record.file !== 'string' || typeof record.line !== 'number') throw notARejectFile(path, number, option);
      rows.add(rowId(record.file, record.line));
    }
    return { rows, found: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { rows, found: false };
    if (error instanceof LoaderError) throw error;
    throw new LoaderError('INPUT_UNREADABLE', `cannot read the load's ${option} file ${path}: ${(error as Error).message}`, { file: path, cause: error });
  } finally {
    stream.destroy();
  }
}

/** A row's identity in a reject file and in the input: its file and line. */
export const rowId = (file: string, line: number): string => `${file}\u0000${line}`;

function notARejectFile(path: string, line: number, option: string): LoaderError {
  return new LoaderError(
    'INPUT_HEADER',
    `${path} line ${line} is not a line of the load's ${option} file (a JSON object with "file" and "line"); give the file the load wrote with ${option}`,
    { file: path, line },
  );
}
