import { randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WriteOrderer } from '../ordering/writeOrderer.js';
import { InFlightLimit } from '../pacing/inFlight.js';
import { chooseWorkerRate, nowCapacity, type RateChoice } from '../pacing/rateChoice.js';
import { listInputs, type InputSet } from '../reading/inputSet.js';
import { LoaderError, bug } from '../shared/errors.js';
import type { OwnFile } from '../reading/listing.js';
import { readInputSet, type OpenedInputSet } from '../reading/readInputSet.js';
import type { S3Access } from '../reading/s3Part.js';
import type { LoadEvent, LoadResult } from '../reporting/events.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { PlannedWrite, RowOrigin } from '../shared/types.js';
import { resolveShardOptions, type ResolvedShardOptions } from '../sharding/shard.js';
import type { ShardManifest } from '../sharding/shardManifest.js';
import { createRowPlanner, type RowPlanner, type RowPlannerOptions, type SourceRecord } from '../typing/planRow.js';
import type { OrderMode } from '../ordering/order.js';
import type { StripePlanRecord } from '../ordering/stripes/stripeLayout.js';
import { indexKeyAttributes } from '../typing/indexKeys.js';
import { checkTypesAgainstKeys, type NormalizedLoadOptions } from './options.js';
import type { InputFormat } from '../reading/inputFormat.js';
import type { BatchSink } from '../writing/batchSink.js';
import type { Disposer } from './disposer.js';
import type { LoadDependencies } from './loadDependencies.js';
import type { LoadFacts } from './loadFacts.js';
import { saveManifest, type LoadMode, type Pacing } from './loadMode.js';
import { groupedWarning, loadFormatOf, readingOf, type Reading, type ReadingContext } from './inputReading.js';
import { planInThread, planningParts, type PlanningThread } from './planningThread.js';
import type { StripedRead } from '../ordering/stripes/stripedRecords.js';
import { skipToLine, stripedPoints, wholeInputPoints, type Restarts } from './restartPoints.js';
import type { OpenedCheckpoint } from './openCheckpoint.js';
import { prepareOutputFiles, type CallerFiles } from './outputFiles.js';
import { FileLock } from '../files/fileLock.js';
import { headerChecker, preflightInput } from './inputPreflight.js';
import { addedWarning, localListingStore, s3ListingStore, sharedListing } from './sharedListing.js';
import { refuseSharedRejects } from './peerRejects.js';
import type { Segment } from './segment.js';
import { divisionOf, exportSpans, shareOf, type Division, type DivisionBy, type Share } from './shares.js';
import { rangeShare } from './rangeCuts.js';
import { SegmentCopies } from './segmentCopy.js';
import { ExportBarrier, settledOf } from './exportBarrier.js';
import { parseWorkerDoc } from './loadStatus.js';
import { HEARTBEAT_MS, localWorkerStore, rateBeatMs, s3WorkerStore, WorkerBoard, workerDocPath } from './workerBoard.js';
import { shareTheRate } from './rateSharing.js';

/** What the stages and the dispatcher of a prepared load need. */
export interface PreparedLoad {
  tableInfo: TableInfo;
  input: OpenedInputSet;
  /** --input-format, else a single plain file's name or first bytes; undefined: each part's own (reading/readInputSet.ts). */
  format: InputFormat | undefined;
  /** The input names several parts (messages then name the part of a row). */
  namedParts: boolean;
  planner: RowPlanner;
  orderer: WriteOrderer;
  /** Write units of one put: the table plus every GSI the item lands in. */
  costOf: (write: PlannedWrite) => number;
  /** Where batches go: DynamoDB, or a dry run's recorder. */
  sink: BatchSink;
  /** In-flight slots beyond --concurrency while calls are slow (src/pacing/inFlight.ts). */
  inFlight: InFlightLimit;
  /** What goes on to the order for each planned write (a dry run's slimmer copy). */
  onPlanned: (write: PlannedWrite) => PlannedWrite;
  /** Rows of partition keys outside it are another worker's (--segment divided by keys); undefined: every row read is this worker's. */
  segment: Segment | undefined;
  /** Told of each row read and not written (a dry run's, when it asks). */
  onSkipped: ((origin: RowOrigin) => void) | undefined;
  /** Whether the load tallies write units per key (a dry run keeps its own tally). */
  countKeys: boolean;
  /** The input's records, in the order they are read (a striped read's, in arrays; or the file's). */
  records: AsyncGenerator<SourceRecord | SourceRecord[]>;
  /** The write order in effect (see LoadFacts.reading). */
  order: OrderMode;
  /** Stops reading the input. */
  closeInput: () => void;
  /** The checkpoint this run holds (its store, and the batch it resumes from). */
  checkpoint: OpenedCheckpoint | undefined;
  /** The shard manifest the dispatcher adds each sharded key to. */
  manifest: ShardManifest | undefined;
  /** Restart points of a streaming order with a checkpoint (load/restartPoints.ts); undefined: none. */
  restarts: Restarts | undefined;
  /** A striped read's restart points (StripedRead.pointAt), when it makes them. */
  stripePointAt?: StripedRead['pointAt'];
  /**
   * An export chain: each row's export, and (divided by part between workers) the barrier before a later
   * export's first row. Undefined: not a chain of two exports or more.
   */
  chain?: ChainReading | undefined;
}

