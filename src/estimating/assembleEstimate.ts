import { planCapacity } from './capacityPlan.js';
import { estimateCost } from './costEstimate.js';
import type { EstimateTotals } from './estimateTally.js';
import type { CapacityPlan, EstimateInput, EstimateResult, EstimateTable, HotKey, ShardAdvice, Simulation } from './estimateTypes.js';
import type { HeavyHitters } from './heavyHitters.js';
import { partitionCount } from './partitionModel.js';
import type { EstimateRateChoice } from './prepareEstimate.js';
import { heatOf, throttleFreeRate, type SimulationOutcome } from './simulate.js';
import { nowCapacity } from './tableCapacity.js';
import { isGlobalOrder, type OrderMode } from '../ordering/order.js';
import { findBottleneck } from '../pacing/rateControl.js';
import type { LoadResult } from '../reporting/result.js';
import type { TableInfo } from '../shared/tableInfo.js';

/** Keys listed as hottest, and considered for shard advice. */
const TOP_KEYS = 10;

/** What the estimate measured of its own pass, as a model of the load's start-up and read phase. */
export interface EstimatePhases {
  /** From the call to the first row: files checked, table described, input opened. */
  startupSeconds: number;
  /** From the first row to the last row read and ordered (the moment a global order starts writing). */
  readSeconds: number;
}

/** Everything the estimate's result is made of. */
export interface EstimateParts {
  /** The dry run's counters: rows read, rejected and superseded, and the file. */
  run: Pick<LoadResult, 'input' | 'bytesRead' | 'rowsRead' | 'rejected' | 'superseded' | 'rejectedByReason' | 'rejectsPath'>;
  table: TableInfo;
  tableSource: EstimateTable['source'];
  rate: EstimateRateChoice;
  totals: EstimateTotals;
  /** The options the report states: pacing on or off, --key-wcu, the write order, and whether --shard was given. */
  load: { pacing: boolean; keyWcu: number; order: OrderMode; sharded: boolean };
  /** The dry run's own start-up and read phase, measured (seconds); none counts as 0. */
  phases?: EstimatePhases | undefined;
  /** Unit prices the user gave, if any. */
  prices?: Partial<EstimateResult['cost']['prices']> | undefined;
}

/** The estimate's result from what was counted and simulated: pure, no I/O. */
export function assembleEstimate(parts: EstimateParts): EstimateResult {
  const { table, rate, totals, load } = parts;
  const { assumedWcu } = rate;
  const totalWcu = totals.writeUnits.total;
  const writeSeconds = totals.planned.seconds;
  const simulatedRate = writeSeconds > 0 ? totalWcu / writeSeconds : assumedWcu;
  const phases = parts.phases ?? { startupSeconds: 0, readSeconds: 0 };
  const estimatedSeconds = loadSeconds(load.order, phases, writeSeconds);
  const keyBound = load.pacing ? findBottleneck(totals.hottestWritten.top(1)[0], totals.hottestWritten.total, assumedWcu, load.keyWcu) : undefined;
  const capacity = capacityOf(table, totalWcu, assumedWcu);
  return {
    version: 1,
    input: inputOf(parts.run),
    items: totals.sizes,
    writeUnits: totals.writeUnits,
    table: tableOf(table, parts.tableSource, capacity, totals.planned),
    keys: {
      distinct: totals.distinct,
      distinctWritten: totals.distinctWritten,
      hottest: hotKeys(totals.hottest),
      hottestWritten: hotKeys(totals.hottestWritten),
      sharded: load.sharded,
    },
    rate: {
      targetWcu: Number.isFinite(rate.targetWcu) ? rate.targetWcu : undefined,
      assumedWcu,
      reason: rate.reason,
      keyWcu: load.keyWcu,
      throttleFreeWcu: throttleFreeRate(totals.planned, simulatedRate),
    },
    time: {
      idealSeconds: assumedWcu > 0 ? totalWcu / assumedWcu : 0,
      estimatedSeconds,
      startupSeconds: phases.startupSeconds,
      readSeconds: phases.readSeconds,
      writeSeconds,
      bottleneck: keyBound ? { kind: 'key', key: keyBound.key, units: keyBound.units, seconds: keyBound.keySeconds } : { kind: 'table', wcu: assumedWcu },
    },
    simulations: { planned: simulationOf(load.order, load.pacing, totals.planned), input: simulationOf('input', false, totals.input) },
    shardAdvice: adviseShards(load.sharded ? totals.hottestWritten : totals.hottest, totalWcu, assumedWcu, load.keyWcu, load.sharded),
    capacity,
    cost: estimateCost({
      totalWcu,
      seconds: estimatedSeconds,
      targetWcu: assumedWcu,
      // Unknown (offline without --item-count) counts as possibly new: the note is worth reading then.
      tableIsEmpty: table.itemCount === undefined || table.itemCount === 0,
      // A price the user gave is labelled as theirs, not with the defaults' region and date.
      ...(parts.prices ? { prices: { region: 'as given', date: 'as given', ...parts.prices } } : {}),
    }),
  };
}

