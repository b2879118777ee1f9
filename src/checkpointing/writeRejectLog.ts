import { constants } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LoaderError } from '../shared/errors.js';
import { keyForDisplay } from '../typing/key.js';
import type { KeySchema, PlannedWrite, RejectedRow } from '../shared/types.js';

/** One row DynamoDB refused: where it is in the input and why, never its contents. */
export interface WriteRejectEntry {
  /** Index of the batch it was in. */
  batch: number;
  /** Its line in the input (unique per row of one file), where a resume finds its text and key again. */
  line: number;
  /** Its file or object, when the load reads several: with the line, unique per row. */
  file?: string;
  code: 'WRITE_REJECTED' | 'RETRIES_EXHAUSTED';
  message: string;
  field?: string;
}

/**
 * The write-reject log next to a checkpoint (`<checkpoint>.write-rejects`): an append-only JSON-lines
 * file of the rows DynamoDB refused, by line and reason, so no resume loses one. Each checkpoint save fsyncs it first
 * and records how many of its bytes are settled, so after kill -9 a torn tail is cut; a resume keeps the
 * entries of batches the checkpoint counts as done and puts those rows back in the reject file, with their
 * real reason, when it reads them again. It holds no row contents: 0600, O_NOFOLLOW.
 */
export class WriteRejectLog {
  #handle: FileHandle;
  #bytes: number;
  #chain: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    handle: FileHandle,
    bytes: number,
  ) {
    this.#handle = handle;
    this.#bytes = bytes;
  }

  /** Bytes appended so far (every append that has finished). */
  get bytes(): number {
    return this.#bytes;
  }

  /** A new, empty log (an old one at `path` is emptied). */
  static async create(path: string): Promise<WriteRejectLog> {
    try {
      const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND | constants.O_NOFOLLOW, 0o600);
      await handle.chmod(0o600);
      return new WriteRejectLog(path, handle, 0);
    } catch (error) {
      throw unwritable(path, error);
    }
  }

  /**
   * The log of a resumed checkpoint: its first `settledBytes` (what the checkpoint counted), and of those
   * the entries of batches `isDone`; the file is rewritten to hold only those, so a batch sent again
   * cannot be logged twice. Returns the kept entries by input line.
   */
  static async resume(
    path: string,
    settledBytes: number,
    isDone: (batch: number) => boolean,
    checkpointPath: string,
  ): Promise<{ log: WriteRejectLog; entries: Map<string, WriteRejectEntry> }> {
    let text = '';
    if (settledBytes > 0) {
      try {
        const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
        try {
          const buffer = Buffer.alloc(settledBytes);
          const { bytesRead } = await handle.read(buffer, 0, settledBytes, 0);
          text = buffer.subarray(0, bytesRead).toString('utf8');
        } finally {
          await handle.close();
        }
      } catch (error) {
        throw new LoaderError(
          'CHECKPOINT_INVALID',
          `the write-reject log ${path} of checkpoint ${checkpointPath} cannot be read (${(error as Error).message}): the rows DynamoDB refused before would be missing from the reject file; restore it, or delete ${checkpointPath} to start over`,
          { file: path, cause: error },
        );
      }
    }
    const entries = new Map<string, WriteRejectEntry>();
    let kept = '';
    let lineNumber = 0;
    for (const line of text.split('\n')) {
      lineNumber++;
      if (line.length === 0) continue;
      const entry = parseEntry(line);
      if (!entry) {
        throw new LoaderError(
          'CHECKPOINT_INVALID',
          `the write-reject log ${path} of checkpoint ${checkpointPath} is damaged at line ${lineNumber}; delete ${checkpointPath} (and the log) to start over`,
          { file: path, line: lineNumber },
        );
      }
      const key = rejectLogKey(entry.file, entry.line);
      if (!isDone(entry.batch) || entries.has(key)) continue;
      entries.set(key, entry);
      kept += `${line}\n`;
    }
    const temporary = `${path}.${process.pid}.tmp`;
    try {
      const out = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
      try {
        await out.writeFile(kept);
        await out.sync();
      } finally {
        await out.close();
      }
      await rename(temporary, path);
      await syncFolder(path);
      const handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW, 0o600);
      return { log: new WriteRejectLog(path, handle, Buffer.byteLength(kept)), entries };
    } catch (error) {
      throw unwritable(path, error);
    }
  }

  /** Appends the entries (serialised behind earlier appends); `bytes` counts them once written. */
  append(entries: readonly WriteRejectEntry[]): Promise<void> {
    if (entries.length === 0) return this.#chain;
    const text = entries.map((e) => `${JSON.stringify(e)}\n`).join('');
    const next = this.#chain.then(async () => {
      await this.#handle.write(text);
      this.#bytes += Buffer.byteLength(text);
    });
    this.#chain = next.catch(() => undefined);
    return next.catch((error: unknown) => {
      throw unwritable(this.path, error);
    });
  }

  /** Makes every finished append durable (before a checkpoint that counts them is saved). */
  async sync(): Promise<void> {
    await this.#chain;
    await this.#handle.sync();
  }

  async close(): Promise<void> {
    await this.#chain;
    await this.#handle.close();
  }
}

function parseEntry(line: string): WriteRejectEntry | undefined {
  try {
    const value = JSON.parse(line) as Partial<WriteRejectEntry> | null;
    if (!value || !Number.isSafeInteger(value.batch) || !Number.isSafeInteger(value.line)) return undefined;
    if (value.code !== 'WRITE_REJECTED' && value.code !== 'RETRIES_EXHAUSTED') return undefined;
    if (typeof value.message !== 'string' || (value.field !== undefined && typeof value.field !== 'string')) return undefined;
    if (value.file !== undefined && typeof value.file !== 'string') return undefined;
    return {
      batch: value.batch!,
      line: value.line!,
      ...(value.file === undefined ? {} : { file: value.file }),
      code: value.code,
      message: value.message,
      ...(value.field === undefined ? {} : { field: value.field }),
    };
  } catch {
    return undefined;
  }
}

async function syncFolder(path: string): Promise<void> {
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

function unwritable(path: string, error: unknown): LoaderError {
  return new LoaderError(
    'CHECKPOINT_UNWRITABLE',
    `cannot write the write-reject log ${path}: ${(error as Error).message}; pass --checkpoint with a writable folder`,
    { file: path, cause: error },
  );
}

/** Where a row is, as the log's entries are looked up: its line, and its file when the load reads several. */
export function rejectLogKey(file: string | undefined, line: number): string {
  return file === undefined ? String(line) : `${file}\n${line}`;
}

/** The log entries of a batch's rejected rows: location and reason only (the file when `named`: several inputs). */
export function logEntriesOf(batch: number, rows: readonly RejectedRow[], named = false): WriteRejectEntry[] {
  return rows.map((row) => ({
    batch,
    line: row.origin.line,
    ...(named ? { file: row.origin.file } : {}),
    code: row.code === 'RETRIES_EXHAUSTED' ? 'RETRIES_EXHAUSTED' : 'WRITE_REJECTED',
    message: row.message,
    ...(row.field === undefined ? {} : { field: row.field }),
  }));
}

/** The rejected row again, from its log entry and the write read again from the input (text and key). */
export function rejectedRowOf(entry: WriteRejectEntry, write: PlannedWrite, keySchema: KeySchema): RejectedRow {
  const row: RejectedRow = { origin: write.origin, code: entry.code, message: entry.message };
  if (entry.field !== undefined) row.field = entry.field;
  const key = keyForDisplay(write.item, keySchema);
  if (key) row.key = key;
  return row;
}
