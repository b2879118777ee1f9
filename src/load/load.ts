import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Readable } from 'node:stream';
import { createBatcher } from '../batching/batch.js';
import { defaultCeiling } from '../pacing/inFlight.js';
import type { LoadEvent, LoadResult } from '../reporting/events.js';
import { LoaderError, bug } from '../shared/errors.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { PlannedWrite, RowOrigin } from '../shared/types.js';
import { createClient } from '../aws/client.js';
import { Dispatcher } from './dispatcher.js';
import { loadResult } from './loadResult.js';
import { LoadSession } from './loadSession.js';
import { LoadStop } from './loadStop.js';
import { LoadTally } from './loadTally.js';
import { normalizeOptions, type LoadOptions, type NormalizedLoadOptions } from './options.js';
import type { CallerFiles } from './outputFiles.js';
import { prepareLoad, type PreparedLoad } from './prepareLoad.js';
import { Rejections } from './rejections.js';
import { batchesOf, type StageReport } from './stages.js';
import type { StripeLayout } from './stripedRecords.js';

/** What load() needs from its environment; each has a real default and can be replaced in tests. */
export interface LoadDependencies {
  /** A DynamoDB document client; by default one is built from the region, profile and endpoint options. */
  client?: DynamoDBDocumentClient;
  /**
   * Send BatchWriteItem calls after the first below the client's middleware chain (src/writing/directSend.ts).
   * @default true for the client load() builds; false for a client given here, whose own middleware (a
   * logger, a retry strategy, tracing, headers) must then see every call
   */
  directBatchWrites?: boolean;
  /**
   * Stops reading when aborted; batches already sent finish, then load() rejects with code ABORTED. An abort
   * after every batch has settled stops nothing: the load ends as its checkpoint records it.
   */
  signal?: AbortSignal;
  onEvent?: (event: LoadEvent) => void;
  /** Stream read for input "-". @default process.stdin */
  stdin?: Readable;
  /** Random source for backoff jitter. @default Math.random */
  random?: () => number;
  /** Monotonic clock (ms) for rate control. @default performance.now */
  now?: () => number;
  /** A dry run: the same reading, planning, sharding, ordering and batching, and nothing written. */
  dryRun?: DryRun;
  /** Files the caller reads or will write (the CLI's --schema, --config, --report): checked with load's own before the first row. */
  files?: CallerFiles;
}

/**
 * What a dry run (the estimate) plugs into load(): no rate control, no shard manifest, and batches go
 * to `record` instead of DynamoDB, each counted as written.
 */
export interface DryRun {
  /** The table, when known without DescribeTable (the estimate's offline flags). */
  tableInfo?: TableInfo;
  /** Called with the table's description before the first row. */
  onTable?: (table: TableInfo) => void;
  /** Each planned write in input order; what it returns goes on to the order (a slimmer copy, say). */
  onPlanned(write: PlannedWrite): PlannedWrite;
  /** Each batch, in the order `load` would send it. */
  record(writes: readonly PlannedWrite[]): void;
  /**
   * The striped read simulated, not done (the estimate, issue 14). When set and the order is `stripes`,
   * the file is cut as a load would cut it and read whole in input order instead: told the stripes'
   * layout, or undefined where the load would read the file whole in round-robin order (it is then read
   * in input order). Called once, before the first row.
   */
  onStripes?: (layout: StripeLayout | undefined) => void;
  /**
   * Each row read and not written (rejected, or of another segment), in input order: it still moves its
   * stripe along in a striped read, so the estimate's simulation of that read needs its text too.
   */
  onSkipped?: (origin: RowOrigin) => void;
}

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
 * counts, the LoadSession releases. Memory is bounded by the stream buffers, the order's budget and
 * `concurrency` batches of 25 items: the stages are pulled only when a batch slot is free.
 */
export async function load(options: LoadOptions, deps: LoadDependencies = {}): Promise<LoadResult> {
  try {
    return await loadOnce(options, deps);
  } catch (error) {
    if (!restartsInRoundRobin(error, options) || deps.dryRun) throw error;
    // Everything the striped read sent has settled, and nothing went out of order: writing every row again
    // in round-robin order leaves the table as writing the file top to bottom would.
    const written = (error as LoaderError).result?.written ?? 0;
    deps.onEvent?.({
      type: 'warning',
      message: `${(error as Error).message.split('. Nothing')[0]}; writing the whole file again from its first row in round-robin order (${written} rows written so far are written again, with the same values)`,
    });
    return loadOnce({ ...options, order: 'round-robin' }, deps);
  }
}

/**
 * A striped read that found the file not grouped by partition key starts over in round-robin order, by
 * itself, when nothing pins the order: a load with a checkpoint stops instead (its checkpoint records the
 * striped order, and resuming it must replay that order), as does a load that asked for stripes by name
 * and one with random:N suffixes and no --shard-seed.
 * A dry run is started over by its caller (the estimate's tally must start over too).
 */
