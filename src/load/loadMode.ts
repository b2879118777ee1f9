import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { InFlightLimit } from '../pacing/inFlight.js';
import type { RateChoice } from '../pacing/rateChoice.js';
import { RateController } from '../pacing/rateControl.js';
import { RatePacer } from '../pacing/ratePacer.js';
import { CapacityReports } from '../pacing/capacityReports.js';
import { createKeyCostModel, type KeyUnits, type WriteKeyCosts } from '../pacing/writeCost.js';
import type { InputSet } from '../reading/inputSet.js';
import type { LoadEvent, LoadResult } from '../reporting/events.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { KeySchema, PlannedWrite, RowOrigin } from '../shared/types.js';
import type { ResolvedShardOptions } from '../sharding/shard.js';
import { ShardManifest } from '../sharding/shardManifest.js';
import { DEFAULT_BACKOFF } from '../aws/backoff.js';
import { dynamoSink, recordingSink, type BatchSink } from '../writing/batchSink.js';
import { describeTable } from '../aws/describeTable.js';
import type { AwsContext } from '../aws/awsErrors.js';
import { withDirectBatchWrites } from '../writing/directSend.js';
import { EndpointWatch } from '../writing/endpointWatch.js';
import { outagePolicy } from '../writing/outage.js';
import { writeJsonAtomically } from '../files/privateFiles.js';
import { LoaderError } from '../shared/errors.js';
import type { Disposer } from './disposer.js';
import type { DryRun, LoadDependencies } from './loadDependencies.js';
import type { LoadFacts } from './loadFacts.js';
import type { LoadStop } from './loadStop.js';
import type { LoadTally } from './loadTally.js';
import type { Rejections } from './rejections.js';
import type { ConditionFailureSink } from '../reporting/conditionFailureSink.js';
import { restartSpacing } from './restartPoints.js';
import { openCheckpoint, type OpenedCheckpoint } from './openCheckpoint.js';
import type { NormalizedLoadOptions } from './options.js';
import type { StripeLayout } from '../ordering/stripes/stripedRecords.js';
import { packageVersion } from './toolVersion.js';
import { describeRaises, planPrewarm, prewarmCommand, prewarmTargetWcu, prewarmedTable, warmThroughputUpdate, type PrewarmPlan } from './prewarmPlan.js';
import { sendWarmUpdate, waitUntilWarm } from '../aws/warmThroughput.js';
import { tableInfoFromDescription } from '../shared/tableInfo.js';
import { formatDuration } from '../shared/format.js';

/**
 * How a load treats the table: it writes (DynamoDB described, paced, checkpointed, sharded keys kept in a
 * manifest, batches sent), or it is a dry run (the table described or as given, nothing paced, kept or
 * sent; batches recorded). Setup asks the mode for each of these instead of asking whether it is a dry run.
 */
export interface LoadMode {
  /** False for a dry run: its outputs are checked as a dry run's (it never overwrites a real load's rejects). */
  readonly writes: boolean;
  /** The table: DescribeTable, or the dry run's own description. `startOver` when the dry run asks to begin again with it. */
  table(): Promise<{ table: TableInfo; startOver: boolean }>;
  /**
   * --prewarm: the table once its warm write throughput is raised to the load's target (DescribeTable until
   * nothing is UPDATING, UpdateTable, then DescribeTable until ACTIVE again); a dry run only says what it
   * would raise, and goes on with the table as it would be.
   */
  prewarm(table: TableInfo): Promise<TableInfo>;
  /** What a write costs and how the load is paced: a dry run's slim writes carry their total cost in `wcu`, and it is not paced. */
  /** `keyWcu`: each partition key's rate in this worker. */
  pacing(table: TableInfo, rate: RateChoice, keyWcu: number): Pacing;
  /** The checkpoint of --checkpoint, taken for this run (its lock and close deferred); none for a dry run. */
  checkpoint(table: TableInfo, seed: number | undefined, inputSet: InputSet): Promise<OpenedCheckpoint | undefined>;
  /** The manifest of a sharded load's keys, saved when the load ends once it has started; none for a dry run, which writes nothing. */
  manifest(shard: ResolvedShardOptions | undefined): ShardManifest | undefined;
  /** Where batches go: DynamoDB (with a watch on the endpoint, closed when the load ends), or the dry run's recorder. */
  sink(keySchema: KeySchema, inFlight: InFlightLimit, pacing: Pacing): BatchSink;
  /** What goes on to the order for each planned write (a dry run's slimmer copy). */
  readonly onPlanned: (write: PlannedWrite) => PlannedWrite;
  /** A dry run whose rows may be planned on a second thread (DryRun.planElsewhere). */
  readonly planElsewhere?: (table: TableInfo) => boolean;
  readonly onPlannedElsewhere?: (busySeconds: number) => void;
  /** Told of each row read and not written (a dry run's, when it asks). */
  readonly onSkipped: ((origin: RowOrigin) => void) | undefined;
  /** Told how the file would be read in stripes, instead of reading it so (a dry run's, when it asks: the estimate). */
  readonly onStripes: ((layout: StripeLayout | 'own' | undefined) => void) | undefined;
  /** Whether the load tallies write units per key (a dry run keeps its own tally). */
  readonly countKeys: boolean;
}

