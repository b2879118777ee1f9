/**
 * Bench child: is the orderer's `heldBytes` what it really holds? Reads + plans a file (pipeline.ts, the
 * built library) and pushes every write into the WriteOrderer without draining it, then forces full GCs and
 * compares the growth of V8's used heap plus ArrayBuffer memory since the start (also after forced GCs)
 * with `heldBytes`; and the growth of the RSS, since ArrayBuffer memory counts a Buffer's allocated size
 * while only the pages written to cost memory.
 *   node bench/runOrderHeld.js spread --input f.csv [--memory 134217728] [--window 50000] [--temp-dir DIR]
 * Meant for an input that fits the budget (a spilled order holds only file buffers). Prints one JSON line
 * (childStats.ts) with the figures in `extra`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startMeasuring } from './childStats.js';
import { orderChildArgs } from './orderChildArgs.js';
import { plannedWrites, writeOrderer } from './pipeline.js';

// gc() without --expose-gc on the command line (the harness gives every child the same node flags).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const args = orderChildArgs();
const { mode } = args;

/** V8's used heap plus ArrayBuffer memory (Buffers), and the RSS, after full GCs. */
function retained(): { bytes: number; rss: number } {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { bytes: m.heapUsed + m.arrayBuffers, rss: m.rss };
}

const done = startMeasuring();
const input = await plannedWrites(args.input);
const orderer = writeOrderer(mode, { ...args.orderer, inputBytes: input.inputBytes });
let handedOut = 0;
// The baseline is taken once the reader and planner are running, so that their own buffers count in both.
let before: { bytes: number; rss: number } | undefined;
try {
  await input.forEachWrite(async (write) => {
    before ??= retained();
    handedOut += (await orderer.push(write)).length;
  });
  const after = retained();
  done(input.counts.rows, {
    mode,
    held: orderer.held,
    handedOut,
    spilled: orderer.stats.spilled,
    heldBytes: orderer.heldBytes,
    measuredBytes: after.bytes - (before ?? after).bytes,
    rssGrowth: after.rss - (before ?? after).rss,
    memoryBytes: args.orderer.memoryBytes,
  });
} finally {
  await orderer.close();
}
