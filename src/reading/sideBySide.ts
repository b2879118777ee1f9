import type { SourceRecord } from '../typing/planRow.js';

/**
 * Where a read of files side by side stands, before one of their records: enough to go on from there in
 * the same rotation (SideBySide), each file skipped to its line unparsed.
 */
export interface SideBySidePosition {
  /** The files being read, in rotation order: each one's part, the records read from it, and the line of the last (0: none). */
  files: { part: number; row: number; line: number }[];
  /** Index in `files` of the file whose record comes next. */
  next: number;
  /** How many of the group's files were opened (done or being read); the rest wait their turn, in order. */
  opened: number;
}

/** Data files of one export read side by side at most (each a gunzip stream and its buffers). */
export const EXPORT_FILES_AT_ONCE = 64;

/** Opens a file of a group read side by side, from its start or past the line of its last record read. */
export type OpenSide = (part: number, at: { row: number; line: number } | undefined) => AsyncGenerator<SourceRecord>;

/** A file read side by side: its part, records read and the line of the last, and its records. */
interface SideSource {
  part: number;
  row: number;
  line: number;
  /** The line of the record before the last (what `line` was before it): a position before the last record. */
  lineBefore: number;
  records: AsyncGenerator<SourceRecord>;
}

/**
 * The records of several files side by side: one from each in turn, in a fixed rotation (so the order
 * depends only on the files, and a resume replays it), at most EXPORT_FILES_AT_ONCE open; one that ends
 * gives its place to the next. It can say where it stands before the record last given (before), and go
 * on from such a place: each file open then skipped to its line, the rotation at the same file.
 */
export class SideBySide {
  readonly #group: readonly number[];
  readonly #open: OpenSide;
  readonly #from: SideBySidePosition | undefined;
  #active: SideSource[] = [];
  #opened = 0;
  /** Index in #active of the file that gave the record last given. */
  #current = 0;

  constructor(group: readonly number[], open: OpenSide, from: SideBySidePosition | undefined) {
    this.#group = group;
    this.#open = open;
    this.#from = from;
  }

  #source(part: number, at?: { row: number; line: number }): SideSource {
    return { part, row: at?.row ?? 0, line: at?.line ?? 0, lineBefore: at?.line ?? 0, records: this.#open(part, at) };
  }

  async *records(): AsyncGenerator<SourceRecord> {
    const group = this.#group;
    const active = this.#active;
    if (this.#from) {
      for (const file of this.#from.files) active.push(this.#source(file.part, file));
      this.#opened = this.#from.opened;
    }
    while (active.length < EXPORT_FILES_AT_ONCE && this.#opened < group.length) active.push(this.#source(group[this.#opened++]!));
    try {
      let k = this.#from?.next ?? 0;
      while (active.length > 0) {
        if (k >= active.length) k = 0;
        const source = active[k]!;
        const next = await source.records.next();
        if (next.done) {
          if (this.#opened < group.length) active[k] = this.#source(group[this.#opened++]!);
          else active.splice(k, 1);
          continue;
        }
        source.row++;
        source.lineBefore = source.line;
        source.line = next.value.origin.line;
        this.#current = k;
        yield next.value;
        k++;
      }
    } finally {
      for (const source of active) await source.records.return(undefined);
    }
  }

  /** Where the read stands before the record last given: that record's file one record back, the rotation at it. */
  before(): SideBySidePosition {
    const files = this.#active.map((s, k) =>
      k === this.#current ? { part: s.part, row: s.row - 1, line: s.lineBefore } : { part: s.part, row: s.row, line: s.line },
    );
    return { files, next: this.#current, opened: this.#opened };
  }
}
