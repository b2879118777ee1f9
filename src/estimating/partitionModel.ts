import { hash32 } from '../shared/hash.js';
/**
 * A model of how a DynamoDB table admits writes: partitions with token buckets, a per-partition ceiling
 * and a table bucket. The partition proxy of the tests puts it in front of DynamoDB Local (which never
 * throttles); a dry-run estimator can drive it with simulated time. Pure and deterministic: time is
 * passed in as monotonic milliseconds, and the same calls give the same answers.
 *
 * Rules (AWS "Best Practices for Tables", "Understand Partition Behavior", and the burst / adaptive capacity pages):
 * - Partition count: ceil(RCU / 3000 + WCU / 1000), at least one per ~10 GB of data.
 * - Each partition sustains tableWcu / partitions, never more than 1000 WCU/s.
 * - Unused capacity is retained for up to 300 s (burst), for the table and for each partition.
 * - "Burst capacity can't alleviate partition-level throttling": a partition never takes more than
 *   1000 WCU in a second, whatever it has saved up.
 *
 * Simplifications against real DynamoDB (a model, not a replica):
 * - Partition key values are hashed with FNV-1a + a murmur3 finaliser onto contiguous ranges, not with
 *   DynamoDB's internal hash: which keys share a partition differs from a real table, the statistics
 *   (how many keys per partition, how a hot key behaves) do not.
 * - Partitions never split (not for heat, not for size while loading); the count is fixed at construction.
 * - Adaptive capacity is either off (each partition keeps its even share) or, with `adaptiveCapacity`,
 *   idealised as instant and complete. Real adaptive capacity is best effort and may lag.
 * - Burst is always available; DynamoDB may spend it on background work without notice.
 * - A write costs exactly the WCU it is given; the caller decides (overwrites charged on the larger of
 *   the old and new item, deletes charged on the deleted item's size, and GSI writes are the caller's to add).
 * - The per-partition ceiling is counted in whole seconds since time 0 (see PartitionModel).
 */

/** One partition's maximum write rate on DynamoDB, WCU/s. */
export const PARTITION_MAX_WCU = 1000;
/** A partition's read maximum is 3 times its write maximum (3000 RCU vs 1000 WCU). */
const READ_TO_WRITE_MAX = 3;
/** "A single partition can hold approximately 10 GB of data." */
export const PARTITION_MAX_BYTES = 10 * 1024 ** 3;

/**
 * Tolerance for float comparisons: refills of rate × elapsed ms are not exact in binary, and a client
 * paced at exactly the rate must not be refused for 1e-13 of a unit.
 */
const EPSILON = 1e-9;

export interface PartitionModelOptions {
  /** Table write capacity per second: provisioned WCU, or for on-demand the throughput it sustains. */
  tableWcu: number;
  /** Provisioned RCU, only for the partition count (AWS "Initial Allocation of Partitions": ceil(RCU/3000 + WCU/1000)). @default 0 */
  tableRcu?: number;
  /** Table size, for splits by size (~10 GB a partition). @default 0 */
  sizeBytes?: number;
  /** Fixed partition count, overriding the formula. */
  partitions?: number;
  /**
   * Per-partition ceiling in WCU/s; 1000 on DynamoDB. Tests scale it down (e.g. 100) so loads are small
   * and quick; the partition-count formula uses it in place of 1000 (and 3 x it in place of 3000).
   * @default 1000
   */
  partitionMaxWcu?: number;
  /**
   * Seconds of unused capacity a partition and the table retain (burst). A bucket always holds at least
   * one second of its rate, so 0 means "no burst" rather than "no capacity". @default 300
   */
  burstSeconds?: number;
  /** Seconds of capacity in the buckets at time 0 (capped at the burst capacity). @default 1 */
  initialSeconds?: number;
  /**
   * Idealised adaptive capacity: a partition may use whatever the table has left, up to partitionMaxWcu,
   * so its sustained rate becomes partitionMaxWcu and the table bucket is the limit that binds for a hot
   * key. Off by default: with even shares the table bucket never refuses first (its tokens are always
   * at least the sum of the partitions' tokens), which is the old, documented per-partition behaviour.
   * @default false
   */
  adaptiveCapacity?: boolean;
}

/**
 * Partitions a table starts with (AWS "Best Practices for Tables", "Initial Allocation of Partitions"), and at least one per
 * ~10 GB of data ("Subsequent Allocation of Partitions"). `partitionMaxWcu` scales the 1000 / 3000.
 */
