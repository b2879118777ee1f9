import { LoaderError } from '../shared/errors.js';
import type { LoadEvent } from '../reporting/events.js';
import type { RejectSink } from '../reporting/rejectSink.js';
import type { RejectedRow } from '../shared/types.js';
import type { LoadStop } from './loadStop.js';
import type { LoadTally } from './loadTally.js';

/**
 * A rejected row, everywhere it must go: the tally, the reject file (once per row, with its file, line
 * and reason), the caller's events, and the --max-rejects stop.
 */
export class Rejections {
  constructor(
    private readonly tally: LoadTally,
    private readonly file: RejectSink,
    private readonly emit: (event: LoadEvent) => void,
    private readonly stop: LoadStop,
    private readonly limit: { maxRejects: number; rejectsPath: string },
  ) {}

  /** Counts and files a rejected row; `announce` false for rejects an earlier run already reported. */
  async reject(row: RejectedRow, announce = true): Promise<void> {
    this.tally.rejected(row.code);
    if (announce) this.emit({ type: 'rowRejected', row });
    await this.file.write(row);
    const count = this.tally.counters.rejected;
    if (count >= this.limit.maxRejects && !this.stop.failed) {
      this.stop.fail(
        new LoaderError('MAX_REJECTS_REACHED', `stopped after ${count} rejected rows (--max-rejects ${this.limit.maxRejects}); see ${this.limit.rejectsPath}`, {
          file: row.origin.file,
          line: row.origin.line,
        }),
      );
    }
  }
}