/** The write cost of the load and, when it is paced, its pacer and which calls report their capacity. */
export interface Pacing {
  /** Write units of one put: the table plus every GSI the item lands in. */
  costOf: (write: PlannedWrite) => number;
  pacer?: RatePacer;
  capacity?: CapacityReports;
}

/** What either mode needs of the load around it. */
export interface ModeContext {
  opts: NormalizedLoadOptions;
  deps: LoadDependencies;
  client: DynamoDBDocumentClient;
  ownsClient: boolean;
  /** Where the client goes, for messages only. */
  aws: AwsContext;
  disposer: Disposer;
  /** What the result reports: the manifest's path once written at the end. */
  facts: LoadFacts;
  stop: LoadStop;
  tally: LoadTally;
  /** Where rejected rows go: a resume at a restart point puts back the rejects of the rows before it. */
  rejections: Rejections;
  /** --condition-failures: a resumed checkpoint cuts it back to what it recorded. */
  conditionFailures: ConditionFailureSink | undefined;
  emit: (event: LoadEvent) => void;
  now: () => number;
  result: () => LoadResult;
}

/** The mode of a load with these dependencies: a dry run when they carry one. */
export function loadModeOf(ctx: ModeContext): LoadMode {
  return ctx.deps.dryRun ? dryRunMode(ctx.deps.dryRun, ctx) : writingMode(ctx);
}

