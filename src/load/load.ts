import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createBatcher } from '../batching/batch.js';
import { defaultCeiling } from '../pacing/inFlight.js';
import type { LoadEvent, LoadResult } from '../reporting/events.js';
import { writesToAccount, type DivisionSummary } from '../reporting/result.js';
import { LoaderError, bug } from '../shared/errors.js';
import { RejectSink } from '../reporting/rejectSink.js';
import { ConditionFailureSink, conditionLabel } from '../reporting/conditionFailureSink.js';
import type { TableInfo } from '../shared/tableInfo.js';
import { createClient } from '../aws/client.js';
import { targetOf } from '../aws/awsTarget.js';
import { Dispatcher } from './dispatcher.js';
import { Disposer } from './disposer.js';
import type { DryRun, LoadDependencies } from './loadDependencies.js';
import type { LoadFacts } from './loadFacts.js';
import { loadModeOf } from './loadMode.js';
import { displayKey, loadResult } from './loadResult.js';
import { TimelineRecorder, type Timeline, type TimelineCounts } from '../reporting/timeline.js';
import { LoadStop } from './loadStop.js';
import { LoadTally } from './loadTally.js';
import { normalizeOptions, type LoadOptions, type NormalizedLoadOptions } from './options.js';
import { prepareLoad, type PreparedLoad, type PrepareContext } from './prepareLoad.js';
import { Rejections } from './rejections.js';
import { batchesOf, type StageReport, type Stages } from './stages.js';
import { CostGuard } from './costGuard.js';
import { usdPerUnit } from '../pacing/unitPrices.js';
import { formatPrice } from '../shared/format.js';
import type { PlannedWrite, RowOrigin } from '../shared/types.js';
import { loadTransform } from './transformModule.js';

export type { DryRun, LoadDependencies, TestSeams } from './loadDependencies.js';

/** How often a progress event is emitted, at most. */
const PROGRESS_INTERVAL_MS = 200;

/**
 * Loads a CSV or JSONL file into a DynamoDB table: stream rows, type and validate them, order and batch
 * them (≤ 25 requests, unique keys), and write with up to `concurrency` BatchWriteItem calls in flight.
 * Resolves with the counters when every row read has been written, superseded or rejected; rejects
 * with a LoaderError (its `result` holds the counters so far) when the load had to stop.
 *
 * The parts, in the order a row meets them (docs/ARCHITECTURE.md): prepareLoad (files, table, rate,
 * checkpoint, input), the stages (records → planned writes → order → batches), the Dispatcher (slots,
 * keys in flight, resume, checkpoint) and its sink (DynamoDB, or a dry run's recorder); the LoadTally
 * counts, the Disposer releases what setup took, in reverse. Memory is bounded by the stream buffers, the order's budget and
 * `concurrency` batches of 25 items: the stages are pulled only when a batch slot is free.
 */
export async function load(options: LoadOptions, deps: LoadDependencies = {}): Promise<LoadResult> {
  try {
    return resultOf(await loadOnce(options, deps));
  } catch (error) {
    if (!restartsInRoundRobin(error, options) || deps.dryRun) throw error;
    // Everything the striped read sent has settled, and nothing went out of order: writing every row again
    // in an order that keeps each key's rows in file order leaves the table as writing the file top to
    // bottom would. It is streamed through the window (which goes over to round-robin where keys come in runs).
    const written = (error as LoaderError).result?.written ?? 0;
    deps.onEvent?.({
      type: 'warning',
      message: `${(error as Error).message.split('. Nothing')[0]}; writing the whole file again from its first row, as it comes through the window order (${written} rows written so far are written again, with the same values)`,
    });
    return resultOf(await loadOnce(options, { ...deps, notGrouped: true }));
  }
}

/** How a dry run ended: with its result, or, when its onTable asked, with the table to start over with. */
export type DryRunOutcome = { result: LoadResult } | { startOver: TableInfo };

/**
 * A dry run (the estimate's): as load(), except that it resolves with the table instead of a result when
 * the dry run's onTable asks to start over (no row read yet, everything released), and that a file the
 * default order finds not grouped is left to the caller to start over (its own tallies must start over too).
 */
export function dryRunLoad(options: LoadOptions, deps: LoadDependencies & { dryRun: DryRun }): Promise<DryRunOutcome> {
  return loadOnce(options, deps);
}

function resultOf(outcome: DryRunOutcome): LoadResult {
  if ('startOver' in outcome) throw bug("a dry run's onTable asked load() to start over; such a dry run is run by dryRunLoad()");
  return outcome.result;
}

