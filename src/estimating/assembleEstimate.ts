import { planCapacity } from './capacityPlan.js';
import { estimateCost } from './costEstimate.js';
import type { EstimateTotals } from './estimateTally.js';
import type {
  CapacityPlan,
  EstimateInput,
  EstimateResult,
  EstimateTable,
  EstimateTime,
  EstimateWorkers,
  HotKey,
  ShardAdvice,
  Simulation,
} from './estimateTypes.js';
import type { WorkersPlan } from './workersPlan.js';
import type { HeavyHitters } from '../shared/heavyHitters.js';
import { partitionCount } from './partitionModel.js';
import type { EstimateRateChoice } from './prepareEstimate.js';
import { heatOf, throttleFreeRate, type SimulationOutcome } from './simulate.js';
import { nowCapacity } from './tableCapacity.js';
import type { IndexHotKeys } from './indexKeyTally.js';
import { growthSchedule, type Growth } from './reachableRate.js';
import { adviseManagedPaths, type ManagedPathInput } from './managedPaths.js';
import { advisePrewarm } from './prewarmAdvice.js';
import { estimateVerify, type VerifyPlan } from './verifyEstimate.js';
import type { PrewarmPlan } from '../load/prewarmPlan.js';
import { isGlobalOrder, type OrderMode } from '../ordering/order.js';
import { findBottleneck } from '../pacing/rateControl.js';
import { writesToAccount, type LoadResult } from '../reporting/result.js';
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
  run: Pick<
    LoadResult,
    | 'input'
    | 'bytesRead'
    | 'rowsRead'
    | 'rejected'
    | 'superseded'
    | 'rejectedByReason'
    | 'rejectsPath'
    | 'skippedByTransform'
    | 'transformOutputs'
    | 'splitWrites'
    | 'skippedExpired'
  >;
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
  /** --workers N: how they would divide the load (the rate in `rate` is already all of theirs). */
  workers?: WorkersPlan | undefined;
  /** --prewarm's plan on the table as described, and how the rate would grow without it (`table` and `rate` are as warmed). */
  prewarm?: { plan: PrewarmPlan; given: boolean; growth: Growth | undefined; table: TableInfo } | undefined;
  /** What the input is, for the managed paths' advice. */
  managed?: Pick<ManagedPathInput, 'kind' | 'inS3' | 'deletes' | 'compressed'> | undefined;
  /** The verify's options (--rcu, --no-consistent-read, --sample, --scan), for its price. */
  verify?: VerifyPlan | undefined;
}