/** What the stages need of an export chain (shares.ts, exportBarrier.ts). */
export interface ChainReading {
  /** The export (its index in the chain) a row of this part came from, by the part's name. */
  exportOf: (file: string) => number | undefined;
  /** The exports before this one are settled already (a resume at a restart point inside a later export). */
  from: number;
  /** Divided by part between workers: the barrier every worker crosses before a later export. Undefined: read by this process alone. */
  barrier?: ExportBarrier | undefined;
}

/** A dry run that asked to begin again, before any row was read, with what the table showed. */
export interface StartOver {
  startOver: TableInfo;
}

export interface PrepareContext {
  opts: NormalizedLoadOptions;
  deps: LoadDependencies;
  mode: LoadMode;
  /** Each step defers the release of what it acquires here. */
  disposer: Disposer;
  /** Each step records what it made here, for the result. */
  facts: LoadFacts;
  emit: (event: LoadEvent) => void;
  /** The result so far, for the 'started' event. */
  result: () => LoadResult;
  /** How the load ended, once it has (read when everything is settled): for the worker's state (workerBoard.ts). */
  ending: () => { state: 'finished' | 'stopped'; code?: string | undefined; complete?: boolean | undefined };
  /** The rate controller's clock (monotonic ms). */
  now: () => number;
  /** Stops the load with this error, from outside its stages (the worker's state found another writer). */
  fail: (error: LoaderError) => void;
  /** The load is stopping (a failure, or asked to stop). */
  stopping: () => boolean;
}

/**
 * Everything before the first row, in the order that makes a mistake cost nothing: the output files are
 * checked and locked, the inputs listed, the table described, the rate chosen, the checkpoint taken, the
 * shard manifest written once, the input opened. The mode (writing, or a dry run) provides the table,
 * the pacing, the checkpoint, the manifest and the sink. Each step defers the release of what it acquires,
 * so a failure at any step releases what came before it.
 */