/**
 * A striped read that found the file not grouped by partition key starts over, streamed through the
 * window (the auto order's other choice), by itself, when nothing pins the order. A load with a checkpoint
 * starts its checkpoint over too, recording that the input is not grouped, so that a resume reads it
 * through the window again and replays that pass's batches (openCheckpoint). A load that asked for stripes
 * by name stops instead, as does one with random:N suffixes and no --shard-seed.
 * A dry run is started over by its caller (the estimate's tally must start over too).
 */
export function restartsInRoundRobin(error: unknown, options: LoadOptions): boolean {
  return (
    error instanceof LoaderError &&
    error.code === 'ORDER_NOT_GROUPED' &&
    (options.order === undefined || options.order === 'auto') &&
    !(hasRandomRule(options.shard) && options.shardSeed === undefined)
  );
}

/**
 * random:N without --shard-seed draws its seed per run: a second pass would put each key under another
 * suffix and leave the first pass's items behind, so such a load stops instead of starting over.
 */
function hasRandomRule(rules: LoadOptions['shard']): boolean {
  return (rules ?? []).some((rule) => (typeof rule === 'string' ? rule.trim().startsWith('random:') : rule.kind === 'random'));
}

async function loadOnce(options: LoadOptions, deps: LoadDependencies): Promise<DryRunOutcome> {
  const startedAt = performance.now();
  const opts = normalizeOptions(options, { dryRun: deps.dryRun !== undefined });
  // Imported before anything is listed or described: a wrong module costs nothing.
  if (opts.transform !== undefined) opts.transformLoaded = await loadTransform(opts.transform);
  const emit = deps.onEvent ?? (() => undefined);
  const now = deps.now ?? (() => performance.now());
  const disposer = new Disposer();
  const ownsClient = deps.client === undefined;
  const client = deps.client ?? createClient({ ...opts, maxSockets: Math.max(50, defaultCeiling(opts.concurrency) * 2) });
  if (ownsClient) disposer.defer(() => client.destroy());
  // For messages only: where the client actually goes (AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, the profile's endpoint_url) and who said so.
  const target = await targetOf(client);
  const aws = {
    table: opts.table,
    region: opts.region ?? target.region ?? (await resolvedRegion(client)),
    endpoint: target.endpoint ?? opts.endpoint ?? process.env.AWS_ENDPOINT_URL_DYNAMODB ?? process.env.AWS_ENDPOINT_URL,
    endpointSource: target.endpointSource ?? (opts.endpoint ? '--endpoint-url' : undefined),
  };
  const facts: LoadFacts = { started: false };
  const rejects = new RejectSink(opts.rejectsPath);
  // --condition-failures: a load's, never a dry run's (which sends no condition).
  const conditionFailures =
    opts.conditionFailuresPath !== undefined && opts.condition && !deps.dryRun
      ? new ConditionFailureSink(opts.conditionFailuresPath, conditionLabel(opts.condition))
      : undefined;
  const tally = new LoadTally();
  if (opts.transformLoaded) tally.countTransform();
  // A conditional load reports its condition failures, 0 too; one without does not.
  if (opts.condition) tally.counters.conditionFailed ??= 0;
  const stop = new LoadStop(deps.signal);
  // The load's course for the report; a dry run's has no time to speak of.
  const timeline = deps.dryRun ? undefined : new TimelineRecorder({ bucketMs: deps.testSeams?.timelineBucketMs });
  const result = () =>
    loadResult(tally, {
      ...resultFacts(facts, rejects, opts, performance.now() - startedAt, now),
      conditionFailuresPath: conditionFailures && conditionFailures.count > 0 ? conditionFailures.path : undefined,
      stopped: stop.stopping,
      timeline: timeline?.begun ? sampledTimeline(timeline, tally, facts, startedAt, now) : undefined,
    });
  const progress = progressEvents(emit, tally, facts, startedAt, now, timeline);
  const rejections = new Rejections(tally, rejects, emit, stop, opts);
  const mode = loadModeOf({ opts, deps, client, ownsClient, aws, disposer, facts, stop, tally, rejections, conditionFailures, emit, now, result });
  let dispatcher: Dispatcher | undefined;
  let readToEnd = false;
  let startOver: TableInfo | undefined;
  try {
    // Read by the worker's last word (workerBoard.ts), once the load has settled.
    const ending = (): ReturnType<PrepareContext['ending']> => {
      // A finished checkpoint run again (a recreated Job's worker) tells the outcome it recorded.
      if (stop.error?.code === 'CHECKPOINT_COMPLETE') {
        const again = result();
        return { state: 'finished', complete: again.rejected === 0 && again.notWritten === 0 };
      }
      return { state: readToEnd && !stop.stopping ? 'finished' : 'stopped', code: stop.error?.code ?? (stop.aborted ? 'ABORTED' : undefined) };
    };
    const fail = (error: LoaderError) => stop.fail(error);
    const stopping = () => stop.stopping;
    const prepared = await prepareLoad({ opts, deps, mode, disposer, facts, emit, result, ending, now, fail, stopping });
    if ('startOver' in prepared) {
      startOver = prepared.startOver;
    } else {
      // The reject file is written while rows flow: closed first when the load ends, so that a failure to
      // flush it is known before the manifest and the checkpoint record how the load ended.
      disposer.defer(async () => {
        try {
          await rejects.close();
        } catch (error) {
          stop.fail(error);
        }
      });
      const { checkpoint, manifest } = prepared;
      if (conditionFailures) {
        // Closed with the reject file, before the checkpoint's last save (which records it as written).
        disposer.defer(async () => {
          try {
            await conditionFailures.close();
          } catch (error) {
            stop.fail(error);
          }
        });
        // A resumed checkpoint cut it back to what it recorded (openCheckpoint); a load without one starts it anew.
        if (!checkpoint) await conditionFailures.startFresh();
      }
      if (timeline) {
        // From here on: a resumed load's earlier writes are counted already, and kept apart.
        timeline.begin(performance.now() - startedAt, timelineCounts(tally, facts, now));
        tally.onKeyUnits = (partitionId, units) => timeline.key(displayKey(partitionId), units);
      }
      const costGuard = costGuardOf(opts, prepared, deps.dryRun !== undefined);
      // An estimate's word is known before any row: refused here, nothing read.
      const refused = costGuard?.refusalByEstimate();
      if (refused) throw refused;
      dispatcher = new Dispatcher({
        concurrency: opts.concurrency,
        namedParts: prepared.namedParts,
        inFlight: prepared.inFlight,
        now,
        sink: prepared.sink,
        keySchema: prepared.tableInfo.keySchema,
        costOf: prepared.costOf,
        countKeys: prepared.countKeys,
        tally,
        rejections,
        stop,
        progress,
        checkpoint: checkpoint?.store,
        resumeFrom: checkpoint?.resumeFrom ?? 0,
        manifest,
        costGuard,
        conditionFailures,
      });
      const report = { stop, tally, rejections, progress, emit };
      const drain = dispatcher;
      // An export chain's barrier: every batch of the exports before settles and is saved in the checkpoint
      // before this worker says so; a worker killed after saying it resumes past them, never writing them again.
      const settle = async () => {
        await drain.finish();
        if (!stop.stopping) await checkpoint?.store.save('running');
      };
      for await (const batch of batchesOfLoad(prepared, opts, report, settle, costGuard)) await dispatcher.dispatch(batch);
      await dispatcher.finish();
      readToEnd = true;
    }
  } catch (error) {
    stop.fail(error);
  } finally {
    // A failure out of the reading (a truncated .gz, a full disk) must not leave batches writing behind
    // the counters, the reject file and the checkpoint being closed.
    await dispatcher?.settle();
    stop.settle();
    // The stages stop reading when the load stops: only a load that did not stop read its input to the end.
    if (readToEnd && !stop.stopping) tally.inputEnded = true;
    await disposer.release();
  }
  progress(true);
  if (startOver && !stop.stopping) return { startOver };
  return { result: outcomeOf(result(), stop, facts.started) };
}