/** The estimate's result from what was counted and simulated: pure, no I/O. */
export function assembleEstimate(parts: EstimateParts): EstimateResult {
  const { table, rate, totals, load } = parts;
  const totalWcu = totals.writeUnits.total;
  // The rate the load reaches: on-demand growth from the warm throughput, not the quota.
  const schedule = rate.growth ? growthSchedule(rate.growth, totalWcu) : undefined;
  const assumedWcu = schedule ? schedule.averageWcu : rate.assumedWcu;
  const peakWcu = schedule ? schedule.peakWcu : assumedWcu;
  // The write phase is the planned order's simulation, paced at the reachable rate (prepareEstimate).
  const writeSeconds = totals.planned.seconds;
  const simulatedRate = writeSeconds > 0 ? totalWcu / writeSeconds : assumedWcu;
  const measured = parts.phases ?? { startupSeconds: 0, readSeconds: 0 };
  // N workers read side by side, each its share (every byte, divided by key): the slowest reads the largest.
  // Each starts up as this pass did.
  const phases = parts.workers ? { ...measured, readSeconds: measured.readSeconds * parts.workers.readShare } : measured;
  const estimatedSeconds = loadSeconds(load.order, phases, writeSeconds);
  const capacity = capacityOf(
    table,
    totalWcu,
    Number.isFinite(rate.targetWcu) && table.billingMode === 'PROVISIONED' ? rate.targetWcu : peakWcu,
    rate.newTable,
  );
  const tableIsEmpty = table.itemCount === undefined || table.itemCount === 0;
  const cost = estimateCost({
    totalWcu,
    seconds: estimatedSeconds,
    targetWcu: assumedWcu,
    // Unknown (offline without --item-count) counts as possibly new: the note is worth reading then.
    tableIsEmpty,
    // A price the user gave is labelled as theirs, not with the defaults' region and date.
    ...(parts.prices ? { prices: { region: 'as given', date: 'as given', ...parts.prices } } : {}),
  });
  const prewarm = parts.prewarm ? advisePrewarm({ ...parts.prewarm, totalWcu, offline: parts.tableSource === 'flags' }) : undefined;
  const input = inputOf(parts.run, parts.totals.superseded);
  return {
    version: 1,
    input,
    items: totals.sizes,
    writeUnits: totals.writeUnits,
    table: tableOf(table, parts.tableSource, capacity, totals.planned, peakWcu),
    keys: {
      distinct: totals.distinct,
      distinctWritten: totals.distinctWritten,
      hottest: hotKeys(totals.hottest),
      hottestWritten: hotKeys(totals.hottestWritten),
      sharded: load.sharded,
      indexes: totals.indexHottest.map((i) => ({ index: i.index, hottest: hotKeys(i.hottest, totalWcu) })),
    },
    rate: {
      targetWcu: Number.isFinite(rate.targetWcu) ? rate.targetWcu : undefined,
      assumedWcu,
      peakWcu,
      reason: rate.reason,
      warning: rate.warning,
      keyWcu: load.keyWcu,
      throttleFreeWcu: throttleFreeRate(totals.planned, simulatedRate),
    },
    time: {
      idealSeconds: schedule ? schedule.seconds : assumedWcu > 0 ? totalWcu / assumedWcu : 0,
      estimatedSeconds,
      startupSeconds: phases.startupSeconds,
      readSeconds: phases.readSeconds,
      writeSeconds,
      bottleneck: load.pacing ? bottleneckOf(totals, totalWcu, assumedWcu, load.keyWcu) : { kind: 'table', wcu: assumedWcu },
    },
    simulations: { planned: simulationOf(load.order, load.pacing, totals.planned), input: simulationOf('input', false, totals.input) },
    shardAdvice: [
      ...adviseShards(load.sharded ? totals.hottestWritten : totals.hottest, totalWcu, assumedWcu, load.keyWcu, load.sharded),
      ...totals.indexHottest.flatMap((i) => adviseIndexShards(i, parts.table, totalWcu, assumedWcu, load.keyWcu)),
    ],
    capacity,
    cost,
    ...(parts.workers ? { workers: workersOf(parts.workers, phases.readSeconds) } : {}),
    ...(prewarm ? { prewarm } : {}),
    managedPaths: adviseManagedPaths({
      kind: parts.managed?.kind ?? 'other',
      inS3: parts.managed?.inS3 ?? false,
      deletes: parts.managed?.deletes ?? false,
      compressed: parts.managed?.compressed ?? false,
      tableIsEmpty: table.itemCount === undefined ? 'unknown' : table.itemCount === 0,
      globalTable: (table.replicas ?? 0) > 0,
      inputBytes: parts.run.bytesRead > 0 ? parts.run.bytesRead : undefined,
      onDemandUsd: cost.onDemandUsd,
    }),
    verify: estimateVerify(table, parts.tableSource, totals.reads, input.superseded, parts.verify),
  };
}

function workersOf(plan: WorkersPlan, readSeconds: number): EstimateWorkers {
  const { count, by, why, inputBytes, largestShareBytes, bytesReadByAll } = plan;
  return { count, by, why, inputBytes, largestShareBytes, bytesReadByAll, readSeconds };
}

/**
 * The load's duration as `load` measures it: start-up, then in a global order (round-robin,
 * spread) the whole read phase before the first write, in a streaming order (input, window) reading and
 * writing side by side, so whichever takes longer.
 */
export function loadSeconds(order: OrderMode, phases: EstimatePhases, writeSeconds: number): number {
  const body = isGlobalOrder(order) ? phases.readSeconds + writeSeconds : Math.max(phases.readSeconds, writeSeconds);
  return phases.startupSeconds + body;
}

function inputOf(run: EstimateParts['run'], superseded: number | undefined): EstimateInput {
  return {
    file: run.input,
    bytes: run.bytesRead > 0 ? run.bytesRead : undefined,
    rows: run.rowsRead,
    validRows: writesToAccount(run) - run.rejected,
    expired: run.skippedExpired ?? 0,
    ...(run.transformOutputs !== undefined ? { skippedByTransform: run.skippedByTransform ?? 0, transformOutputs: run.transformOutputs } : {}),
    superseded: superseded ?? run.superseded,
    rejected: run.rejected,
    rejectedByReason: run.rejectedByReason,
    rejectsPath: run.rejectsPath,
  };
}

function capacityOf(info: TableInfo, totalWcu: number, targetWcu: number, newTable: boolean): CapacityPlan {
  return planCapacity({
    totalWcu,
    targetWcu,
    billingMode: info.billingMode,
    ...(newTable ? { newTable } : {}),
    ...(info.provisionedWcu !== undefined ? { provisionedWcu: info.provisionedWcu } : {}),
    ...(info.provisionedRcu !== undefined ? { provisionedRcu: info.provisionedRcu } : {}),
    ...(info.sizeBytes !== undefined ? { sizeBytes: info.sizeBytes } : {}),
  });
}