export async function prepareLoad(ctx: PrepareContext): Promise<PreparedLoad | StartOver> {
  const { opts, deps, mode, disposer, facts, emit } = ctx;
  // Before anything is read: no output is an input, each is writable, and no other load writes these rejects.
  const rejectsLock = await prepareOutputFiles(opts, !mode.writes, deps.files);
  disposer.defer(() => rejectsLock.release());
  // --condition-failures is locked as the reject file is: two loads appending to one would each count the other's lines.
  if (opts.conditionFailuresPath !== undefined && mode.writes) {
    const failuresLock = await FileLock.acquire({ option: '--condition-failures', path: opts.conditionFailuresPath, code: 'CONDITION_FAILURES_UNWRITABLE' });
    disposer.defer(() => failuresLock.release());
  }
  // Listed before the table is described: a missing file, object or bad manifest costs no call.
  const { set: everything, division, s3, listedAt } = await listInputSet(ctx);
  const board =
    mode.writes && opts.segment && opts.listing !== undefined && listedAt !== undefined
      ? await startWorkerBoard(ctx, opts.segment, opts.listing, listedAt, s3, division, everything.exports.length)
      : undefined;
  facts.division = division;
  deps.dryRun?.onListed?.(everything);
  // Divided by part: this worker reads only its share, as a load of those parts alone would (a chain's, export by export).
  const share =
    division?.by === 'parts' || division?.by === 'chain'
      ? shareOf(everything.parts, opts.segment!, division, division.by === 'chain' ? exportSpans(everything) : undefined)
      : division?.by === 'ranges'
        ? await rangeShare(everything, division, {
            listing: opts.listing!,
            listedAt: listedAt!,
            segment: opts.segment!,
            s3,
            delimiter: opts.delimiter,
            inputFormat: opts.inputFormat,
            copies: new SegmentCopies({
              parent: opts.tempDir ?? tmpdir(),
              keep: (release) => disposer.defer(release),
              warn: (message) => emit({ type: 'warning', message }),
            }),
            warn: (message) => emit({ type: 'warning', message }),
            stopping: ctx.stopping,
            ...(ctx.deps.testSeams?.rangeWaitMs !== undefined ? { waitMs: ctx.deps.testSeams.rangeWaitMs } : {}),
          })
        : undefined;
  facts.share = share;
  const listed = share ? { ...everything, parts: share.parts, totalBytes: share.bytes } : everything;
  facts.inputSet = listed;
  for (const note of listed.notes) emit({ type: 'warning', message: note });
  const { table: described, startOver } = await mode.table();
  if (startOver) return { startOver: described };
  // Said at the next beat: status tells this table from one of its name deleted since (loadStatus.ts).
  if (board) board.tableIdentity = described.identity;
  const keySchema = described.keySchema;
  checkTypesAgainstKeys(opts.types, keySchema, opts.table);
  // Headers and first rows against the table's keys and the columns options name, before anything is kept.
  const inputSet = await preflightInput(listed, described, opts);
  facts.inputSet = inputSet;
  // Warmed once the input is known to fit the table (a bad header costs no billed raise), before the rate is chosen from it.
  const tableInfo = opts.prewarm ? await mode.prewarm(described) : described;
  const rate: RateChoice = opts.pacing
    ? chooseWorkerRate(opts.wcu, opts.totalWcu, opts.segment?.count ?? 1, tableInfo)
    : { targetWcu: Infinity, reason: '--no-pacing: no rate control, only backoff of throttled writes' };
  // A partition key may be in every worker's share of the parts: each keeps 1/N of --key-wcu, so together
  // they stay within it.
  const keyWcu = share ? opts.keyWcu / opts.segment!.count : opts.keyWcu;
  facts.keyWcu = keyWcu;
  const pacing = mode.pacing(tableInfo, rate, keyWcu);
  // One budget for every worker (--total-wcu): this worker's part of it, handed on as workers start and finish.
  if (board && rate.wholeWcu !== undefined && pacing.pacer && listedAt !== undefined)
    await shareTheRate(board, {
      total: rate.wholeWcu,
      controller: pacing.pacer.controller,
      now: ctx.now,
      segment: opts.segment!,
      listing: opts.listing!,
      listedAt,
      s3,
      beatMs: board.beatMs,
      ...(ctx.deps.testSeams?.silentMs !== undefined ? { silentMs: ctx.deps.testSeams.silentMs } : {}),
    });
  const tableWcu = tableInfo.billingMode === 'PROVISIONED' && tableInfo.provisionedWcu !== undefined ? tableInfo.provisionedWcu : Infinity;
  facts.rate = { reason: rate.reason, tableWcu, nowWcu: nowCapacity(tableInfo), pacer: pacing.pacer, capacity: pacing.capacity };
  // A checkpoint pins the shard seed, so random:N suffixes come out the same when the load resumes.
  const seed = opts.shard ? (opts.shard.seed ?? randomInt(0, 0xffffffff)) : undefined;
  const checkpoint = await mode.checkpoint(tableInfo, seed, inputSet);
  facts.checkpoint = checkpoint;
  // --skip-expired's load time: the checkpoint's when it resumed one, else now, fixed for the whole load.
  if (opts.skipExpired) opts.skipExpired.at ??= Math.floor(Date.now() / 1000);
  const shard = opts.shard ? resolveShardOptions({ ...opts.shard, seed: (checkpoint?.store.file.shardSeed ?? seed)! }, keySchema, opts.table) : undefined;
  const manifest = mode.manifest(shard);
  facts.manifest = manifest;
  if (manifest && checkpoint) {
    // A resume at a restart point goes on from the keys the earlier run listed before it; from now on the
    // manifest is saved with the checkpoint whenever a later point becomes usable.
    if (checkpoint.manifestKept) manifest.restore(checkpoint.manifestKept);
    checkpoint.store.trackManifest(async () => {
      await saveManifest(opts.shard!.manifestPath, manifest);
    });
  }
  const input = readInputSet(inputSet, {
    format: opts.inputFormat,
    csv: { delimiter: opts.delimiter, columns: opts.columns, checkHeader: headerChecker(tableInfo, opts, inputSet.parts.length) },
    ...(deps.signal ? { signal: deps.signal } : {}),
    ...(deps.testSeams?.parquetStallMs !== undefined ? { parquetStallMs: deps.testSeams.parquetStallMs } : {}),
    // A resume at a restart point opens the input there: the rows before it are not read again. (A striped
    // read's point reopens its stripes instead: readingOf.)
    ...(checkpoint?.restartFrom && !checkpoint.restartFrom.stripes ? { from: { at: checkpoint.restartFrom, skipToLine } } : {}),
    // The auto order reads an export's data files side by side: its item collections then mix (readInputSet.ts).
    ...(opts.order === 'auto' ? { interleaveExports: true } : {}),
  });
  disposer.defer(() => input.close());
  facts.input = input;
  const format = await loadFormatOf(inputSet, opts);
  // --item-conditions reads a condition beside a DynamoDB JSON line's Item; of one file in another format it
  // would read none, and a column named ConditionExpression would be stored as an attribute, unguarded.
  if (opts.condition?.kind === 'item' && format !== undefined && format !== 'ddb-json')
    throw new LoaderError(
      'INVALID_OPTION',
      `--item-conditions reads the condition a DynamoDB JSON line carries beside its Item, but ${inputSet.parts[0]?.part.name ?? 'the input'} is read as ${format}: pass --input-format ddb-json if it is DynamoDB JSON, or give the load one condition (--condition, --if-not-exists, --if-newer)`,
    );
  // Written now as well as at the end: a bad path fails before any row, and a crash leaves a manifest.
  if (manifest) await saveManifest(opts.shard!.manifestPath, manifest);
  announce(rate, opts.pacing ? keyWcu : undefined, emit);
  emit({ type: 'started', table: opts.table, input: input.name, keySchema, totalBytes: input.totalBytes, snapshot: ctx.result });
  facts.started = true;
  const notGrouped = checkpoint?.store.file.notGrouped === true;
  const store = checkpoint?.store;
  const restart =
    store && store.file.restartEveryRows > 0
      ? {
          every: store.file.restartEveryRows,
          from: checkpoint.restartFrom,
          plan: store.file.stripePlan,
          keepPlan: (plan: StripePlanRecord) => store.keepStripePlan(plan),
        }
      : undefined;
  const stages = await stagesOf(ctx, { tableInfo, inputSet, input, format, shard, pacing, notGrouped, restart });
  const chain =
    share?.exportOfPart && board
      ? await chainReading(ctx, share, everything, board, checkpoint, s3, listedAt!)
      : share
        ? undefined
        : wholeChain(listed, checkpoint);
  return { ...stages, segment: share ? undefined : opts.segment, checkpoint, manifest, restarts: restartsOf(checkpoint, stages, input), chain };
}