/** The stages chained: the batches of the load, in the order they are sent. */
function batchesOfLoad(prepared: PreparedLoad, opts: NormalizedLoadOptions, report: StageReport, settle: () => Promise<void>, guard: CostGuard | undefined) {
  const { input, chain } = prepared;
  // The cost guard's sample: the rows read before the first batch of the run is sent. Units per write, bytes
  // per row read, whatever became of it: a row rejected, skipped (expired, by the transform) or another
  // segment's is bytes of the input that cost nothing, and the items of a row a transform split share its
  // bytes (its origin, met once in a row).
  let sampledOrigin: RowOrigin | undefined;
  const sampleBytes = (origin: RowOrigin) => {
    if (origin === sampledOrigin) return;
    sampledOrigin = origin;
    guard!.sample(0, Buffer.byteLength(origin.raw));
  };
  const onPlanned = guard
    ? (write: PlannedWrite) => {
        if (guard.sampling) {
          sampleBytes(write.origin);
          guard.sample(prepared.costOf(write), 0);
        }
        return prepared.onPlanned(write);
      }
    : prepared.onPlanned;
  const onSkipped = guard
    ? (origin: RowOrigin) => {
        if (guard.sampling) sampleBytes(origin);
        prepared.onSkipped?.(origin);
      }
    : prepared.onSkipped;
  return batchesOf(
    prepared.records,
    {
      file: input.name,
      planner: prepared.planner,
      transform: opts.transformLoaded?.fn,
      segment: prepared.segment,
      onPlanned,
      onSkipped,
      expiry: expiryOf(opts),
      ifNewer: opts.condition?.kind === 'ifNewer' ? opts.condition.attribute : undefined,
      ifNewerUntyped: opts.condition?.kind === 'ifNewer' && !opts.infer && !Object.hasOwn(opts.types, opts.condition.attribute),
      orderer: prepared.orderer,
      order: prepared.order,
      // A conditional write's outcome depends on the writes of its key before it: each row is tried, none superseded.
      batcher: createBatcher({ supersede: opts.condition === undefined }),
      // Rows already read are written even when stopping on a signal: at most one partial batch. Not with
      // a checkpoint: a partial batch is not a batch of the load's fixed sequence, and resuming counts on it.
      sendLast: () => !report.stop.failed && !(prepared.checkpoint && report.stop.stopping),
      close: prepared.closeInput,
      restarts: prepared.restarts,
      exports: chain
        ? {
            of: (record) => chain.exportOf(record.origin.file),
            from: chain.from,
            mustEmpty: chain.barrier !== undefined,
            cross: async (next) => {
              // Read by this process alone: nothing to wait for once the order has emptied.
              if (!chain.barrier) return;
              await settle();
              if (!report.stop.stopping) await chain.barrier.cross(next);
            },
          }
        : undefined,
    },
    report,
  );
}

