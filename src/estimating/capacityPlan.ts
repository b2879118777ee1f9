import { formatCount, formatDuration, formatRate } from '../shared/format.js';
import type { CapacityPlan } from './estimateTypes.js';
import { PARTITION_MAX_WCU, partitionCount } from './partitionModel.js';

/**
 * What a load does to a provisioned table's partitions, and the slower load that leaves them alone
 * (AWS "Best Practices for Tables", "Understand Partition Behavior"):
 * - a table has ceil(RCU / 3000 + WCU / 1000) partitions, and at least one per ~10 GB;
 * - "If you increase a table's provisioned throughput and the table's current partitioning scheme cannot
 *   accommodate your new requirements, DynamoDB will double the current number of partitions";
 * - "If you reduce the amount of provisioned throughput for your table, DynamoDB will not decrease the
 *   number of partitions": after the load, the table's usual WCU is spread over every partition the
 *   raise created (AWS's bulk-load example: 11 partitions, ~20 WCU each back at 200 WCU).
 * The partition count is a lower bound: a table raised before, or split for heat, may have more.
 */
export interface CapacityPlanInput {
  /** Write units the load costs the table (AWS's bulk-load example: 20M items of 1 KB = 20M). */
  totalWcu: number;
  /** The rate the load runs at, write units per second. */
  targetWcu: number;
  billingMode: 'PROVISIONED' | 'PAY_PER_REQUEST';
  /** The table's provisioned WCU now; for a new table, the WCU it will be set back to after the load. */
  provisionedWcu?: number;
  provisionedRcu?: number;
  /** The table's size now, bytes (~10 GB a partition). */
  sizeBytes?: number;
  /**
   * The table is created for the load at the load's capacity (AWS's bulk-load example): its partitions come
   * from the initial formula rather than from doubling. A provisioned table without provisionedWcu is
   * taken as new too.
   */
  newTable?: boolean;
}

const READ_PER_WRITE = 3;
/** Same tolerance as partitionCount: 11,000 WCU must be 11 partitions, not 12 on a float's last bit. */
const EPSILON = 1e-9;

export function planCapacity(input: CapacityPlanInput): CapacityPlan {
  const { totalWcu, targetWcu } = input;
  requireFinite('totalWcu', totalWcu, 0);
  if (!(Number.isFinite(targetWcu) && targetWcu > 0)) throw new RangeError(`targetWcu must be a finite number > 0, got ${targetWcu}`);
  if (input.billingMode === 'PAY_PER_REQUEST') return onDemandPlan(targetWcu);

  const rcu = input.provisionedRcu ?? 0;
  const sizeBytes = input.sizeBytes ?? 0;
  const currentWcu = input.provisionedWcu;
  requireFinite('provisionedRcu', rcu, 0);
  requireFinite('sizeBytes', sizeBytes, 0);
  if (currentWcu !== undefined) requireFinite('provisionedWcu', currentWcu, 0);

  // Provisioned capacity is whole units; rounding down would miss the duration.
  const loadWcu = Math.ceil(targetWcu - EPSILON);
  const shape: TableShape = { rcu, sizeBytes, totalWcu, loadWcu };
  return input.newTable === true || currentWcu === undefined ? newTablePlan(shape, currentWcu) : raisePlan(shape, currentWcu);
}

interface TableShape {
  rcu: number;
  sizeBytes: number;
  totalWcu: number;
  loadWcu: number;
}

/** A table created at the load's capacity: the initial formula, then back to its usual WCU (AWS's bulk-load example). */
function newTablePlan({ rcu, sizeBytes, totalWcu, loadWcu }: TableShape, usualWcu: number | undefined): CapacityPlan {
  // The table it would be without the load: created at its usual WCU (or the minimum).
  const partitionsUsual = partitionCount({ rcu, wcu: usualWcu ?? 0, sizeBytes });
  const partitionsAfterRaise = partitionCount({ rcu, wcu: loadWcu, sizeBytes });
  const noSplitWcu = maxWcuHeldBy(partitionsUsual, rcu);
  const noSplitSeconds = totalWcu / noSplitWcu;
  const perPartitionWcuAfterLoad = usualWcu === undefined ? undefined : usualWcu / partitionsAfterRaise;
  const afterLoad =
    usualWcu === undefined
      ? `once the load is done, each partition gets 1/${partitionsAfterRaise} of the table's WCU.`
      : `back at ${formatCount(usualWcu)} WCU each partition gets ${formatRate(usualWcu / partitionsAfterRaise)} WCU/s.`;
  const advice = [
    `Creating the table at ${formatCount(loadWcu)} WCU for this load (${formatDuration(totalWcu / loadWcu)}) gives it ${partitions(partitionsAfterRaise)}, which are never merged: ${afterLoad}`,
  ];
  if (partitionsAfterRaise > partitionsUsual) {
    advice.push(
      `Created at ${formatCount(noSplitWcu)} WCU, the most ${partitions(partitionsUsual)} ${hold(partitionsUsual)}, the load takes ${formatDuration(noSplitSeconds)} and the table keeps ${partitions(partitionsUsual)}.`,
    );
  }
  return { loadWcu, partitionsAfterRaise, perPartitionWcuAfterLoad, noSplitWcu, noSplitSeconds, advice };
}