/**
 * This worker's state beside the shared listing, for `ddb-spread status`: written now, on a timer, and
 * when the load ends. Its last word is deferred here, after the listing's S3 client (released after it)
 * and before the reject file and checkpoint are closed (released before it), so it tells their outcome.
 */
async function startWorkerBoard(
  ctx: PrepareContext,
  segment: Segment,
  listing: string,
  listedAt: string,
  s3: () => Promise<S3Access>,
  division: Division | undefined,
  exports: number,
): Promise<WorkerBoard> {
  // Before this worker writes its state or a row: its reject file must not be another worker's.
  await refuseSharedRejects({ listing, segment, listedAt, table: ctx.opts.table, rejectsPath: ctx.opts.rejectsPath, s3 });
  const path = workerDocPath(listing, segment);
  const store = path.startsWith('s3://') ? s3WorkerStore(path, s3) : localWorkerStore(path);
  const board = new WorkerBoard(store, segment, listedAt, ctx.result, (message) => ctx.emit({ type: 'warning', message }));
  if (division?.by === 'chain') {
    // What an earlier run of this worker of this load (the same listing and table) said it had settled of the
    // chain, read before this run writes over it, and said again until this run has shown it may go on
    // (chainReading): a refused run must not wipe the evidence for the next.
    const earlier = await store
      .read()
      .then(
        (text) => (text === undefined ? undefined : parseWorkerDoc(text, store.where, `${segment.index}/${segment.count}`)),
        () => undefined,
      )
      .catch(() => undefined);
    if (earlier && earlier.listedAt === listedAt && earlier.table === ctx.opts.table) {
      board.earlierSettled = settledOf(earlier);
      board.settledExports = Math.min(board.earlierSettled, exports);
    }
  }
  // Two processes loading one share write its rows twice, and a key's rows may land out of order between them.
  board.onDuplicate = (other) =>
    ctx.fail(
      new LoaderError(
        'WORKER_DUPLICATED',
        `another process (host ${other.host}, pid ${other.pid}, started ${other.startedAt}) is also worker --segment ${segment.index}/${segment.count} of the load sharing --listing ${listing}: both wrote ${path}. Each index must run once: give the workers indexes 0 to ${segment.count - 1}, one each. Both workers stop; rows of this share may have been written by both, a key's rows possibly out of order, so once one worker has the index, load this share again from its start (without its checkpoint) to leave each key as the input's last row has it`,
      ),
    );
  ctx.disposer.defer(async () => {
    const { state, code, complete } = ctx.ending();
    await board.end(state, code, complete);
  });
  // A shared budget is handed on at every beat: often enough that a part a finished worker frees is soon taken up.
  await board.start(ctx.deps.testSeams?.heartbeatMs ?? (ctx.opts.totalWcu !== undefined ? rateBeatMs(segment.count) : HEARTBEAT_MS));
  return board;
}

