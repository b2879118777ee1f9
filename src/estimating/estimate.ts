import { DEFAULT_BACKOFF } from '../writing/backoff.js';
import { planCapacity } from './capacityPlan.js';
import { estimateCost } from './costEstimate.js';
import { DistinctCounter } from './distinctCount.js';
import type { EstimateResult, HotKey, ShardAdvice, Simulation } from './estimateTypes.js';
import { HeavyHitters } from './heavyHitters.js';
import { normalizeOptions, type LoadOptions } from '../load/options.js';
import { partitionCount, type PartitionModelOptions } from './partitionModel.js';
import { NEW_ON_DEMAND_WCU, chooseRate } from '../pacing/rateChoice.js';
import { findBottleneck } from '../pacing/rateControl.js';
import { LoadSimulator, heatOf, throttleFreeRate, type SimWrite } from './simulate.js';
import { SizeHistogram } from './sizeHistogram.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { PlannedWrite } from '../shared/types.js';
import { createWriteCostModel, type WriteCostModel } from '../pacing/writeCost.js';
import type { LoadEvent } from '../reporting/events.js';
import { load } from '../load/load.js';
import type { CallerFiles } from '../load/outputFiles.js';
import { setOwn } from '../typing/json.js';
import { ownValue } from '../shared/ownRecord.js';
import type { Readable } from 'node:stream';

export interface EstimateOptions extends LoadOptions {
  /** The table as the offline flags describe it; without it, DescribeTable is asked. */
  tableInfo?: TableInfo;
  /** Unit prices; defaults state their region and date. */
  prices?: Partial<EstimateResult['cost']['prices']>;
  /** How the table and the client are modelled (the bench matches these to its partition proxy). */
  simulation?: SimulationSettings;
}

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
}

export interface EstimateDependencies {
  signal?: AbortSignal;
  onEvent?: (event: LoadEvent) => void;
  stdin?: Readable;
  /** Files the caller reads besides the input (load() keeps its outputs off them). */
  files?: CallerFiles;
}

const TOP_KEYS = 10;
const BATCH = 25;

/**
 * The estimate: runs load() as a dry run (the same reading, typing, sharding, ordering and batching
 * code; nothing written) and, as the rows go by, counts sizes, write units and keys, and simulates the
 * planned order (paced as load paces) and, for contrast, the input order (unpaced) against the partition
 * model of the table. Memory stays bounded: counters, two simulations of a few batches in flight, and
 * the order's own --memory budget, fed with slim copies of the writes (key and cost only).
 */