/**
 * --max-cost's guard for a load that writes (a dry run's cost is the estimate's to price): units priced as
 * the table is billed, at the prices given or the defaults.
 */
function costGuardOf(opts: NormalizedLoadOptions, prepared: PreparedLoad, dryRun: boolean): CostGuard | undefined {
  const given = opts.maxCost;
  if (!given || dryRun) return undefined;
  const billing = prepared.tableInfo.billingMode;
  return new CostGuard({
    maxUsd: given.usd,
    usdPerUnit: usdPerUnit(billing, given.prices),
    totalBytes: prepared.input.totalBytes,
    estimate: given.estimate,
    pricing:
      billing === 'PROVISIONED'
        ? `${formatPrice(given.prices.provisionedPerWcuHour)} per WCU-hour, a unit a second for an hour being one (provisioned)`
        : `${formatPrice(given.prices.onDemandPerMillionWrites)} per million write request units (on demand)`,
  });
}

/** --skip-expired's attribute and load time, fixed before the first row (prepareLoad, openCheckpoint). */
function expiryOf(opts: NormalizedLoadOptions): Stages['expiry'] {
  const given = opts.skipExpired;
  if (!given) return undefined;
  if (given.at === undefined) throw bug('--skip-expired reached the stages without a load time');
  return { attribute: given.attribute, at: given.at };
}

/** How the workers divide the load, for the result: this worker's share when by part, every part when by key. */
function divisionSummary({ division, share, inputSet }: LoadFacts): DivisionSummary | undefined {
  if (!division) return undefined;
  if (share)
    return {
      by: share.by,
      why: share.why,
      parts: share.parts.length,
      bytes: share.bytes,
      otherParts: share.otherParts,
      otherBytes: share.otherBytes,
      ...(share.scannedBytes !== undefined ? { scannedBytes: share.scannedBytes } : {}),
      ...(share.copied ? { copiedBytes: share.copied.bytes } : {}),
    };
  return { by: division.by, why: division.why, parts: inputSet?.parts.length ?? 0, bytes: inputSet?.totalBytes ?? 0, otherParts: 0, otherBytes: 0 };
}