/** An existing table raised to the load's capacity for the load, then set back to its current WCU. */
function raisePlan({ rcu, sizeBytes, totalWcu, loadWcu }: TableShape, currentWcu: number): CapacityPlan {
  const partitionsNow = partitionCount({ rcu, wcu: currentWcu, sizeBytes });
  const partitionsAfterRaise = currentWcu >= loadWcu ? partitionsNow : doubledPartitions(partitionsNow, rcu, loadWcu);
  const noSplitWcu = maxWcuHeldBy(partitionsNow, rcu);
  const noSplitSeconds = totalWcu / noSplitWcu;
  const perPartitionWcuAfterLoad = currentWcu / partitionsAfterRaise;
  const duration = formatDuration(totalWcu / loadWcu);
  const advice: string[] = [];
  if (currentWcu >= loadWcu) {
    advice.push(
      `The table's ${formatCount(currentWcu)} provisioned WCU cover the load's ${formatCount(loadWcu)} WCU/s (${duration}): no change of capacity, no new partition.`,
    );
  } else if (partitionsAfterRaise === partitionsNow) {
    advice.push(
      `Raising the table from ${formatCount(currentWcu)} to ${formatCount(loadWcu)} WCU for this load (${duration}) adds no partition: its ${partitions(partitionsNow)} ${hold(partitionsNow)} up to ${formatCount(noSplitWcu)} WCU.`,
    );
  } else {
    advice.push(
      `Raising the table from ${formatCount(currentWcu)} to ${formatCount(loadWcu)} WCU for this load (${duration}) splits it from ${partitions(partitionsNow)} into ${partitionsAfterRaise} ` +
        `(DynamoDB doubles the partitions until they hold the new capacity), which are never merged: back at ${formatCount(currentWcu)} WCU each partition gets ${formatRate(perPartitionWcuAfterLoad)} WCU/s.`,
      `At ${formatCount(noSplitWcu)} WCU, the most its ${partitions(partitionsNow)} ${hold(partitionsNow)}, the load takes ${formatDuration(noSplitSeconds)} and the table keeps ${partitions(partitionsNow)}.`,
    );
  }
  return { loadWcu, partitionsAfterRaise, perPartitionWcuAfterLoad, noSplitWcu, noSplitSeconds, advice };
}

/**
 * On-demand tables have no WCU to raise; they split on new peaks instead ("high-water marks":
 * https://aws.amazon.com/blogs/database/part-3-scaling-dynamodb-how-partitions-hot-keys-and-split-for-heat-impact-performance/),
 * and "throttling can still occur if the throughput exceeds twice the previous peak within the same 30 minutes"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html).
 */
function onDemandPlan(targetWcu: number): CapacityPlan {
  return {
    loadWcu: undefined,
    partitionsAfterRaise: undefined,
    perPartitionWcuAfterLoad: undefined,
    noSplitWcu: undefined,
    noSplitSeconds: undefined,
    advice: [
      `On-demand tables split too: when traffic reaches a new peak, DynamoDB adds partitions for it, and "partitions today are only split, never merged" ` +
        `(AWS Database Blog, "Scaling DynamoDB", part 3), so a load at ${formatCount(targetWcu)} WCU/s leaves the table with the partitions of that peak.`,
      `DynamoDB takes up to twice the previous peak at once, and may throttle above that within the same 30 minutes while it adds partitions, ` +
        `so the rate should stay within twice the previous peak and grow from there (--wcu auto does).`,
    ],
  };
}

/** AWS "Subsequent Allocation of Partitions": a raise the partitions cannot hold doubles them, as often as needed. */
function doubledPartitions(partitions: number, rcu: number, wcu: number): number {
  let p = partitions;
  while (partitionCount({ rcu, wcu }) > p) p *= 2;
  return p;
}

/** The highest whole WCU with ceil(RCU / 3000 + WCU / 1000) <= partitions: what the partitions hold without a split. */
function maxWcuHeldBy(partitions: number, rcu: number): number {
  let w = Math.floor(partitions * PARTITION_MAX_WCU - rcu / READ_PER_WRITE + EPSILON);
  // Guard the float arithmetic against the formula partitionCount applies.
  while (w > 1 && partitionCount({ rcu, wcu: w }) > partitions) w--;
  return Math.max(1, w);
}

const partitions = (n: number) => (n === 1 ? '1 partition' : `${formatCount(n)} partitions`);
const hold = (n: number) => (n === 1 ? 'holds' : 'hold');
function requireFinite(name: string, value: number, min: number): void {
  if (!(Number.isFinite(value) && value >= min)) throw new RangeError(`${name} must be a finite number >= ${min}, got ${value}`);
}
