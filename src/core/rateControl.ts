import { TokenBucket } from './tokenBucket.js';

/**
 * Rate control of a load, in write capacity units: a table-wide budget (`--wcu`) and a per-partition-key
 * ceiling (`--key-wcu`), both token buckets spent by each write's cost, with a closed loop around them:
 * - cost: DynamoDB's ConsumedCapacity corrects the planned cost when they differ (a moving ratio);
 * - throttles cut the rate (multiplicative decrease, at most once per cooldown) and quiet periods restore
 *   it (additive increase), the AIMD rule of TCP congestion control;
 * - a throttle that points at one key (UnprocessedItems of a single partition key, or a ThrottlingReason
 *   of the KeyRange kind) slows that key's bucket only; other throttles slow the whole load.
 *
 * Pure: time is passed in (monotonic ms, never decreasing); the I/O shell sleeps for the waits it returns.
 */
export interface RateControlOptions {
  /** Target write units per second for the whole load; Infinity for no target (throttles still slow it). */
  targetWcu: number;
  /** No partition key is written faster than this, in write units per second. @default 1000 */
  keyWcu?: number;
  /**
   * On-demand tables: the rate is never more than `factor` × the highest rate reached at least
   * `windowMs` ago (and never below `initial`), up to `cap`: "throttling can still occur if the throughput
   * exceeds twice the previous peak within the same 30 minutes".
   */
  growth?: { initial: number; factor: number; windowMs: number; cap: number };
  /** Factor applied to the load's rate on a table throttle. @default 0.7 */
  decrease?: number;
  /** Factor applied to one key's rate on a throttle of that key. @default 0.5 */
  keyDecrease?: number;
  /**
   * Added per quiet second, as a fraction of the target. Without a target the rate grows by this fraction
   * of itself per second instead (doubling in about 14 s at 0.05), since there is no scale to add in.
   * @default 0.05
   */
  increasePerSecond?: number;
  /** Time without a throttle before the rate grows again. @default 2000 */
  quietMs?: number;
  /** At most one decrease per cooldown, so one burst of throttled calls in flight counts once. @default 1000 */
  cooldownMs?: number;
  /**
   * The load's rate is cut only when throttled write units reach this share of the units offered over
   * the last 2 s: a few throttled items are retried with backoff and say little about the rate (DynamoDB
   * throttles a little at any rate near capacity), while a storm must slow everything. Key throttles
   * always slow their key. @default 0.1
   */
  throttleShare?: number;
}

export const DEFAULT_KEY_WCU = 1000;
/**
 * Unused table capacity kept: 50 ms. The bucket lends (a send waits its turn however large), so a burst
 * allowance is only what piles up while nothing is sent, such as while round-robin reads the whole file;
 * kept small, no second of the load goes more than 5% over the rate the user granted.
 */
const TABLE_BURST_SECONDS = 0.05;
const KEY_BURST_SECONDS = 0.1;
const MIN_RATE = 1;
/** A cut never goes below this share of the target (or, without one, of the best rate offered). */
const FLOOR_SHARE = 0.05;
/** Key buckets kept before idle ones (full, at the default rate) are dropped. */
const KEY_BUCKETS_SWEEP_AT = 4096;

/** Where a throttle points. */
export type ThrottleSignal = { scope: 'table' } | { scope: 'key'; keys: string[] };

export interface SendResult {
  /** Planned write units of the writes DynamoDB stored in this call. */
  plannedUnits: number;
  /** Write units DynamoDB reported for them (ReturnConsumedCapacity), when it did. */
  consumedUnits?: number;
  throttle?: ThrottleSignal;
  /** Planned write units of the writes refused by the throttle. */
  throttledUnits?: number;
}

export interface RateSnapshot {
  /** The load's target, or undefined without one. */
  targetWcu: number | undefined;
  /** The rate in force now (below the target after throttles), or undefined when unlimited. */
  currentWcu: number | undefined;
  /** Write units stored per second over the last 2 s. */
  achievedWcu: number;
  /** Highest achieved rate seen. */
  peakWcu: number;
  /** Consumed / planned write units, as learned from ConsumedCapacity (1 until reported). */
  costRatio: number;
  tableThrottles: number;
  keyThrottles: number;
  /** Rate cuts of the whole load. */
  decreases: number;
  /** Partition keys currently held below --key-wcu after their own throttles. */
  slowedKeys: number;
}

/** A change of rate worth telling the user about. */
export type RateChange =
  | { kind: 'decreased'; scope: 'table'; fromWcu: number | undefined; toWcu: number }
  | { kind: 'decreased'; scope: 'key'; key: string; toWcu: number };

interface KeyState {
  bucket: TokenBucket;
  lastThrottle: number;
  lastDecrease: number;
}