/**
 * An export chain read whole by this process (alone, or by key beside other workers): each row's export,
 * so that the order empties between exports (stages.ts). Without that, an auto window grown on one
 * export's last files (few of them left side by side, in long runs of one key) stays grown through the
 * next export, whose rows a window of that many may cost far more memory (an incremental's change records
 * with their old images: 270 MB peak RSS on bench/firstWrite.ts's chain of 1M items, 200 MB with it).
 */
function wholeChain(set: InputSet, checkpoint: OpenedCheckpoint | undefined): ChainReading | undefined {
  const spans = set.exports.length > 1 ? exportSpans(set) : undefined;
  if (!spans) return undefined;
  const exportOfPart = spans.flatMap(({ count }, e) => new Array<number>(count).fill(e));
  const byName = new Map(set.parts.map((p, i) => [p.part.name, exportOfPart[i]!]));
  const at = checkpoint?.restartFrom?.part;
  return { exportOf: (file) => byName.get(file), from: at === undefined ? 0 : (exportOfPart[at] ?? 0) };
}

/**
 * An export chain's reading divided by part: which export each of this worker's parts is in, and the barrier
 * between exports. A resume at a restart point starts inside an export whose earlier ones it had settled
 * (a point is recorded only past the barrier): its document says so again at once, before any peer waits
 * on it.
 */
async function chainReading(
  ctx: PrepareContext,
  share: Share,
  set: InputSet,
  board: WorkerBoard,
  checkpoint: OpenedCheckpoint | undefined,
  s3: () => Promise<S3Access>,
  listedAt: string,
): Promise<ChainReading> {
  const { opts } = ctx;
  const exportOfPart = share.exportOfPart!;
  const byName = new Map(share.parts.map((p, i) => [p.part.name, exportOfPart[i]!]));
  const at = checkpoint?.restartFrom?.part;
  const from = at === undefined ? 0 : (exportOfPart[at] ?? 0);
  // A worker's checkpoint is saved before it says it settled an export, so a run whose earlier run said it
  // settled one but that resumes no checkpoint has lost it (a pod on a new node, another --checkpoint):
  // reading the earlier exports again, unskipped, would put their records back over the later ones the other
  // workers wrote. (A resumed checkpoint skips the batches it did, wherever its restart point is; one saved at
  // a barrier with no batch done, a worker with no part of the exports before, is resumed too.)
  if (board.earlierSettled > 0 && checkpoint?.resumed !== true) {
    const said = Number.isFinite(board.earlierSettled) ? `had written the first ${board.earlierSettled} of its exports` : 'had finished';
    throw new LoaderError(
      'CHECKPOINT_MISMATCH',
      `worker ${opts.segment!.index}/${opts.segment!.count} of this load ${said} (its state beside --listing ${opts.listing} says so), but this run would start the chain at ${from === 0 ? 'its first export' : `export ${from + 1}`}: ${opts.checkpointPath ? `the checkpoint ${opts.checkpointPath} is not the one that run saved` : 'no --checkpoint was given'}. Reading the earlier exports again would write their records over the later ones the other workers wrote. Run it with the checkpoint its earlier run saved; to load the whole chain again, give every worker a new --listing`,
    );
  }
  board.settledExports = from;
  await board.refresh();
  const barrier = new ExportBarrier({
    segment: opts.segment!,
    listing: opts.listing!,
    listedAt,
    table: opts.table,
    s3,
    exportNames: set.exports.map((e) => e.name),
    beatMs: board.beatMs,
    publish: async (settled) => {
      board.settledExports = settled;
      await board.refresh();
    },
    onWait: (message, waiting) => {
      // Said in the document too, for status, at the next beat.
      board.barrier = waiting;
      if (message !== undefined) ctx.emit({ type: 'warning', message });
    },
    stopping: () => ctx.stopping(),
    signal: ctx.deps.signal,
  });
  return { exportOf: (file) => byName.get(file), from, barrier };
}

/**
 * The inputs, listed (or, with --listing, the listing every worker shares), and how the workers divide them.
 * An S3 client is made only when an input is in S3, and destroyed when the load ends.
 */