function tableOf(info: TableInfo, source: EstimateTable['source'], capacity: CapacityPlan, planned: SimulationOutcome, peakWcu: number): EstimateTable {
  const shape = { rcu: info.provisionedRcu ?? 0, sizeBytes: info.sizeBytes ?? 0 };
  return {
    name: info.name,
    source,
    billingMode: info.billingMode,
    provisionedWcu: info.provisionedWcu,
    provisionedRcu: info.provisionedRcu,
    warmWriteUnits: info.warmWriteUnits,
    itemCount: info.itemCount,
    gsis: info.gsis.map((g) => ({ name: g.name, projection: g.projection })),
    partitionsNow: partitionCount({ wcu: nowCapacity(info), ...shape }),
    // Without a raise: the partitions the simulated model had, or on-demand those of the peak the load reaches.
    partitionsAtTarget:
      capacity.partitionsAfterRaise ??
      (info.billingMode === 'PAY_PER_REQUEST' ? Math.max(planned.partitions, partitionCount({ wcu: peakWcu, ...shape })) : planned.partitions),
  };
}

/** The heaviest keys; `unitShare` of `total` (the load's units) when given, else of the sketch's own. */
function hotKeys(heavy: HeavyHitters, total = heavy.total): HotKey[] {
  return heavy.top(TOP_KEYS).map((k) => ({
    key: k.key,
    rows: k.count,
    rowShare: heavy.rows > 0 ? k.count / heavy.rows : 0,
    units: k.weight,
    unitShare: total > 0 ? k.weight / total : 0,
  }));
}

/** What bounds the duration: the table key or GSI key that needs longest at --key-wcu, if longer than the load at its rate. */
function bottleneckOf(totals: EstimateTotals, totalWcu: number, assumedWcu: number, keyWcu: number): EstimateTime['bottleneck'] {
  let found: EstimateTime['bottleneck'] = { kind: 'table', wcu: assumedWcu };
  let longest = 0;
  const table = findBottleneck(totals.hottestWritten.top(1)[0], totalWcu, assumedWcu, keyWcu);
  if (table) {
    found = { kind: 'key', key: table.key, units: table.units, seconds: table.keySeconds };
    longest = table.keySeconds;
  }
  for (const i of totals.indexHottest) {
    const b = findBottleneck(i.hottest.top(1)[0], totalWcu, assumedWcu, keyWcu);
    if (b && b.keySeconds > longest) {
      found = { kind: 'index-key', index: i.index, key: b.key, units: b.units, seconds: b.keySeconds };
      longest = b.keySeconds;
    }
  }
  return found;
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
      index: undefined,
      reads: shardReads(b.recommendedShards),
    });
  }
  return advice;
}

/** A reader's cost of a key sharded N ways (write sharding's scatter-gather read: a query per suffix). */
function shardReads(n: number): string {
  return `${n} queries per key, merged by sort key (hash: point reads too)`;
}

/**
 * GSI keys that need longer at --key-wcu (of the index's units) than the whole load: write sharding
 * in the data, as --shard suffixes only the table's key: write the index key with a shard suffix
 * ("STATUS#ACTIVE#SHARD#n") and query the index once per shard.
 */
function adviseIndexShards(hot: IndexHotKeys, table: TableInfo, totalWcu: number, assumedWcu: number, keyWcu: number): ShardAdvice[] {
  const attribute = table.gsis.find((g) => g.name === hot.index)?.partitionKey.name ?? hot.index;
  const advice: ShardAdvice[] = [];
  for (const k of hot.hottest.top(TOP_KEYS)) {
    const b = findBottleneck(k, totalWcu, assumedWcu, keyWcu);
    if (!b) continue;
    const n = b.recommendedShards;
    advice.push({
      key: k.key,
      units: k.weight,
      requiredWcu: b.requiredWcu,
      minShards: b.minShards,
      recommendedShards: n,
      flags:
        `GSI ${hot.index}: shard its key ${attribute} ${n} ways in the data, e.g. "${k.key}#SHARD#0" .. "${k.key}#SHARD#${n - 1}" picked at random ` +
        `or from the item's own key (a sharded GSI key, e.g. pk = STATUS#{status}#SHARD#{shard}); --shard suffixes only the table's partition key`,
      index: hot.index,
      reads: `${n} queries of the index per ${attribute} value (one per shard, merged)`,
    });
  }
  return advice;
}

function simulationOf(order: Simulation['order'], paced: boolean, outcome: SimulationOutcome): Simulation {
  return { order, paced, seconds: outcome.seconds, throttledItems: outcome.throttledItems, heat: heatOf(outcome) };
}
