import { rmSync } from 'node:fs';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { LoaderError } from '../../core/errors.js';
import { compareOrderKeys, createWindowInterleaver, isGlobalOrder, orderAll, orderKey, type GlobalOrderMode, type OrderKey, type OrderMode } from '../../core/order.js';
import type { PlannedWrite } from '../../core/types.js';
import { decodeWrite, encodeWrite, heldBytes } from '../../core/writeCodec.js';
import { LineWriter, readLines } from './lineFiles.js';

export interface WriteOrdererOptions {
  mode: OrderMode;
  /** Rows held by the window mode. */
  windowRows: number;
  /** Memory the ordering may hold, in bytes; beyond it, a global order goes through temporary files. */
  memoryBytes: number;
  /** Folder in which the temporary folder is made. */
  tempDir: string;
  /** Size of the input, when known, to size the temporary files. */
  inputBytes?: number;
}

export interface OrdererStats {
  /** True once the ordering went to temporary files. */
  spilled: boolean;
  /** Bytes written to temporary files. */
  tempBytes: number;
  /** Temporary folder, while it exists. */
  tempPath: string | undefined;
  buckets: number;
  runs: number;
}

/**
 * Puts planned writes in the chosen order, within a memory budget: the I/O shell around core/order.ts.
 *
 * - input: writes pass straight through.
 * - window: core's streaming interleaver, capped by rows and by the memory budget.
 * - round-robin and spread: the whole input is needed first. While it fits the budget it stays in
 *   memory and is ordered there. Beyond the budget every write goes to one of B bucket files by a hash
 *   of its partition key (so one key's writes, and its statistics, are all in one bucket). At drain time
 *   each bucket is read twice: once to count its keys' writes, once to give every write its order key;
 *   the keyed writes are sorted in chunks of half the budget into run files, and the runs are merged.
 *   Memory is then the statistics of one bucket plus one chunk plus 64 KB per open file.
 */
export class WriteOrderer {
  readonly stats: OrdererStats = { spilled: false, tempBytes: 0, tempPath: undefined, buckets: 0, runs: 0 };
  readonly #options: WriteOrdererOptions;
  readonly #mode: OrderMode;
  readonly #window;
  #memory: PlannedWrite[] = [];
  #memoryBytes = 0;
  #position = 0;
  #buckets: LineWriter[] = [];
  #closed = false;
  /** Removes the temporary folder if the process exits before close() (a second Ctrl-C calls process.exit). */
  #onExit: (() => void) | undefined;

  constructor(options: WriteOrdererOptions) {
    this.#options = options;
    this.#mode = options.mode;
    this.#window = createWindowInterleaver<PlannedWrite>((w) => w.partitionId, { rows: options.windowRows, bytes: options.memoryBytes });
  }

  /** Writes read but not yet handed out. */
  get held(): number {
    return this.#mode === 'window' ? this.#window.held : isGlobalOrder(this.#mode) ? this.#position : 0;
  }