export class RateController {
  readonly #target: number;
  readonly #keyWcu: number;
  readonly #growth: RateControlOptions['growth'];
  readonly #decrease: number;
  readonly #keyDecrease: number;
  readonly #increase: number;
  readonly #quietMs: number;
  readonly #cooldownMs: number;
  readonly #throttleShare: number;
  readonly #table: TokenBucket;
  readonly #keys = new Map<string, KeyState>();
  /** Keys held below --key-wcu after a throttle of their own. */
  readonly #slowed = new Set<string>();
  #lastSweep = -Infinity;
  #current: number;
  #lastTableThrottle = -Infinity;
  #lastTableDecrease = -Infinity;
  #lastAdapt: number;
  #costRatio = 1;
  #tableThrottles = 0;
  #keyThrottles = 0;
  #decreases = 0;
  /** Units stored per whole second (ring of the last few seconds). */
  #secondUnits = new Map<number, number>();
  /** Units reserved (offered to the table) per whole second, and since when. */
  #offeredUnits = new Map<number, number>();
  /** Units refused by throttles of the table kind, per whole second. */
  #throttledUnits = new Map<number, number>();
  #peakOffered = 0;
  readonly #startedAt: number;
  #peak = 0;
  /** Highest achieved rate per minute, for on-demand growth. */
  #minutePeaks: Array<{ minute: number; peak: number }> = [];

  constructor(options: RateControlOptions, now: number) {
    this.#target = options.targetWcu;
    this.#keyWcu = options.keyWcu ?? DEFAULT_KEY_WCU;
    this.#growth = options.growth;
    this.#decrease = options.decrease ?? 0.7;
    this.#keyDecrease = options.keyDecrease ?? 0.5;
    this.#increase = options.increasePerSecond ?? 0.05;
    this.#quietMs = options.quietMs ?? 2000;
    this.#cooldownMs = options.cooldownMs ?? 1000;
    this.#throttleShare = options.throttleShare ?? 0.1;
    this.#current = this.#ceiling(now);
    // The table bucket starts empty: the first second is paced, not a burst on top of the target.
    this.#table = new TokenBucket(this.#current, TABLE_BURST_SECONDS, now, 0);
    this.#lastAdapt = now;
    this.#startedAt = now;
  }

  /** The load's target rate (Infinity when none). */
  get targetWcu(): number {
    return this.#target;
  }

  get keyWcu(): number {
    return this.#keyWcu;
  }

