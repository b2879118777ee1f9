import { rmSync } from 'node:fs';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { LoaderError } from '../shared/errors.js';
import { fnv1a32 } from '../shared/hash.js';
import {
  AUTO_WINDOW_ROWS,
  createWindowInterleaver,
  isGlobalOrder,
  orderPrimary,
  type GlobalOrderMode,
  type WindowInterleaver,
  type WriteOrder,
} from './order.js';
import { GROW_RUN, KeyRuns, LOOK_EVERY, MIN_RUN } from './keyRuns.js';
import type { PlannedWrite } from '../shared/types.js';
import { decodeWrite, encodeWrite, partitionEnd } from './writeCodec.js';
import { GroupingCheck, type GroupedRow, type RowPlace } from './stripes/grouping.js';
import { HeldWrites } from './heldWrites.js';
import { forEachLine, LineWriter, readLineBlocks, TempSpace, type LineBlock } from './lineFiles.js';
import { Chunk, CursorHeap, openCursor, type Cursor, type Run } from './runs.js';

export interface WriteOrdererOptions {
  mode: WriteOrder;
  /**
   * Window mode only: when the keys turn out to come in runs longer than the window (KeyRuns), the rest
   * of the input goes to round-robin order instead; `onGrouped` is told, with the write at which it did.
   */
  adaptive?: { onGrouped: (at: PlannedWrite) => void };
  /** Rows held by the window mode. */
  windowRows: number;
  /** Memory the ordering may hold, in bytes; beyond it, a global order goes through temporary files. */
  memoryBytes: number;
  /** Folder in which the temporary folder is made. */
  tempDir: string;
  /** Size of the input, when known, to size the temporary files. */
  inputBytes?: number;
  /** Stripes of a striped read (mode `stripes`), whose grouping is checked write by write. */
  parts?: number;
  /** A striped read resumed at a restart point: where each stripe's grouping check stood (GroupingCheck.restore). */
  grouping?: readonly ({ first: GroupedRow; last: GroupedRow } | undefined)[];
}

export interface OrdererStats {
  /** True once the ordering went to temporary files. */
  spilled: boolean;
  /** Bytes written to temporary files. */
  tempBytes: number;
  /** The most bytes the temporary files held at once (written less unlinked, by the order's own count). */
  tempPeakBytes: number;
  /** Temporary folder, while it exists. */
  tempPath: string | undefined;
  buckets: number;
  runs: number;
}

/**
 * Heap bytes the window counts for a write it holds: the objects (the write, its origin and item, a
 * property slot and a value header per attribute), the raw text, the item's values (its DynamoDB size, at
 * two bytes a character for text that is not one-byte) and the key strings, and the queue's slots. An
 * estimate, on the high side, rather than a count: the window holds the writes themselves, since
 * encoding each one to bytes and back cost more CPU than reading and planning it (measured: 2.4x the
 * client CPU of input order on 200k flights rows). Deterministic for a given write, so where a --memory
 * bound cuts the window depends only on the input.
 */
export function windowBytes(write: PlannedWrite): number {
  return 240 + write.origin.raw.length + 2 * write.size + 2 * (write.keyId.length + write.partitionId.length);
}
const TAB = 0x09;
const NEWLINE = 0x0a;
/** Blocks in which bucket files are read when they do not fit in memory whole, and run files are merged. */
const SORT_BLOCK_BYTES = 1024 * 1024;
const MERGE_BLOCK_BYTES = 64 * 1024;
/** The bucket files' buffers take 1/16 of the budget (or 4 KB each, if more). */
const BUCKET_BUFFER_SHARE = 16;

/**
 * Puts planned writes in the chosen order, within a memory budget: the I/O shell around core/order.ts.
 * Held writes are kept as their encoded bytes (writeCodec) in Buffers, not as objects: what they cost is
 * then counted rather than estimated, and V8's heap, which V8 lets grow to several times what is live
 * in it, stays small.
 *
 * - input: writes pass straight through.
 * - window: core's streaming interleaver over the encoded writes, capped by rows and by the budget.
 * - round-robin and spread: the whole input is needed first. While the writes fit the budget they stay
 *   in memory (HeldWrites) and are sorted there. Beyond it every write goes to one of B bucket files by
 *   a hash of its partition key (so one key's writes, and its statistics, are all in one bucket). At
 *   drain time each bucket is read (whole, when it fits half the budget; otherwise twice, in blocks) to
 *   count its keys' writes and give every write its order key; the keyed writes are sorted in chunks of
 *   half the budget into run files, and the runs are merged. Each write is thus written twice to disk
 *   and read two or three times, as one line of bytes that is decoded only once, at the merge. The
 *   files are deflated (lineFiles.ts) and each is removed once read: the disk holds one compressed copy
 *   of the writes at most (stats.tempPeakBytes; about half the input's size for export-like rows).
 *
 * (Round-robin could hand out each key's first write while reading, round 0 being those writes in input
 * order; it does not, so that a load stopped while reading has written nothing in either global order.)
 */
