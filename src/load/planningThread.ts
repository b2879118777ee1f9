import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FileIdentity } from '../reading/filePin.js';
import type { InputFormat, PartFormat } from '../reading/inputFormat.js';
import { formatOfPart } from '../reading/readInputSet.js';
import type { InputSet } from '../reading/inputSet.js';
import { LoaderError, type LoaderErrorCode } from '../shared/errors.js';
import { NO_ITEM, type PlannedWrite, type RejectedRow, type RowOrigin } from '../shared/types.js';
import type { RowPlannerOptions, SourceRecord } from '../typing/planRow.js';

/*
 * An estimate's rows read, typed and planned on a second thread (planningWorker.ts), while its own thread
 * orders, batches and simulates them. Why by hand, and only for the estimate: an estimate keeps of each
 * write its keys and units only (estimateTally.ts makes a slim copy without the item), so a planned row
 * crosses threads as its key string and numbers in columns (typed arrays moved, not copied; its partition
 * key a number in a table of them), where the item itself would cost as much to clone as to type again. A
 * plain CSV row is not even typed into an item there (typing/measureCsv.ts). A load needs its items on its own thread
 * and keeps reading there. Measured on the real 3M-row flights file (docs/BENCHMARKS.md, "Estimate").
 */

/** A planned row's flags in a chunk. */
export const DELETE = 1;
export const REJECTED = 2;

/** Rows per message: large enough that a message's cost is nothing per row, small enough to keep memory flat. */
export const CHUNK_ROWS = 4096;
/** Chunks the worker may be ahead of the rows taken: reading never waits on a message, memory stays bounded. */
export const CHUNKS_AHEAD = 3;

export interface PlanningWorkerData {
  /** The parts as listed, each a local file pinned to the identity it had then. */
  parts: {
    path: string;
    name: string;
    identity: FileIdentity;
    format: PartFormat | undefined;
    expected: { items: number; md5?: string | undefined } | undefined;
  }[];
  name: string;
  totalBytes: number | undefined;
  format: InputFormat | undefined;
  delimiter: string | undefined;
  columns: string[] | undefined;
  interleaveExports: boolean;
  planner: RowPlannerOptions;
  chunkRows: number;
  chunksAhead: number;
  /** Partition keys numbered before the table of them starts over (tests set it low). @default 65,536 */
  maxNamed?: number;
}

/**
 * Planned rows in columns: a row's key strings are in keyIdText and `partitions` in the order of the rows not
 * rejected. A partition key is a number in a table both threads build from `named`: the keys first seen in
 * each chunk, in order, numbered on from those before; `restart` empties the table before this chunk's.
 */
export interface PlannedChunk {
  type: 'rows';
  count: number;
  lines: Float64Array;
  sizes: Float64Array;
  wcus: Float64Array;
  flags: Uint8Array;
  /** The written rows' keyIds end to end, each keyIdLengths[i] UTF-16 units long. */
  keyIdText: string;
  keyIdLengths: Uint32Array;
  partitions: Uint32Array;
  named: string[];
  restart?: true;
  /** Sharded writes' keys before their suffix, at the index of their keyIds (their order in keyIdText). */
  unsharded?: (string | undefined)[];
  /** The rejected rows, in order. */
  rejects: RejectedRow[];
  /** Where in the chunk each part's rows begin (the first row's part at 0). */
  files: { at: number; name: string }[];
  bytesRead: number;
  suspected?: number;
}

export type FromPlanning =
  | PlannedChunk
  | { type: 'header'; file: string; names: string[]; delimiter: string }
  | { type: 'end'; bytesRead: number; busyMs: number }
  | { type: 'error'; code?: LoaderErrorCode; message: string; file?: string; line?: number; field?: string };

/** What the planning thread reads: every part a local file (pinned), none Parquet (read on a thread of its own already). */
export function planningParts(set: InputSet, format: InputFormat | undefined): PlanningWorkerData['parts'] | undefined {
  const parts: PlanningWorkerData['parts'] = [];
  for (const listed of set.parts) {
    const { part, expected } = listed;
    const partFormat = formatOfPart(listed, format);
    // A range of a part (rangeCuts.ts) is read on this thread: the planning thread reads parts whole.
    if (part.path === undefined || part.pin === undefined || partFormat === 'parquet' || listed.range !== undefined) return undefined;
    parts.push({ path: part.path, name: part.name, identity: part.pin.identity, format: listed.format, expected });
  }
  return parts;
}

export interface PlanningThread {
  /** The rows, planned, in chunks: each a record of kind 'planned' that the load's planner hands on as it is. */
  records: AsyncGenerator<SourceRecord[]>;
  bytesRead(): number;
  /** A DynamoDB JSON line read as plain JSON (RowPlanner.suspectedDynamoJsonLine), as the worker's planner saw it. */
  suspected(): number | undefined;
  close(): void;
}

