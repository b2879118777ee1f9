import { TokenBucket } from './tokenBucket.js';

/**
 * Rate control of a load, in write capacity units: a table-wide budget (`--wcu`) and a per-partition-key
 * ceiling (`--key-wcu`), both token buckets spent by each write's cost, with a closed loop around them:
 * - cost: DynamoDB's ConsumedCapacity corrects the planned cost when they differ (a moving ratio);
 * - throttles cut the rate (multiplicative decrease, at most once per cooldown) and quiet periods restore
 *   it (additive increase), the AIMD rule of TCP congestion control;
 * - a throttle that points at one key (UnprocessedItems of a single partition key, or a ThrottlingReason
 *   of the KeyRange kind) slows that key's bucket only; other throttles slow the whole load;
 * - a cut of the whole load is a probe, so noise is not taken for capacity: the throttle share is measured at the lower rate, then
 *   at the rate before the cut. Throttles that rise with the rate are capacity: the lower rate is kept.
 *   Throttles that do not are noise: the rate before the cut is restored and the noise share learned, so
 *   only throttles above it cut again. Errors without an answer (5xx, resets, timeouts, lost replies)
 *   are retried by the writer and never move the rate;
 * - a probe judges only what it tested: writers that did not send even the lower rate (a busy machine,
 *   replies held) are measured again from what they sent, a delivery rate that stays flat says capacity
 *   only when the writers sent more, and a higher stage that sent no more learns no noise. BBR's
 *   "application-limited" samples; without this a busy machine's noise ran loads to the floor.
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
  /** Shortest measurement of a probe stage (at the lower rate, then at the rate before the cut). @default 2000 */
  probeMs?: number;
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
/** Answers a probe stage needs before it judges (fewer: the plain AIMD rule, as without probes). */
const PROBE_MIN_CALLS = 40;
/** Fewer answers than this in the last 2 s cut the rate only when every one of them was throttled. */
const TRIGGER_MIN_ANSWERS = 20;
/** Answers to calls sent before a stage began are not the stage's: its first 500 ms are not counted. */
const PROBE_SETTLE_MS = 500;
/** A high stage judges with what it has after this long. */
const PROBE_MAX_MS = 10_000;
/** A share of throttled units this high is a storm: cut at once, whatever a probe would say. */
const STORM_SHARE = 0.5;
/** A probe's higher stage sent at least this many times its lower stage's units: it tested a rate. */
const MIN_TESTED_GAIN = 1.1;
/** Cuts after a capacity verdict that go down without a probe (more only in a storm). */
const MAX_DESCENT_CUTS = 2;
/** Answers a high stage needs before a storm in it ends it early. */
const STORM_MIN_CALLS = 20;
/** A rate confirmed as capacity is trusted this long: a throttle near it is capacity without a probe. */
const CAPACITY_MEMORY_MS = 60_000;
/** Key buckets kept before idle ones (full, at the default rate) are dropped. */
const KEY_BUCKETS_SWEEP_AT = 4096;

/** Where a throttle points. */
export type ThrottleSignal = { scope: 'table' } | { scope: 'key'; keys: string[]; reason?: string | undefined };

export interface SendResult {
  /** Planned write units of the writes DynamoDB stored in this call. */
  plannedUnits: number;
  /** Write units DynamoDB reported for them (ReturnConsumedCapacity), when it did. */
  consumedUnits?: number;
  throttle?: ThrottleSignal;
  /** Planned write units of the writes refused by the throttle. */
  throttledUnits?: number;
  /** The call got no answer to count (5xx, reset, timeout, lost reply): retried, never a rate signal. */
  error?: boolean;
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
  /** Rate cuts of the whole load (a probe's cut measured again from what the writers sent counts once). */
  decreases: number;
  /** Calls that failed without an answer (5xx, resets, timeouts, lost replies), all retried. */
  errors: number;
  /** Probes that found the throttles independent of the rate: the rate before the cut was restored. */
  restores: number;
  /** Share of write units throttled whatever the rate, as learned by probes (0 until one found noise). */
  noiseShare: number;
  /** Partition keys currently held below --key-wcu after their own throttles. */
  slowedKeys: number;
}