export function partitionCount(opts: { wcu: number; rcu?: number; sizeBytes?: number; partitionMaxWcu?: number }): number {
  const maxWcu = opts.partitionMaxWcu ?? PARTITION_MAX_WCU;
  const rcu = opts.rcu ?? 0;
  const sizeBytes = opts.sizeBytes ?? 0;
  requireFinite('wcu', opts.wcu, 0);
  requireFinite('rcu', rcu, 0);
  requireFinite('sizeBytes', sizeBytes, 0);
  requirePositive('partitionMaxWcu', maxWcu);
  // The epsilon keeps a sum of exact multiples (1000/3000 + 2000/3000) from rounding up on a float's
  // last bit. Sizes are whole bytes divided by a power of two: exact, and one byte over must count.
  const byThroughput = Math.ceil(rcu / (READ_TO_WRITE_MAX * maxWcu) + opts.wcu / maxWcu - EPSILON);
  const bySize = Math.ceil(sizeBytes / PARTITION_MAX_BYTES);
  return Math.max(1, byThroughput, bySize);
}

/**
 * Stable hash of a partition key value (its text: S as is, N canonical text, B base64) to
 * 0..partitions-1. The hash picks a point on [0, 2^32) and each partition owns a contiguous range of it,
 * like DynamoDB's key ranges, so doubling the partition count splits every range in two.
 */
export function partitionOf(partitionKey: string, partitions: number): number {
  return Math.floor((hash32(partitionKey) * partitions) / 4294967296);
}

export type ThrottleScope = 'partition' | 'table';

export interface ModelWrite {
  partitionKey: string;
  wcu: number;
}

export type AdmitResult = { readonly accepted: true } | { readonly accepted: false; readonly scope: ThrottleScope };

// Shared, frozen answers: admitting millions of writes must not allocate one object per write.
const ACCEPTED: AdmitResult = Object.freeze({ accepted: true });
const REFUSED_PARTITION: AdmitResult = Object.freeze({ accepted: false, scope: 'partition' });
const REFUSED_TABLE: AdmitResult = Object.freeze({ accepted: false, scope: 'table' });

export interface ModelCounters {
  acceptedItems: number;
  acceptedWcu: number;
  throttledItems: number;
  throttledWcu: number;
}

export interface PartitionModelStats extends ModelCounters {
  partitions: number;
  partitionWcu: number;
  /** Throttled items and WCU by the limit that refused them. */
  throttledByScope: Record<ThrottleScope, { items: number; wcu: number }>;
  /** Index = partition. */
  perPartition: ModelCounters[];
  /**
   * Index = whole second since time 0 (floor(nowMs / 1000)), from 0 to the last second anything was
   * admitted or refused, dense (quiet seconds are zeros); inner index = partition.
   */
  perSecond: Array<{ second: number; acceptedWcu: number[]; throttledWcu: number[] }>;
}

/**
 * The admission model. Per partition:
 * - a burst bucket refilling at partitionWcu, holding up to partitionWcu × burstSeconds;
 * - a ceiling: at most partitionMaxWcu accepted in each whole second since time 0. A fixed window rather
 *   than a second token bucket, because a bucket of rate M and capacity M lets up to 2M through in one
 *   second (a full bucket plus a second of refill), and "never more than M in a second" is the rule;
 *   it is also exactly what the per-second statistics can show.
 * And one table bucket refilling at tableWcu, holding up to tableWcu × burstSeconds.
 *
 * A write is accepted when the table bucket and both limits of its partition have room for its WCU;
 * refused writes spend nothing. Buckets do not go negative, with one exception: a write larger than a
 * bucket's capacity (only possible with a scaled-down partitionMaxWcu) is accepted from a full bucket
 * and leaves it in debt, and over the ceiling in an otherwise empty second with the excess carried into
 * the following seconds, so large items are slow, never impossible, and the long-run rates still hold.
 *
 * Time (`nowMs`) is monotonic milliseconds since time 0 and must never decrease from one call to the
 * next; a decreasing time throws a RangeError (it is a caller bug, and refilling backwards would mint
 * capacity). Writes within one call are admitted in order, at the same instant.
 */
export class PartitionModel {
  readonly partitions: number;
  /** Sustained rate of one partition: min(tableWcu / partitions, partitionMaxWcu) (partitionMaxWcu with adaptiveCapacity). */
  readonly partitionWcu: number;
  readonly partitionMaxWcu: number;
  readonly tableWcu: number;

  private readonly partitionCap: number;
  private readonly tableCap: number;

  private readonly burst: Float64Array;
  private readonly burstAt: Float64Array;
  private readonly ceilingSecond: Float64Array;
  private readonly ceilingUsed: Float64Array;
  private tableTokens: number;
  private tableAt = 0;
  private lastMs = 0;

