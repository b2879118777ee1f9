import type { EventLoopUtilization } from 'node:perf_hooks';
import { assembleEstimate, type EstimateParts, type EstimatePhases } from './assembleEstimate.js';
import type { ManagedInputKind } from './managedPaths.js';
import { planPrewarm, prewarmedTable, prewarmTargetWcu } from '../load/prewarmPlan.js';
import { formatFromName, type PartFormat } from '../reading/inputFormat.js';
import { EstimateTally } from './estimateTally.js';
import type { EstimateResult } from './estimateTypes.js';
import { DEFAULT_LATENCY_MS, prepareEstimate, type PreparedEstimate, type SimulationSettings } from './prepareEstimate.js';
import { dryRunLoad, restartsInRoundRobin, type DryRun } from '../load/load.js';
import { normalizeOptions, normalizeRates, type LoadOptions, type NormalizedLoadOptions } from '../load/options.js';
import { LoaderError } from '../shared/errors.js';
import type { InputSet } from '../reading/inputSet.js';
import { planWorkers, type WorkersPlan } from './workersPlan.js';
import { verifyPlanOf, type VerifyPlan } from './verifyEstimate.js';
import { usdPerUnit } from '../pacing/unitPrices.js';
import type { CallerFiles } from '../load/outputFiles.js';
import type { TestSeams } from '../load/loadDependencies.js';
import { isGlobalOrder, type GlobalOrderMode, type OrderMode } from '../ordering/order.js';
import type { StripeLayout } from '../ordering/stripes/stripedRecords.js';
import type { LoadEvent } from '../reporting/events.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { RowOrigin } from '../shared/types.js';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';

export type { SimulationSettings } from './prepareEstimate.js';

export interface EstimateOptions extends LoadOptions {
  /** The table as the offline flags describe it; without it, DescribeTable is asked. */
  tableInfo?: TableInfo;
  /** How the table and the client are modelled (the bench matches these to its partition proxy). */
  simulation?: SimulationSettings;
  /** The table is created for the load at --wcu (offline --new-table; AWS's bulk-load example). */
  newTable?: boolean;
  /**
   * Estimate the whole load as this many workers would run it (--segment 0/N … N-1/N): their division of
   * the parts, what they read together, and the rate of all of them (--total-wcu, or N times --wcu).
   */
  workers?: number;
  /**
   * The verify after the load, priced in the estimate's `verify` section: the options `verify()` takes.
   * Read units per second, or "auto" / "auto:P%" as verify takes them. @default "auto": 80% of the table's read capacity (provisioned RCU, warm read throughput, or a new on-demand table's 12,000)
   */
  rcu?: number | string;
  /** Strongly consistent reads (verify's default); false: eventually consistent, half the read units. @default true */
  consistentRead?: boolean;
  /** The share of the keys the verify checks (verify's --sample). @default 1 */
  sample?: number;
  /** The Scan's parallel segments (verify's --scan; 'auto', as verify takes it: one per 2 GB). @default one per 2 GB of the table */
  scanSegments?: number | 'auto';
}

export interface EstimateDependencies {
  signal?: AbortSignal;
  onEvent?: (event: LoadEvent) => void;
  stdin?: Readable;
  /** Files the caller reads besides the input (load() keeps its outputs off them). */
  files?: CallerFiles;
  /** Sizes the tests shrink (see LoadDependencies.testSeams). */
  testSeams?: TestSeams;
  /** See LoadDependencies.notGrouped: set by estimate() itself when it starts over. */
  notGrouped?: boolean;
}

/**
 * The estimate: runs load() as a dry run (the same reading, typing, sharding and batching code; nothing
 * written) and, as the rows go by, counts sizes, write units and keys, and simulates the planned order
 * (paced as load paces) and, for contrast, the input order (unpaced) against the partition model of the
 * table. A global order (round-robin, spread) is simulated from per-key statistics (plannedOrder.ts):
 * the dry run reads in input order, and nothing is held, spilled or sorted (it runs at parse speed), so rows
 * superseded by a later row of the same primary key are counted as input-order batches meet them; on
 * a table with GSIs the global order is materialised instead (see estimateOnce). A streaming order
 * (input, window) is the order itself. The default order's striped read is replayed from statistics of
 * a read from the start (stripeOrder.ts), its grouping checked over the whole file, its batches as load
 * would fill them (runRepeats.ts). Memory stays bounded: counters, a bounded table of keys and runs, two
 * simulations of a few batches in flight, and for the window order its own --memory budget.
 */