/** A load that writes. */
export function writingMode(ctx: ModeContext): LoadMode {
  const { opts, deps, disposer, emit, now } = ctx;
  return {
    writes: true,
    async table() {
      return { table: await describeTable(ctx.client, ctx.aws, deps.signal), startOver: false };
    },
    async prewarm() {
      const waiting = {
        signal: deps.signal,
        ...(deps.testSeams?.prewarmPollMs !== undefined ? { pollMs: deps.testSeams.prewarmPollMs } : {}),
        onWaiting: (state: string, waitedMs: number) =>
          emit({
            type: 'prewarm',
            stage: 'waiting',
            message: `--prewarm: waiting for DynamoDB (${state}) for ${formatDuration(waitedMs / 1000)}; Ctrl-C stops with nothing written`,
          }),
      };
      const startedAt = Date.now();
      // Planned from the table as it stands once nothing is UPDATING: another worker of the load may be
      // raising it too, and a raise it made is not made twice (only upward). Its UpdateTable crossing ours
      // answers ResourceInUse: wait and plan again.
      for (let attempt = 1; ; attempt++) {
        const table = tableInfoFromDescription(await waitUntilWarm(ctx.client, ctx.aws, waiting), opts.table);
        const plan = prewarmPlanOf(table, opts);
        if (attempt === 1) for (const note of plan.notes) emit({ type: 'warning', message: `--prewarm: ${note}` });
        if (plan.raises.length === 0) {
          if (plan.notes.length === 0 || attempt > 1)
            emit({
              type: 'prewarm',
              stage: 'done',
              message:
                attempt === 1
                  ? `--prewarm: table "${opts.table}" and its GSIs are already warm for ${plan.targetWcu} write units/s; nothing raised`
                  : `--prewarm: table "${opts.table}" is warm after ${formatDuration((Date.now() - startedAt) / 1000)}`,
            });
          // The rate is chosen from the table as it is now: --wcu auto starts from the raised warm throughput.
          return table;
        }
        if (attempt > PREWARM_ATTEMPTS)
          throw new LoaderError(
            'AWS_ERROR',
            `the warm throughput of table "${opts.table}" is still below the load's target after ${PREWARM_ATTEMPTS} UpdateTable calls (${describeRaises(opts.table, plan).join('; ')} still to raise); nothing was written: check the table, or run without --prewarm`,
            { table: opts.table },
          );
        emit({
          type: 'prewarm',
          stage: 'plan',
          message: `--prewarm: raising warm write throughput (billed by AWS): ${describeRaises(opts.table, plan).join('; ')}`,
        });
        // 'in use': another update of the table crossed ours; the next round waits for it and plans again.
        await sendWarmUpdate(ctx.client, ctx.aws, warmThroughputUpdate(plan), deps.signal);
      }
    },
    pacing(table, rate, keyWcu) {
      const { costOf, keysOf } = writeCostsOf(table);
      const pacer = opts.pacing
        ? new RatePacer({
            controller: new RateController({ targetWcu: rate.targetWcu, keyWcu, ...(rate.growth ? { growth: rate.growth } : {}) }, now()),
            costOf,
            ...(keysOf ? { keysOf } : {}),
            now,
            onChange: (change) => emit({ type: 'rateChanged', change }),
          })
        : undefined;
      return { costOf, capacity: new CapacityReports(costOf), ...(pacer ? { pacer } : {}) };
    },
    async checkpoint(table, seed, inputSet) {
      if (!opts.checkpointPath) return undefined;
      // A sharded load's keys of the rows before a restart point come from its manifest, saved with the
      // checkpoint (CheckpointStore.trackManifest), since a resume there does not read those rows again.
      const restartEveryRows = deps.testSeams?.restartRows ?? restartSpacing(opts.order, opts.windowRows);
      return openCheckpoint(
        table.keySchema,
        seed,
        {
          opts,
          inputSet,
          tableIdentity: table.identity,
          disposer,
          stop: ctx.stop,
          tally: ctx.tally,
          rejections: ctx.rejections,
          conditionFailures: ctx.conditionFailures,
          emit,
          result: ctx.result,
        },
        restartEveryRows,
        deps.notGrouped === true,
      );
    },
    manifest(shard) {
      if (!shard) return undefined;
      const manifest = new ShardManifest(opts.table, packageVersion(), shard);
      // Saved at the end as well as before the first row (prepareLoad): the keys it holds by then.
      disposer.defer(async () => {
        if (!ctx.facts.started) return;
        try {
          ctx.facts.manifestWritten = await saveManifest(opts.shard!.manifestPath, manifest);
        } catch (error) {
          ctx.stop.fail(error);
        }
      });
      return manifest;
    },
    sink(keySchema, inFlight, pacing) {
      // One watch on the endpoint for every batch: an outage stops the sends, not the rows (src/writing/outage.ts).
      const watch = new EndpointWatch({
        policy: outagePolicy(opts.outageTimeoutMs),
        endpoint: ctx.aws.endpoint ?? `DynamoDB in region ${ctx.aws.region ?? '(not set)'}`,
        now,
        emit,
        signal: deps.signal,
      });
      disposer.defer(() => watch.close());
      return dynamoSink(
        {
          client: (deps.directBatchWrites ?? ctx.ownsClient) ? withDirectBatchWrites(ctx.client) : ctx.client,
          ...ctx.aws,
          keySchema,
          maxAttempts: opts.maxAttempts,
          backoff: DEFAULT_BACKOFF,
          random: deps.random ?? Math.random,
          onRetry: (info) => emit({ type: 'retrying', ...info }),
          pacer: pacing.pacer,
          ...(pacing.capacity ? { capacity: pacing.capacity } : {}),
          watch,
          ...(opts.condition ? { condition: opts.condition, ownEarlierWrites: () => ctx.facts.checkpoint?.store.resumed === true } : {}),
        },
        inFlight,
        now,
      );
    },
    onPlanned: (w) => w,
    onSkipped: undefined,
    onStripes: undefined,
    countKeys: true,
  };
}