export async function estimate(options: EstimateOptions, deps: EstimateDependencies = {}): Promise<EstimateResult> {
  const opts = normalizeOptions(options);
  const sizes = new SizeHistogram();
  const distinct = new DistinctCounter();
  const distinctWritten = new DistinctCounter();
  const hottest = new HeavyHitters(2000);
  const hottestWritten = new HeavyHitters(2000);
  const units = { table: 0, indexes: {} as Record<string, number>, total: 0 };
  let table: TableInfo | undefined;
  let costModel: WriteCostModel | undefined;
  let planned: LoadSimulator | undefined;
  let inputOrder: LoadSimulator | undefined;
  let inputBatch: SimWrite[] = [];
  let target = Infinity;
  let assumedWcu = 0;
  let rateReason = '';
  let modelOptions: PartitionModelOptions | undefined;
  const settings = options.simulation ?? {};

  const onTable = (info: TableInfo) => {
    table = info;
    costModel = createWriteCostModel(info);
    const rate = chooseRate(opts.pacing ? opts.wcu : undefined, info);
    target = opts.pacing ? rate.targetWcu : Infinity;
    rateReason = opts.pacing ? rate.reason : '--no-pacing: no rate control';
    const capacity = tableCapacity(info, rate.targetWcu);
    assumedWcu = Number.isFinite(target) ? target : capacity;
    modelOptions = {
      tableWcu: capacity,
      ...(info.provisionedRcu ? { tableRcu: info.provisionedRcu } : {}),
      ...(info.sizeBytes ? { sizeBytes: info.sizeBytes } : {}),
      ...(settings.partitions ? { partitions: settings.partitions } : {}),
      ...(settings.partitionMaxWcu ? { partitionMaxWcu: settings.partitionMaxWcu } : {}),
      ...(settings.adaptiveCapacity ? { adaptiveCapacity: true } : {}),
      burstSeconds: settings.burstSeconds ?? 0,
      initialSeconds: 1,
    };
    const common = { model: modelOptions, concurrency: opts.concurrency, latencyMs: settings.latencyMs ?? 20, backoff: DEFAULT_BACKOFF, maxAttempts: opts.maxAttempts };
    planned = new LoadSimulator({ ...common, ...(opts.pacing ? { rate: { targetWcu: target, keyWcu: opts.keyWcu, ...(rate.growth ? { growth: rate.growth } : {}) } } : {}) });
    inputOrder = new LoadSimulator(common);
  };

  const onPlanned = (w: PlannedWrite): PlannedWrite => {
    const cost = costModel!(w.item, w.size);
    units.table += cost.table;
    units.total += cost.total;
    for (const [name, n] of Object.entries(cost.indexes)) setOwn(units.indexes, name, (ownValue(units.indexes, name) ?? 0) + n);
    sizes.add(w.size);
    const written = w.partitionId.slice(1);
    const original = w.unshardedKey ?? written;
    distinct.add(original);
    distinctWritten.add(written);
    hottest.add(original, cost.total);
    hottestWritten.add(written, cost.total);
    inputBatch.push({ key: written, units: cost.total });
    if (inputBatch.length === BATCH) {
      inputOrder!.push(inputBatch);
      inputBatch = [];
    }
    // The order only needs keys and costs: a slim copy keeps --memory (and temporary files) small. Its
    // size is 0 so the order's memory accounting sees what it holds; sizes were counted above, and the
    // batcher's 16 MB limit cannot bind on 25 items of at most 400 KB.
    const slim: PlannedWrite = { origin: { file: w.origin.file, line: w.origin.line, raw: '' }, item: {}, keyId: w.keyId, partitionId: w.partitionId, size: 0, wcu: cost.total };
    if (w.unshardedKey !== undefined) slim.unshardedKey = w.unshardedKey;
    return slim;
  };

  const record = (writes: readonly PlannedWrite[]) => planned!.push(writes.map((w) => ({ key: w.partitionId.slice(1), units: w.wcu })));

  const result = await load(
    { ...options, pacing: false, wcu: undefined, keyWcu: undefined },
    {
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.onEvent ? { onEvent: deps.onEvent } : {}),
      ...(deps.stdin ? { stdin: deps.stdin } : {}),
      ...(deps.files ? { files: deps.files } : {}),
      dryRun: { ...(options.tableInfo ? { tableInfo: options.tableInfo } : {}), onTable, onPlanned, record },
    },
  );
  if (inputBatch.length > 0) inputOrder!.push(inputBatch);
  const info = table!;
  const plannedOutcome = planned!.finish();
  const inputOutcome = inputOrder!.finish();

  const hot = (heavy: HeavyHitters): HotKey[] =>
    heavy.top(TOP_KEYS).map((k) => ({ key: k.key, rows: k.count, rowShare: heavy.rows > 0 ? k.count / heavy.rows : 0, units: k.weight, unitShare: heavy.total > 0 ? k.weight / heavy.total : 0 }));
  const idealSeconds = assumedWcu > 0 ? units.total / assumedWcu : 0;
  const heaviestWritten = hottestWritten.top(1)[0];
  const keyBound = opts.pacing ? findBottleneck(heaviestWritten, hottestWritten.total, assumedWcu, opts.keyWcu) : undefined;
  const sharded = opts.shard !== undefined;
  const shardAdvice: ShardAdvice[] = [];
  for (const k of (sharded ? hottestWritten : hottest).top(TOP_KEYS)) {
    const b = findBottleneck(k, units.total, assumedWcu, opts.keyWcu);
    if (!b) continue;
    shardAdvice.push({
      key: k.key,
      units: k.weight,
      requiredWcu: b.requiredWcu,
      minShards: b.minShards,
      recommendedShards: b.recommendedShards,
      flags: sharded ? `shard this key ${b.recommendedShards} more ways: raise N in --shard, or add --shard hash:${b.recommendedShards}` : `--shard hash:${b.recommendedShards} --shard-keys ${k.key}`,
    });
  }
  const simulation = (order: Simulation['order'], paced: boolean, outcome: ReturnType<LoadSimulator['finish']>): Simulation => ({
    order,
    paced,
    seconds: outcome.seconds,
    throttledItems: outcome.throttledItems,
    heat: heatOf(outcome),
  });
  const estimatedSeconds = plannedOutcome.seconds;
  const simulatedRate = estimatedSeconds > 0 ? units.total / estimatedSeconds : assumedWcu;
  const partitionsNow = partitionCount({ wcu: nowCapacity(info), rcu: info.provisionedRcu ?? 0, sizeBytes: info.sizeBytes ?? 0 });
  const capacity = planCapacity({
    totalWcu: units.total,
    targetWcu: assumedWcu,
    billingMode: info.billingMode,
    ...(info.provisionedWcu !== undefined ? { provisionedWcu: info.provisionedWcu } : {}),
    ...(info.provisionedRcu !== undefined ? { provisionedRcu: info.provisionedRcu } : {}),
    ...(info.sizeBytes !== undefined ? { sizeBytes: info.sizeBytes } : {}),
  });

  return {
    version: 1,
    input: {
      file: result.input,
      bytes: result.bytesRead > 0 ? result.bytesRead : undefined,
      rows: result.rowsRead,
      validRows: result.rowsRead - result.rejected,
      superseded: result.superseded,
      rejected: result.rejected,
      rejectedByReason: result.rejectedByReason,
      rejectsPath: result.rejectsPath,
    },
    items: sizes.toJSON(),
    writeUnits: units,
    table: {
      name: info.name,
      source: options.tableInfo ? 'flags' : 'describe-table',
      billingMode: info.billingMode,
      provisionedWcu: info.provisionedWcu,
      provisionedRcu: info.provisionedRcu,
      warmWriteUnits: info.warmWriteUnits,
      itemCount: info.itemCount,
      gsis: info.gsis.map((g) => ({ name: g.name, projection: g.projection })),
      partitionsNow,
      partitionsAtTarget: capacity.partitionsAfterRaise ?? plannedOutcome.partitions,
    },
    keys: {
      distinct: distinct.estimate,
      distinctWritten: distinctWritten.estimate,
      hottest: hot(hottest),
      hottestWritten: hot(hottestWritten),
      sharded,
    },
    rate: { targetWcu: Number.isFinite(target) ? target : undefined, assumedWcu, reason: rateReason, keyWcu: opts.keyWcu, throttleFreeWcu: throttleFreeRate(plannedOutcome, simulatedRate) },
    time: {
      idealSeconds,
      estimatedSeconds,
      bottleneck: keyBound ? { kind: 'key', key: keyBound.key, units: keyBound.units, seconds: keyBound.keySeconds } : { kind: 'table', wcu: assumedWcu },
    },
    simulations: { planned: simulation(opts.order, opts.pacing, plannedOutcome), input: simulation('input', false, inputOutcome) },
    shardAdvice,
    capacity,
    cost: estimateCost({
      totalWcu: units.total,
      seconds: estimatedSeconds,
      targetWcu: assumedWcu,
      // Unknown (offline without --item-count) counts as possibly new: the note is worth reading then.
      tableIsEmpty: info.itemCount === undefined || info.itemCount === 0,
      // A price the user gave is labelled as theirs, not with the defaults' region and date.
      ...(options.prices ? { prices: { region: 'as given', date: 'as given', ...options.prices } } : {}),
    }),
  };
}

/** What the table takes now: provisioned WCU, or an on-demand table's warm throughput (4,000 when new). */
function nowCapacity(info: TableInfo): number {
  if (info.billingMode === 'PROVISIONED' && info.provisionedWcu) return info.provisionedWcu;
  return info.warmWriteUnits ?? NEW_ON_DEMAND_WCU;
}

/** The table's capacity during the load: as it is, or for on-demand at least what the target asks. */
function tableCapacity(info: TableInfo, target: number): number {
  const now = nowCapacity(info);
  if (info.billingMode === 'PROVISIONED') return now;
  return Number.isFinite(target) ? Math.max(now, target) : now;
}
