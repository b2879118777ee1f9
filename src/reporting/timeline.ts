import { HeavyHitters } from '../shared/heavyHitters.js';

/**
 * The course of a load in fixed-interval buckets: what was written, refused and charged in each few
 * seconds, against the rate in force, for the report's charts and the summary's sparkline. Pure: the
 * load samples its cumulative counters with the time (ms since it started); each bucket holds the
 * difference since the previous sample, so the buckets always add up to the counters.
 *
 * Memory is bounded whatever the load's length: when `maxBuckets` buckets are closed, neighbours are
 * merged pairwise and the interval doubles (a 10-hour load at 2 s, 240 buckets, ends at 256 s a bucket).
 */
export interface TimelineBucket {
  /** Start of the bucket, ms after the load began writing. */
  startMs: number;
  /** Length of the bucket in ms (the last one: up to the last sample). */
  ms: number;
  /** Rows stored in the bucket. */
  written: number;
  /** Rows sent to the reject file in the bucket. */
  rejected: number;
  /** Write units of the rows stored, by ddb-spread's size model (table and GSIs). */
  plannedWcu: number;
  /** Write units DynamoDB charged for them (as counted in the report's consumedWcu). */
  consumedWcu: number;
  /** Write requests DynamoDB refused for throughput (retried). */
  throttledItems: number;
  /** Throttled calls that pointed at the whole table (or an index), and at one partition key. */
  tableThrottles: number;
  keyThrottles: number;
  /** Calls without an answer (5xx, resets, timeouts), retried. */
  errors: number;
  /** The rate in force, in WCU/s (mean of the samples in the bucket); null when the load had no limit. */
  rateWcu: number | null;
  /** The partition keys with the most write units in the bucket (values as the report shows them). */
  keys: Array<{ key: string; units: number }>;
}

export interface Timeline {
  /** The interval of a bucket at the end (doubled each time the buckets were merged). */
  bucketMs: number;
  /** What an earlier run of the checkpoint had written before this one began (not in the buckets). */
  before: { written: number; plannedWcu: number; consumedWcu: number };
  buckets: TimelineBucket[];
}

/** The cumulative counts a sample reads: the load's counters and the rate controller's. */
export interface TimelineCounts {
  written: number;
  rejected: number;
  plannedWcu: number;
  consumedWcu: number;
  throttledItems: number;
  tableThrottles: number;
  keyThrottles: number;
  errors: number;
}

type Counted = keyof TimelineCounts;
const COUNTED: readonly Counted[] = ['written', 'rejected', 'plannedWcu', 'consumedWcu', 'throttledItems', 'tableThrottles', 'keyThrottles', 'errors'];

export const DEFAULT_BUCKET_MS = 2000;
export const DEFAULT_MAX_BUCKETS = 240;
/** Keys kept per bucket in the report. */
const KEYS_PER_BUCKET = 3;
/** Keys a bucket's sketch tracks: enough for its top three (the heavy-hitter bound). */
const KEYS_TRACKED = 64;
/** A last bucket shorter than this share of the interval joins the one before it (a sliver's rate is noise). */
const SLIVER_SHARE = 0.25;

interface OpenBucket extends TimelineCounts {
  index: number;
  rateSum: number;
  rateSamples: number;
  sketch: HeavyHitters;
}

interface ClosedBucket extends TimelineCounts {
  rateSum: number;
  rateSamples: number;
  keys: Array<{ key: string; units: number }>;
}

export class TimelineRecorder {
  readonly #maxBuckets: number;
  #bucketMs: number;
  #closed: ClosedBucket[] = [];
  #open: OpenBucket | undefined;
  #startMs = 0;
  #lastMs = 0;
  #last: TimelineCounts | undefined;
  #lastRate: number | undefined;
  readonly #pending = new Map<string, number>();
  #before: Timeline['before'] = { written: 0, plannedWcu: 0, consumedWcu: 0 };

  constructor(options: { bucketMs?: number | undefined; maxBuckets?: number | undefined } = {}) {
    const bucketMs = options.bucketMs ?? DEFAULT_BUCKET_MS;
    const maxBuckets = options.maxBuckets ?? DEFAULT_MAX_BUCKETS;
    if (!(bucketMs > 0)) throw new RangeError(`Expected \`bucketMs\` to be a number above 0, got \`${bucketMs}\``);
    // Even, so that the closed buckets always merge in whole pairs.
    if (!Number.isInteger(maxBuckets) || maxBuckets < 2 || maxBuckets % 2 !== 0)
      throw new RangeError(`Expected \`maxBuckets\` to be an even integer from 2 and up, got \`${maxBuckets}\``);
    this.#bucketMs = bucketMs;
    this.#maxBuckets = maxBuckets;
  }

  /**
   * Starts the timeline at `ms` from the counts at that moment (a resumed load's earlier writes), which
   * are kept apart as `before`. Samples before it are ignored.
   */
  begin(ms: number, counts: TimelineCounts): void {
    this.#startMs = ms;
    this.#lastMs = ms;
    this.#last = { ...counts };
    this.#before = { written: counts.written, plannedWcu: counts.plannedWcu, consumedWcu: counts.consumedWcu };
    this.#open = emptyOpen(0);
  }

  get begun(): boolean {
    return this.#open !== undefined;
  }

