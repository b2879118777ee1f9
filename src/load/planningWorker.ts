import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { pinnedLocalPart } from '../reading/inputPart.js';
import { readInputSet } from '../reading/readInputSet.js';
import { LoaderError } from '../shared/errors.js';
import { mergeOwn } from '../shared/ownRecord.js';
import type { RejectedRow } from '../shared/types.js';
import { csvMeasure } from '../typing/measureCsv.js';
import { createRowPlanner, isRejected, type SourceRecord } from '../typing/planRow.js';
import { DELETE, REJECTED, type FromPlanning, type PlanningWorkerData, type PlannedChunk } from './planningThread.js';

/**
 * The thread that reads, types and plans an estimate's rows (started by planningThread.ts): the load's own
 * reading (readInputSet) and planner (planRow.ts) over the same parts, pinned as they were listed, a chunk
 * of planned rows at a time, at most `credits` chunks ahead of the rows the estimate has taken.
 */
const port = parentPort!;
const data = workerData as PlanningWorkerData;
/** Partition keys numbered before the table starts over (see partitionNumber). */
const MAX_NAMED = data.maxNamed ?? 65_536;
let credits = data.chunksAhead;
let wake: (() => void) | undefined;
port.on('message', (message: 'next') => {
  if (message !== 'next') return;
  credits++;
  const resolve = wake;
  wake = undefined;
  resolve?.();
});
const send = (message: FromPlanning, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

class Chunk {
  count = 0;
  readonly lines = new Float64Array(data.chunkRows);
  readonly sizes = new Float64Array(data.chunkRows);
  readonly wcus = new Float64Array(data.chunkRows);
  readonly flags = new Uint8Array(data.chunkRows);
  readonly keyIds: string[] = [];
  /** Each written row's keyId length: the keys cross as one string (one copy, not a cloned string per row). */
  readonly keyIdLengths = new Uint32Array(data.chunkRows);
  /** Each written row's partition key, as its number in the partitions named so far (see `named`). */
  readonly partitions = new Uint32Array(data.chunkRows);
  /** Partition keys first named in this chunk, numbered on from those before (from 0 after a `restart`). */
  readonly named: string[] = [];
  restart = false;
  unsharded: (string | undefined)[] | undefined;
  readonly rejects: RejectedRow[] = [];
  readonly files: { at: number; name: string }[] = [];

  message(bytesRead: number, suspected: number | undefined): PlannedChunk {
    return {
      type: 'rows',
      count: this.count,
      lines: this.lines,
      sizes: this.sizes,
      wcus: this.wcus,
      flags: this.flags,
      keyIdText: this.keyIds.join(''),
      keyIdLengths: this.keyIdLengths,
      partitions: this.partitions,
      named: this.named,
      ...(this.restart ? { restart: true } : {}),
      ...(this.unsharded ? { unsharded: this.unsharded } : {}),
      rejects: this.rejects,
      files: this.files,
      bytesRead,
      ...(suspected === undefined ? {} : { suspected }),
    };
  }
}

async function plan(): Promise<void> {
  const parts = data.parts.map((p) => ({
    part: pinnedLocalPart(p.path, p.name, p.identity),
    ...(p.format === undefined ? {} : { format: p.format }),
    ...(p.expected === undefined ? {} : { expected: p.expected }),
  }));
  const input = readInputSet(
    { parts, name: data.name, exports: [], totalBytes: data.totalBytes, notes: [], skipped: [] },
    {
      format: data.format,
      // Each header row goes to the load's thread, which checks it against the table before any row of its
      // part, and after every row before it (the rows planned so far go first, as one thread would take them).
      csv: {
        delimiter: data.delimiter,
        columns: data.columns,
        checkHeader: (file, names, delimiter) => {
          handOn();
          send({ type: 'header', file, names, delimiter });
        },
      },
      ...(data.interleaveExports ? { interleaveExports: true } : {}),
    },
  );
  // Structured clone gives the types back as a plain object: without a prototype again, as the load's own are.
  const plannerOptions = { ...data.planner, types: mergeOwn(data.planner.types) };
  const planner = createRowPlanner(plannerOptions);
  // A plain CSV row's figures without its item (the estimate keeps none); any other row is planned in full.
  const measure = csvMeasure(plannerOptions);
  let chunk = new Chunk();
  let file: string | undefined;
  // Partition keys cross as numbers, each key's text once (a table of 200 airports, not 3M strings cloned
  // and allocated on both threads). The table starts over at a chunk past MAX_NAMED keys: it stays bounded
  // (a chunk names at most chunkRows more), and the other thread starts its own over with that chunk.
  const numbers = new Map<string, number>();
  /** The rows planned so far go to the load's thread (a chunk's credit taken, perhaps below 0: flush waits it back). */
  function handOn(): void {
    if (chunk.count === 0) return;
    const full = chunk;
    chunk = new Chunk();
    file = undefined;
    if (numbers.size >= MAX_NAMED) {
      numbers.clear();
      chunk.restart = true;
    }
    send(full.message(input.bytesRead(), planner.suspectedDynamoJsonLine), [
      full.lines.buffer,
      full.sizes.buffer,
      full.wcus.buffer,
      full.flags.buffer,
      full.partitions.buffer,
      full.keyIdLengths.buffer,
    ]);
    credits--;
  }
  const flush = async () => {
    handOn();
    while (credits <= 0) await new Promise<void>((resolve) => (wake = resolve));
  };
  const partitionNumber = (partitionId: string): number => {
    let number = numbers.get(partitionId);
    if (number === undefined) {
      number = numbers.size;
      numbers.set(partitionId, number);
      chunk.named.push(partitionId);
    }
    return number;
  };
  /** Puts a record in the chunk; true once the chunk is full. */
  const take = (record: SourceRecord): boolean => {
    const at = chunk.count++;
    if (record.origin.file !== file) {
      file = record.origin.file;
      chunk.files.push({ at, name: file });
    }
    chunk.lines[at] = record.origin.line;
    const measured = measure?.(record);
    if (measured) {
      chunk.keyIdLengths[chunk.keyIds.length] = measured.keyId.length;
      chunk.keyIds.push(measured.keyId);
      chunk.partitions[chunk.keyIds.length - 1] = partitionNumber(measured.partitionId);
      chunk.sizes[at] = measured.size;
      chunk.wcus[at] = measured.wcu;
      return chunk.count === data.chunkRows;
    }
    const planned = planner.plan(record);
    if (isRejected(planned)) {
      chunk.flags[at] = REJECTED;
      chunk.rejects.push(planned);
    } else {
      chunk.keyIdLengths[chunk.keyIds.length] = planned.keyId.length;
      chunk.keyIds.push(planned.keyId);
      chunk.partitions[chunk.keyIds.length - 1] = partitionNumber(planned.partitionId);
      chunk.sizes[at] = planned.size;
      chunk.wcus[at] = planned.wcu;
      if (planned.op === 'delete') chunk.flags[at] = DELETE;
      if (planned.unshardedKey !== undefined) (chunk.unsharded ??= [])[chunk.keyIds.length - 1] = planned.unshardedKey;
    }
    return chunk.count === data.chunkRows;
  };
  try {
    // A CSV part's records come in csv-parse's arrays: one await per array, not per record.
    for await (const entry of input.chunks()) {
      if (!Array.isArray(entry)) {
        if (take(entry)) await flush();
        continue;
      }
      for (const record of entry) if (take(record)) await flush();
    }
  } catch (error) {
    // The rows planned before the input failed are the load's, as on one thread: counted, their rejects kept.
    handOn();
    throw error;
  }
  if (chunk.count > 0) await flush();
  // This thread's own busy time (its event loop's, from its start): what the rows cost to read and plan.
  send({ type: 'end', bytesRead: input.bytesRead(), busyMs: performance.eventLoopUtilization().active });
}

plan().catch((error: unknown) =>
  send(
    error instanceof LoaderError
      ? {
          type: 'error',
          code: error.code,
          message: error.message,
          ...(error.file === undefined ? {} : { file: error.file }),
          ...(error.line === undefined ? {} : { line: error.line }),
          ...(error.field === undefined ? {} : { field: error.field }),
        }
      : { type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) },
  ),
);