async function listInputSet({
  opts,
  deps,
  disposer,
  emit,
}: PrepareContext): Promise<{ set: InputSet; division: Division | undefined; s3: () => Promise<S3Access>; listedAt?: string }> {
  let s3Access: S3Access | undefined;
  const s3 = async () => {
    const { createS3Access } = await import('../reading/s3Part.js');
    if (!s3Access) {
      const made = createS3Access({
        region: opts.region,
        profile: opts.profile,
        endpoint: opts.s3Endpoint,
        forcePathStyle: opts.s3PathStyle,
        caBundle: opts.caBundle,
        requestTimeoutMs: opts.requestTimeoutMs,
      });
      disposer.defer(() => made.destroy());
      s3Access = made;
    }
    return s3Access;
  };
  const list = () =>
    listInputs(opts.inputs, {
      stdin: deps.stdin ?? process.stdin,
      s3,
      outputs: outputPathsOf(opts, deps.files),
      allowBrokenExportChain: opts.allowBrokenExportChain,
    });
  const divide = (set: InputSet) => divisionOf(set, opts);
  if (opts.listing === undefined) {
    const set = await list();
    refuseUnsharedListing(set, opts);
    // Dividing by part needs a listing (options.ts asks for one with --parts-disjoint, and an export is listed).
    const division = divide(set);
    if (division?.by === 'parts' || division?.by === 'chain' || division?.by === 'ranges') throw bug('parts divided without a shared listing');
    return { set, division, s3 };
  }
  const store = opts.listing.startsWith('s3://') ? s3ListingStore(opts.listing, s3) : localListingStore(opts.listing);
  const shared = await sharedListing(store, opts.inputs, opts.segment, list, { s3 }, Date.now, (set) => divide(set)?.by);
  emit({ type: 'listing', where: opts.listing, made: shared.made, parts: shared.set.parts.length, listedAt: shared.listedAt });
  const added = addedWarning(shared, opts.listing);
  if (added !== undefined) emit({ type: 'warning', message: added });
  return { set: shared.set, division: agreedDivision(divide(shared.set), shared.division, opts.listing), s3, listedAt: shared.listedAt };
}

const DIVIDED: Record<DivisionBy, string> = {
  parts: 'part (each worker reads its share of the parts)',
  chain: "part, export by export (each worker reads its share of each export of the chain, and waits for the others' between exports)",
  keys: 'key (every worker reads every part)',
  ranges: 'byte range (each worker reads its range of each part)',
};

/**
 * The division every worker of the load keeps: the listing's. A worker that would divide otherwise (another
 * --parts-disjoint than the worker that listed) is refused, since a part's rows could then be loaded by no
 * worker; a listing that records no division (an earlier ddb-spread's, whose workers each read every part,
 * or a load of one worker's) is divided by keys, as its other workers do; so is a chain the listing divides
 * by key.
 */
export function agreedDivision(own: Division | undefined, recorded: DivisionBy | undefined, where: string): Division | undefined {
  if (own === undefined || recorded === own.by) return own;
  // A chain the listing divides by key (its worker had no --checkpoint, or an earlier ddb-spread listed it,
  // whose workers may be running still) stays so: by key every worker keeps the chain order on its own.
  if (recorded === 'keys' && own.by === 'chain')
    return {
      by: 'keys',
      why: `--listing ${where} divides this export chain by key (the worker that listed it had no --checkpoint, or an earlier ddb-spread listed it): every worker reads every export and writes the keys of its segment`,
    };
  if (recorded === undefined)
    return {
      by: 'keys',
      why: `--listing ${where} records no division of the parts (an earlier ddb-spread wrote it): every worker reads every part and writes the keys of its segment`,
    };
  throw new LoaderError(
    'INVALID_OPTION',
    `--listing ${where} divides the work by ${DIVIDED[recorded]}, and this worker would divide it by ${DIVIDED[own.by]} (${own.why}); give every worker of the load the same options (--parts-disjoint, --checkpoint and --order on all or none), or another --listing for another load`,
    { file: where },
  );
}

/**
 * Workers of one load (--segment i/N, N > 1) that each list a folder, glob or prefix could each see other
 * parts (a part written between two workers' listings): its rows in the other workers' segments would be
 * loaded by none, and every worker would still end complete. So such a load needs --listing.
 */
function refuseUnsharedListing(set: InputSet, opts: PreparedLoadOptions): void {
  if (!set.listed || opts.segment === undefined || opts.segment.count < 2) return;
  throw new LoaderError(
    'INVALID_OPTION',
    `--segment ${opts.segment.index}/${opts.segment.count} over ${set.name}, which is listed (a folder, glob or S3 prefix): workers that list it at different times could load different parts, and rows of a part only some of them saw would be lost; pass --listing <file on a shared volume, or s3://bucket/key> to every worker (the first writes the listing, all load exactly its parts)`,
  );
}