  private readonly pAcceptedItems: Float64Array;
  private readonly pAcceptedWcu: Float64Array;
  private readonly pThrottledItems: Float64Array;
  private readonly pThrottledWcu: Float64Array;
  /** Rows per whole second, created when the second sees its first write. */
  private readonly secAccepted: Array<Float64Array | undefined> = [];
  private readonly secThrottled: Array<Float64Array | undefined> = [];
  private throttledTableItems = 0;
  private throttledTableWcu = 0;

  constructor(options: PartitionModelOptions) {
    const maxWcu = options.partitionMaxWcu ?? PARTITION_MAX_WCU;
    const burstSeconds = options.burstSeconds ?? 300;
    const initialSeconds = options.initialSeconds ?? 1;
    requirePositive('tableWcu', options.tableWcu);
    requirePositive('partitionMaxWcu', maxWcu);
    requireFinite('burstSeconds', burstSeconds, 0);
    requireFinite('initialSeconds', initialSeconds, 0);
    if (options.partitions !== undefined && !(Number.isSafeInteger(options.partitions) && options.partitions >= 1)) {
      throw new RangeError(`partitions must be a positive integer, got ${options.partitions}`);
    }

    this.tableWcu = options.tableWcu;
    this.partitionMaxWcu = maxWcu;
    this.partitions =
      options.partitions ?? partitionCount({ wcu: options.tableWcu, rcu: options.tableRcu ?? 0, sizeBytes: options.sizeBytes ?? 0, partitionMaxWcu: maxWcu });
    this.partitionWcu = options.adaptiveCapacity ? maxWcu : Math.min(options.tableWcu / this.partitions, maxWcu);

    const heldSeconds = Math.max(1, burstSeconds);
    this.partitionCap = this.partitionWcu * heldSeconds;
    this.tableCap = this.tableWcu * heldSeconds;
    this.tableTokens = Math.min(this.tableCap, this.tableWcu * initialSeconds);

    const n = this.partitions;
    this.burst = new Float64Array(n).fill(Math.min(this.partitionCap, this.partitionWcu * initialSeconds));
    this.burstAt = new Float64Array(n);
    this.ceilingSecond = new Float64Array(n);
    this.ceilingUsed = new Float64Array(n);
    this.pAcceptedItems = new Float64Array(n);
    this.pAcceptedWcu = new Float64Array(n);
    this.pThrottledItems = new Float64Array(n);
    this.pThrottledWcu = new Float64Array(n);
  }

  /**
   * Admits the writes of one BatchWriteItem call at time nowMs (monotonic ms); each accepted write
   * spends its wcu; returns per write whether it was accepted and, if not, which limit refused it.
   * When both a partition limit and the table would refuse, the scope is 'partition'.
   */
  admit(nowMs: number, writes: readonly ModelWrite[]): AdmitResult[] {
    this.advance(nowMs);
    const results = new Array<AdmitResult>(writes.length);
    for (let i = 0; i < writes.length; i++) {
      const write = writes[i]!;
      results[i] = this.admitAt(nowMs, partitionOf(write.partitionKey, this.partitions), write.wcu);
    }
    return results;
  }

  /** admit() for one write, without the array. */
  admitOne(nowMs: number, partitionKey: string, wcu: number): AdmitResult {
    this.advance(nowMs);
    return this.admitAt(nowMs, partitionOf(partitionKey, this.partitions), wcu);
  }

  /** admitOne() for a caller that has already hashed the key with partitionOf(key, this.partitions). */
  admitToPartition(nowMs: number, partition: number, wcu: number): AdmitResult {
    if (!(Number.isInteger(partition) && partition >= 0 && partition < this.partitions)) {
      throw new RangeError(`partition must be an integer in 0..${this.partitions - 1}, got ${partition}`);
    }
    this.advance(nowMs);
    return this.admitAt(nowMs, partition, wcu);
  }

  /** The partition a key value lands on in this model. */
  partitionOf(partitionKey: string): number {
    return partitionOf(partitionKey, this.partitions);
  }