export function restartsInRoundRobin(error: unknown, options: LoadOptions): boolean {
  return (
    error instanceof LoaderError &&
    error.code === 'ORDER_NOT_GROUPED' &&
    options.order === undefined &&
    options.checkpointPath === undefined &&
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

async function loadOnce(options: LoadOptions, deps: LoadDependencies): Promise<LoadResult> {
  const startedAt = performance.now();
  const opts = normalizeOptions(options, { dryRun: deps.dryRun !== undefined });
  const emit = deps.onEvent ?? (() => undefined);
  const now = deps.now ?? (() => performance.now());
  const ownsClient = deps.client === undefined;
  const client = deps.client ?? createClient({ ...opts, maxSockets: Math.max(50, defaultCeiling(opts.concurrency) * 2) });
  // For messages only: where the client actually goes, including AWS_REGION and AWS_ENDPOINT_URL_DYNAMODB.
  const aws = {
    table: opts.table,
    region: opts.region ?? (await resolvedRegion(client)),
    endpoint: opts.endpoint ?? process.env.AWS_ENDPOINT_URL_DYNAMODB ?? process.env.AWS_ENDPOINT_URL,
  };
  const session = new LoadSession(opts, client, ownsClient);
  const tally = new LoadTally();
  const stop = new LoadStop(deps.signal);
  const result = () => loadResult(tally, { ...resultFacts(session, opts, performance.now() - startedAt, now), stopped: stop.stopping });
  const progress = progressEvents(emit, tally, session, startedAt, now);
  const rejections = new Rejections(tally, session.rejects, emit, stop, opts);
  let dispatcher: Dispatcher | undefined;
  let readToEnd = false;
  try {
    const prepared = await prepareLoad(session, { deps, tally, emit, now, result, aws });
    const { sink, inFlight, costOf, countKeys, tableInfo } = prepared;
    const { checkpoint, resumeFrom, manifest } = session;
    dispatcher = new Dispatcher({
      concurrency: opts.concurrency,
      namedParts: (session.inputSet?.parts.length ?? 1) > 1,
      inFlight,
      now,
      sink,
      keySchema: tableInfo.keySchema,
      costOf,
      countKeys,
      tally,
      rejections,
      stop,
      progress,
      checkpoint,
      resumeFrom,
      manifest,
    });
    for await (const batch of batchesOfLoad(prepared, opts, { stop, tally, rejections, progress, emit }, session)) await dispatcher.dispatch(batch);
    await dispatcher.finish();
    readToEnd = true;
  } catch (error) {
    stop.fail(error);
  } finally {
    // A failure out of the reading (a truncated .gz, a full disk) must not leave batches writing behind
    // the counters, the reject file and the checkpoint being closed.
    await dispatcher?.settle();
    stop.settle();
    // The stages stop reading when the load stops: only a load that did not stop read its input to the end.
    if (readToEnd && !stop.stopping) tally.inputEnded = true;
    await session.release(stop, tally, emit);
  }
  progress(true);
  return outcomeOf(result(), stop, session.started);
}

/** The stages chained: the batches of the load, in the order they are sent. */
function batchesOfLoad(prepared: PreparedLoad, opts: NormalizedLoadOptions, report: StageReport, session: LoadSession) {
  const { input } = prepared;
  return batchesOf(
    prepared.records,
    {
      file: input.name,
      planner: prepared.planner,
      segment: opts.segment,
      onPlanned: prepared.onPlanned,
      onSkipped: prepared.onSkipped,
      orderer: prepared.orderer,
      order: prepared.order,
      batcher: createBatcher(),
      // Rows already read are written even when stopping on a signal: at most one partial batch. Not with
      // a checkpoint: a partial batch is not a batch of the load's fixed sequence, and resuming counts on it.
      sendLast: () => !report.stop.failed && !(session.checkpoint && report.stop.stopping),
      close: prepared.closeInput,
    },
    report,
  );
}

/** What the result needs from the load's parts, read when it is asked for. */
function resultFacts(session: LoadSession, opts: NormalizedLoadOptions, elapsedMs: number, now: () => number) {
  const controller = session.pacer?.controller;
  return {
    table: opts.table,
    input: opts.input,
    order: session.order ?? opts.order,
    elapsedMs,
    bytesRead: session.input?.bytesRead() ?? 0,
    rejectsPath: session.rejects.count > 0 ? opts.rejectsPath : undefined,
    orderTempBytes: session.orderer?.stats.tempBytes ?? 0,
    shardManifestPath: session.manifestWritten,
    shardedKeys: session.manifest?.keyCount ?? 0,
    rate: controller?.snapshot(now()),
    // The rate the load could reach (issue 15): growth-limited on on-demand, at most a provisioned table's WCU.
    targetWcu: controller ? Math.min(controller.reachableWcu(now()), session.tableWcu) : Infinity,
    rateReason: session.rateReason,
    keyWcu: opts.keyWcu,
    pacing: opts.pacing,
    segment: opts.segment ? `${opts.segment.index}/${opts.segment.count}` : undefined,
    checkpointPath: session.checkpoint ? opts.checkpointPath : undefined,
    resumedFromBatch: session.checkpoint?.resumed ? session.resumeFrom : undefined,
    capacityReports: session.capacity?.summary(),
    skipped: session.inputSet?.skipped ?? [],
  };
}

/** Progress events, at most one per PROGRESS_INTERVAL_MS unless forced. */
function progressEvents(
  emit: (event: LoadEvent) => void,
  tally: LoadTally,
  session: LoadSession,
  startedAt: number,
  now: () => number,
): (force?: boolean) => void {
  let last = 0;
  return (force = false) => {
    const t = performance.now();
    if (!force && t - last < PROGRESS_INTERVAL_MS) return;
    last = t;
    tally.counters.bytesRead = session.input?.bytesRead() ?? 0;
    const rate = session.pacer?.controller.snapshot(now());
    emit({ type: 'progress', counters: tally.counters, totalBytes: session.input?.totalBytes, elapsedMs: t - startedAt, ...(rate ? { rate } : {}) });
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
  if (final.written + final.superseded + final.rejected + final.otherSegments !== final.rowsRead) {
    const wrong = bug(
      `row accounting does not add up: read ${final.rowsRead}, written ${final.written}, superseded ${final.superseded}, rejected ${final.rejected}, other segments ${final.otherSegments}`,
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
