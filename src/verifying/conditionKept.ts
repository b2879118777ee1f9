import { LoaderError } from '../shared/errors.js';
import type { KeySchema, PlannedWrite } from '../shared/types.js';
import { keyForDisplay } from '../typing/key.js';
import { keyText, lineOfRow, type LoadRowsFile } from './loadRejects.js';

/**
 * The load's --condition-failures file matched against the input verify plans: a write is kept (its condition
 * was false) only when the file names its row (file and line) with its key. Every line must be such a write:
 * a file of another input, or of another load of a file of the same name, would otherwise leave keys the load
 * wrote uncompared (a changed item read as fine), or compare keys the condition kept.
 */
export class ConditionKeptRows {
  /** "row \0 key" of the file's lines found as a planned write. */
  #found = new Set<string>();
  /** Rows of the file the input planned a write of (any key). */
  #planned = new Set<string>();

  constructor(
    private readonly file: LoadRowsFile,
    private readonly path: string,
  ) {}

  /** Whether planned `write` (row `id`) is one the file lists: its condition was false in the load. */
  kept(write: PlannedWrite, id: string, schema: KeySchema): boolean {
    const keys = this.file.keys?.get(id);
    if (!keys) return false;
    this.#planned.add(id);
    const key = keyText(keyForDisplay(write.item, schema));
    const listed = keys.includes(key) ? key : keys.includes(null) ? null : undefined;
    if (listed === undefined) return false;
    this.#found.add(`${id}\u0000${listed}`);
    return true;
  }

  /**
   * After the input is planned: refuses a line that is no planned write of the input. `expiring`: rows
   * that expired since the load are not planned (--skip-expired judged now), so a row not planned at all may be one.
   */
  async check(expiring: boolean): Promise<void> {
    for (const [id, keys] of this.file.keys ?? []) {
      for (const key of keys) {
        if (this.#found.has(`${id}\u0000${key}`)) continue;
        const planned = this.#planned.has(id);
        if (!planned && expiring) continue;
        const [file, line] = id.split('\u0000') as [string, string];
        const at = await lineOfRow(this.path, id, key);
        throw new LoaderError(
          'INPUT_HEADER',
          `${this.path} line ${at} names line ${line} of ${file}, which ${planned ? 'has another key in this input' : 'is not a row of the input written by the load'}: the file is not the --condition-failures file of this input's load; give the file that load wrote`,
          { file: this.path, line: at },
        );
      }
    }
  }
}