export async function estimate(options: EstimateOptions, deps: EstimateDependencies = {}): Promise<EstimateResult> {
  try {
    return await estimateOnce(options, deps);
  } catch (error) {
    // A file the default order found not grouped is estimated as load() would then write it: streamed.
    if (!restartsInRoundRobin(error, options)) throw error;
    deps.onEvent?.({
      type: 'warning',
      message: `${(error as Error).message.split('. Nothing')[0]}; estimating it as it comes through the window order, as a load would write it`,
    });
    // The first pass's reject file is the first pass's own (a dry run never writes over a file that has
    // rows): the second pass writes it anew.
    await rm(normalizeOptions(wholeLoadOf(options)?.load ?? options).rejectsPath, { force: true });
    return estimateOnce(options, { ...deps, notGrouped: true });
  }
}

/** A second attempt, once DescribeTable showed GSIs: the table as described, and when the first began. */
interface Restart {
  table: TableInfo;
  calledAt: number;
}

async function estimateOnce(options: EstimateOptions, deps: EstimateDependencies, restart?: Restart): Promise<EstimateResult> {
  const calledAt = restart?.calledAt ?? performance.now();
  const whole = wholeLoadOf(options);
  // --workers N: --prewarm rests on the rates of all of them (whole.rates), which the pass's own options leave out.
  const opts = normalizeOptions(whole ? { ...whole.load, prewarm: false } : options);
  const verifyPlan: VerifyPlan = {
    ...verifyPlanOf(options, opts.segment !== undefined, opts.segment?.count, opts.listing !== undefined),
    prices: readPricesOf(options.prices),
  };
  const prewarmGiven = options.prewarm === true;
  // A global order is simulated from per-key statistics (plannedOrder.ts), except on a table with GSIs:
  // the statistics hold a table key's writes and units, not the GSI keys each write lands on (they vary
  // row by row, so carrying them would be unbounded), and the GSIs' partitions are what the
  // simulation must see. Such a table is estimated from the materialised order, as `materializeOrder` does (held
  // and sorted as `load` does: slower, and the order's --memory budget and temporary files apply). With
  // the table from flags this is known at once; after DescribeTable, the dry run starts over (no row was
  // read yet) with the table as described.
  const table = options.tableInfo ?? restart?.table;
  const settings: SimulationSettings = { ...options.simulation, ...(table && table.gsis.length > 0 ? { materializeOrder: true } : {}) };
  const fromStatistics = isGlobalOrder(opts.order) && !settings.materializeOrder;
  // The default order's striped read is simulated from statistics of a read from the start (stripeOrder.ts),
  // except with --shard: a key's shards are written keys the statistics of one run do not tell apart.
  // The auto order decides from the data as a load would (stripes, else its window, told by onStripes).
  const stripesFromStatistics = (opts.order === 'stripes' || opts.order === 'auto') && !settings.materializeOrder && opts.shard === undefined;
  /** The order a load would write in, as the dry run was told (stripes, or round-robin for a file that cannot be cut). */
  let simulatedOrder: OrderMode | undefined;
  let ownOrder = false;
  // The dry run's own phases model the load's: start-up until 'started', the read phase until the order
  // starts handing out writes ('ordering', global orders) or the last row (streaming orders).
  let startedAt: number | undefined;
  let orderingAt: number | undefined;
  // Rows planned on a second thread (load/planningThread.ts): a load reads them on one, so its read phase
  // is this thread's busy time in the estimate's own plus the other's, not the estimate's shorter wall.
  let busyFrom: EventLoopUtilization | undefined;
  let busyUntil: EventLoopUtilization | undefined;
  let busyElsewhere: number | undefined;
  const onEvent = (event: LoadEvent) => {
    if (event.type === 'started') {
      startedAt = performance.now();
      busyFrom = performance.eventLoopUtilization();
    } else if (event.type === 'ordering') {
      orderingAt = performance.now();
      busyUntil = performance.eventLoopUtilization(busyFrom);
    }
    deps.onEvent?.(event);
  };
  // The setup needs the table, which load() knows only after DescribeTable (or the offline flags).
  let prepared: PreparedEstimate | undefined;
  let tally: EstimateTally | undefined;
  let workersPlan: WorkersPlan | undefined;
  let listedSet: InputSet | undefined;
  let prewarm: EstimateParts['prewarm'];
  const dryRun: DryRun = {
    ...(table ? { tableInfo: table } : {}),
    onTable: (table) => {
      // Key statistics cannot carry each write's GSI keys: start over with the order materialised.
      if ((fromStatistics || stripesFromStatistics) && table.gsis.length > 0) return 'start over';
      const rates = whole ? { ...opts, ...whole.rates, workers: whole.workers } : opts;
      const simulation = { ...settings, ...(options.newTable ? { newTable: true } : {}) };
      // Pre-warming: the plan on the table as described, and how its rate would grow without it; with
      // --prewarm every figure rests on the table as warmed.
      const target = opts.pacing ? prewarmTargetWcu(rates.wcu, rates.totalWcu, whole?.workers ?? opts.segment?.count ?? 1, table) : undefined;
      const plan = planPrewarm(table, target ?? NaN);
      prepared = prepareEstimate(prewarmGiven ? prewarmedTable(table, plan) : table, rates, simulation);
      const growth = prewarmGiven ? prepareEstimate(table, rates, simulation).rate.growth : prepared.rate.growth;
      prewarm = target !== undefined ? { plan, given: prewarmGiven, growth, table } : undefined;
      const plannedOrder = fromStatistics ? { mode: opts.order as GlobalOrderMode } : stripesFromStatistics ? { mode: 'stripes' as const } : undefined;
      tally = new EstimateTally(prepared.costModel, prepared.simulators, {
        indexes: prepared.indexes,
        ...(plannedOrder ? { plannedOrder } : {}),
        sharded: opts.shard !== undefined,
      });
      return undefined;
    },
    onListed: (set: InputSet) => {
      listedSet = set;
      if (whole)
        workersPlan = planWorkers(set, whole.workers, {
          partsDisjoint: whole.partsDisjoint,
          checkpointPath: opts.checkpointPath,
          order: opts.order,
          transform: opts.transform,
          // As the load divides (prepareLoad.ts gives divisionOf all its options): a part's format and a delete list decide a cut by range.
          inputFormat: opts.inputFormat,
          deletes: opts.deletes,
        });
    },
    onPlanned: (w) => tally!.add(w),
    // The tally keeps of a write its keys and units, and its item only for the GSIs' keys (estimateTally.ts).
    ...(settings.planningThread === false
      ? {}
      : { planElsewhere: (table: TableInfo) => table.gsis.length === 0, onPlannedElsewhere: (seconds: number) => (busyElsewhere = seconds) }),
    record: (writes) => tally!.addBatch(writes),
    ...(stripesFromStatistics
      ? {
          onStripes: (layout: StripeLayout | 'own' | undefined) => {
            // 'own': the dry run orders the rows itself (the auto order's window, or a set read in stripes).
            ownOrder = layout === 'own';
            simulatedOrder = layout === 'own' ? undefined : layout ? 'stripes' : 'round-robin';
            tally!.readAs(layout);
          },
          onSkipped: (origin: RowOrigin) => tally!.skip(origin),
        }
      : {}),
  };
  // The dry run itself is unpaced: the pacing the estimate reports is simulated (prepareEstimate). A
  // global order is simulated from key statistics (plannedOrder.ts), so the dry run reads in input order.
  // The verify's options price the verify only: load() is given none of them.
  const { rcu: _rcu, consistentRead: _consistent, sample: _sample, scanSegments: _scan, ...loadOptions }: EstimateOptions = whole?.load ?? options;
  const outcome = await dryRunLoad(
    { ...loadOptions, pacing: false, wcu: undefined, keyWcu: undefined, prewarm: false, ...(fromStatistics ? { order: 'input' as const } : {}) },
    {
      ...(deps.signal ? { signal: deps.signal } : {}),
      onEvent,
      ...(deps.stdin ? { stdin: deps.stdin } : {}),
      ...(deps.files ? { files: deps.files } : {}),
      ...(deps.testSeams ? { testSeams: deps.testSeams } : {}),
      ...(deps.notGrouped ? { notGrouped: true } : {}),
      dryRun,
    },
  );
  if ('startOver' in outcome) return estimateOnce(options, deps, { table: outcome.startOver, calledAt });
  const run = outcome.result;
  const doneAt = performance.now();
  if (!prepared || !tally) throw new Error('load() finished a dry run without describing the table; this is a bug');
  const measured = phasesOf(calledAt, startedAt ?? calledAt, orderingAt ?? doneAt, options.tableInfo ? (settings.latencyMs ?? DEFAULT_LATENCY_MS) : 0);
  const busyHere = (busyUntil ?? (busyFrom ? performance.eventLoopUtilization(busyFrom) : undefined))?.active;
  const phases =
    busyElsewhere === undefined || busyHere === undefined
      ? measured
      : { ...measured, readSeconds: Math.max(measured.readSeconds, busyHere / 1000 + busyElsewhere) };
  const estimated = assembleEstimate({
    run,
    table: prepared.table,
    tableSource: options.tableInfo ? 'flags' : 'describe-table',
    rate: prepared.rate,
    totals: tally.finish(),
    // The order in effect: a file that cannot be read in stripes is written in round-robin order.
    // (A global order's dry run reads in input order: the order simulated is the one asked for.)
    // (The dry run's own order where it ordered the rows itself: a window may have gone over to round-robin.)
    load: {
      pacing: opts.pacing,
      keyWcu: opts.keyWcu,
      order: fromStatistics ? opts.order : ownOrder ? run.order : (simulatedOrder ?? run.order),
      sharded: opts.shard !== undefined,
    },
    // The write prices only: a read price given alone leaves the load's cost on the defaults (and their label).
    prices: writePricesOf(options.prices),
    phases,
    workers: workersPlan,
    prewarm,
    managed: listedSet ? managedInputOf(listedSet, opts) : undefined,
    verify: verifyPlan,
  });
  // --max-cost: the write units priced as the load's cost guard prices them (load/costGuard.ts).
  if (opts.maxCost) {
    const usd = estimated.writeUnits.total * usdPerUnit(estimated.table.billingMode, opts.maxCost.prices);
    estimated.costGuard = { maxUsd: opts.maxCost.usd, usd, over: usd > opts.maxCost.usd };
  }
  // A conditional load sends every valid row as its own call (its batcher supersedes none).
  if (opts.condition)
    estimated.conditional = {
      condition:
        opts.condition.kind === 'ifNewer'
          ? `--if-newer ${opts.condition.attribute}`
          : opts.condition.kind === 'expression'
            ? '--condition'
            : opts.condition.kind === 'item'
              ? '--item-conditions'
              : '--if-not-exists',
      calls: estimated.input.validRows - estimated.input.superseded,
      ...(opts.conditionFailuresPath !== undefined ? { conditionFailuresPath: opts.conditionFailuresPath } : {}),
    };
  return estimated;
}