/** Starts the thread; `checkHeader` is called with each CSV header row before any row of its part is handed on. */
export function planInThread(
  data: Omit<PlanningWorkerData, 'chunkRows' | 'chunksAhead'>,
  checkHeader: (file: string, names: string[], delimiter: string) => void,
  /** Told, once the last row is planned, how long the thread was busy reading and planning, in seconds. */
  onEnd?: (busySeconds: number) => void,
): PlanningThread {
  const worker = startWorker({ ...data, chunkRows: CHUNK_ROWS, chunksAhead: CHUNKS_AHEAD });
  const inbox: FromPlanning[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let stopped = false;
  let failure: Error | undefined;
  let bytesRead = 0;
  let suspected: number | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  worker.on('message', (message: FromPlanning) => {
    ended ||= message.type === 'end' || message.type === 'error';
    inbox.push(message);
    notify();
  });
  worker.on('error', (error) => {
    failure ??= error;
    notify();
  });
  worker.on('exit', () => {
    if (!stopped && !ended) failure ??= new Error('the thread that reads and plans the rows stopped before the end of the input; this is a bug');
    notify();
  });
  /** The partition keys the chunks name by number (PlannedChunk). */
  const partitions: string[] = [];
  async function* records(): AsyncGenerator<SourceRecord[]> {
    try {
      for (;;) {
        const message = inbox.shift();
        if (!message) {
          if (failure) throw failure;
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        switch (message.type) {
          case 'header':
            checkHeader(message.file, message.names, message.delimiter);
            continue;
          case 'error':
            throw message.code === undefined
              ? new Error(message.message)
              : new LoaderError(message.code, message.message, {
                  ...(message.file === undefined ? {} : { file: message.file }),
                  ...(message.line === undefined ? {} : { line: message.line }),
                  ...(message.field === undefined ? {} : { field: message.field }),
                });
          case 'end':
            bytesRead = message.bytesRead;
            onEnd?.(message.busyMs / 1000);
            return;
          case 'rows':
            bytesRead = message.bytesRead;
            if (message.suspected !== undefined) suspected ??= message.suspected;
            // The next chunk is planned while these rows are ordered and simulated.
            worker.postMessage('next');
            if (message.restart) partitions.length = 0;
            for (const name of message.named) partitions.push(name);
            yield rowsOf(message, partitions);
        }
      }
    } finally {
      stopped = true;
      await worker.terminate();
    }
  }
  return {
    records: records(),
    bytesRead: () => bytesRead,
    suspected: () => suspected,
    close: () => {
      stopped = true;
      void worker.terminate();
      notify();
    },
  };
}

/** A chunk's rows as records the planner hands on. */
function rowsOf(chunk: PlannedChunk, partitions: readonly string[]): SourceRecord[] {
  const out: SourceRecord[] = new Array<SourceRecord>(chunk.count);
  let file = 0;
  let name = chunk.files[0]?.name ?? '';
  let written = 0;
  let keyAt = 0;
  let rejected = 0;
  for (let at = 0; at < chunk.count; at++) {
    if (chunk.files[file + 1]?.at === at) name = chunk.files[++file]!.name;
    const flags = chunk.flags[at]!;
    if (flags & REJECTED) {
      const row = chunk.rejects[rejected++]!;
      out[at] = { kind: 'planned', origin: row.origin, planned: row };
      continue;
    }
    const origin: RowOrigin = { file: name, line: chunk.lines[at]!, raw: '' };
    const planned: PlannedWrite = {
      origin,
      // No item: an estimate keeps none (it plans on a thread only for tables without GSIs).
      item: NO_ITEM,
      keyId: chunk.keyIdText.slice(keyAt, (keyAt += chunk.keyIdLengths[written]!)),
      partitionId: partitions[chunk.partitions[written]!]!,
      size: chunk.sizes[at]!,
      wcu: chunk.wcus[at]!,
    };
    if (flags & DELETE) planned.op = 'delete';
    const unsharded = chunk.unsharded?.[written];
    if (unsharded !== undefined) planned.unshardedKey = unsharded;
    written++;
    out[at] = { kind: 'planned', origin, planned };
  }
  return out;
}

/**
 * The worker, from the built planningWorker.js; when this module runs from its TypeScript source (the
 * tests), from planningWorker.ts through tsx's loader (as parquetThread.ts does).
 */
function startWorker(data: PlanningWorkerData): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./planningWorker.js', here), { workerData: data });
  const tsx = pathToFileURL(
    createRequire(here)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const entry = new URL('./planningWorker.ts', here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}
