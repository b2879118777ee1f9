import type { EstimateSimulators } from './estimateTally.js';
import type { PartitionModelOptions } from './partitionModel.js';
import { LoadSimulator } from './simulate.js';
import { nowCapacity } from './tableCapacity.js';
import { IndexKeyTally } from './indexKeyTally.js';
import type { Growth } from './reachableRate.js';
import type { NormalizedLoadOptions } from '../load/options.js';
import { chooseWholeRate, chooseWorkerRate, type RateChoice } from '../pacing/rateChoice.js';
import { formatCount } from '../shared/format.js';
import { createWriteCostModel, type WriteCostModel } from '../pacing/writeCost.js';
import type { TableInfo } from '../shared/tableInfo.js';
import { DEFAULT_BACKOFF } from '../aws/backoff.js';

/** One BatchWriteItem (or DescribeTable) round trip the model assumes, in ms. */
export const DEFAULT_LATENCY_MS = 20;

export interface SimulationSettings {
  /** Per-partition ceiling. @default 1000 */
  partitionMaxWcu?: number;
  /** Fixed partition count instead of AWS's initial-allocation formula. */
  partitions?: number;
  adaptiveCapacity?: boolean;
  /** Burst the model grants; 0 by default, as AWS advises not to count on it. @default 0 */
  burstSeconds?: number;
  /** One BatchWriteItem round trip. @default 20 */
  latencyMs?: number;
  /**
   * The (provisioned) table is created for the load at the load's rate (AWS's bulk-load example: 11,000 WCU,
   * 11 partitions) and set back to its --table-wcu afterwards. @default false
   */
  newTable?: boolean;
  /**
   * Simulate a global order (round-robin, spread) from the batches of the order itself, held and sorted
   * as `load` does (slow on large inputs), instead of from key statistics. For tests and benches; the
   * estimate sets it itself for a table with GSIs (estimate.ts).
   * @default false
   */
  materializeOrder?: boolean;
  /**
   * Read, type and plan the rows on a second thread where the input allows it (load/planningThread.ts):
   * a table without GSIs, local parts read whole. For tests and benches that compare the two.
   * @default true
   */
  planningThread?: boolean;
}

/** The rate the estimate works at, as `load` would choose it. */
export interface EstimateRateChoice {
  /** The pacing target; Infinity without one (no --wcu, or --no-pacing). */
  targetWcu: number;
  /**
   * The rate every figure rests on: the rate the load can reach, not the account quota. The target, capped by a
   * provisioned table's WCU; for an on-demand table, see `growth`; the table's capacity without a target.
   */
  assumedWcu: number;
  reason: string;
  /** On-demand: how the rate grows from the warm throughput; assembleEstimate turns it into the rate reached. */
  growth?: Growth;
  /** --wcu asks for more than the table takes. */
  warning?: string;
  /** The table is created for the load (SimulationSettings.newTable), at the target rate. */
  newTable: boolean;
}

/** What the estimate decides once it knows the table. */
export interface PreparedEstimate {
  table: TableInfo;
  costModel: WriteCostModel;
  /** Each GSI's partition keys, and what the simulations need of a write's index keys. */
  indexes: IndexKeyTally;
  rate: EstimateRateChoice;
  simulators: EstimateSimulators;
}

/** The load options the estimate's rate and simulations follow. */
export type EstimateLoadSettings = Pick<NormalizedLoadOptions, 'pacing' | 'wcu' | 'totalWcu' | 'segment' | 'keyWcu' | 'concurrency' | 'maxAttempts'> & {
  /** --workers N: the whole load of N workers, at the rate of all of them (chooseWholeRate). */
  workers?: number | undefined;
};

/**
 * Pure setup from the table's description: the write cost model, the rate `load` would choose, and two
 * simulations against the table's partition model, the planned order paced as `load` paces it and, for
 * contrast, the input order unpaced (as other loaders write).
 */