/** The load's own files (their locks and temporary files too): never read as input, named as skipped in a folder given as input. */
function outputPathsOf(opts: PreparedLoadOptions, caller: CallerFiles | undefined): OwnFile[] {
  const paths: OwnFile[] = [{ option: '--rejects', path: opts.rejectsPath }];
  if (opts.listing !== undefined && !opts.listing.startsWith('s3://'))
    paths.push(
      { option: '--listing', path: opts.listing },
      // Every worker's state beside it (workerBoard.ts' workerDocPath), this worker's and the others'.
      { option: "the workers' states beside --listing", path: `${opts.listing}.worker-`, rest: /^\d+-of-\d+\.json(\.\d+(\.[0-9a-f]+)?\.tmp)?$/ },
    );
  if (opts.shard) paths.push({ option: '--shard-manifest', path: opts.shard.manifestPath });
  if (opts.conditionFailuresPath !== undefined) paths.push({ option: '--condition-failures', path: opts.conditionFailuresPath });
  if (opts.checkpointPath)
    paths.push(
      { option: '--checkpoint', path: opts.checkpointPath },
      { option: 'the write-reject log of --checkpoint', path: `${opts.checkpointPath}.write-rejects` },
    );
  for (const file of caller?.writes ?? []) paths.push({ option: file.option, path: file.path });
  // The order's spill folders (writeOrderer.ts), left behind by a kill -9.
  paths.push({ option: '--temp-dir', path: join(opts.tempDir ?? tmpdir(), 'ddb-spread-'), prefix: true });
  return paths;
}

type PreparedLoadOptions = NormalizedLoadOptions;

/** The rate first: a progress display starts on 'started' and should not be interrupted by it. */
function announce(rate: RateChoice, keyWcu: number | undefined, emit: (event: LoadEvent) => void): void {
  emit({ type: 'rateChosen', targetWcu: Number.isFinite(rate.targetWcu) ? rate.targetWcu : undefined, keyWcu, reason: rate.reason });
  if (rate.warning) emit({ type: 'warning', message: rate.warning });
}

/** The planner, the order and the sink of a load whose table and input are ready. */
async function stagesOf(
  ctx: PrepareContext,
  ready: {
    tableInfo: TableInfo;
    inputSet: InputSet;
    input: OpenedInputSet;
    format: InputFormat | undefined;
    shard: ResolvedShardOptions | undefined;
    pacing: Pacing;
    /** The checkpoint resumed records that the auto order found this input not grouped. */
    notGrouped: boolean;
    /** Restart points the checkpoint makes, and the one it resumes from. */
    restart: ReadingContext['restart'];
  },
): Promise<Omit<PreparedLoad, 'checkpoint' | 'manifest' | 'restarts' | 'segment'>> {
  const { opts, mode, disposer, emit } = ctx;
  const { tableInfo, input, format, shard, pacing } = ready;
  const keySchema = tableInfo.keySchema;
  const plannerOptions: RowPlannerOptions = {
    keySchema,
    types: opts.types,
    infer: opts.infer,
    empty: opts.empty,
    jsonFlavor: format === 'ddb-json' ? 'ddb-json' : 'json',
    timestamps: opts.timestamps,
    ...(shard ? { shard } : {}),
    indexKeys: indexKeyAttributes(tableInfo),
    ...(opts.deletes ? { deletes: opts.deletes } : {}),
    ...(opts.condition?.kind === 'item' ? { itemConditions: true } : {}),
  };
  let planner = createRowPlanner(plannerOptions);
  let reading = await readingOf(ready, plannerOptions, {
    opts,
    // Found not grouped by this run's striped read, or by the run whose checkpoint this one resumes.
    ...(ctx.deps.notGrouped || ready.notGrouped ? { notGrouped: true } : {}),
    onStripes: mode.onStripes,
    stripeBytes: ctx.deps.testSeams?.stripeBytes,
    disposer,
    facts: ctx.facts,
    restart: ready.restart,
    warn: (message) => emit({ type: 'warning', message }),
  });
  const elsewhere = planningElsewhere(ctx, ready, reading, plannerOptions);
  if (elsewhere) {
    input.close();
    disposer.defer(() => elsewhere.close());
    ctx.facts.input = { totalBytes: input.totalBytes, bytesRead: elsewhere.bytesRead };
    reading = { ...reading, records: elsewhere.records, closeInput: elsewhere.close };
    const own = planner;
    planner = {
      plan: (record) => own.plan(record),
      typed: (record) => own.typed(record),
      finish: (typed, item, transformed) => own.finish(typed, item, transformed),
      rejection: (typed, error) => own.rejection(typed, error),
      get suspectedDynamoJsonLine() {
        return elsewhere.suspected();
      },
    };
  }
  emit({ type: 'reading', order: reading.order, ...(elsewhere ? { planningThread: true as const } : {}) });
  const orderer = new WriteOrderer({
    mode: reading.order,
    // Not in a chain divided by part: a window gone over to round-robin holds every write to the end, and
    // could not empty itself at the barrier between exports.
    ...(reading.adaptive && ctx.facts.division?.by !== 'chain'
      ? { adaptive: { onGrouped: (at: PlannedWrite) => emit(groupedWarning(at, opts, input.totalBytes)) } }
      : {}),
    parts: reading.parts,
    ...(reading.grouping ? { grouping: reading.grouping } : {}),
    windowRows: opts.windowRows,
    memoryBytes: opts.memoryBytes,
    tempDir: opts.tempDir ?? tmpdir(),
    ...(input.totalBytes === undefined ? {} : { inputBytes: input.totalBytes }),
  });
  disposer.defer(async () => {
    try {
      await orderer.close();
    } catch (error) {
      emit({ type: 'warning', message: `could not remove the temporary files in ${orderer.stats.tempPath}: ${(error as Error).message}` });
    }
  });
  ctx.facts.reading = { order: reading.order, orderer };
  // Slots beyond --concurrency while batches are slow: see src/pacing/inFlight.ts.
  const inFlight = new InFlightLimit({ start: opts.concurrency });
  return {
    tableInfo,
    input,
    format,
    namedParts: ready.inputSet.parts.length > 1,
    planner,
    orderer,
    costOf: pacing.costOf,
    sink: mode.sink(keySchema, inFlight, pacing),
    inFlight,
    onPlanned: mode.onPlanned,
    onSkipped: mode.onSkipped,
    countKeys: mode.countKeys,
    records: reading.records,
    order: reading.order,
    closeInput: reading.closeInput,
    ...(reading.pointAt ? { stripePointAt: reading.pointAt } : {}),
  };
}

