import { LoaderError } from '../../shared/errors.js';
import type { PlannedWrite } from '../../shared/types.js';
import { parseDynamoNumber } from '../../typing/number.js';

/**
 * The check that makes a striped read safe (src/ordering/stripes/stripedRecords.ts). Stripes are parts of one file
 * read side by side, so a row of a later part can be written before a row of an earlier part. That keeps
 * the table right only if no partition key is in two parts: then the writes of one primary key (which
 * share a partition key) all come from one part, in file order. The parts are cut between keys, and this
 * check proves, write by write, that the file is grouped as the cut assumed: in every part the keys come
 * in ascending order (numbers by value, strings and binary by code unit), and every key of a part sorts
 * below the first key of the next part that has begun. A file sorted by its partition key passes; the
 * first write that would break the proof throws ORDER_NOT_GROUPED before it is written, so everything
 * written until then was written in a safe order.
 *
 * The key is the partition key before any shard suffix: the suffixed keys of one row's key all come from
 * the part that holds that key.
 */
/** A row's place: its file and line (the origin of a write). */
export interface RowPlace {
  file: string;
  line: number;
  /** Where its line starts in the file, in bytes, when the reader said (RowOrigin.offset). */
  offset?: number;
}

/** A row's partition key as GroupingCheck compares it (groupOf), and where the row is. */
export interface GroupedRow {
  key: string;
  at: RowPlace;
}

export class GroupingCheck {
  /** Per part: its first key and the key of its latest write (undefined until the part's first write). */
  readonly #first: (string | undefined)[];
  readonly #last: (string | undefined)[];
  /** Where those writes' rows are (a restart point records it; a resume reads their keys there again). */
  readonly #firstAt: (RowPlace | undefined)[];
  readonly #lastAt: (RowPlace | undefined)[];

  constructor(parts: number) {
    this.#first = new Array<string | undefined>(parts).fill(undefined);
    this.#last = new Array<string | undefined>(parts).fill(undefined);
    this.#firstAt = new Array<RowPlace | undefined>(parts).fill(undefined);
    this.#lastAt = new Array<RowPlace | undefined>(parts).fill(undefined);
  }

  /** Per part: where its first and its latest write checked are (undefined before its first). */
  places(): { first: RowPlace | undefined; last: RowPlace | undefined }[] {
    return this.#first.map((_, k) => ({ first: this.#firstAt[k], last: this.#lastAt[k] }));
  }

  /** Goes on from a restart point: each part's first and latest keys checked before it, and where they are. */
  restore(parts: readonly ({ first: GroupedRow; last: GroupedRow } | undefined)[]): void {
    parts.forEach((part, k) => {
      if (!part) return;
      this.#first[k] = part.first.key;
      this.#firstAt[k] = part.first.at;
      this.#last[k] = part.last.key;
      this.#lastAt[k] = part.last.at;
    });
  }

  /** Checks a write of `part`; throws ORDER_NOT_GROUPED when the file is not grouped as the cut assumed. */
  check(write: PlannedWrite, part: number): void {
    const key = groupOf(write);
    const last = this.#last[part];
    // The place of a key's first row stands for its run: a resume reads the key there.
    if (last === key) return;
    if (last === undefined) {
      this.#first[part] = key;
      this.#firstAt[part] = write.origin;
      const before = this.#neighbour(part, -1);
      if (before !== undefined && compareGroups(this.#last[before]!, key) >= 0) this.#fail(write, part, before);
    } else if (compareGroups(last, key) >= 0) {
      this.#fail(write, part, part);
    }
    const after = this.#neighbour(part, 1);
    if (after !== undefined && compareGroups(key, this.#first[after]!) >= 0) this.#fail(write, part, after);
    this.#last[part] = key;
    this.#lastAt[part] = write.origin;
  }

  /** The nearest part before (-1) or after (1) `part` that has begun. */
  #neighbour(part: number, step: 1 | -1): number | undefined {
    for (let p = part + step; p >= 0 && p < this.#first.length; p += step) if (this.#first[p] !== undefined) return p;
    return undefined;
  }

  #fail(write: PlannedWrite, part: number, other: number): never {
    const where = `line ${write.origin.line} of ${write.origin.file}`;
    throw new LoaderError(
      'ORDER_NOT_GROUPED',
      `the input is not grouped by partition key: the key at ${where} ${other === part ? 'sorts before the one above it' : 'sorts among the keys of another part of the file'}, so the striped read (what the default order chose for a file that looked sorted) could write one key's rows out of order. Nothing was written out of order; load the file again with --order round-robin (start over: rows already written are written again with the same values)`,
      { file: write.origin.file, line: write.origin.line },
    );
  }
}

/** The partition key a write is grouped by: its key before any shard suffix, with its type letter. */
export function groupOf(write: PlannedWrite): string {
  return write.unshardedKey !== undefined ? `S${write.unshardedKey}` : write.partitionId;
}

/** Orders two group keys: numbers (N…) by value, anything else by code unit. */
export function compareGroups(a: string, b: string): number {
  if (a.charCodeAt(0) === 78 && b.charCodeAt(0) === 78) return compareNumbers(a.slice(1), b.slice(1));
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNumbers(a: string, b: string): number {
  if (a === b) return 0;
  const x = parseDynamoNumber(a);
  const y = parseDynamoNumber(b);
  if (typeof x === 'string' || typeof y === 'string') return a < b ? -1 : 1;
  const sx = x.digits === '' ? 0 : x.negative ? -1 : 1;
  const sy = y.digits === '' ? 0 : y.negative ? -1 : 1;
  if (sx !== sy) return sx - sy;
  if (sx === 0) return 0;
  // Same sign: compare magnitudes (0.digits × 10^exponent), then flip for negatives.
  let m = x.exponent - y.exponent;
  if (m === 0) {
    const len = Math.max(x.digits.length, y.digits.length);
    const dx = x.digits.padEnd(len, '0');
    const dy = y.digits.padEnd(len, '0');
    m = dx < dy ? -1 : dx > dy ? 1 : 0;
  }
  return sx * Math.sign(m);
}