  /** Takes the next write in input order; returns the writes that may go now, in order. */
  async push(write: PlannedWrite): Promise<PlannedWrite[]> {
    switch (this.#mode) {
      case 'input':
        return [write];
      case 'window':
        return this.#window.push(write, heldBytes(write));
      default: {
        const position = this.#position++;
        if (!this.stats.spilled) {
          this.#memory.push(write);
          this.#memoryBytes += heldBytes(write);
          if (this.#memoryBytes > this.#options.memoryBytes) await this.#spill();
        } else {
          await this.#toBucket(write, position);
        }
        return [];
      }
    }
  }

  /** Hands out every write still held, in order. Call once, after the last push. */
  async *drain(): AsyncGenerator<PlannedWrite> {
    if (this.#mode === 'input') return;
    if (this.#mode === 'window') {
      yield* this.#window.flush();
      return;
    }
    const mode = this.#mode as GlobalOrderMode;
    if (!this.stats.spilled) {
      const ordered = orderAll(this.#memory, (w) => w.partitionId, mode);
      this.#memory = [];
      this.#memoryBytes = 0;
      yield* ordered;
      return;
    }
    yield* this.#mergeRuns(await this.#sortBuckets(mode));
  }

  /** Removes the temporary files; safe to call more than once, and after a failure. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled(this.#buckets.map((b) => b.close()));
    this.#buckets = [];
    if (this.#onExit) process.off('exit', this.#onExit);
    if (this.stats.tempPath) {
      await rm(this.stats.tempPath, { recursive: true, force: true });
      this.stats.tempPath = undefined;
    }
  }

  async #spill(): Promise<void> {
    const parent = this.#options.tempDir;
    try {
      this.stats.tempPath = await mkdtemp(join(parent, 'ddb-spread-'));
    } catch (error) {
      throw new LoaderError('TEMP_FILES', `cannot create a temporary folder in ${parent} for ordering an input larger than --memory: ${(error as Error).message}; choose another folder with --temp-dir`, { cause: error });
    }
    this.stats.spilled = true;
    const tempPath = this.stats.tempPath;
    this.#onExit = () => rmSync(tempPath, { recursive: true, force: true });
    process.once('exit', this.#onExit);
    // Buckets are sized so that one bucket's key statistics fit in half the budget, whatever the keys.
    const inputBytes = this.#options.inputBytes;
    const buckets = inputBytes === undefined ? 128 : Math.min(256, Math.max(8, Math.ceil((4 * inputBytes) / this.#options.memoryBytes)));
    this.stats.buckets = buckets;
    for (let b = 0; b < buckets; b++) this.#buckets.push(await this.#createFile(`bucket-${b}.txt`));
    const held = this.#memory;
    this.#memory = [];
    this.#memoryBytes = 0;
    for (let position = 0; position < held.length; position++) await this.#toBucket(held[position]!, position);
  }

  async #createFile(name: string): Promise<LineWriter> {
    const path = join(this.stats.tempPath!, name);
    try {
      return await LineWriter.create(path);
    } catch (error) {
      throw tempFailure(path, error);
    }
  }

  async #toBucket(write: PlannedWrite, position: number): Promise<void> {
    const bucket = this.#buckets[bucketOf(write.partitionId, this.#buckets.length)]!;
    try {
      await bucket.write(`${position}\t${JSON.stringify(write.partitionId)}\t${encodeWrite(write)}`);
    } catch (error) {
      throw tempFailure(bucket.path, error);
    }
  }

  /** Gives every write its order key, bucket by bucket, and sorts them into runs. */
  async #sortBuckets(mode: GlobalOrderMode): Promise<Run[]> {
    const runs: Run[] = [];
    const chunkLimit = this.#options.memoryBytes / 2;
    let chunk: Keyed[] = [];
    let chunkBytes = 0;
    const writeRun = async () => {
      chunk.sort((a, b) => compareOrderKeys(a.key, b.key));
      const file = await this.#createFile(`run-${runs.length}.txt`);
      try {
        for (const entry of chunk) await file.write(`${entry.key.primary}\t${entry.key.first}\t${entry.payload}`);
        await file.close();
      } catch (error) {
        await file.close().catch(() => undefined);
        throw tempFailure(file.path, error);
      }
      this.stats.tempBytes += file.bytes;
      runs.push({ kind: 'file', path: file.path });
      chunk = [];
      chunkBytes = 0;
    };

    // Each bucket stays in #buckets until it is closed and sorted, so that close() after a failure here
    // still closes the ones not reached yet (an open FileHandle would outlive the deleted folder).
    while (this.#buckets.length > 0) {
      const bucket = this.#buckets[0]!;
      await bucket.close();
      this.#buckets.shift();
      this.stats.tempBytes += bucket.bytes;
      if (bucket.lines === 0) {
        await unlink(bucket.path);
        continue;
      }
      const keys = new Map<string, { count: number; first: number; seen: number }>();
      for await (const line of readLines(bucket.path)) {
        const { position, partition } = bucketLine(line);
        const stat = keys.get(partition);
        if (stat) stat.count++;
        else keys.set(partition, { count: 1, first: position, seen: 0 });
      }
      for await (const line of readLines(bucket.path)) {
        const { partition, payload } = bucketLine(line);
        const stat = keys.get(partition)!;
        chunk.push({ key: orderKey(mode, stat.seen++, stat), payload });
        chunkBytes += 2 * payload.length + 120;
        if (chunkBytes > chunkLimit) await writeRun();
      }
      await unlink(bucket.path);
    }
    if (chunk.length > 0) {
      chunk.sort((a, b) => compareOrderKeys(a.key, b.key));
      runs.push({ kind: 'memory', entries: chunk });
    }
    this.stats.runs = runs.length;
    return runs;
  }

  /** k-way merge of sorted runs by order key. */
  async *#mergeRuns(runs: Run[]): AsyncGenerator<PlannedWrite> {
    const cursors: Cursor[] = [];
    try {
      for (const run of runs) {
        const cursor = openCursor(run);
        if (await cursor.advance()) cursors.push(cursor);
      }
      const heap = new CursorHeap(cursors);
      while (heap.size > 0) {
        const top = heap.peek();
        yield decodeWrite(top.current!.payload);
        if (await top.advance()) heap.siftDownTop();
        else heap.popTop();
      }
    } finally {
      await Promise.allSettled(cursors.map((c) => c.close()));
    }
  }
}

interface Keyed {
  key: OrderKey;
  payload: string;
}

type Run = { kind: 'file'; path: string } | { kind: 'memory'; entries: Keyed[] };

interface Cursor {
  current: Keyed | undefined;
  advance(): Promise<boolean>;
  close(): Promise<void>;
}

function openCursor(run: Run): Cursor {
  if (run.kind === 'memory') {
    let at = 0;
    const cursor: Cursor = {
      current: undefined,
      advance: async () => {
        cursor.current = run.entries[at++];
        if (cursor.current === undefined) run.entries.length = 0;
        return cursor.current !== undefined;
      },
      close: async () => undefined,
    };
    return cursor;
  }
  const lines = readLines(run.path);
  const cursor: Cursor = {
    current: undefined,
    advance: async () => {
      const next = await lines.next();
      if (next.done) {
        cursor.current = undefined;
        return false;
      }
      const line = next.value;
      const a = line.indexOf('\t');
      const b = line.indexOf('\t', a + 1);
      cursor.current = { key: { primary: Number(line.slice(0, a)), first: Number(line.slice(a + 1, b)) }, payload: line.slice(b + 1) };
      return true;
    },
    close: async () => {
      await lines.return(undefined);
    },
  };
  return cursor;
}

/** A binary min-heap of cursors by their current order key. */
class CursorHeap {
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
  return compareOrderKeys(a.current!.key, b.current!.key) < 0;
}

function bucketLine(line: string): { position: number; partition: string; payload: string } {
  const a = line.indexOf('\t');
  const b = line.indexOf('\t', a + 1);
  return { position: Number(line.slice(0, a)), partition: JSON.parse(line.slice(a + 1, b)) as string, payload: line.slice(b + 1) };
}

/** FNV-1a of the partition identity: spreads keys over buckets; any stable hash would do. */
function bucketOf(partition: string, buckets: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < partition.length; i++) h = Math.imul(h ^ partition.charCodeAt(i), 0x01000193);
  return (h >>> 0) % buckets;
}

function tempFailure(path: string, error: unknown): LoaderError {
  if (error instanceof LoaderError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const hint = code === 'ENOSPC' ? 'the disk is full; free space or choose a larger disk with --temp-dir' : 'choose another folder with --temp-dir';
  return new LoaderError('TEMP_FILES', `cannot write temporary file ${path}: ${(error as Error).message}; ${hint}`, { cause: error });
}