/**
 * An estimate's rows read and planned on a second thread (planningThread.ts), where nothing needs them on
 * this one: a dry run that asks for it, reading the input whole from its start (not in stripes, no restart
 * points, no chain divided by part between workers), every part a local file and none Parquet. Undefined:
 * read here.
 */
function planningElsewhere(
  ctx: PrepareContext,
  ready: { tableInfo: TableInfo; inputSet: InputSet; input: OpenedInputSet; restart: ReadingContext['restart'] },
  reading: Reading,
  plannerOptions: RowPlannerOptions,
): PlanningThread | undefined {
  const { opts, mode } = ctx;
  if (!mode.planElsewhere?.(ready.tableInfo) || reading.parts !== 0 || reading.records !== ready.input.records) return undefined;
  if (ready.restart || ctx.facts.division?.by === 'chain' || ready.input.position().row >= 0) return undefined;
  // A transform runs on the typed item, --skip-expired reads the TTL attribute, --if-newer its version: all need the item on this thread.
  if (opts.transform !== undefined || opts.skipExpired !== undefined || opts.condition?.kind === 'ifNewer') return undefined;
  const parts = planningParts(ready.inputSet, opts.inputFormat);
  if (!parts) return undefined;
  try {
    return planInThread(
      {
        parts,
        name: ready.inputSet.name,
        totalBytes: ready.inputSet.totalBytes,
        format: opts.inputFormat,
        delimiter: opts.delimiter,
        columns: opts.columns,
        interleaveExports: opts.order === 'auto',
        planner: plannerOptions,
      },
      headerChecker(ready.tableInfo, opts, ready.inputSet.parts.length),
      mode.onPlannedElsewhere,
    );
  } catch (error) {
    // Options the thread cannot be given (a value structured clone refuses): the rows are planned here.
    if (error instanceof Error && error.name === 'DataCloneError') return undefined;
    throw error;
  }
}

/**
 * Restart points, when the load has a checkpoint that makes them (not a sharded load's) and reads its input
 * whole in an order that can empty itself (input, window). A checkpoint with a point to resume from was
 * made by the same options on the same input, so the order is the same; were it not, the rows before the
 * point would be skipped unread, so that is refused.
 */
function restartsOf(
  checkpoint: OpenedCheckpoint | undefined,
  stages: Pick<PreparedLoad, 'orderer' | 'order' | 'stripePointAt'>,
  input: OpenedInputSet,
): Restarts | undefined {
  const every = checkpoint?.store.file.restartEveryRows ?? 0;
  const from = checkpoint?.restartFrom;
  const striped = stages.stripePointAt;
  if (!checkpoint || every === 0 || stages.orderer.restart() === undefined || (stages.order === 'stripes' && !striped)) {
    if (from) throw bug(`checkpoint ${checkpoint?.store.path} resumes at a restart point, but the ${stages.order} order makes none`);
    return undefined;
  }
  if (from && (from.stripes !== undefined) !== (striped !== undefined)) {
    throw bug(
      `checkpoint ${checkpoint.store.path} resumes at a restart point of ${from.stripes ? 'a striped read' : 'a read from the start'}, but the input is read ${striped ? 'in stripes' : 'from its start'}`,
    );
  }
  const store = checkpoint.store;
  const { orderer } = stages;
  return {
    every,
    from,
    pointBefore: striped
      ? stripedPoints(striped, () => orderer.groupingPlaces())
      : wholeInputPoints(
          every,
          () => input.position(),
          () => input.sideBySide(),
        ),
    reached: (point) => store.reached(point),
  };
}
