/**
 * The batches of a load that are done, in compact form: the low-water mark K (every batch before it is
 * done) plus the batches done above K as sorted, disjoint, non-adjacent half-open ranges [from, to).
 * Batches finish out of order, so a slow batch would otherwise hold K while everything after it is
 * done; recording the ranges lets a resume skip those too, and the rewrites after kill -9 stay bounded. Pure and synchronous.
 */
export type BatchRange = [from: number, to: number];

export class DoneBatches {
  #mark: number;
  readonly #above: BatchRange[];

  constructor(mark = 0, above: readonly BatchRange[] = []) {
    this.#mark = mark;
    this.#above = [];
    for (const [from, to] of above) for (let i = from; i < to; i++) this.add(i);
  }

  /** K: every batch before it is done. */
  get mark(): number {
    return this.#mark;
  }

  /** The ranges done above K (a copy). */
  get above(): BatchRange[] {
    return this.#above.map(([from, to]) => [from, to]);
  }

  has(index: number): boolean {
    if (index < this.#mark) return true;
    const at = this.#find(index);
    const range = this.#above[at];
    return range !== undefined && range[0] <= index && index < range[1];
  }

  /** Marks `index` done; returns false when it already was. */
  add(index: number): boolean {
    if (this.has(index)) return false;
    if (index === this.#mark) {
      this.#mark++;
      const first = this.#above[0];
      if (first && first[0] === this.#mark) {
        this.#mark = first[1];
        this.#above.shift();
      }
      return true;
    }
    // The first range that ends at or after index (index is in none of them).
    const at = this.#find(index);
    const before = this.#above[at - 1];
    const after = this.#above[at];
    const joinsBefore = before !== undefined && before[1] === index;
    const joinsAfter = after !== undefined && after[0] === index + 1;
    if (joinsBefore && joinsAfter) {
      before[1] = after[1];
      this.#above.splice(at, 1);
    } else if (joinsBefore) before[1] = index + 1;
    else if (joinsAfter) after[0] = index;
    else this.#above.splice(at, 0, [index, index + 1]);
    return true;
  }

  /** Index of the first range whose end is above `index` (binary search). */
  #find(index: number): number {
    let low = 0;
    let high = this.#above.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#above[middle]![1] <= index) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