/** A change of rate worth telling the user about. */
export type RateChange =
  | { kind: 'decreased'; scope: 'table'; fromWcu: number | undefined; toWcu: number; reason: TableCutReason }
  /** `reason`: DynamoDB's ThrottlingReasons that named a key range, when it gave one (else the refusals pointed at one key). */
  | { kind: 'decreased'; scope: 'key'; key: string; toWcu: number; reason?: string | undefined }
  /** A probe found the throttles independent of the rate: the rate before the cut is back. */
  | { kind: 'restored'; scope: 'table'; toWcu: number; reason: 'noise'; lowShare: number; highShare: number };

/**
 * Why the whole load was cut: `probe`, throttles above the threshold, to be tested at the lower rate;
 * `capacity`, a probe found the throttles rise with the rate (or they came near a rate already found so).
 */
export type TableCutReason = 'probe' | 'capacity';

/** A probe of the table's rate, from the first cut until the verdict. */
interface Probe {
  /** The rate before the first cut (what was offered lately, without a target). */
  origin: number;
  /** The rate in force before the first cut was unlimited (no target). */
  unlimited: boolean;
  /** The test was started again from what the writers sent (#rebase): at most once. */
  rebased?: boolean;
  /** After a rebase, the rate before the first cut: what a noise verdict restores. */
  restoreTo?: number;
  stage: 'low' | 'high';
  /** When the stage (or the last cut of the low stage) began. */
  since: number;
  calls: number;
  units: number;
  throttledUnits: number;
  throttledCalls: number;
  /** Units stored in the stage: the delivery rate, which rises with the rate unless capacity binds. */
  stored: number;
  /**
   * Units the writers offered to the table in the stage (reserved, retries included): the send rate. When
   * it does not rise with the rate, the writers were the limit, not the rate, and a flat delivery rate
   * says nothing of the table (BBR's "application-limited" samples).
   */
  offered: number;
  /** The low stage's share, answers, delivery and send rates, once measured. */
  low?: { share: number; calls: number; rate: number; delivered: number; offered: number };
}

interface KeyState {
  bucket: TokenBucket;
  lastThrottle: number;
  lastDecrease: number;
}

export class RateController {
  #target: number;
  readonly #keyWcu: number;
  readonly #growth: RateControlOptions['growth'];
  #growthScale = 1;
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
  #errors = 0;
  #restores = 0;
  readonly #probeMs: number;
  #probe: Probe | undefined;
  /** Throttled share of units whatever the rate, learned by probes that found noise. */
  #noiseShare = 0;
  /** The lowest rate a probe found throttling with the rate, and when. */
  #capacityAt: { wcu: number; at: number } | undefined;
  /** A probe found capacity while still throttled: plain cuts until a quiet period. */
  #descending = false;
  /** Cuts without a probe since the capacity verdict that set #descending. */
  #descentCuts = 0;
  /** Units stored per whole second (ring of the last few seconds). */
  #secondUnits = new Map<number, number>();
  /** Units reserved (offered to the table) per whole second, and since when. */
  #offeredUnits = new Map<number, number>();
  /** Units refused by throttles of the table kind, per whole second. */
  #throttledUnits = new Map<number, number>();
  #peakOffered = 0;
  /** Answers (stored or throttled, not errors) and those throttled of the table kind, per whole second. */
  #answers = new Map<number, number>();
  #throttledAnswers = new Map<number, number>();
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
    this.#probeMs = options.probeMs ?? 2000;
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

  /**
   * A new target: this worker's share of a budget several workers divide, which changes as they start and
   * finish (load/sharedRate.ts). Lower, the rate drops to it at once. Higher, the rate goes up to it at
   * once unless the table throttled within the quiet period: the share was being used by a worker that
   * finished, so the table took it a moment ago; after a throttle it grows back as after any cut.
   * `growthScale`: on an on-demand table, this worker's part of the table's growth (its warm start and
   * cap) as a multiple of the part it was given at first: its part of the budget grows, so does its part of
   * what the table takes (else the last worker running stayed at the first 1/N of the table's warm rate).
   */
  setTarget(now: number, wcu: number, growthScale = 1): void {
    this.#adapt(now);
    this.#target = wcu;
    this.#growthScale = growthScale;
    const ceiling = this.#ceiling(now);
    const quiet = now >= this.#lastTableThrottle + this.#quietMs && this.#probe === undefined;
    if (this.#current > ceiling || (quiet && this.#current < ceiling)) {
      this.#current = ceiling;
      this.#table.setRate(now, ceiling);
    }
  }