/** What the result needs from the load's parts, read when it is asked for. */
function resultFacts(facts: LoadFacts, rejects: RejectSink, opts: NormalizedLoadOptions, elapsedMs: number, now: () => number) {
  const controller = facts.rate?.pacer?.controller;
  return {
    table: opts.table,
    input: opts.input,
    // The order's own: an auto order's window may have gone over to round-robin on the way.
    order: facts.reading?.orderer.mode ?? opts.order,
    elapsedMs,
    bytesRead: facts.input?.bytesRead() ?? 0,
    rejectsPath: rejects.count > 0 ? opts.rejectsPath : undefined,
    orderTempBytes: facts.reading?.orderer.stats.tempBytes ?? 0,
    shardManifestPath: facts.manifestWritten,
    shardedKeys: facts.manifest?.keyCount ?? 0,
    rate: controller?.snapshot(now()),
    // The rate the load could reach: growth-limited on on-demand, at most a provisioned table's WCU.
    targetWcu: controller ? Math.min(controller.reachableWcu(now()), facts.rate?.tableWcu ?? Infinity) : Infinity,
    nowWcu: facts.rate?.nowWcu,
    rateReason: facts.rate?.reason ?? '',
    keyWcu: facts.keyWcu ?? opts.keyWcu,
    pacing: opts.pacing,
    segment: opts.segment ? `${opts.segment.index}/${opts.segment.count}` : undefined,
    division: divisionSummary(facts),
    checkpointPath: facts.checkpoint ? opts.checkpointPath : undefined,
    resumedFromBatch: facts.checkpoint?.store.resumed ? facts.checkpoint.resumeFrom : undefined,
    capacityReports: facts.rate?.capacity?.summary(),
    skipped: facts.inputSet?.skipped ?? [],
  };
}

/** The cumulative counts the timeline samples: the tally's and the rate controller's. */
function timelineCounts(tally: LoadTally, facts: LoadFacts, now: () => number, snapshot = facts.rate?.pacer?.controller.snapshot(now())): TimelineCounts {
  const c = tally.counters;
  return {
    written: c.written,
    rejected: c.rejected,
    plannedWcu: c.plannedWcu,
    consumedWcu: c.consumedWcu,
    throttledItems: c.throttledItems,
    tableThrottles: snapshot?.tableThrottles ?? 0,
    keyThrottles: snapshot?.keyThrottles ?? 0,
    errors: snapshot?.errors ?? 0,
  };
}

/**
 * The timeline with a sample taken now: a result asked for between progress events (the summary of a
 * load quit by --stop-timeout) then has buckets that add up to its counters.
 */
function sampledTimeline(timeline: TimelineRecorder, tally: LoadTally, facts: LoadFacts, startedAt: number, now: () => number): Timeline {
  const rate = facts.rate?.pacer?.controller.snapshot(now());
  timeline.sample(performance.now() - startedAt, timelineCounts(tally, facts, now, rate), rate?.currentWcu);
  return timeline.timeline();
}

/** Progress events, at most one per PROGRESS_INTERVAL_MS unless forced; each a sample of the timeline. */
function progressEvents(
  emit: (event: LoadEvent) => void,
  tally: LoadTally,
  facts: LoadFacts,
  startedAt: number,
  now: () => number,
  timeline: TimelineRecorder | undefined,
): (force?: boolean) => void {
  let last = 0;
  return (force = false) => {
    const t = performance.now();
    if (!force && t - last < PROGRESS_INTERVAL_MS) return;
    last = t;
    tally.counters.bytesRead = facts.input?.bytesRead() ?? 0;
    const rate = facts.rate?.pacer?.controller.snapshot(now());
    timeline?.sample(t - startedAt, timelineCounts(tally, facts, now, rate), rate?.currentWcu);
    emit({ type: 'progress', counters: tally.counters, totalBytes: facts.input?.totalBytes, elapsedMs: t - startedAt, ...(rate ? { rate } : {}) });
  };
}

/** The load's result, or its error carrying the result so far; a load whose rows do not add up is a bug. */
function outcomeOf(final: LoadResult, stop: LoadStop, started: boolean): LoadResult {
  if (!stop.failed && stop.aborted) {
    stop.fail(
      new LoaderError(
        'ABORTED',
        `stopped on request after ${final.rowsRead} rows; batches already sent were finished, rows not yet sent are counted as not written`,
      ),
    );
  }
  const error = stop.error;
  if (error) {
    if (started) error.result = final;
    throw error;
  }
  if (final.written + final.superseded + final.rejected + final.otherSegments !== writesToAccount(final)) {
    const wrong = bug(
      `row accounting does not add up: read ${final.rowsRead}${final.transformOutputs !== undefined ? ` (transform: ${final.splitWrites ?? 0} split writes, ${final.skippedByTransform ?? 0} skipped)` : ''}, written ${final.written}, superseded ${final.superseded}, rejected ${final.rejected}, other segments ${final.otherSegments}, expired ${final.skippedExpired ?? 0}`,
    );
    wrong.result = final;
    throw wrong;
  }
  return final;
}

async function resolvedRegion(client: DynamoDBDocumentClient): Promise<string | undefined> {
  try {
    return await client.config.region();
  } catch {
    return undefined;
  }
}
