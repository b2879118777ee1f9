import { constants } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { createHash, type Hash } from 'node:crypto';
import { LoaderError } from '../shared/errors.js';
import type { KeySchema, PlannedWrite } from '../shared/types.js';
import { keyForDisplay } from '../typing/key.js';
import { createPrivateFile } from '../files/privateFiles.js';
import type { RejectFileState } from '../checkpointing/rejectsBeforePoint.js';

/** The reason code of every line of the --condition-failures file. */
export const CONDITION_FAILED_CODE = 'CONDITION_FAILED';

/**
 * The --condition-failures file: one JSON line per row whose write condition was false, in the reject
 * file's format (file, line, code, message, key when known, the row's text) plus the condition that failed,
 * so the rows a live table kept can be looked at, or fed back in. Created at the first line, private (0600),
 * never through a symlink; row contents are in it as in the reject file (--no-excerpts keeps them off the
 * terminal, not out of the files the user asked for).
 *
 * Resumable as the reject file is: `handOn` counts and hashes a batch's lines at once (synchronously), so a
 * checkpoint saved right after the batch is counted done records exactly the lines of the done batches
 * (`state`, on disk by `settle`). A resume cuts the file back to what the checkpoint recorded (`resume`):
 * lines of batches not done are written again when those batches are.
 */
export class ConditionFailureSink {
  #handle: Promise<FileHandle> | undefined;
  #failed: Error | undefined;
  #bytes = 0;
  #hash: Hash = createHash('sha256');
  /** Settles once every line handed on is written (writes are chained, in order). */
  #chain: Promise<void> = Promise.resolve();
  #closed = false;
  /** Lines of batches a checkpoint will not count done, written at close after every counted line (see uncounted). */
  #tail = '';
  /** Lines in the file (kept by a resume, and handed on since). */
  count = 0;

  constructor(
    readonly path: string,
    /** The condition as the user gave it, e.g. "--if-newer updatedAt", written on every line. */
    readonly condition: string,
  ) {}

  /** A load that starts afresh: an earlier run's file is removed, so the file holds this load's rows only. */
  async startFresh(): Promise<void> {
    await rm(this.path, { force: true }).catch((error: Error) => {
      throw this.#error(error);
    });
  }

  /**
   * A resumed checkpoint's file: its first `recorded.bytes` must hash as recorded and hold `lines` lines (the
   * checkpoint's conditionFailed); what follows (lines of batches the checkpoint does not count done) is cut.
   * A file changed, cut short or gone since is refused: the done batches are not sent again, so their lines
   * could not be written again.
   */
  async resume(recorded: RejectFileState | undefined, lines: number, checkpointPath: string): Promise<void> {
    const refuse = (why: string) =>
      new LoaderError(
        'CHECKPOINT_MISMATCH',
        `the --condition-failures file ${this.path} ${why} since checkpoint ${checkpointPath} was saved, which counts ${lines} rows in it: the batches done are not sent again, so their rows cannot be listed again; restore the file, or delete ${checkpointPath} to start over`,
        { file: this.path },
      );
    const bytes = recorded?.bytes ?? 0;
    if (bytes === 0) {
      if (lines > 0) throw refuse('was not recorded');
      await this.startFresh();
      return;
    }
    let handle: FileHandle;
    try {
      handle = await open(this.path, constants.O_RDWR | constants.O_NOFOLLOW);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw refuse('is gone');
      throw this.#error(error as Error);
    }
    try {
      const { size } = await handle.stat();
      if (size < bytes) throw refuse(`holds ${size} bytes, fewer than the ${bytes} recorded,`);
      const kept = Buffer.alloc(bytes);
      await handle.read(kept, 0, bytes, 0);
      if (createHash('sha256').update(kept).digest('hex') !== recorded!.sha256) throw refuse('has changed (its first bytes differ from those recorded)');
      const found = kept.toString('utf8').split('\n').length - 1;
      if (found !== lines || kept[bytes - 1] !== 0x0a) throw refuse(`holds ${found} lines where ${lines} were recorded`);
      await handle.truncate(bytes);
      await handle.sync();
      await handle.chmod(0o600);
      this.#hash.update(kept);
    } catch (error) {
      await handle.close();
      throw error instanceof LoaderError ? error : this.#error(error as Error);
    }
    await handle.close();
    this.#bytes = bytes;
    this.count = lines;
    this.#handle = open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    this.#handle.catch(() => undefined);
  }

