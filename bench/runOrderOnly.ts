/**
 * Bench child: read + plan + order a file, no writes (the built library, dist/).
 *   node --import tsx bench/runOrderOnly.ts spread --input f.csv [--memory 134217728] [--window 50000]
 *        [--temp-dir DIR] [--sequence out.txt]
 * Modes: input (read + plan only: the baseline), window, round-robin, spread. The timed section is the
 * whole read -> plan -> order path of load()'s stages (pipeline.ts), minus describeTable, the batcher
 * and the writer. With --sequence, every write's partition key identity is appended, in the
 * order the writes come out, one per line, to that file (buffered, ~16 bytes a row), for bench/order.ts
 * to measure the order's slices afterwards; the analysis itself stays out of this process, so its peak
 * RSS is the ordering's. Prints one JSON line (childStats.ts), with the orderer's figures in `extra`.
 * bench/order.ts runs a plain-JS transpile of this file (no tsx loader in the measured process).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { PlannedWrite } from '../dist/shared/types.js';
import { startMeasuring } from './childStats.js';
import { orderChildArgs } from './orderChildArgs.js';
import { orderWrites, plannedWrites, writeOrderer } from './pipeline.js';
import { heapForOrder, tuneHeap } from '../dist/cli/heap.js';

// The heap growth the CLI sets first thing (bin/ddb-spread.js, src/cli/heap.ts): measured as users run it.
tuneHeap();

const args = orderChildArgs();
const { mode } = args;
// As the CLI does once the order is known (src/cli/main.ts): a global order gets V8's own heap growth back.
if (mode === 'round-robin' || mode === 'spread') heapForOrder(mode);

/** Appends partition key identities, one per line, in batches (writeSync: no stream buffers to grow). */
function sequenceSink(path: string | undefined): { add(write: PlannedWrite): void; close(): void } {
  if (path === undefined) return { add: () => undefined, close: () => undefined };
  const fd = openSync(path, 'w');
  let lines: string[] = [];
  const flush = () => {
    if (lines.length > 0) writeSync(fd, `${lines.join('\n')}\n`);
    lines = [];
  };
  return {
    add(write) {
      // JSON, so an identity that holds a line break stays on one line.
      lines.push(JSON.stringify(write.partitionId));
      if (lines.length === 4096) flush();
    },
    close() {
      flush();
      closeSync(fd);
    },
  };
}

const done = startMeasuring();
const input = await plannedWrites(args.input);
const orderer = writeOrderer(mode, { ...args.orderer, inputBytes: input.inputBytes });
const sequence = sequenceSink(args.sequence);
let emitted = 0;
/** Seconds from the start to the end of reading (for global orders, the drain comes after). */
let readSeconds = 0;
const t0 = performance.now();
try {
  const onWrite = (write: PlannedWrite) => {
    emitted++;
    sequence.add(write);
  };
  await orderWrites(input, orderer, onWrite, () => (readSeconds = (performance.now() - t0) / 1000));
} finally {
  sequence.close();
  await orderer.close();
}
const { rows, rejected } = input.counts;
if (emitted + rejected !== rows) throw new Error(`read ${rows} rows, ${rejected} rejected, but ${emitted} writes came out of the order`);
done(rows, {
  mode,
  rejected,
  emitted,
  readSeconds,
  spilled: orderer.stats.spilled,
  tempBytes: orderer.stats.tempBytes,
  buckets: orderer.stats.buckets,
  runs: orderer.stats.runs,
  memoryBytes: args.orderer.memoryBytes,
});