function writePricesOf(prices: EstimateOptions['prices']): EstimateParts['prices'] {
  const { onDemandPerMillionWrites, provisionedPerWcuHour } = prices ?? {};
  if (onDemandPerMillionWrites === undefined && provisionedPerWcuHour === undefined) return undefined;
  return {
    ...(onDemandPerMillionWrites !== undefined ? { onDemandPerMillionWrites } : {}),
    ...(provisionedPerWcuHour !== undefined ? { provisionedPerWcuHour } : {}),
  };
}

/** The read prices the user gave, labelled as theirs (as the write prices are), else none. */
function readPricesOf(prices: EstimateOptions['prices']): VerifyPlan['prices'] {
  const { onDemandPerMillionReads, provisionedPerRcuHour } = prices ?? {};
  if (onDemandPerMillionReads === undefined && provisionedPerRcuHour === undefined) return undefined;
  return {
    region: 'as given',
    date: 'as given',
    ...(onDemandPerMillionReads !== undefined ? { onDemandPerMillionReads } : {}),
    ...(provisionedPerRcuHour !== undefined ? { provisionedPerRcuHour } : {}),
  };
}

/** --workers N, checked: the load the estimate's pass reads (the whole input, as one process) and the rates of all N. */
interface WholeLoad {
  workers: number;
  load: LoadOptions;
  rates: ReturnType<typeof normalizeRates>;
  partsDisjoint: boolean;
}