export class WriteOrderer {
  readonly stats: OrdererStats = { spilled: false, tempBytes: 0, tempPeakBytes: 0, tempPath: undefined, buckets: 0, runs: 0 };
  /** What the temporary files hold, by the bytes written to them and the ones unlinked. */
  readonly #space = new TempSpace();
  readonly #options: WriteOrdererOptions;
  #mode: WriteOrder;
  #window: WindowInterleaver<PlannedWrite> | undefined;
  /** Watches the keys' runs, for a window that may go over to round-robin. */
  #runs: KeyRuns | undefined;
  /** The keys the window holds now, for #runs: one function, not a closure made per row. */
  readonly #windowKeys = (): number => this.#window?.keys ?? 0;
  /** Writes pushed so far (global orders). */
  #position = 0;
  /** The global order while it fits the budget. */
  #memory: HeldWrites | undefined;
  #buckets: LineWriter[] = [];
  #closed = false;
  /** The input's name, held once rather than in every encoding (see encodeWrite). */
  #file: string | undefined;
  /** Removes the temporary folder if the process exits before close() (a second Ctrl-C calls process.exit). */
  #onExit: (() => void) | undefined;
  #grouping: GroupingCheck | undefined;

  constructor(options: WriteOrdererOptions) {
    this.#options = options;
    this.#mode = options.mode;
    if (this.#mode === 'stripes') {
      this.#grouping = new GroupingCheck(options.parts ?? 1);
      if (options.grouping) this.#grouping.restore(options.grouping);
    } else if (this.#mode === 'window') {
      this.#newWindow();
    } else if (isGlobalOrder(this.#mode)) {
      this.#memory = this.#heldWrites(this.#mode);
    }
  }

  /** The order in effect: the mode asked for, or round-robin once an adaptive window went over to it. */
  get mode(): WriteOrder {
    return this.#mode;
  }

  #heldWrites(mode: GlobalOrderMode): HeldWrites {
    // Large slabs (32 MiB at the default budget): allocations that large get pages of their own from
    // the system (glibc: above 32 MiB always), which go back to it at the spill. Small ones would stay
    // with the allocator and the sort that follows would need new memory on top of them.
    return new HeldWrites(mode, clamp(Math.floor(this.#options.memoryBytes / 4), 4096, 64 * 1024 * 1024));
  }

  /**
   * The window goes over to round-robin: what it holds moves to the global order, each key's writes in
   * their order (the rotation hands out every key's writes oldest first), ahead of every write still to
   * come; everything handed out so far came before them, key by key. So one key's writes keep their input
   * order across the change, and no row is read twice.
   */
  async #goGlobal(at: PlannedWrite): Promise<void> {
    const window = this.#window!;
    const held = window.flush();
    this.#window = undefined;
    this.#mode = 'round-robin';
    this.#memory = this.#heldWrites('round-robin');
    this.#options.adaptive!.onGrouped(at);
    for (const write of held) await this.push(write);
  }

  /**
   * A new window: the auto order's starts small and watches the keys' runs afresh. Looked at before the
   * window first overflows, so that input whose keys come in runs from its first row goes over with
   * nothing handed out yet.
   */
  #newWindow(): void {
    const options = this.#options;
    const rows = options.adaptive ? Math.min(AUTO_WINDOW_ROWS, options.windowRows) : options.windowRows;
    this.#window = createWindowInterleaver<PlannedWrite>((w) => w.partitionId, { rows, bytes: options.memoryBytes });
    if (options.adaptive) this.#runs = new KeyRuns(rows - LOOK_EVERY);
  }

  /**
   * A restart point (load/restartPoints.ts): every write held, in the order's order, and the order left as
   * a new one, so nothing before the point decides anything after it (a resume starts there with a new
   * order: the auto order's window small again, its watch of the keys' runs begun afresh). Undefined in
   * the orders that cannot restart: the global ones hold every write to the end (an auto order's window
   * that went over to round-robin included). Stripes hold nothing; their grouping check goes on across the
   * point (a resume restores it: groupingPlaces).
   */
  restart(): PlannedWrite[] | undefined {
    if (this.#mode === 'input' || this.#mode === 'stripes') return [];
    if (!this.#window) return undefined;
    const held = this.#window.flush();
    this.#newWindow();
    return held;
  }

  /** Where each stripe's grouping check stands (a striped read's restart point records it); empty in the other orders. */
  groupingPlaces(): { first: RowPlace | undefined; last: RowPlace | undefined }[] {
    return this.#grouping?.places() ?? [];
  }

  /** Writes read but not yet handed out. */
  get held(): number {
    return this.#window ? this.#window.held : isGlobalOrder(this.#mode) ? this.#position : 0;
  }

  /** Bytes the ordering holds in memory now: held writes, their index and keys, file buffers. */
  get heldBytes(): number {
    // The slabs (every encoding held, and the free space of slabs a held write keeps alive) plus what
    // the interleaver counts beyond the encodings.
    if (this.#window) return this.#window.bytes;
    if (this.#memory) return this.#memory.bytes;
    return this.#buckets.reduce((sum, b) => sum + b.bufferBytes, 0);
  }

  /**
   * In the orders that hold nothing (input, stripes), the write itself, at once and without a promise (an
   * await per row costs a turn of the event loop); undefined in the others, which take it through push().
   */
  passThrough(write: PlannedWrite): PlannedWrite | undefined {
    switch (this.#mode) {
      case 'input':
        return write;
      case 'stripes':
        // The striped read gives the order; a write that would break its proof throws before it goes.
        this.#grouping!.check(write, write.origin.part ?? 0);
        return write;
      default:
        return undefined;
    }
  }

  /**
   * The window's push without a promise, as passThrough: the writes that may go now; undefined where
   * push() must be awaited (the other orders, and the write at which an adaptive window looks at its keys).
   */
  pushNow(write: PlannedWrite): readonly PlannedWrite[] | undefined {
    const window = this.#window;
    if (!window || this.#runs?.due()) return undefined;
    // Not a row at which it looks: the verdict's threshold does not matter.
    this.#runs?.add(write.partitionId, this.#windowKeys);
    return window.push(write, windowBytes(write));
  }

  /**
   * Takes the next write in input order; returns the writes that may go now, in order. The window's answer
   * is its own array, filled again by its next push (as pushNow's): read it before pushing again.
   */
  async push(write: PlannedWrite): Promise<readonly PlannedWrite[]> {
    switch (this.#mode) {
      case 'input':
      case 'stripes':
        return [this.passThrough(write)!];
      case 'window': {
        const window = this.#window!;
        const full = window.rows >= this.#options.windowRows;
        if (this.#runs?.add(write.partitionId, this.#windowKeys, full ? MIN_RUN : GROW_RUN)) {
          if (full) {
            await this.#goGlobal(write);
            return this.push(write);
          }
          // Too few keys held, in runs: a bigger window may hold enough of them.
          window.rows = Math.min(window.rows * 4, this.#options.windowRows);
          this.#runs.restart(window.rows - window.held - LOOK_EVERY);
        }
        return window.push(write, windowBytes(write));
      }
      default: {
        const position = this.#position++;
        this.#file ??= write.origin.file;
        const memory = this.#memory;
        if (memory) {
          memory.push(write);
          if (memory.bytes > this.#memoryLimit) await this.#spill();
        } else {
          await this.#bucketWrite(write.partitionId, `${position}\t${encodeWrite(write, this.#file)}`, undefined, 0, 0);
        }
        return [];
      }
    }
  }

  /** Hands out every write still held, in order. Call once, after the last push. */
  async *drain(): AsyncGenerator<PlannedWrite> {
    if (this.#mode === 'input' || this.#mode === 'stripes') return;
    if (this.#window) {
      yield* this.#window.flush();
      return;
    }
    const mode = this.#mode as GlobalOrderMode;
    const memory = this.#memory;
    if (memory) {
      this.#memory = undefined;
      yield* memory.ordered();
      return;
    }
    yield* this.#mergeRuns(await this.#sortBuckets(mode));
  }

  /** Removes the temporary files; safe to call more than once, and after a failure. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#memory = undefined;
    await Promise.allSettled(this.#buckets.map((b) => b.close()));
    this.#buckets = [];
    if (this.#onExit) process.off('exit', this.#onExit);
    if (this.stats.tempPath) {
      await rm(this.stats.tempPath, { recursive: true, force: true });
      this.stats.tempPath = undefined;
    }
  }

  /** Half the budget: a sort chunk, and the size a bucket should stay within. */
  get #sortBytes(): number {
    return clamp(Math.floor(this.#options.memoryBytes / 2), 32 * 1024, 2 ** 30);
  }

  /** What the writes held in memory may cost: the budget less the bucket buffers the spill adds. */
  get #memoryLimit(): number {
    return this.#options.memoryBytes - this.#options.memoryBytes / BUCKET_BUFFER_SHARE;
  }

  async #spill(): Promise<void> {
    const parent = this.#options.tempDir;
    try {
      this.stats.tempPath = await mkdtemp(join(parent, 'ddb-spread-'));
    } catch (error) {
      throw new LoaderError(
        'TEMP_FILES',
        `cannot create a temporary folder in ${parent} for ordering an input larger than --memory: ${(error as Error).message}; choose another folder with --temp-dir`,
        { cause: error },
      );
    }
    this.stats.spilled = true;
    const tempPath = this.stats.tempPath;
    this.#onExit = () => rmSync(tempPath, { recursive: true, force: true });
    process.once('exit', this.#onExit);
    const memory = this.#memory!;
    this.#memory = undefined;

    // Buckets are sized so that each one fits a sort chunk (half the budget) and can be read whole; the
    // total is estimated from the input size and the bytes per input byte of the writes held so far.
    const inputBytes = this.#options.inputBytes;
    const perInputByte = memory.rawBytes > 0 ? memory.encodedBytes / memory.rawBytes : 3;
    const buckets = inputBytes === undefined ? 128 : Math.min(256, Math.max(8, Math.ceil((inputBytes * perInputByte) / (0.8 * this.#sortBytes))));
    this.stats.buckets = buckets;
    const bufferBytes = clamp(Math.floor(this.#options.memoryBytes / (BUCKET_BUFFER_SHARE * buckets)), 4096, 64 * 1024);
    for (let b = 0; b < buckets; b++) this.#buckets.push(await this.#createFile(`bucket-${b}.txt`, bufferBytes));

    // The held writes go to the buckets in input order (a write's row number is its input position).
    let position = 0;
    for (const row of memory.stored()) await this.#bucketWrite(row.partition, `${position++}\t`, row.buffer, row.start, row.end);
  }

  async #bucketWrite(partition: string, prefix: string, bytes: Buffer | undefined, start: number, end: number): Promise<void> {
    const bucket = this.#buckets[bucketOf(partition, this.#buckets.length)]!;
    try {
      const flushing = bucket.writeParts(prefix, bytes, start, end);
      if (flushing) await flushing;
    } catch (error) {
      throw tempFailure(bucket.path, error);
    }
  }

  async #createFile(name: string, bufferBytes: number): Promise<LineWriter> {
    const path = join(this.stats.tempPath!, name);
    try {
      return await LineWriter.create(path, bufferBytes, { compressed: true, space: this.#space });
    } catch (error) {
      throw tempFailure(path, error);
    }
  }

  /**
   * Gives every write its order key, bucket by bucket, and sorts them into runs. One buffer of half the
   * budget serves every bucket: a bucket that fits is read into it whole and sorted in place; a bigger
   * one is read twice in blocks, its writes copied into the buffer a chunk at a time.
   */
  async #sortBuckets(mode: GlobalOrderMode): Promise<Run[]> {
    const runs: Run[] = [];
    const sortBytes = this.#sortBytes;
    let sortBuffer: Buffer | undefined;
    const chunk = new Chunk();
    const writeRun = async () => {
      const path = join(this.stats.tempPath!, `run-${runs.length}.txt`);
      try {
        const file = await chunk.writeRun(path, this.#space);
        runs.push({ kind: 'file', path, bytes: file.bytes });
      } catch (error) {
        throw tempFailure(path, error);
      }
      this.#noteSpace();
    };

    // Each bucket stays in #buckets until it is closed and sorted, so that close() after a failure here
    // still closes the ones not reached yet (an open FileHandle would outlive the deleted folder).
    while (this.#buckets.length > 0) {
      const bucket = this.#buckets[0]!;
      try {
        await bucket.close();
      } catch (error) {
        throw tempFailure(bucket.path, error);
      }
      this.#buckets.shift();
      this.#noteSpace();
      if (bucket.lines === 0) {
        await this.#unlink(bucket);
        continue;
      }
      try {
        sortBuffer ??= Buffer.allocUnsafeSlow(sortBytes);
        const whole = bucket.plainBytes <= sortBytes;
        // A bucket read whole is removed at once: its runs need not share the disk with it.
        if (whole) {
          await readInto(bucket.path, sortBuffer, bucket.plainBytes);
          await this.#unlink(bucket);
        }
        const blocks = (): AsyncIterable<LineBlock> | Iterable<LineBlock> =>
          whole ? [{ buffer: sortBuffer!, start: 0, end: bucket.plainBytes }] : readLineBlocks(bucket.path, SORT_BLOCK_BYTES, true);

        // Pass 1: each key's writes and first position (a bucket's lines are in input order).
        const keys = new Map<string, { count: number; first: number; seen: number }>();
        for await (const block of blocks()) {
          const buffer = block.buffer;
          forEachLine(block, (start) => {
            const tab = buffer.indexOf(TAB, start);
            const key = buffer.toString('latin1', tab + 1, partitionEnd(buffer, tab + 1));
            const stat = keys.get(key);
            if (stat) stat.count++;
            else keys.set(key, { count: 1, first: Number(buffer.toString('latin1', start, tab)), seen: 0 });
          });
        }

        // Pass 2: order keys; the writes go into chunks, each sorted into a run.
        chunk.reset(sortBuffer);
        for await (const block of blocks()) {
          const buffer = block.buffer;
          let start = block.start;
          while (start < block.end) {
            let end = buffer.indexOf(NEWLINE, start);
            if (end === -1 || end > block.end) end = block.end;
            const tab = buffer.indexOf(TAB, start);
            const keyEnd = partitionEnd(buffer, tab + 1);
            const stat = keys.get(buffer.toString('latin1', tab + 1, keyEnd))!;
            const primary = orderPrimary(mode, stat.seen++, stat.count, stat.first);
            if (whole) {
              chunk.add(primary, stat.first, tab + 1, end);
            } else {
              if (!chunk.fits(end - tab - 1) && chunk.size > 0) {
                await writeRun();
                chunk.reset(sortBuffer);
              }
              chunk.copy(primary, stat.first, buffer, tab + 1, end);
            }
            start = end + 1;
          }
        }
        if (!whole) await this.#unlink(bucket);
        // The last chunk too goes to a file: kept in memory as a run, it held the sort buffer (half the
        // budget) through the whole merge, which then peaked ~15 MB above the reading phase.
        if (chunk.size > 0) await writeRun();
      } catch (error) {
        throw tempFailure(bucket.path, error);
      }
    }
    // Nothing keeps the sort buffer now: the merge holds one frame per run.
    chunk.reset(Buffer.alloc(0));
    this.stats.runs = runs.length;
    return runs;
  }

  async #unlink(file: LineWriter): Promise<void> {
    await unlink(file.path);
    this.#space.remove(file.bytes);
  }

  /** Copies the temporary space's count into the stats. */
  #noteSpace(): void {
    this.stats.tempBytes = this.#space.written;
    this.stats.tempPeakBytes = this.#space.peak;
  }

  /** k-way merge of sorted runs by order key; each run file is removed once read to its end. */
  async *#mergeRuns(runs: Run[]): AsyncGenerator<PlannedWrite> {
    const opened: Cursor[] = [];
    try {
      const active: Cursor[] = [];
      for (const run of runs) {
        const cursor = openCursor(run, MERGE_BLOCK_BYTES, this.#space);
        opened.push(cursor);
        if (await cursor.advance()) active.push(cursor);
      }
      const heap = new CursorHeap(active);
      while (heap.size > 0) {
        const top = heap.peek();
        const { buffer, start, end } = top.current;
        yield decodeWrite(buffer.toString('utf8', start, end), this.#file);
        if (await top.advance()) heap.siftDownTop();
        else heap.popTop();
      }
      this.#noteSpace();
    } finally {
      await Promise.allSettled(opened.map((c) => c.close()));
    }
  }
}

/** Reads the lines of a compressed line file, `bytes` bytes of them, into `buffer`. */
async function readInto(path: string, buffer: Buffer, bytes: number): Promise<void> {
  let done = 0;
  for await (const block of readLineBlocks(path, 0, true)) {
    if (done + block.end > bytes) throw new Error(`${path} holds more than ${bytes} bytes of lines`);
    block.buffer.copy(buffer, done, 0, block.end);
    done += block.end;
  }
  if (done !== bytes) throw new Error(`${path} ended after ${done} of ${bytes} bytes`);
}

function clamp(x: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, x));
}

/** FNV-1a of the partition identity: spreads keys over buckets; any stable hash would do. */
function bucketOf(partition: string, buckets: number): number {
  return fnv1a32(partition) % buckets;
}

function tempFailure(path: string, error: unknown): LoaderError {
  if (error instanceof LoaderError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const hint = code === 'ENOSPC' ? 'the disk is full; free space or choose a larger disk with --temp-dir' : 'choose another folder with --temp-dir';
  return new LoaderError('TEMP_FILES', `cannot write temporary file ${path}: ${(error as Error).message}; ${hint}`, { cause: error });
}
