import { unlink } from 'node:fs/promises';
import { LineWriter, readLineBlocks, type LineBlock, type TempSpace } from './lineFiles.js';
import { grown } from './slabs.js';

const TAB = 0x09;
/** Lines of a run file are deflated in frames of this many bytes. */
const RUN_FRAME_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Sorted runs of a spilled global order. A run line is `primary \t first \t encoded write`: the write's
 * order key (order.ts) in text (JS number text round-trips exactly), then its encoding as written
 * by writeCodec. Runs are built from chunks of bytes held in Buffers, so sorting copies no write into a
 * JS string; only the merge decodes, one write at a time. Run files are compressed (LineWriterOptions)
 * and removed as soon as the merge has read them to the end.
 */

/** Writes held for one sort: byte ranges of a buffer with their order keys. */
export class Chunk {
  buffer: Buffer = Buffer.alloc(0);
  /** Bytes of `buffer` in use, when writes are copied in with `copy`. */
  used = 0;
  size = 0;
  #start = new Uint32Array(1024);
  #end = new Uint32Array(1024);
  #primary = new Float64Array(1024);
  #first = new Float64Array(1024);

  /**
   * Empties the chunk (its arrays are kept for the next one) and sets its buffer: writes are then
   * either copied into it with `copy`, or already in it and added with `add`.
   */
  reset(buffer: Buffer): void {
    this.buffer = buffer;
    this.size = 0;
    this.used = 0;
  }

  /** True if `length` more bytes fit the chunk's own buffer. */
  fits(length: number): boolean {
    return this.used + length <= this.buffer.length;
  }

  /** Adds the write at [start, end) of the chunk's buffer. */
  add(primary: number, first: number, start: number, end: number): void {
    if (this.size === this.#start.length) {
      this.#start = grown(this.#start);
      this.#end = grown(this.#end);
      this.#primary = grown(this.#primary);
      this.#first = grown(this.#first);
    }
    const i = this.size++;
    this.#start[i] = start;
    this.#end[i] = end;
    this.#primary[i] = primary;
    this.#first[i] = first;
  }

  /** Copies bytes [start, end) of `from` into the chunk's own buffer and adds them. */
  copy(primary: number, first: number, from: Buffer, start: number, end: number): void {
    if (this.size === 0 && end - start > this.buffer.length) this.buffer = Buffer.allocUnsafeSlow(end - start);
    from.copy(this.buffer, this.used, start, end);
    this.add(primary, first, this.used, this.used + (end - start));
    this.used += end - start;
  }

  /** Entry numbers in order-key order. */
  sorted(): Uint32Array {
    const order = new Uint32Array(this.size);
    for (let i = 0; i < this.size; i++) order[i] = i;
    const primary = this.#primary;
    const first = this.#first;
    return order.sort((a, b) => primary[a]! - primary[b]! || first[a]! - first[b]!);
  }

  entry(i: number, into: Current): void {
    into.primary = this.#primary[i]!;
    into.first = this.#first[i]!;
    into.buffer = this.buffer;
    into.start = this.#start[i]!;
    into.end = this.#end[i]!;
  }

  /**
   * Writes the chunk, sorted, to a new compressed run file; returns the file, closed. Its frames are of
   * RUN_FRAME_BYTES: the merge holds one of each run at once, so they bound its memory (300 runs, 30M
   * rows at the default budget, hold ~30 MB of frames).
   */
  async writeRun(path: string, space?: TempSpace): Promise<LineWriter> {
    const file = await LineWriter.create(path, RUN_FRAME_BYTES, { compressed: true, ...(space ? { space } : {}) });
    try {
      for (const i of this.sorted()) {
        const flushing = file.writeParts(`${this.#primary[i]!}\t${this.#first[i]!}\t`, this.buffer, this.#start[i]!, this.#end[i]!);
        if (flushing) await flushing;
      }
      await file.close();
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
    return file;
  }
}

/** A run's current write: order key and the bytes of its encoding (valid until the cursor advances). */
export interface Current {
  primary: number;
  first: number;
  buffer: Buffer;
  start: number;
  end: number;
}

/** A run in a (compressed) file of `bytes` bytes, or a sorted chunk in memory (WriteOrderer writes every run to a file). */
export type Run = { kind: 'file'; path: string; bytes: number } | { kind: 'memory'; chunk: Chunk };

export interface Cursor {
  readonly current: Current;
  advance(): Promise<boolean>;
  close(): Promise<void>;
}

/** A cursor over a run; a run file is unlinked (and `space` told) once read to its end. */
export function openCursor(run: Run, blockBytes: number, space?: TempSpace): Cursor {
  const current: Current = { primary: 0, first: 0, buffer: Buffer.alloc(0), start: 0, end: 0 };
  if (run.kind === 'memory') {
    const order = run.chunk.sorted();
    let at = 0;
    return {
      current,
      advance: async () => {
        if (at === order.length) return false;
        run.chunk.entry(order[at++]!, current);
        return true;
      },
      close: async () => undefined,
    };
  }
  const blocks = readLineBlocks(run.path, blockBytes, true);
  let block: LineBlock | undefined;
  let at = 0;
  let ended = false;
  return {
    current,
    advance: async () => {
      if (ended) return false;
      if (block === undefined || at >= block.end) {
        const next = await blocks.next();
        if (next.done) {
          ended = true;
          await unlink(run.path);
          space?.remove(run.bytes);
          return false;
        }
        block = next.value;
        at = block.start;
      }
      const buffer = block.buffer;
      let end = buffer.indexOf(NEWLINE, at);
      if (end === -1 || end > block.end) end = block.end;
      const tab1 = buffer.indexOf(TAB, at);
      const tab2 = buffer.indexOf(TAB, tab1 + 1);
      current.primary = Number(buffer.toString('latin1', at, tab1));
      current.first = Number(buffer.toString('latin1', tab1 + 1, tab2));
      current.buffer = buffer;
      current.start = tab2 + 1;
      current.end = end;
      at = end + 1;
      return true;
    },
    close: async () => {
      await blocks.return(undefined);
    },
  };
}

/** A binary min-heap of cursors by their current order key. */
export class CursorHeap {
  readonly #items: Cursor[];

  constructor(items: Cursor[]) {
    this.#items = [...items];
    for (let i = (this.#items.length >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): Cursor {
    return this.#items[0]!;
  }

  siftDownTop(): void {
    this.#siftDown(0);
  }

  popTop(): void {
    const last = this.#items.pop()!;
    if (this.#items.length > 0) {
      this.#items[0] = last;
      this.#siftDown(0);
    }
  }

  #siftDown(i: number): void {
    const items = this.#items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < items.length && less(items[l]!, items[min]!)) min = l;
      if (r < items.length && less(items[r]!, items[min]!)) min = r;
      if (min === i) return;
      [items[i], items[min]] = [items[min]!, items[i]!];
      i = min;
    }
  }
}

function less(a: Cursor, b: Cursor): boolean {
  const x = a.current;
  const y = b.current;
  return x.primary < y.primary || (x.primary === y.primary && x.first < y.first);
}
