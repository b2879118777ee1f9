/**
 * Which stripe of a striped read gives the next row (src/ordering/stripes/stripedRecords.ts): the one furthest behind,
 * measured as the share of its bytes read so far. Every stripe then moves through its part of the file at
 * the same pace and they all end together: at any moment the rows being written come from evenly spaced
 * points of the whole file, so on a file sorted by key every key gets about its share of the writes (a
 * proportional schedule) from the first row to the last, with no tail of a few big keys. Ties go to the
 * lower stripe, so the order is a function of the file alone (a resumed load replays it exactly).
 *
 * Written by hand: a binary heap over at most a few hundred stripes, keyed by a fraction.
 */
export class StripeSchedule {
  readonly #sizes: number[];
  readonly #read: number[];
  /** Stripes still open, as a binary min-heap by (share read, index). */
  readonly #heap: number[] = [];

  /**
   * @param sizes each stripe's bytes (a stripe of 0 bytes is read first, once)
   * @param read each stripe's bytes given so far, for a read resumed at a restart point (reads()'s values then):
   * the schedule goes on as it would have. A stripe that had ended is ended again at its turn, with no row.
   */
  constructor(sizes: readonly number[], read?: readonly number[]) {
    this.#sizes = sizes.map((s) => Math.max(1, s));
    this.#read = sizes.map((_, k) => read?.[k] ?? 0);
    for (let k = 0; k < sizes.length; k++) this.#push(k);
  }

  /** The stripe to read next, or undefined when every stripe has ended. */
  next(): number | undefined {
    return this.#heap[0];
  }

  /** Each stripe's bytes given so far (ended ones included). */
  reads(): number[] {
    return [...this.#read];
  }

  /** The stripe `next()` named gave a row of `bytes` bytes. */
  advance(stripe: number, bytes: number): void {
    if (this.#heap[0] !== stripe) throw new Error(`stripe ${stripe} advanced out of turn`);
    this.#read[stripe]! += bytes;
    this.#siftDown(0);
  }

  /** The stripe `next()` named has no more rows. */
  end(stripe: number): void {
    if (this.#heap[0] !== stripe) throw new Error(`stripe ${stripe} ended out of turn`);
    const last = this.#heap.pop()!;
    if (this.#heap.length > 0) {
      this.#heap[0] = last;
      this.#siftDown(0);
    }
  }

  #less(a: number, b: number): boolean {
    const fa = this.#read[a]! / this.#sizes[a]!;
    const fb = this.#read[b]! / this.#sizes[b]!;
    return fa < fb || (fa === fb && a < b);
  }

  #push(k: number): void {
    const heap = this.#heap;
    heap.push(k);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #siftDown(i: number): void {
    const heap = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && this.#less(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && this.#less(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}