function wholeLoadOf(options: EstimateOptions): WholeLoad | undefined {
  const { workers } = options;
  if (workers === undefined) return undefined;
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS)
    throw new LoaderError('INVALID_OPTION', `--workers takes a whole number of workers from 1 to ${MAX_WORKERS}, got ${String(workers)}`);
  if (options.segment !== undefined)
    throw new LoaderError('INVALID_OPTION', '--workers estimates the whole load of N workers, --segment i/N the share of one of them: give one of the two');
  if (options.partsDisjoint !== undefined && typeof options.partsDisjoint !== 'boolean')
    throw new LoaderError('INVALID_OPTION', `--parts-disjoint is true or false, got ${String(options.partsDisjoint)}`);
  // The rates as N workers take them (--wcu auto given to several is the whole load's), without a segment
  // for the pass itself, which reads every row once.
  const rates = normalizeRates({ wcu: options.wcu, totalWcu: options.totalWcu, segment: { index: 0, count: workers } });
  // Nor the listing: the estimate lists the inputs itself, and must not leave the workers a listing made
  // without their count and division (they would take it for an older ddb-spread's and divide by key).
  const { totalWcu: _total, partsDisjoint: _disjoint, workers: _workers, listing: _listing, ...load } = options;
  return { workers, load, rates, partsDisjoint: options.partsDisjoint === true };
}