/** A dry run: the same reading, planning, sharding, ordering and batching, and nothing written. */
export function dryRunMode(dryRun: DryRun, ctx: Pick<ModeContext, 'client' | 'aws' | 'deps' | 'opts' | 'emit'>): LoadMode {
  return {
    writes: false,
    async table() {
      const table = dryRun.tableInfo ?? (await describeTable(ctx.client, ctx.aws, ctx.deps.signal));
      return { table, startOver: dryRun.onTable?.(table) === 'start over' };
    },
    prewarm(table) {
      const plan = prewarmPlanOf(table, ctx.opts);
      for (const note of plan.notes) ctx.emit({ type: 'warning', message: `--prewarm: ${note}` });
      const command = prewarmCommand(table.name, plan);
      if (command)
        ctx.emit({
          type: 'prewarm',
          stage: 'plan',
          message: `--prewarm would raise warm write throughput (billed by AWS), as \`${command}\` does: ${describeRaises(table.name, plan).join('; ')}; this dry run assumes it`,
        });
      return Promise.resolve(prewarmedTable(table, plan));
    },
    pacing: () => ({ costOf: (w) => w.wcu }),
    checkpoint: () => Promise.resolve(undefined),
    manifest: () => undefined,
    sink: () => recordingSink((writes) => dryRun.record(writes)),
    onPlanned: (w) => dryRun.onPlanned(w),
    onSkipped: dryRun.onSkipped,
    onStripes: dryRun.onStripes,
    countKeys: false,
    ...(dryRun.planElsewhere ? { planElsewhere: dryRun.planElsewhere } : {}),
    ...(dryRun.onPlannedElsewhere ? { onPlannedElsewhere: dryRun.onPlannedElsewhere } : {}),
  };
}

/** UpdateTable attempts --prewarm makes while the table is being updated by someone else. */
const PREWARM_ATTEMPTS = 3;

/** What --prewarm raises for this load: the whole load's target (every worker's), by its own rate choice. */
function prewarmPlanOf(table: TableInfo, opts: NormalizedLoadOptions): PrewarmPlan {
  return planPrewarm(table, prewarmTargetWcu(opts.wcu, opts.totalWcu, opts.segment?.count ?? 1, table) ?? NaN);
}

/**
 * Write units of one put by the table's GSIs, in all and per partition key it lands on (the table's key
 * by table units, each GSI key by its own, since each index has partitions of its own), computed once per write. A delete is planned at its
 * 1 unit on the table's key (see docs/REFERENCE.md, "Deletes").
 */
function writeCostsOf(tableInfo: TableInfo): { costOf: (write: PlannedWrite) => number; keysOf?: (write: PlannedWrite) => KeyUnits[] } {
  // Without GSIs the table's units are the cost, all on the table's key (the pacer's default, without an array per write).
  if (tableInfo.gsis.length === 0) return { costOf: (w) => w.wcu };
  const costModel = createKeyCostModel(tableInfo);
  const costs = new WeakMap<PlannedWrite, WriteKeyCosts>();
  const costsOf = (w: PlannedWrite): WriteKeyCosts => {
    if (w.op === 'delete') return { total: w.wcu, keys: [{ key: w.partitionId, units: w.wcu }] };
    let cost = costs.get(w);
    if (cost === undefined) {
      cost = costModel(w);
      costs.set(w, cost);
    }
    return cost;
  };
  return { costOf: (w) => costsOf(w).total, keysOf: (w) => costsOf(w).keys };
}

/** Writes the manifest atomically, so a reader never sees half a file. */
export async function saveManifest(path: string, manifest: ShardManifest): Promise<string> {
  await writeJsonAtomically(
    path,
    manifest.toJSON(),
    '--shard-manifest',
    (error) =>
      new LoaderError('MANIFEST_UNWRITABLE', `cannot write the shard manifest ${path}: ${error.message}; choose another path with --shard-manifest`, {
        file: path,
        cause: error,
      }),
  );
  return path;
}