  /** Counts at `ms` (never earlier than the last sample); `rateWcu` the rate in force, undefined when unlimited. */
  sample(ms: number, counts: TimelineCounts, rateWcu: number | undefined): void {
    const last = this.#last;
    if (!this.#open || !last) return;
    const at = Math.max(ms, this.#lastMs);
    while (Math.floor((at - this.#startMs) / this.#bucketMs) > this.#open.index) this.#advance();
    const open = this.#open;
    for (const name of COUNTED) {
      open[name] += counts[name] - last[name];
      last[name] = counts[name];
    }
    if (rateWcu !== undefined && Number.isFinite(rateWcu)) {
      open.rateSum += rateWcu;
      open.rateSamples++;
    }
    for (const [key, units] of this.#pending) open.sketch.add(key, units);
    this.#pending.clear();
    this.#lastRate = rateWcu;
    this.#lastMs = at;
  }

  /**
   * Write units of one partition key, booked with the next sample, in that sample's bucket like the
   * counters it reads. Held until then in a map: the load samples after each batch it books (at most a
   * few hundred ms apart), so it holds only the keys of those batches.
   */
  key(key: string, units: number): void {
    if (this.#open) this.#pending.set(key, (this.#pending.get(key) ?? 0) + units);
  }

  /** The timeline so far: the closed buckets and the one being filled. */
  timeline(): Timeline {
    const buckets: TimelineBucket[] = [];
    const closed = [...this.#closed];
    const open = this.#open;
    if (open) {
      const tail = closeOf(open);
      const openMs = this.#lastMs - this.#startMs - open.index * this.#bucketMs;
      const previous = closed.at(-1);
      if (previous && openMs < this.#bucketMs * SLIVER_SHARE) closed[closed.length - 1] = merge(previous, tail);
      else closed.push(tail);
    }
    const endMs = this.#lastMs - this.#startMs;
    closed.forEach((b, i) => {
      const startMs = i * this.#bucketMs;
      const ms = i === closed.length - 1 ? Math.max(0, endMs - startMs) : this.#bucketMs;
      buckets.push(publish(b, startMs, ms));
    });
    return { bucketMs: this.#bucketMs, before: { ...this.#before }, buckets };
  }

  /** Closes the open bucket and opens the next (the rate in force carried over until a sample says). */
  #advance(): void {
    const open = this.#open!;
    const closed = closeOf(open);
    if (closed.rateSamples === 0 && this.#lastRate !== undefined && Number.isFinite(this.#lastRate)) {
      closed.rateSum = this.#lastRate;
      closed.rateSamples = 1;
    }
    this.#closed.push(closed);
    if (this.#closed.length >= this.#maxBuckets) {
      const merged: ClosedBucket[] = [];
      for (let i = 0; i < this.#closed.length; i += 2) merged.push(merge(this.#closed[i]!, this.#closed[i + 1]!));
      this.#closed = merged;
      this.#bucketMs *= 2;
    }
    this.#open = emptyOpen(this.#closed.length);
  }
}

function zeroCounts(): TimelineCounts {
  return { written: 0, rejected: 0, plannedWcu: 0, consumedWcu: 0, throttledItems: 0, tableThrottles: 0, keyThrottles: 0, errors: 0 };
}

function emptyOpen(index: number): OpenBucket {
  return { ...zeroCounts(), index, rateSum: 0, rateSamples: 0, sketch: new HeavyHitters(KEYS_TRACKED) };
}

function closeOf(open: OpenBucket): ClosedBucket {
  const { index: _index, sketch, ...rest } = open;
  return { ...rest, keys: sketch.top(KEYS_PER_BUCKET).map((k) => ({ key: k.key, units: k.weight })) };
}

/**
 * Two neighbouring buckets as one: counts add up; the rate in force is the mean of both's samples; the
 * keys are each one's top keys added up (a key in the top of one only is counted from that one: the
 * merged list is the heaviest as far as the buckets kept them).
 */
function merge(a: ClosedBucket, b: ClosedBucket): ClosedBucket {
  const out: ClosedBucket = { ...zeroCounts(), rateSum: a.rateSum + b.rateSum, rateSamples: a.rateSamples + b.rateSamples, keys: [] };
  for (const name of COUNTED) out[name] = a[name] + b[name];
  const units = new Map<string, number>();
  for (const k of [...a.keys, ...b.keys]) units.set(k.key, (units.get(k.key) ?? 0) + k.units);
  out.keys = [...units]
    .map(([key, u]) => ({ key, units: u }))
    .sort((x, y) => y.units - x.units)
    .slice(0, KEYS_PER_BUCKET);
  return out;
}

function publish(b: ClosedBucket, startMs: number, ms: number): TimelineBucket {
  return {
    startMs,
    ms,
    written: b.written,
    rejected: b.rejected,
    plannedWcu: b.plannedWcu,
    consumedWcu: b.consumedWcu,
    throttledItems: b.throttledItems,
    tableThrottles: b.tableThrottles,
    keyThrottles: b.keyThrottles,
    errors: b.errors,
    rateWcu: b.rateSamples > 0 ? b.rateSum / b.rateSamples : null,
    keys: b.keys.map((k) => ({ ...k })),
  };
}

/** Write units per second of a bucket (0 for an empty one). */
export function bucketWcu(bucket: Pick<TimelineBucket, 'plannedWcu' | 'ms'>): number {
  return bucket.ms > 0 ? (bucket.plannedWcu * 1000) / bucket.ms : 0;
}
