import { orderPrimary, type GlobalOrderMode } from '../ordering/order.js';
import type { SimWrite } from './simulate.js';
import { doubled } from '../shared/typedArrays.js';

/**
 * Partition keys whose statistics are kept one by one: about 120 bytes each (the Map entry, the text and
 * three numbers), so 30 MB at most whatever the input's size.
 */
export const MAX_KEYS_TRACKED = 1 << 18;

/** Names of the keys past MAX_KEYS_TRACKED in the planned order: a prefix no partition identity has. */
const OVERFLOW_KEY = '\u0000overflow-';

/**
 * The statistics a global order (round-robin, spread) is made of, and the order the estimate simulates
 * from them, so the estimate reads at parse speed: per partition key as written, its writes, their write units and the position
 * of its first write. The estimate needs the planned order only as the simulation's input, so it does
 * not materialise it (no held writes, no temporary files, no sort): the keys are merged in the order's
 * own terms (`orderPrimary`, then the key's first position), each write carrying its key's mean units.
 *
 * Bounded memory: past `maxKeys` distinct keys, a new key's writes are taken as keys of one write each
 * (which they nearly always are in an input with that many keys), counted together: round-robin puts
 * them in round 0 in input order, spread evenly over the load.
 */
export class PlannedOrderStats {
  readonly #maxKeys: number;
  readonly #keys = new Map<string, number>();
  #names: string[] = [];
  #first = new Float64Array(1024);
  #count = new Uint32Array(1024);
  #units = new Float64Array(1024);
  #position = 0;
  readonly #overflow = { count: 0, units: 0, first: 0 };

  constructor(maxKeys = MAX_KEYS_TRACKED) {
    this.#maxKeys = maxKeys;
  }

  /** Distinct keys tracked one by one. */
  get keys(): number {
    return this.#keys.size;
  }

  /** Writes counted past the tracked keys, each as a key of its own. */
  get overflow(): number {
    return this.#overflow.count;
  }

  /** The next write in input order: its partition key as written and its write units (table and GSIs). */
  add(key: string, units: number): void {
    const position = this.#position++;
    let k = this.#keys.get(key);
    if (k === undefined) {
      if (this.#keys.size >= this.#maxKeys) {
        if (this.#overflow.count === 0) this.#overflow.first = position;
        this.#overflow.count++;
        this.#overflow.units += units;
        return;
      }
      k = this.#keys.size;
      this.#keys.set(key, k);
      this.#names.push(key);
      if (k === this.#first.length) this.#grow();
      this.#first[k] = position;
    }
    this.#count[k]!++;
    this.#units[k]! += units;
  }

  /** The planned order's writes, one at a time. Call once, after the last add(). */
  *ordered(mode: GlobalOrderMode): Generator<SimWrite> {
    const n = this.#keys.size;
    const overflow = this.#overflow.count > 0 ? n : -1;
    const members = overflow >= 0 ? n + 1 : n;
    const rank = new Uint32Array(members);
    const primary = new Float64Array(members);
    const first = new Float64Array(members);
    for (let k = 0; k < n; k++) {
      first[k] = this.#first[k]!;
      primary[k] = orderPrimary(mode, 0, this.#count[k]!, first[k]!);
    }
    if (overflow >= 0) {
      first[overflow] = this.#overflow.first;
      primary[overflow] = overflowPrimary(mode, 0, this.#overflow.count);
    }
    const heap = new KeyHeap(members, (a, b) => primary[a]! - primary[b]! || first[a]! - first[b]!);
    for (let k = 0; k < members; k++) heap.push(k);
    const meanOverflow = this.#overflow.count > 0 ? this.#overflow.units / this.#overflow.count : 0;
    while (heap.size > 0) {
      const k = heap.peek();
      const r = rank[k]!++;
      if (k === overflow) {
        yield { key: `${OVERFLOW_KEY}${r}`, units: meanOverflow };
        if (r + 1 < this.#overflow.count) {
          primary[k] = overflowPrimary(mode, r + 1, this.#overflow.count);
          // Round-robin: one write each of keys first seen one after the other.
          if (mode === 'round-robin') first[k] = first[k]! + 1;
          heap.replaceTop(k);
        } else heap.pop();
        continue;
      }
      const count = this.#count[k]!;
      yield { key: this.#names[k]!, units: this.#units[k]! / count };
      if (r + 1 < count) {
        primary[k] = orderPrimary(mode, r + 1, count, first[k]!);
        heap.replaceTop(k);
      } else heap.pop();
    }
  }

  #grow(): void {
    this.#first = doubled(this.#first);
    this.#count = doubled(this.#count);
    this.#units = doubled(this.#units);
  }
}

/** Keys of one write each: round-robin's round 0, or spread evenly over the load. */
function overflowPrimary(mode: GlobalOrderMode, rank: number, count: number): number {
  return mode === 'round-robin' ? 0 : (rank + 0.5) / count;
}

/** A binary min-heap of key numbers under `less`, in a typed array. */
class KeyHeap {
  readonly #items: Uint32Array;
  readonly #compare: (a: number, b: number) => number;
  size = 0;

  constructor(capacity: number, compare: (a: number, b: number) => number) {
    this.#items = new Uint32Array(Math.max(1, capacity));
    this.#compare = compare;
  }

  peek(): number {
    return this.#items[0]!;
  }

  push(k: number): void {
    const items = this.#items;
    let i = this.size++;
    items[i] = k;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.#compare(items[parent]!, items[i]!) <= 0) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): void {
    this.size--;
    if (this.size > 0) this.replaceTop(this.#items[this.size]!);
  }

  /** Puts `k` at the top (its key moved on to a later write) and sifts it down. */
  replaceTop(k: number): void {
    const items = this.#items;
    const n = this.size;
    items[0] = k;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && this.#compare(items[r]!, items[l]!) < 0 ? r : l;
      if (this.#compare(items[i]!, items[child]!) <= 0) break;
      [items[i], items[child]] = [items[child]!, items[i]!];
      i = child;
    }
  }
}