/**
 * The load's duration as `load` measures it (issue 14): start-up, then in a global order (round-robin,
 * spread) the whole read phase before the first write, in a streaming order (input, window) reading and
 * writing side by side, so whichever takes longer.
 */
export function loadSeconds(order: OrderMode, phases: EstimatePhases, writeSeconds: number): number {
  const body = isGlobalOrder(order) ? phases.readSeconds + writeSeconds : Math.max(phases.readSeconds, writeSeconds);
  return phases.startupSeconds + body;
}

function inputOf(run: EstimateParts['run']): EstimateInput {
  return {
    file: run.input,
    bytes: run.bytesRead > 0 ? run.bytesRead : undefined,
    rows: run.rowsRead,
    validRows: run.rowsRead - run.rejected,
    superseded: run.superseded,
    rejected: run.rejected,
    rejectedByReason: run.rejectedByReason,
    rejectsPath: run.rejectsPath,
  };
}

function capacityOf(info: TableInfo, totalWcu: number, targetWcu: number): CapacityPlan {
  return planCapacity({
    totalWcu,
    targetWcu,
    billingMode: info.billingMode,
    ...(info.provisionedWcu !== undefined ? { provisionedWcu: info.provisionedWcu } : {}),
    ...(info.provisionedRcu !== undefined ? { provisionedRcu: info.provisionedRcu } : {}),
    ...(info.sizeBytes !== undefined ? { sizeBytes: info.sizeBytes } : {}),
  });
}

function tableOf(info: TableInfo, source: EstimateTable['source'], capacity: CapacityPlan, planned: SimulationOutcome): EstimateTable {
  return {
    name: info.name,
    source,
    billingMode: info.billingMode,
    provisionedWcu: info.provisionedWcu,
    provisionedRcu: info.provisionedRcu,
    warmWriteUnits: info.warmWriteUnits,
    itemCount: info.itemCount,
    gsis: info.gsis.map((g) => ({ name: g.name, projection: g.projection })),
    partitionsNow: partitionCount({ wcu: nowCapacity(info), rcu: info.provisionedRcu ?? 0, sizeBytes: info.sizeBytes ?? 0 }),
    // Without a raise the partitions at the target are those the simulated model had.
    partitionsAtTarget: capacity.partitionsAfterRaise ?? planned.partitions,
  };
}

function hotKeys(heavy: HeavyHitters): HotKey[] {
  return heavy.top(TOP_KEYS).map((k) => ({
    key: k.key,
    rows: k.count,
    rowShare: heavy.rows > 0 ? k.count / heavy.rows : 0,
    units: k.weight,
    unitShare: heavy.total > 0 ? k.weight / heavy.total : 0,
  }));
}

/** Keys among the hottest that need longer at --key-wcu than the whole load, with the flags that shard them enough. */
function adviseShards(heavy: HeavyHitters, totalWcu: number, assumedWcu: number, keyWcu: number, sharded: boolean): ShardAdvice[] {
  const advice: ShardAdvice[] = [];
  for (const k of heavy.top(TOP_KEYS)) {
    const b = findBottleneck(k, totalWcu, assumedWcu, keyWcu);
    if (!b) continue;
    advice.push({
      key: k.key,
      units: k.weight,
      requiredWcu: b.requiredWcu,
      minShards: b.minShards,
      recommendedShards: b.recommendedShards,
      flags: sharded
        ? `shard this key ${b.recommendedShards} more ways: raise N in --shard, or add --shard hash:${b.recommendedShards}`
        : `--shard hash:${b.recommendedShards} --shard-keys ${k.key}`,
    });
  }
  return advice;
}

function simulationOf(order: Simulation['order'], paced: boolean, outcome: SimulationOutcome): Simulation {
  return { order, paced, seconds: outcome.seconds, throttledItems: outcome.throttledItems, heat: heatOf(outcome) };
}
