import { LoaderError } from '../shared/errors.js';
import type { LoadEvent } from '../reporting/events.js';
import type { RejectSink } from '../reporting/rejectSink.js';
import type { RejectedRow } from '../shared/types.js';
import type { KeptRejects } from '../checkpointing/rejectsBeforePoint.js';
import type { LoadStop } from './loadStop.js';
import type { LoadTally } from './loadTally.js';

/**
 * A rejected row, everywhere it must go: the tally, the reject file (once per row, with its file, line
 * and reason), the caller's events, and the --max-rejects stop.
 */
export class Rejections {
  constructor(
    private readonly tally: LoadTally,
    readonly file: RejectSink,
    private readonly emit: (event: LoadEvent) => void,
    private readonly stop: LoadStop,
    private readonly limit: { maxRejects: number; rejectsPath: string },
  ) {}

  /** Counts and files a rejected row; `announce` false for rejects an earlier run already reported. */
  async reject(row: RejectedRow, announce = true): Promise<void> {
    this.tally.rejected(row.code);
    if (announce) this.emit({ type: 'rowRejected', row });
    await this.file.write(row);
    this.#checkLimit(row.origin);
  }

  /**
   * A resume at a restart point: the rejects of the rows before it, kept from the earlier run's reject file
   * (src/checkpointing/rejectsBeforePoint.ts), go back in the file and the counters; those rows are not read again.
   */
  async restore(kept: KeptRejects): Promise<void> {
    await this.file.restore(kept.lines);
    for (const code of kept.codes) this.tally.rejected(code);
    if (kept.codes.length > 0) this.#checkLimit(undefined);
  }

  #checkLimit(origin: { file: string; line: number } | undefined): void {
    const count = this.tally.counters.rejected;
    if (count >= this.limit.maxRejects && !this.stop.failed) {
      this.stop.fail(
        new LoaderError(
          'MAX_REJECTS_REACHED',
          `stopped after ${count} rejected rows (--max-rejects ${this.limit.maxRejects}); see ${this.limit.rejectsPath}`,
          origin ? { file: origin.file, line: origin.line } : {},
        ),
      );
    }
  }
}