  /**
   * Hands on a line for each write: counted and hashed before it returns (a checkpoint saved next records them),
   * written in order behind the earlier lines. The promise settles once they are written.
   */
  handOn(writes: readonly PlannedWrite[], keySchema: KeySchema): Promise<void> {
    if (writes.length === 0) return this.#chain;
    const text = this.#lines(writes, keySchema);
    this.#bytes += Buffer.byteLength(text);
    this.#hash.update(text);
    this.count += writes.length;
    return this.#write(text);
  }

  /**
   * Lines of a batch that a checkpoint does not count done (cut short by a fatal error): this run's file lists
   * them, as its result counts them, but after every counted line and outside `state`, so the checkpoint's
   * record ends before them and a resume cuts them (it sends the batch again, which lists its rows again).
   */
  uncounted(writes: readonly PlannedWrite[], keySchema: KeySchema): void {
    this.#tail += this.#lines(writes, keySchema);
    this.count += writes.length;
  }

  #lines(writes: readonly PlannedWrite[], keySchema: KeySchema): string {
    let text = '';
    for (const write of writes) {
      const key = keyForDisplay(write.item, keySchema);
      // --item-conditions: the row's own expression is the condition that was false.
      const condition = write.condition ? write.condition.expression : this.condition;
      const record = {
        file: write.origin.file,
        line: write.origin.line,
        code: CONDITION_FAILED_CODE,
        message: `the condition ${write.condition ? `${condition} (the line's own)` : `of ${condition}`} was false: the table kept its item, this row was not written`,
        condition,
        ...(key !== undefined ? { key } : {}),
        raw: write.origin.raw,
      };
      text += `${JSON.stringify(record)}\n`;
    }
    return text;
  }

  #write(text: string): Promise<void> {
    this.#handle ??= createPrivateFile(this.path);
    const opened = this.#handle;
    const next = this.#chain.then(async () => {
      if (this.#failed) throw this.#failed;
      const handle = await opened;
      await handle.write(text);
    });
    this.#chain = next.catch((error: Error) => {
      this.#failed ??= error;
    });
    return next.catch((error: Error) => {
      throw this.#error(error);
    });
  }

  /** The bytes handed on so far and their SHA-256 (what a checkpoint records). */
  state(): RejectFileState {
    return { bytes: this.#bytes, sha256: this.#hash.copy().digest('hex') };
  }

  /** Resolves once every line handed on is written and fsynced. */
  async settle(): Promise<void> {
    if (!this.#handle || this.#closed) return;
    await this.#chain;
    if (this.#failed) throw this.#error(this.#failed);
    try {
      await (await this.#handle).sync();
    } catch (error) {
      throw this.#error(error as Error);
    }
  }

  async close(): Promise<void> {
    if (this.#tail !== '' && !this.#closed) {
      // Counted lines first (settled below with these): a checkpoint's record ends before the tail.
      void this.#write(this.#tail).catch(() => undefined);
      this.#tail = '';
    }
    if (!this.#handle || this.#closed) return;
    try {
      await this.settle();
    } finally {
      this.#closed = true;
      await (await this.#handle.catch(() => undefined))?.close().catch(() => undefined);
    }
  }

  #error(cause: Error): LoaderError {
    return new LoaderError(
      'CONDITION_FAILURES_UNWRITABLE',
      `cannot write the --condition-failures file ${this.path}: ${cause.message}; pass --condition-failures with a writable path`,
      { file: this.path, cause },
    );
  }
}

/** The condition as the user gave it, for the file's lines: `--if-not-exists`, `--if-newer updatedAt`, `--condition <expression>`. */
export function conditionLabel(
  condition: { kind: 'ifNotExists' } | { kind: 'ifNewer'; attribute: string } | { kind: 'expression'; expression: string } | { kind: 'item' },
): string {
  if (condition.kind === 'ifNotExists') return '--if-not-exists';
  if (condition.kind === 'item') return '--item-conditions';
  if (condition.kind === 'ifNewer') return `--if-newer ${condition.attribute}`;
  return `--condition ${condition.expression}`;
}
