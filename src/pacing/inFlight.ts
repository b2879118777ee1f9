/**
 * How many batches may be in flight. Little's law: the work in flight is the rate times the
 * time each piece spends in flight. A batch held far longer than the usual one (a reply held seconds, a
 * backoff after an error) stretches its time in flight without carrying more of the rate, so each such
 * batch gets a slot of its own on top of the start: a few slow calls do not starve the rest. The limit
 * stays between `start` (--concurrency, the floor) and `ceiling`. Time a batch is paused (waiting for
 * the pacer) is not time in flight: a paced load is bound by its rate, and more batches waiting on the
 * same buckets would only queue deeper (the hot-partition loads slowed by 20% so).
 *
 * A batch sleeping out a backoff (after an error, a throttle or UnprocessedItems) is parked: it sends
 * nothing until the backoff ends, so its slot is lent, up to `parkedCap` parked batches. The table's
 * capacity, not our waiting, is the limit: the pacer still decides when every send goes, the resends
 * after a backoff included, and throttles still cut its rate. The cap bounds the rows held while an
 * outage parks every batch.
 *
 * Pure: time is passed in (monotonic ms).
 */
export interface InFlightOptions {
  /** Batches in flight when none is slow: --concurrency. */
  start: number;
  /** Never more than this. @default min(256, 8 × start) */
  ceiling?: number;
  /** At most this many parked batches lend their slot. @default 4 × start */
  parkedCap?: number;
}

/** Finished batches whose durations make the usual time in flight. */
const SAMPLES = 64;
/** A batch is slow when in flight this many times the usual duration... */
const SLOW_FACTOR = 4;
/** ...and at least this long (fast local calls take a few ms). */
const SLOW_MIN_MS = 250;
/** Parked batches that lend their slot, per --concurrency slot. */
const PARKED_PER_SLOT = 4;

export function defaultCeiling(start: number): number {
  return Math.max(start, Math.min(256, 8 * start));
}

export class InFlightLimit {
  readonly #start: number;
  readonly #ceiling: number;
  readonly #parkedCap: number;
  readonly #running = new Map<number, { start: number; paused: number; pausedAt: number | undefined; parked: boolean }>();
  /** Batches parked in a backoff now. */
  #parked = 0;
  /** Told when a batch parks, so a writer waiting for a slot takes the lent one at once. */
  #onLend: (() => void) | undefined;
  /** The last SAMPLES durations, oldest first, and the same sorted (kept so, not sorted per batch). */
  readonly #durations: number[] = [];
  readonly #sorted: number[] = [];
  #next = 0;
  #peak: number;

  constructor(options: InFlightOptions) {
    this.#start = Math.max(1, Math.floor(options.start));
    this.#ceiling = Math.max(this.#start, Math.floor(options.ceiling ?? defaultCeiling(this.#start)));
    this.#parkedCap = Math.max(0, Math.floor(options.parkedCap ?? PARKED_PER_SLOT * this.#start));
    this.#peak = this.#start;
  }

  get ceiling(): number {
    return this.#ceiling;
  }

  /** The highest limit given so far. */
  get peak(): number {
    return this.#peak;
  }

  /** A batch goes in flight; returns its id for finished(). */
  started(now: number): number {
    const id = this.#next++;
    this.#running.set(id, { start: now, paused: 0, pausedAt: undefined, parked: false });
    return id;
  }

  /** The batch waits for the pacer: not in flight until resume(). A parked batch's backoff is over: it takes its slot back. */
  pause(id: number, now: number): void {
    const state = this.#running.get(id);
    if (!state) return;
    if (state.pausedAt === undefined) state.pausedAt = now;
    if (state.parked) {
      state.parked = false;
      this.#parked--;
    }
  }

  /**
   * The batch sleeps out a backoff before it sends again (after an error, a throttle or UnprocessedItems):
   * paused, and its slot lent to another batch until it waits for the pacer again (pause) or sends
   * (resume). The slot would only idle: a call that got
   * no answer says nothing of the rate, and a throttle has already told the pacer, which holds back every
   * send that follows, this batch's resend and the lent slot's alike (measured: with a third of the calls
   * failing, backoffs holding slots cut a load to a quarter of its clean speed).
   */
  park(id: number, now: number): void {
    const state = this.#running.get(id);
    if (!state || state.parked) return;
    this.pause(id, now);
    state.parked = true;
    this.#parked++;
    if (this.#parked <= this.#parkedCap) this.#onLend?.();
  }

  /** Calls `listener` each time a parked batch lends its slot (one listener: the load's dispatcher). */
  onLend(listener: () => void): void {
    this.#onLend = listener;
  }

  resume(id: number, now: number): void {
    const state = this.#running.get(id);
    if (!state || state.pausedAt === undefined) return;
    state.paused += now - state.pausedAt;
    state.pausedAt = undefined;
    if (state.parked) {
      state.parked = false;
      this.#parked--;
    }
  }

  finished(id: number, now: number): void {
    const state = this.#running.get(id);
    if (state === undefined) return;
    this.resume(id, now);
    this.#running.delete(id);
    const duration = now - state.start - state.paused;
    this.#durations.push(duration);
    this.#sorted.splice(sortedIndex(this.#sorted, duration), 0, duration);
    if (this.#durations.length > SAMPLES) this.#sorted.splice(sortedIndex(this.#sorted, this.#durations.shift()!), 1);
  }

  /** The usual time in flight: the median of the last batches (slow ones do not move a median). */
  typicalMs(): number | undefined {
    const sorted = this.#sorted;
    return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)];
  }

  /** Batches in flight (a call outstanding, not paused) for longer than SLOW_FACTOR × the usual, and SLOW_MIN_MS. */
  slow(now: number): number {
    const typical = this.typicalMs();
    if (typical === undefined) return 0;
    const after = Math.max(SLOW_MIN_MS, SLOW_FACTOR * typical);
    let count = 0;
    for (const state of this.#running.values()) if (state.pausedAt === undefined && now - state.start - state.paused > after) count++;
    return count;
  }

  /** Batches parked in a backoff now. */
  get parked(): number {
    return this.#parked;
  }

  /** Batches allowed in flight now: the start plus one per slow call and per parked batch (at most parkedCap), up to the ceiling. */
  limit(now: number): number {
    const limit = Math.min(this.#ceiling, this.#start + this.slow(now) + Math.min(this.#parked, this.#parkedCap));
    if (limit > this.#peak) this.#peak = limit;
    return limit;
  }

  /** When to look again while waiting for a slot: a batch in flight may turn slow before any finishes. */
  recheckMs(): number {
    return Math.max(SLOW_MIN_MS, SLOW_FACTOR * (this.typicalMs() ?? 0)) / 2;
  }
}

/** The first index of `sorted` (ascending) whose value is not below `value`. */
function sortedIndex(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
