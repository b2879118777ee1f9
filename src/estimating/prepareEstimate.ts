import type { EstimateSimulators } from './estimateTally.js';
import type { PartitionModelOptions } from './partitionModel.js';
import { LoadSimulator } from './simulate.js';
import { tableCapacity } from './tableCapacity.js';
import type { NormalizedLoadOptions } from '../load/options.js';
import { chooseRate } from '../pacing/rateChoice.js';
import { createWriteCostModel, type WriteCostModel } from '../pacing/writeCost.js';
import type { TableInfo } from '../shared/tableInfo.js';
import { DEFAULT_BACKOFF } from '../writing/backoff.js';

/** One BatchWriteItem (or DescribeTable) round trip the model assumes, in ms. */
export const DEFAULT_LATENCY_MS = 20;

export interface SimulationSettings {
  /** Per-partition ceiling. @default 1000 */
  partitionMaxWcu?: number;
  /** Fixed partition count instead of seed 004's formula. */
  partitions?: number;
  adaptiveCapacity?: boolean;
  /** Burst the model grants; 0 by default, as AWS advises not to count on it. @default 0 */
  burstSeconds?: number;
  /** One BatchWriteItem round trip. @default 20 */
  latencyMs?: number;
  /**
   * Simulate a global order (round-robin, spread) from the batches of the order itself, held and sorted
   * as `load` does (slow on large inputs), instead of from key statistics. For tests and benches.
   * @default false
   */
  materializeOrder?: boolean;
}

/** The rate the estimate works at, as `load` would choose it. */
export interface EstimateRateChoice {
  /** The pacing target; Infinity without one (no --wcu, or --no-pacing). */
  targetWcu: number;
  /** The target, or the table's capacity when there is none. */
  assumedWcu: number;
  reason: string;
}

/** What the estimate decides once it knows the table. */
export interface PreparedEstimate {
  table: TableInfo;
  costModel: WriteCostModel;
  rate: EstimateRateChoice;
  simulators: EstimateSimulators;
}

/** The load options the estimate's rate and simulations follow. */
export type EstimateLoadSettings = Pick<NormalizedLoadOptions, 'pacing' | 'wcu' | 'keyWcu' | 'concurrency' | 'maxAttempts'>;

/**
 * Pure setup from the table's description: the write cost model, the rate `load` would choose, and two
 * simulations against the table's partition model, the planned order paced as `load` paces it and, for
 * contrast, the input order unpaced (as other loaders write).
 */
export function prepareEstimate(table: TableInfo, opts: EstimateLoadSettings, settings: SimulationSettings = {}): PreparedEstimate {
  const rate = chooseRate(opts.pacing ? opts.wcu : undefined, table);
  const targetWcu = opts.pacing ? rate.targetWcu : Infinity;
  const capacity = tableCapacity(table, rate.targetWcu);
  const model: PartitionModelOptions = {
    tableWcu: capacity,
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
    concurrency: opts.concurrency,
    latencyMs: settings.latencyMs ?? DEFAULT_LATENCY_MS,
    backoff: DEFAULT_BACKOFF,
    maxAttempts: opts.maxAttempts,
  };
  const pacing = opts.pacing ? { rate: { targetWcu, keyWcu: opts.keyWcu, ...(rate.growth ? { growth: rate.growth } : {}) } } : {};
  return {
    table,
    costModel: createWriteCostModel(table),
    rate: {
      targetWcu,
      assumedWcu: Number.isFinite(targetWcu) ? targetWcu : capacity,
      reason: opts.pacing ? rate.reason : '--no-pacing: no rate control',
    },
    simulators: { planned: new LoadSimulator({ ...common, ...pacing }), input: new LoadSimulator(common) },
  };
}