  /**
   * Sends nothing more for `ms` from `now` (sends already reserved are not held back): a worker of a
   * shared budget heard again after a pause, while the others still hold its part (load/rateSharing.ts).
   */
  hold(now: number, ms: number): void {
    this.#adapt(now);
    this.#table.hold(now, ms);
  }

  /**
   * The most the load may send at `now`: the target, or on an on-demand table what its growth allows
   * (the warm throughput, twice the previous peak every window). Advice rests on it, not on the account quota.
   */
  reachableWcu(now: number): number {
    return this.#ceiling(now);
  }

  get keyWcu(): number {
    return this.#keyWcu;
  }

  /**
   * Reserves one send's writes on their partition keys' buckets; returns the milliseconds to wait.
   * Call reserveTable() after that wait, so a batch held back by a hot key does not hold table capacity.
   */
  reserveKeys(now: number, writes: Iterable<{ key: string; units: number }>): number {
    const perKey = new Map<string, number>();
    for (const w of writes) perKey.set(w.key, (perKey.get(w.key) ?? 0) + w.units);
    return this.reserveKeyUnits(now, perKey);
  }

  /** reserveKeys with the units already summed per partition key. */
  reserveKeyUnits(now: number, perKey: ReadonlyMap<string, number>): number {
    this.#adapt(now);
    let wait = 0;
    for (const [key, units] of perKey) wait = Math.max(wait, this.#keyState(now, key).bucket.reserve(now, units * this.#costRatio));
    return wait;
  }

  /** Reserves `units` planned write units on the table's budget; returns the milliseconds to wait. */
  reserveTable(now: number, units: number): number {
    this.#adapt(now);
    const cost = units * this.#costRatio;
    addTo(this.#offeredUnits, now, cost);
    const probe = this.#probe;
    if (probe && now >= probe.since + PROBE_SETTLE_MS) probe.offered += cost;
    // The best whole second offered (as #peak for what was stored): a rate over a few milliseconds, such
    // as the first batches sent at once, would make a floor far above what the table takes.
    this.#peakOffered = Math.max(this.#peakOffered, this.#offeredUnits.get(Math.floor(now / 1000) - 1) ?? 0);
    return this.#table.reserve(now, cost);
  }

  /** Takes in what one BatchWriteItem call came back with; returns a rate change to report, if any. */
  record(now: number, result: SendResult): RateChange[] {
    this.#adapt(now);
    if (result.error) {
      // Retried by the writer; an error says nothing about the rate.
      this.#errors++;
      return [];
    }
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
    addTo(this.#answers, now, 1);
    if (throttle?.scope === 'table') addTo(this.#throttledAnswers, now, 1);
    this.#observe(now, result);
    const verdict = this.#judge(now);
    if (verdict) changes.push(verdict);
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
        changes.push({ kind: 'decreased', scope: 'key', key, toWcu: to, ...(throttle.reason ? { reason: throttle.reason } : {}) });
      }
      return changes;
    }
    this.#tableThrottles++;
    addTo(this.#throttledUnits, now, result.throttledUnits ?? 0);
    // While the rate before the cut is measured again, throttles are the probe's data, not a trigger.
    if (this.#probe?.stage === 'high') return changes;
    const offered = this.#recent(this.#offeredUnits, now);
    const throttledShare = offered > 0 ? this.#recent(this.#throttledUnits, now) / offered : 1;
    if (throttledShare < this.#threshold()) return changes;
    // A few answers say little: 2 throttled of 4 happens often under noise.
    const answers = countOf(this.#answers, now);
    if (answers < TRIGGER_MIN_ANSWERS && countOf(this.#throttledAnswers, now) < answers) return changes;
    // During a probe's low stage the rate is cut again only once the stage is measured (in #judge), or
    // in a storm: a few throttles in one second among noise must not compound the cut to the floor.
    if (this.#probe?.stage === 'low' && throttledShare < STORM_SHARE) return changes;
    this.#lastTableThrottle = now;
    if (now - this.#lastTableDecrease < this.#cooldownMs) return changes;
    const cut = this.#cut(now, throttledShare);
    if (cut) changes.push(cut);
    return changes;
  }

  /** The share of offered units throttled that cuts the rate: above the noise learned so far. */
  #threshold(): number {
    const noise = this.#noiseShare;
    // At most a storm's share: a threshold above it (it was 0.9) let a noise share learned wrongly stop
    // every cut for good, capacity throttles near half the calls included (review finding).
    return noise > 0 ? Math.min(STORM_SHARE, Math.max(this.#throttleShare, 2 * noise, noise + 0.05)) : this.#throttleShare;
  }

  /** Cuts the load's rate by the decrease factor; opens a probe unless the rate is known capacity. */
  #cut(now: number, throttledShare: number): RateChange | undefined {
    this.#lastTableDecrease = now;
    this.#decreases++;
    const from = this.#current;
    // Without a target the rate in force is what was offered to the table lately.
    const base = Number.isFinite(from) ? from : Math.max(this.#recent(this.#offeredUnits, now), this.#achieved(now), MIN_RATE);
    this.#current = Math.max(this.#floor(now), base * this.#decrease);
    this.#table.setRate(now, this.#current);
    let reason: TableCutReason = 'probe';
    const known = this.#capacityAt;
    if (this.#probe) this.#probe = { ...this.#probe, ...freshStage(now) };
    else if (this.#descend(throttledShare) || (known && now - known.at < CAPACITY_MEMORY_MS && base >= 0.9 * known.wcu)) reason = 'capacity';
    else this.#probe = { origin: base, unlimited: !Number.isFinite(from), stage: 'low', ...freshStage(now) };
    return { kind: 'decreased', scope: 'table', fromWcu: Number.isFinite(from) ? from : undefined, toWcu: this.#current, reason };
  }

  /**
   * Whether a cut after a capacity verdict goes down without a probe: in a storm, or for the first
   * MAX_DESCENT_CUTS cuts. Unbounded plain cuts ran a load down to the floor on noise a verdict had
   * misread as capacity (seen in CI: nine cuts, none undone); after them a probe tests again.
   */
  #descend(throttledShare: number): boolean {
    if (!this.#descending) return false;
    if (throttledShare < STORM_SHARE && this.#descentCuts >= MAX_DESCENT_CUTS) return false;
    this.#descentCuts++;
    return true;
  }

  /** A stage is measured after probeMs and PROBE_MIN_CALLS answers, or 4 × probeMs and a quarter of them (few calls at a low rate). */
  #measured(probe: Probe, elapsed: number): boolean {
    if (elapsed < this.#probeMs) return false;
    return probe.calls >= PROBE_MIN_CALLS || (elapsed >= 4 * this.#probeMs && probe.calls >= PROBE_MIN_CALLS / 4);
  }

  /** Counts one answer into the probe's stage (answers to calls sent before the stage are skipped). */
  #observe(now: number, result: SendResult): void {
    const probe = this.#probe;
    if (!probe || now < probe.since + PROBE_SETTLE_MS) return;
    const throttled = result.throttle?.scope === 'table' ? (result.throttledUnits ?? 0) : 0;
    probe.calls++;
    probe.units += result.plannedUnits + throttled;
    probe.throttledUnits += throttled;
    probe.stored += result.plannedUnits;
    if (result.throttle?.scope === 'table') probe.throttledCalls++;
  }

  /**
   * The cut did not hold the writers back: they sent less than the lower rate (the rate before the cut
   * was measured in a burst at the start, or the writers wait on a busy machine or in backoff), so both
   * stages would see the same load and tell nothing; a noise verdict from them learned capacity
   * throttles as noise and raised the threshold above them (seen: 40% throttled at 8x the capacity,
   * judged noise). Once per probe, the test starts again from what the writers did send.
   */
  #rebase(now: number, probe: Probe, sent: number, floor: number): RateChange {
    const from = this.#current;
    // The same probe's cut, measured again: not one more cut (a noise verdict undoes both).
    this.#current = Math.max(floor, sent * this.#decrease);
    this.#table.setRate(now, this.#current);
    this.#lastTableDecrease = now;
    this.#probe = { ...probe, origin: sent, restoreTo: probe.origin, rebased: true, ...freshStage(now) };
    return { kind: 'decreased', scope: 'table', fromWcu: from, toWcu: this.#current, reason: 'probe' };
  }

  /** The least rate a cut leaves: a share of the ceiling, or without one of the best rate offered. */
  #floor(now: number): number {
    const ceiling = this.#ceiling(now);
    return Math.max(MIN_RATE, FLOOR_SHARE * (Number.isFinite(ceiling) ? ceiling : this.#peakOffered));
  }

  /** Moves a probe on once its stage is measured; returns the verdict to report, if any. */
  #judge(now: number): RateChange | undefined {
    const probe = this.#probe;
    if (!probe) return undefined;
    const elapsed = now - probe.since - PROBE_SETTLE_MS;
    const share = probe.units > 0 ? probe.throttledUnits / probe.units : probe.calls > 0 ? probe.throttledCalls / probe.calls : 0;
    if (probe.stage === 'low') {
      // Grown back to where it was by the plain rule: nothing left to test.
      if (this.#current >= probe.origin) {
        this.#probe = undefined;
        return undefined;
      }
      if (!this.#measured(probe, elapsed)) return undefined;
      const sent = (probe.offered / elapsed) * 1000;
      const floor = this.#floor(now);
      // Only a stage that saw throttles: without any, a stall of the writers says nothing to test again
      // (and a rebase from it would drop an unthrottled load to the floor).
      if (!probe.rebased && sent < 0.8 * this.#current && probe.throttledUnits > 0 && sent * this.#decrease > floor)
        return this.#rebase(now, probe, sent, floor);
      // Then the rate before the cut again, to see whether the throttles come back with it.
      this.#probe = {
        ...probe,
        stage: 'high',
        ...freshStage(now),
        low: { share, calls: probe.calls, rate: this.#current, delivered: probe.stored / elapsed, offered: probe.offered / elapsed },
      };
      this.#current = probe.origin;
      this.#table.setRate(now, this.#current);
      return undefined;
    }
    return this.#verdict(now, probe, share, elapsed);
  }

  /** The higher stage's verdict: capacity (the lower rate stays) or noise (the tested rate comes back). */
  #verdict(now: number, probe: Probe, share: number, elapsed: number): RateChange | undefined {
    const low = probe.low!;
    // A storm ends the stage early; 5 or 10 answers held it too often under noise alone (6 of 10 throttled).
    const storm = probe.calls >= STORM_MIN_CALLS && share >= STORM_SHARE && share > low.share + 0.25;
    if (!storm && !this.#measured(probe, elapsed) && elapsed < PROBE_MAX_MS) return undefined;
    this.#probe = undefined;
    const pooled = (low.share + share) / 2;
    // Three standard errors of the difference of two shares. Two took noise for capacity: the higher stage
    // reads about one standard error more throttled under noise alone (throttles are answered at once,
    // stored writes after the round trip, which grows with the rate, so more of them are still out when
    // the stage is judged; seen over six loads in CI: +0.02 to +0.09 on shares of 0.14-0.16). Capacity
    // near the lower rate adds about 0.3 (1 - 1/1.43).
    const margin = Math.max(0.03, 3 * Math.sqrt(pooled * (1 - pooled) * (1 / Math.max(1, low.calls) + 1 / Math.max(1, probe.calls))));
    this.#lastTableDecrease = now;
    // BBR's signal: below capacity the delivery rate rises with the send rate; at capacity it stays flat.
    // Only when the cut held the writers back: writers that could not reach even the lower rate (a busy
    // machine, replies held for seconds) send the same at both rates whatever the table takes, and reading
    // that as capacity cut an unthrottled load under noise alone to a fifth of its speed (seen in CI).
    const span = Math.max(1, elapsed);
    const cutBound = low.offered * 1000 >= 0.8 * low.rate;
    const sentGain = low.offered > 0 ? probe.offered / span / low.offered : 1;
    // Flat: delivery rose by less than 5%, or by less than a quarter of what sending rose. Against the rise
    // the rate allowed (as before) this misread noise, whose throttled and failed shares swing from stage
    // to stage (seen: sending +37%, delivery +18%, throttled shares within the margin); at capacity the
    // writers send little more (throttled writes wait in backoff) and deliver no more (seen: -5% and 0%).
    const flat = cutBound && low.delivered > 0 && probe.stored / span < low.delivered * Math.max(1.05, 1 + 0.25 * (sentGain - 1));
    // Half the calls or more throttled at both rates is never accepted as noise: both stages were above
    // capacity (seen: 0.53 and 0.59 at 2,450 and 5,000 WCU/s on a table taking 1,000).
    const saturated = Math.min(low.share, share) >= STORM_SHARE;
    if (storm || probe.calls < 5 || share > low.share + margin || flat || saturated) {
      // Throttles rose with the rate: capacity. Back to the lower rate, remembered as near capacity.
      this.#current = low.rate;
      this.#table.setRate(now, this.#current);
      this.#lastTableThrottle = now;
      this.#capacityAt = { wcu: low.rate / this.#decrease, at: now };
      this.#descending = low.share >= this.#threshold();
      this.#descentCuts = 0;
      this.#decreases++;
      return { kind: 'decreased', scope: 'table', fromWcu: probe.origin, toWcu: low.rate, reason: 'capacity' };
    }
    // As many throttles at either rate: noise. The rate before the cut comes back (unlimited when it was
    // unlimited); the noise share is learned from the lower
    // of the two (capacity only adds throttles), slowly, so one misjudged probe cannot raise it far.
    this.#restores++;
    this.#descending = false;
    // Unlimited again when it was unlimited: noise is no reason for any limit (a cut right at the start,
    // from a rate measured over a few hundred ms, would otherwise leave the load crawling back from it).
    // A probe of a finite rate tested only that rate: back to it, not to unlimited, which sent bursts at
    // 10x a capacity lying between the two rates that the shares could not tell (review finding).
    const back = probe.unlimited ? Infinity : Math.max(this.#current, probe.restoreTo ?? probe.origin);
    this.#current = Math.min(back, this.#ceiling(now));
    this.#table.setRate(now, this.#current);
    // Noise is learned only from a probe whose higher stage did send more: one that could not tested no
    // rate, and learning its throttles as noise raised the threshold above real capacity throttles.
    if (sentGain >= MIN_TESTED_GAIN) {
      const noise = Math.min(low.share, share);
      this.#noiseShare = this.#noiseShare > 0 ? this.#noiseShare + 0.3 * (noise - this.#noiseShare) : noise;
    }
    return {
      kind: 'restored',
      scope: 'table',
      toWcu: Number.isFinite(this.#current) ? this.#current : probe.origin,
      reason: 'noise',
      lowShare: low.share,
      highShare: share,
    };
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
      errors: this.#errors,
      restores: this.#restores,
      noiseShare: this.#noiseShare,
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
    // A capacity found is forgotten once the rate is well above it without throttles (capacity grew).
    if (this.#capacityAt && this.#current > 1.25 * this.#capacityAt.wcu) this.#capacityAt = undefined;
    if (now > quietFrom) this.#descending = false;
    if (this.#probe?.stage === 'high') {
      // The rate before the cut is held while it is measured.
    } else if (now > quietFrom && this.#current < ceiling) {
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
    const scale = this.#growthScale;
    return Math.min(this.#target, growth.cap * scale, Math.max(growth.initial * scale, growth.factor * before));
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

/** A probe stage's counters, from `since` on. */
function freshStage(since: number): Pick<Probe, 'since' | 'calls' | 'units' | 'throttledUnits' | 'throttledCalls' | 'stored' | 'offered'> {
  return { since, calls: 0, units: 0, throttledUnits: 0, throttledCalls: 0, stored: 0, offered: 0 };
}

/** What `perSecond` holds for the current and the previous whole second. */
function countOf(perSecond: Map<number, number>, now: number): number {
  const second = Math.floor(now / 1000);
  return (perSecond.get(second) ?? 0) + (perSecond.get(second - 1) ?? 0);
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
  const keyRange = reasons.find((r) => r.includes('KeyRange'));
  if (keyRange !== undefined) return { scope: 'key', keys: refused, reason: keyRange };
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
  /** The fewest shards that bring the key under its limit: ceil(required rate / per-key limit). */
  minShards: number;
  /** The usual write-sharding advice: twice the minimum, for headroom. */
  recommendedShards: number;
}

/**
 * The key that bounds the load's duration, if any: its units at `keyWcu` take longer than all units at
 * `loadWcu` (the target, or the rate reached when there was none).
 */
export function findBottleneck(
  heaviest: { key: string; weight: number } | undefined,
  totalUnits: number,
  loadWcu: number,
  keyWcu: number,
): Bottleneck | undefined {
  if (!heaviest || totalUnits <= 0 || !(loadWcu > 0) || !Number.isFinite(loadWcu)) return undefined;
  const loadSeconds = totalUnits / loadWcu;
  const keySeconds = heaviest.weight / keyWcu;
  if (keySeconds <= loadSeconds) return undefined;
  const requiredWcu = heaviest.weight / loadSeconds;
  const minShards = Math.ceil(requiredWcu / keyWcu);
  return {
    key: heaviest.key,
    units: heaviest.weight,
    share: heaviest.weight / totalUnits,
    keySeconds,
    loadSeconds,
    requiredWcu,
    minShards,
    recommendedShards: 2 * minShards,
  };
}
