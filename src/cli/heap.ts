import { setFlagsFromString } from 'node:v8';
import { isGlobalOrder, type OrderMode } from '../ordering/order.js';

/**
 * How far V8 lets the heap grow past what a full GC found live, in percent, in a ddb-spread process.
 *
 * A load's live heap is small and flat (about 30 MB on 200k rows: the rows between reading and their
 * batch's answer, the key tallies), but rows live long enough to be promoted to the old generation,
 * so most of what fills it is garbage. V8's own factor for a small heap let it grow to 100-120 MB
 * before each full GC (`--trace-gc`: 95-100 MB -> 28 MB, every ~2 s). Doubling the live size instead
 * took the CLI's peak RSS loading 200k rows into the instant sink from 225-231 MB to 174-182 MB, at the
 * same CPU (10.7 s against 10.8 s, three runs each, alternated); 50% gave 159-167 MB but cost 0.7 s of
 * CPU in more full GCs (docs/BENCHMARKS.md). A user's own
 * setting (`node --heap-growing-percent=N`, NODE_OPTIONS) wins.
 */
export const HEAP_GROWING_PERCENT = 100;

let tuned = false;

/** Sets V8's heap growth for this process, unless the user set it. Call once, first thing in the process. */
export function tuneHeap(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): boolean {
  const set = (text: string) => /--heap[-_]growing[-_]percent\b/.test(text);
  if (execArgv.some(set) || set(nodeOptions)) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  tuned = true;
  return true;
}

/**
 * Gives a global order (round-robin, spread) V8's own heap growth back, when tuneHeap set ours: such an
 * order holds up to --memory of rows before it spills, a live heap large enough that V8's factor for it is
 * below doubling. With ours, the spill bench's peak RSS rose from 238-243 MB to 255-257 MB (the line is
 * 256). Returns whether it changed anything.
 */
export function heapForOrder(order: OrderMode): boolean {
  if (!tuned || !isGlobalOrder(order)) return false;
  // 0 is V8's default: the factor comes from its own heuristics again.
  setFlagsFromString('--heap-growing-percent=0');
  tuned = false;
  return true;
}
