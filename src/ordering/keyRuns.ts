/**
 * Whether the partition keys of a stream come in runs (a file sorted or grouped by key: a sorted export,
 * Spark parts written sorted) or mixed (a log or an export in time order, a DynamoDB export's hash order).
 * The window interleaver breaks up what is mixed at once and holds little; keys that come in runs longer
 * than the window leave it holding one or two keys, and it then hands out long stretches of one key, the
 * hot partition AWS's "distribute write activity during data upload" warns of. Only a global order helps
 * there. Pure: the caller (the write order) feeds it each write's partition key and the window's state.
 *
 * The verdict takes two signs together, over a whole window's worth of rows in a row:
 * - the window holds fewer than MIN_WINDOW_KEYS keys each time it is looked at (what it hands out rotates
 *   over too few keys), and
 * - the keys read in that stretch come in runs of `minRun` rows or more on average (so a bigger window, or
 *   a global order, would do better: an input of three keys well mixed has few keys too, and round-robin
 *   cannot improve on it). The window grows on short runs (GROW_RUN: growing costs only memory) and goes
 *   over to a global order only on long ones (MIN_RUN), once it is as big as it may get.
 * A short run of one key (a burst in a log) fills part of the window and drains; it never lasts a whole
 * window of rows with the window holding few keys, so it does not turn the load over to a global order.
 */
export const MIN_WINDOW_KEYS = 32;
/** Rows per key change, on average, from which keys count as coming in runs a global order should break up. */
export const MIN_RUN = 64;
/** Rows per key change, on average, from which a window holding too few keys grows. */
export const GROW_RUN = 4;
/** How often, in rows, the window is looked at. */
export const LOOK_EVERY = 1024;

export class KeyRuns {
  #stretch: number;
  #last: string | undefined;
  /** Since the current stretch began: rows, key changes. */
  #rows = 0;
  #changes = 0;
  /** Rows seen in all. */
  #seen = 0;

  /** `stretch`: the rows the signs must hold over (the window's size in rows). */
  constructor(stretch: number) {
    this.#stretch = Math.max(stretch, LOOK_EVERY);
  }

  /**
   * One write's partition key, in input order, and the keys the window holds after it. True when the
   * keys have come in runs for a whole stretch: the order should go over to a global one.
   */
  add(partition: string, windowKeys: () => number, minRun = MIN_RUN): boolean {
    this.#seen++;
    this.#rows++;
    if (partition !== this.#last) {
      this.#changes++;
      this.#last = partition;
    }
    if (this.#seen % LOOK_EVERY !== 0) return false;
    if (windowKeys() >= MIN_WINDOW_KEYS || this.#rows < this.#changes * minRun) {
      // Mixed as of now: a new stretch begins.
      this.#rows = 0;
      this.#changes = 0;
      return false;
    }
    return this.#rows >= this.#stretch;
  }

  /** Whether the next add() looks at the window (and may say to go over). */
  due(): boolean {
    return (this.#seen + 1) % LOOK_EVERY === 0;
  }

  /** Starts a new stretch of `stretch` rows (a window grown to that size). */
  restart(stretch: number): void {
    this.#stretch = Math.max(stretch, LOOK_EVERY);
    this.#rows = 0;
    this.#changes = 0;
  }

  /** Rows seen so far. */
  get seen(): number {
    return this.#seen;
  }
}