  /** Counters: accepted/throttled items and WCU in total, per partition, and per whole second per partition. */
  stats(): PartitionModelStats {
    const perPartition: ModelCounters[] = [];
    let acceptedItems = 0;
    let acceptedWcu = 0;
    let throttledItems = 0;
    let throttledWcu = 0;
    for (let p = 0; p < this.partitions; p++) {
      const counters = {
        acceptedItems: this.pAcceptedItems[p]!,
        acceptedWcu: this.pAcceptedWcu[p]!,
        throttledItems: this.pThrottledItems[p]!,
        throttledWcu: this.pThrottledWcu[p]!,
      };
      perPartition.push(counters);
      acceptedItems += counters.acceptedItems;
      acceptedWcu += counters.acceptedWcu;
      throttledItems += counters.throttledItems;
      throttledWcu += counters.throttledWcu;
    }
    const perSecond: PartitionModelStats['perSecond'] = [];
    const zeros = new Array<number>(this.partitions).fill(0);
    const seconds = Math.max(this.secAccepted.length, this.secThrottled.length);
    for (let s = 0; s < seconds; s++) {
      const accepted = this.secAccepted[s];
      const throttled = this.secThrottled[s];
      perSecond.push({
        second: s,
        acceptedWcu: accepted ? Array.from(accepted) : zeros.slice(),
        throttledWcu: throttled ? Array.from(throttled) : zeros.slice(),
      });
    }
    return {
      partitions: this.partitions,
      partitionWcu: this.partitionWcu,
      acceptedItems,
      acceptedWcu,
      throttledItems,
      throttledWcu,
      throttledByScope: {
        partition: { items: throttledItems - this.throttledTableItems, wcu: throttledWcu - this.throttledTableWcu },
        table: { items: this.throttledTableItems, wcu: this.throttledTableWcu },
      },
      perPartition,
      perSecond,
    };
  }

  /** Checks the clock and refills the table bucket, once per call (every write of a call shares the instant). */
  private advance(nowMs: number): void {
    if (!(nowMs >= this.lastMs) || !Number.isFinite(nowMs)) {
      throw new RangeError(`time must be finite and never decrease: got ${nowMs} ms after ${this.lastMs} ms`);
    }
    this.lastMs = nowMs;
    if (nowMs > this.tableAt) {
      this.tableTokens = Math.min(this.tableCap, this.tableTokens + (this.tableWcu * (nowMs - this.tableAt)) / 1000);
      this.tableAt = nowMs;
    }
  }

  private admitAt(nowMs: number, p: number, wcu: number): AdmitResult {
    if (!(wcu >= 0) || !Number.isFinite(wcu)) throw new RangeError(`wcu must be a finite number >= 0, got ${wcu}`);

    // Lazy refill: a partition's bucket is brought up to date only when one of its keys is written.
    const since = nowMs - this.burstAt[p]!;
    if (since > 0) {
      this.burst[p] = Math.min(this.partitionCap, this.burst[p]! + (this.partitionWcu * since) / 1000);
      this.burstAt[p] = nowMs;
    }
    const second = Math.floor(nowMs / 1000);
    const windowSecond = this.ceilingSecond[p]!;
    if (second > windowSecond) {
      // A new second: the ceiling resets, less any debt an oversized write carried over.
      this.ceilingUsed[p] = Math.max(0, this.ceilingUsed[p]! - this.partitionMaxWcu * (second - windowSecond));
      this.ceilingSecond[p] = second;
    }

    const used = this.ceilingUsed[p]!;
    const ceilingRoom = wcu <= this.partitionMaxWcu ? used + wcu <= this.partitionMaxWcu + EPSILON : used <= EPSILON;
    let result: AdmitResult;
    if (!ceilingRoom || this.burst[p]! + EPSILON < Math.min(wcu, this.partitionCap)) {
      result = REFUSED_PARTITION;
    } else if (this.tableTokens + EPSILON < Math.min(wcu, this.tableCap)) {
      result = REFUSED_TABLE;
    } else {
      result = ACCEPTED;
    }

    if (result === ACCEPTED) {
      this.burst[p] = this.burst[p]! - wcu;
      this.ceilingUsed[p] = used + wcu;
      this.tableTokens -= wcu;
      this.pAcceptedItems[p] = this.pAcceptedItems[p]! + 1;
      this.pAcceptedWcu[p] = this.pAcceptedWcu[p]! + wcu;
      const row = secondRow(this.secAccepted, second, this.partitions);
      row[p] = row[p]! + wcu;
    } else {
      this.pThrottledItems[p] = this.pThrottledItems[p]! + 1;
      this.pThrottledWcu[p] = this.pThrottledWcu[p]! + wcu;
      if (result === REFUSED_TABLE) {
        this.throttledTableItems++;
        this.throttledTableWcu += wcu;
      }
      const row = secondRow(this.secThrottled, second, this.partitions);
      row[p] = row[p]! + wcu;
    }
    return result;
  }
}

function secondRow(rows: Array<Float64Array | undefined>, second: number, partitions: number): Float64Array {
  let row = rows[second];
  if (row === undefined) {
    // Fill the gap with undefined rather than leaving holes, so the array stays packed.
    while (rows.length < second) rows.push(undefined);
    row = new Float64Array(partitions);
    rows[second] = row;
  }
  return row;
}

function requireFinite(name: string, value: number, min: number): void {
  if (!(Number.isFinite(value) && value >= min)) throw new RangeError(`${name} must be a finite number >= ${min}, got ${value}`);
}

function requirePositive(name: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be a finite number > 0, got ${value}`);
}