export function prepareEstimate(table: TableInfo, opts: EstimateLoadSettings, settings: SimulationSettings = {}): PreparedEstimate {
  const rate = reachableChoice(
    table,
    !opts.pacing
      ? undefined
      : opts.workers !== undefined
        ? chooseWholeRate(opts.wcu, opts.totalWcu, opts.workers, table)
        : chooseWorkerRate(opts.wcu, opts.totalWcu, opts.segment?.count ?? 1, table),
    settings.newTable === true,
  );
  const model: PartitionModelOptions = {
    tableWcu: rate.capacity,
    ...(table.provisionedRcu ? { tableRcu: table.provisionedRcu } : {}),
    ...(table.sizeBytes ? { sizeBytes: table.sizeBytes } : {}),
    ...(settings.partitions ? { partitions: settings.partitions } : {}),
    ...(settings.partitionMaxWcu ? { partitionMaxWcu: settings.partitionMaxWcu } : {}),
    ...(settings.adaptiveCapacity ? { adaptiveCapacity: true } : {}),
    burstSeconds: settings.burstSeconds ?? 0,
    initialSeconds: 1,
  };
  const common = {
    model,
    // N workers each keep --concurrency calls in flight.
    concurrency: opts.concurrency * (opts.workers ?? 1),
    latencyMs: settings.latencyMs ?? DEFAULT_LATENCY_MS,
    backoff: DEFAULT_BACKOFF,
    maxAttempts: opts.maxAttempts,
  };
  const pacing = opts.pacing ? { rate: { targetWcu: rate.simulatedWcu, keyWcu: opts.keyWcu, ...(rate.growth ? { growth: rate.growth } : {}) } } : {};
  return {
    table,
    costModel: createWriteCostModel(table),
    indexes: new IndexKeyTally(table.gsis),
    rate: {
      targetWcu: rate.targetWcu,
      assumedWcu: Number.isFinite(rate.simulatedWcu) ? rate.simulatedWcu : rate.capacity,
      reason: rate.reason,
      ...(rate.growth ? { growth: rate.growth } : {}),
      ...(rate.warning ? { warning: rate.warning } : {}),
      newTable: rate.newTable,
    },
    simulators: { planned: new LoadSimulator({ ...common, ...pacing }), input: new LoadSimulator(common) },
  };
}

interface ReachableChoice {
  /** The target `load` paces at (Infinity without one). */
  targetWcu: number;
  /** The target the simulation paces at: what the table can take of it. */
  simulatedWcu: number;
  /** The table's capacity in the partition model. */
  capacity: number;
  reason: string;
  growth?: Growth;
  warning?: string;
  newTable: boolean;
}

/**
 * What the load can reach of the rate it asks for: a provisioned table takes its WCU (more
 * only from burst, which AWS says not to count on), unless it is created for the load at the target; an
 * on-demand table takes its warm throughput (4,000 WCU/s when new) at once and twice the previous peak
 * every 30 minutes, so `--wcu auto`'s quota, or a fixed rate above the warm throughput, is reached by
 * growth, if at all.
 */
function reachableChoice(table: TableInfo, choice: RateChoice | undefined, newTable: boolean): ReachableChoice {
  const now = nowCapacity(table);
  if (!choice) return { targetWcu: Infinity, simulatedWcu: Infinity, capacity: now, reason: '--no-pacing: no rate control', newTable: false };
  const target = choice.targetWcu;
  const base = { targetWcu: target, reason: choice.reason };
  if (table.billingMode === 'PROVISIONED') {
    if (newTable && Number.isFinite(target)) {
      return {
        ...base,
        simulatedWcu: target,
        capacity: target,
        reason: `${choice.reason}; the table is created at ${formatCount(target)} WCU for the load`,
        newTable,
      };
    }
    if (Number.isFinite(target) && target > now) {
      const warning = `${choice.warning ?? `${choice.label ?? `--wcu ${formatCount(target)}`} is above the table's provisioned ${formatCount(now)} WCU`}; the estimate works at the table's ${formatCount(now)} WCU/s`;
      return { ...base, simulatedWcu: now, capacity: now, warning, newTable: false };
    }
    return { ...base, simulatedWcu: target, capacity: now, newTable: false };
  }
  if (choice.growth) return { ...base, simulatedWcu: target, capacity: now, growth: choice.growth, newTable: false };
  if (Number.isFinite(target) && target > now) {
    const growth: Growth = { initial: now, factor: 2, windowMs: 30 * 60_000, cap: target };
    const warning = `${choice.label ?? `--wcu ${formatCount(target)}`} is above what the on-demand table takes at once (${formatCount(now)} WCU/s${table.warmWriteUnits ? ', its warm throughput' : ', a new table'}); DynamoDB takes twice the previous peak every 30 minutes, so the estimate grows from ${formatCount(now)}`;
    return { ...base, simulatedWcu: target, capacity: now, growth, warning, newTable: false };
  }
  return { ...base, simulatedWcu: target, capacity: Number.isFinite(target) ? Math.max(now, target) : now, newTable: false };
}
