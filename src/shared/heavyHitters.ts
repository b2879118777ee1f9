/**
 * The heaviest keys of a stream in bounded memory: the Space-Saving algorithm (Metwally, Agrawal and
 * El Abbadi, 2005), with eviction in bulk. It keeps at most `capacity` counters; when full, the lightest
 * tenth is dropped and a newcomer starts from the heaviest weight dropped so far (`error`, an
 * over-estimate). A key heavier than about total / (0.9 × capacity) is always tracked, and a tracked
 * key's true weight lies in [weight - error, weight].
 *
 * A load may have hundreds of millions of partition keys, so per-key totals for "the hottest keys" and
 * "the bottleneck key" cannot be a Map of every key.
 */
export interface HeavyHitter {
  key: string;
  /** Upper bound of the key's total weight. */
  weight: number;
  /** How much of `weight` may belong to keys it replaced (0 when the key was tracked from its start). */
  error: number;
  /** Number of add() calls for the key while tracked (a row count when each add is one row). */
  count: number;
}

/**
 * Keys tracked for the hottest-keys reports: enough that any key with more than about 1/1,800 of the
 * units (total / (0.9 × capacity)) is always among them, few enough that the eviction scan stays cheap.
 */
export const HOT_KEYS_TRACKED = 2000;

export class HeavyHitters {
  readonly #capacity: number;
  readonly #entries = new Map<string, HeavyHitter>();
  #total = 0;
  #rows = 0;

  constructor(capacity = 1000) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`Expected \`capacity\` to be an integer from 1 and up, got \`${capacity}\``);
    this.#capacity = capacity;
  }

  /** Sum of every weight added. */
  get total(): number {
    return this.#total;
  }

  /** Number of add() calls. */
  get rows(): number {
    return this.#rows;
  }

  add(key: string, weight: number): void {
    this.#total += weight;
    this.#rows++;
    const entry = this.#entries.get(key);
    if (entry) {
      entry.weight += weight;
      entry.count++;
      return;
    }
    if (this.#entries.size < this.#capacity) {
      // After an eviction a newcomer may be a key that was dropped: it starts from the floor, so its
      // weight stays an upper bound of its true weight (0 before any eviction).
      this.#entries.set(key, { key, weight: this.#floor + weight, error: this.#floor, count: 1 });
      return;
    }
    // Replace the lightest. A linear scan costs O(capacity), but only for keys that are not tracked; to
    // keep that rare on long tails, evict in bulk: drop the lightest tenth at once and remember its
    // largest weight as the error floor of newcomers.
    this.#evict();
    this.#entries.set(key, { key, weight: this.#floor + weight, error: this.#floor, count: 1 });
  }

  /** The heaviest `n` keys, heaviest first. */
  top(n: number): HeavyHitter[] {
    return [...this.#entries.values()]
      .sort((a, b) => b.weight - a.weight || (a.key < b.key ? -1 : 1))
      .slice(0, n)
      .map((e) => ({ ...e }));
  }

  #floor = 0;

  #evict(): void {
    const sorted = [...this.#entries.values()].sort((a, b) => a.weight - b.weight);
    const drop = Math.max(1, Math.floor(this.#capacity / 10));
    for (let i = 0; i < drop && i < sorted.length; i++) this.#entries.delete(sorted[i]!.key);
    this.#floor = Math.max(this.#floor, sorted[Math.min(drop, sorted.length) - 1]!.weight);
  }
}

/** The sketch of write units per partition key that load and estimate both keep. */
export function createHotKeySketch(): HeavyHitters {
  return new HeavyHitters(HOT_KEYS_TRACKED);
}