/** Far more than a Kubernetes Indexed Job's completions or an AWS Batch array's 10,000 children need. */
const MAX_WORKERS = 10_000;

/**
 * Seconds of start-up and of the read phase. Offline (the table from flags) the load's DescribeTable
 * round trip is added to the start-up, as the dry run had none.
 */
function phasesOf(calledAt: number, startedAt: number, readDoneAt: number, describeMs: number): EstimatePhases {
  return { startupSeconds: (startedAt - calledAt + describeMs) / 1000, readSeconds: Math.max(0, readDoneAt - startedAt) / 1000 };
}

/** What the input is, for AWS's managed loaders: its format (one for all parts, else 'other'), where it is, whether it deletes. */
function managedInputOf(set: InputSet, opts: NormalizedLoadOptions): NonNullable<EstimateParts['managed']> {
  const kinds = new Set(set.parts.map((p) => managedKindOf(p.format ?? opts.inputFormat ?? formatFromName(p.part.name))));
  const [only] = kinds;
  const incremental = set.parts.some((p) => p.format === 'export-incremental' || p.format === 'export-incremental-ion');
  return {
    kind: kinds.size === 1 && only !== undefined ? only : 'other',
    inS3: set.parts.length > 0 && set.parts.every((p) => p.part.name.startsWith('s3://')),
    deletes: opts.deletes !== undefined || incremental,
    compressed: set.parts.some((p) => /\.(gz|gzip|zst|zstd|bz2|bzip2)$/i.test(p.part.name)),
  };
}

function managedKindOf(format: PartFormat | undefined): ManagedInputKind {
  if (format === 'ddb-json' || format === 'export-full') return 'dynamodb-json';
  if (format === 'ion' || format === 'export-full-ion') return 'ion';
  if (format === 'csv') return 'csv';
  return 'other';
}