  /**
   * Reserves one send's writes on their partition keys' buckets; returns the milliseconds to wait.
   * Call reserveTable() after that wait, so a batch held back by a hot key does not hold table capacity.
   */
  reserveKeys(now: number, writes: Iterable<{ key: string; units: number }>): number {
    this.#adapt(now);
    let wait = 0;
    const perKey = new Map<string, number>();
    for (const w of writes) perKey.set(w.key, (perKey.get(w.key) ?? 0) + w.units);
    for (const [key, units] of perKey) wait = Math.max(wait, this.#keyState(now, key).bucket.reserve(now, units * this.#costRatio));
    return wait;
  }

  /** Reserves `units` planned write units on the table's budget; returns the milliseconds to wait. */
  reserveTable(now: number, units: number): number {
    this.#adapt(now);
    const cost = units * this.#costRatio;
    addTo(this.#offeredUnits, now, cost);
    // The best whole second offered (as #peak for what was stored): a rate over a few milliseconds, such
    // as the first batches sent at once, would make a floor far above what the table takes.
    this.#peakOffered = Math.max(this.#peakOffered, this.#offeredUnits.get(Math.floor(now / 1000) - 1) ?? 0);
    return this.#table.reserve(now, cost);
  }

  /** Takes in what one BatchWriteItem call came back with; returns a rate change to report, if any. */
  record(now: number, result: SendResult): RateChange[] {
    this.#adapt(now);
    if (result.plannedUnits > 0) {
      const stored = result.consumedUnits ?? result.plannedUnits * this.#costRatio;
      this.#addAchieved(now, stored);
      if (result.consumedUnits !== undefined && result.consumedUnits > 0) {
        // A slow moving ratio: one odd response (an overwrite of a larger item) must not swing the rate.
        const ratio = Math.min(4, Math.max(0.25, result.consumedUnits / result.plannedUnits));
        this.#costRatio += 0.1 * (ratio - this.#costRatio);
      }
    }
    const changes: RateChange[] = [];
    const throttle = result.throttle;
    if (!throttle) return changes;
    if (throttle.scope === 'key') {
      for (const key of throttle.keys) {
        this.#keyThrottles++;
        const state = this.#keyState(now, key);
        state.lastThrottle = now;
        if (now - state.lastDecrease < this.#cooldownMs) continue;
        state.lastDecrease = now;
        // Never below 5% of --key-wcu: a key cut to 1 WCU/s would starve for minutes behind its own debt.
        const to = Math.max(MIN_RATE, FLOOR_SHARE * this.#keyWcu, state.bucket.rate * this.#keyDecrease);
        state.bucket.setRate(now, to);
        this.#slowed.add(key);
        changes.push({ kind: 'decreased', scope: 'key', key, toWcu: to });
      }
      return changes;
    }
    this.#tableThrottles++;
    addTo(this.#throttledUnits, now, result.throttledUnits ?? 0);
    const offered = this.#recent(this.#offeredUnits, now);
    if (offered > 0 && this.#recent(this.#throttledUnits, now) < this.#throttleShare * offered) return changes;
    this.#lastTableThrottle = now;
    if (now - this.#lastTableDecrease < this.#cooldownMs) return changes;
    this.#lastTableDecrease = now;
    this.#decreases++;
    const from = this.#current;
    // Without a target the rate in force is what was offered to the table lately.
    const base = Number.isFinite(from) ? from : Math.max(this.#recent(this.#offeredUnits, now), this.#achieved(now), MIN_RATE);
    const ceiling = this.#ceiling(now);
    const reference = Number.isFinite(ceiling) ? ceiling : this.#peakOffered;
    this.#current = Math.max(MIN_RATE, FLOOR_SHARE * reference, base * this.#decrease);
    this.#table.setRate(now, this.#current);
    changes.push({ kind: 'decreased', scope: 'table', fromWcu: Number.isFinite(from) ? from : undefined, toWcu: this.#current });
    return changes;
  }

  snapshot(now: number): RateSnapshot {
    this.#adapt(now);
    const slowedKeys = this.#slowed.size;
    return {
      targetWcu: Number.isFinite(this.#target) ? this.#target : undefined,
      currentWcu: Number.isFinite(this.#current) ? this.#current : undefined,
      achievedWcu: this.#achieved(now),
      peakWcu: this.#peak,
      costRatio: this.#costRatio,
      tableThrottles: this.#tableThrottles,
      keyThrottles: this.#keyThrottles,
      decreases: this.#decreases,
      slowedKeys,
    };
  }

  /** Additive increase after a quiet period, for the table and for slowed keys; capped by the ceiling. */
  #adapt(now: number): void {
    const last = this.#lastAdapt;
    if (now <= last) return;
    this.#lastAdapt = now;
    const ceiling = this.#ceiling(now);
    // Only the time after the quiet period counts, however rarely this runs.
    const quietFrom = Math.max(last, this.#lastTableThrottle + this.#quietMs);
    if (now > quietFrom && this.#current < ceiling) {
      const dt = now - quietFrom;
      let next = Number.isFinite(this.#target)
        ? this.#current + (this.#increase * this.#target * dt) / 1000
        : this.#current * (1 + (this.#increase * dt) / 1000);
      // Without a target, limiting stops once the rate is well above anything offered before the cut.
      if (!Number.isFinite(ceiling) && next >= 2 * Math.max(this.#peakOffered, MIN_RATE)) next = Infinity;
      this.#current = Math.min(ceiling, next);
      this.#table.setRate(now, this.#current);
    } else if (this.#current > ceiling) {
      this.#current = ceiling;
      this.#table.setRate(now, ceiling);
    }
    for (const key of this.#slowed) {
      const state = this.#keys.get(key);
      if (!state) {
        this.#slowed.delete(key);
        continue;
      }
      const keyQuietFrom = Math.max(last, state.lastThrottle + this.#quietMs);
      if (now > keyQuietFrom) {
        const rate = Math.min(this.#keyWcu, state.bucket.rate + (this.#increase * this.#keyWcu * (now - keyQuietFrom)) / 1000);
        state.bucket.setRate(now, rate);
        if (rate >= this.#keyWcu) this.#slowed.delete(key);
      }
    }
    // Idle buckets (full, at the default rate) hold nothing a later reservation depends on: drop them
    // now and then, so a load over millions of keys keeps a bounded map and a cheap adapt.
    if (this.#keys.size > KEY_BUCKETS_SWEEP_AT && now - this.#lastSweep >= 1000) {
      this.#lastSweep = now;
      for (const [key, state] of this.#keys) if (!this.#slowed.has(key) && state.bucket.isFull(now)) this.#keys.delete(key);
    }
  }

  #ceiling(now: number): number {
    const growth = this.#growth;
    if (!growth) return this.#target;
    const minute = Math.floor((now - growth.windowMs) / 60_000);
    let before = 0;
    // Only minutes wholly older than the window count: a peak must be a whole window old.
    for (const m of this.#minutePeaks) if (m.minute < minute) before = Math.max(before, m.peak);
    return Math.min(this.#target, growth.cap, Math.max(growth.initial, growth.factor * before));
  }

  #keyState(now: number, key: string): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      state = { bucket: new TokenBucket(this.#keyWcu, KEY_BURST_SECONDS, now), lastThrottle: -Infinity, lastDecrease: -Infinity };
      this.#keys.set(key, state);
    }
    return state;
  }

  /** Units per second in `perSecond` over the current and the previous second (or since the start). */
  #recent(perSecond: Map<number, number>, now: number): number {
    const second = Math.floor(now / 1000);
    const from = Math.max((second - 1) * 1000, this.#startedAt);
    const span = Math.max(now - from, 50);
    return (((perSecond.get(second) ?? 0) + (perSecond.get(second - 1) ?? 0)) * 1000) / span;
  }

  #addAchieved(now: number, units: number): void {
    const second = Math.floor(now / 1000);
    addTo(this.#secondUnits, now, units);
    // A second's total is known once it is over: the peak is the best whole second.
    const last = this.#secondUnits.get(second - 1) ?? 0;
    if (last > this.#peak) this.#peak = last;
    if (this.#growth) {
      const minute = Math.floor(now / 60_000);
      const tail = this.#minutePeaks[this.#minutePeaks.length - 1];
      if (tail?.minute === minute) tail.peak = Math.max(tail.peak, last);
      else this.#minutePeaks.push({ minute, peak: last });
    }
  }

  /** Units stored per second over the last two whole seconds. */
  #achieved(now: number): number {
    const second = Math.floor(now / 1000);
    return ((this.#secondUnits.get(second - 1) ?? 0) + (this.#secondUnits.get(second - 2) ?? 0)) / 2;
  }
}

/** Adds units to the whole second of `now`, keeping only the last few seconds. */
function addTo(perSecond: Map<number, number>, now: number, units: number): void {
  const second = Math.floor(now / 1000);
  perSecond.set(second, (perSecond.get(second) ?? 0) + units);
  if (perSecond.size > 4) for (const s of perSecond.keys()) if (s < second - 3) perSecond.delete(s);
}

/**
 * Reads where a throttle points, from one BatchWriteItem call: the partition keys of the writes sent,
 * those refused (UnprocessedItems, or all of them when the call failed) and the ThrottlingReasons given.
 * A KeyRange reason, or refusals that all share one partition key while others were stored, point at
 * keys; anything else (a whole call refused without a key-range reason, ThrottlingException,
 * RequestLimitExceeded) points at the table or the account.
 */
export function classifyThrottle(sentKeys: readonly string[], refusedKeys: readonly string[], reasons: readonly string[] = []): ThrottleSignal | undefined {
  if (refusedKeys.length === 0) return undefined;
  const refused = [...new Set(refusedKeys)];
  if (reasons.some((r) => r.includes('KeyRange'))) return { scope: 'key', keys: refused };
  if (reasons.length === 0 && refusedKeys.length < sentKeys.length && refused.length === 1) return { scope: 'key', keys: refused };
  return { scope: 'table' };
}

/** A partition key that needs longer at --key-wcu than the whole load at its target rate. */
export interface Bottleneck {
  key: string;
  /** Write units of the key in the load. */
  units: number;
  /** Its share of the load's write units. */
  share: number;
  /** Seconds the key needs at --key-wcu. */
  keySeconds: number;
  /** Seconds the whole load needs at its rate. */
  loadSeconds: number;
  /** The rate the key would need to finish with the rest: units / loadSeconds. */
  requiredWcu: number;
  /** Seed 001: ceil(required rate / per-key limit). */
  minShards: number;
  /** Seed 001's recommendation: twice the minimum, for headroom. */
  recommendedShards: number;
}

/**
 * The key that bounds the load's duration, if any: its units at `keyWcu` take longer than all units at
 * `loadWcu` (the target, or the rate reached when there was none).
 */
export function findBottleneck(heaviest: { key: string; weight: number } | undefined, totalUnits: number, loadWcu: number, keyWcu: number): Bottleneck | undefined {
  if (!heaviest || totalUnits <= 0 || !(loadWcu > 0) || !Number.isFinite(loadWcu)) return undefined;
  const loadSeconds = totalUnits / loadWcu;
  const keySeconds = heaviest.weight / keyWcu;
  if (keySeconds <= loadSeconds) return undefined;
  const requiredWcu = heaviest.weight / loadSeconds;
  const minShards = Math.ceil(requiredWcu / keyWcu);
  return { key: heaviest.key, units: heaviest.weight, share: heaviest.weight / totalUnits, keySeconds, loadSeconds, requiredWcu, minShards, recommendedShards: 2 * minShards };
}
