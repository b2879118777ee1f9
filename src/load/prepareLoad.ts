import { randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WriteOrderer } from '../ordering/writeOrderer.js';
import { InFlightLimit } from '../pacing/inFlight.js';
import { chooseRate, type RateChoice } from '../pacing/rateChoice.js';
import { RateController } from '../pacing/rateControl.js';
import { RatePacer } from '../pacing/ratePacer.js';
import { CapacityReports } from '../pacing/capacityReports.js';
import { createKeyCostModel, type KeyUnits, type WriteKeyCosts } from '../pacing/writeCost.js';
import { listInputs, type InputSet } from '../reading/inputSet.js';
import { LoaderError } from '../shared/errors.js';
import type { OwnFile } from '../reading/listing.js';
import { readInputSet, type OpenedInputSet } from '../reading/readInputSet.js';
import { openInput } from '../reading/openInput.js';
import { detectFormat } from '../reading/detectFormat.js';
import type { LoadEvent, LoadResult } from '../reporting/events.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { PlannedWrite, RowOrigin } from '../shared/types.js';
import { resolveShardOptions, type ResolvedShardOptions } from '../sharding/shard.js';
import { ShardManifest } from '../sharding/shardManifest.js';
import { createRowPlanner, type RowPlanner, type RowPlannerOptions, type SourceRecord } from '../typing/planRow.js';
import type { OrderMode } from '../ordering/order.js';
import { MIN_STRIPE_BYTES, planStripes, readStripes, recordGroup, stripeCount } from './stripedRecords.js';
import { packageVersion } from './toolVersion.js';
import { indexKeyAttributes } from '../typing/indexKeys.js';
import { checkTypesAgainstKeys } from './options.js';
import { delimiterOf, formatFromName, type InputFormat } from '../reading/inputFormat.js';
import { DEFAULT_BACKOFF } from '../aws/backoff.js';
import { withDirectBatchWrites } from '../writing/directSend.js';
import { dynamoSink, recordingSink, type BatchSink } from '../writing/batchSink.js';
import { EndpointWatch } from '../writing/endpointWatch.js';
import { outagePolicy } from '../writing/outage.js';
import { describeTable } from '../aws/describeTable.js';
import type { DryRun, LoadDependencies } from './load.js';
import { saveManifest, type LoadSession } from './loadSession.js';
import type { LoadTally } from './loadTally.js';
import { openCheckpoint } from './openCheckpoint.js';
import { prepareOutputFiles, type CallerFiles } from './outputFiles.js';
import { localListingStore, s3ListingStore, sharedListing } from './sharedListing.js';

/** What the stages and the dispatcher of a prepared load need. */
export interface PreparedLoad {
  tableInfo: TableInfo;
  input: OpenedInputSet;
  /** --input-format, else a single plain file's name or first bytes; undefined: each part's own (reading/readInputSet.ts). */
  format: InputFormat | undefined;
  planner: RowPlanner;
  orderer: WriteOrderer;
  /** Write units of one put: the table plus every GSI the item lands in. */
  costOf: (write: PlannedWrite) => number;
  /** Where batches go: DynamoDB, or a dry run's recorder. */
  sink: BatchSink;
  /** In-flight slots beyond --concurrency while calls are slow (issue 12). */
  inFlight: InFlightLimit;
  /** What goes on to the order for each planned write (a dry run's slimmer copy). */
  onPlanned: (write: PlannedWrite) => PlannedWrite;
  /** Told of each row read and not written (a dry run's, when it asks). */
  onSkipped: ((origin: RowOrigin) => void) | undefined;
  /** Whether the load tallies write units per key (a dry run keeps its own tally). */
  countKeys: boolean;
  /** The input's records, in the order they are read (a striped read's, in arrays; or the file's). */
  records: AsyncGenerator<SourceRecord | SourceRecord[]>;
  /** The write order in effect (see LoadSession.order). */
  order: OrderMode;
  /** Stops reading the input. */
  closeInput: () => void;
}

export interface PrepareContext {
  deps: LoadDependencies;
  tally: LoadTally;
  emit: (event: LoadEvent) => void;
  now: () => number;
  /** The result so far, for events and for a finished checkpoint's outcome. */
  result: () => LoadResult;
  /** Where the client goes, for messages only. */
  aws: { table: string; region: string | undefined; endpoint: string | undefined };
}

/**
 * Everything before the first row, in the order that makes a mistake cost nothing: the output files are
 * checked and locked, the table described, the rate chosen, the checkpoint taken, the shard manifest
 * written once, the input opened. A dry run is decided here, once: its table may come from flags, it has
 * no pacing, checkpoint or manifest, and its sink records instead of writing.
 */
export async function prepareLoad(session: LoadSession, ctx: PrepareContext): Promise<PreparedLoad> {
  const { opts } = session;
  const { deps, emit, now } = ctx;
  const dryRun = deps.dryRun;
  // Before anything is read: no output is an input, each is writable, and no other load writes these rejects.
  session.rejectsLock = await prepareOutputFiles(opts, dryRun !== undefined, deps.files);
  // Listed before the table is described: a missing file, object or bad manifest costs no call.
  const s3 = async () => {
    const { createS3Access } = await import('../reading/s3Part.js');
    session.s3 ??= createS3Access({
      region: opts.region,
      profile: opts.profile,
      endpoint: opts.s3Endpoint,
      forcePathStyle: opts.s3PathStyle,
      caBundle: opts.caBundle,
      requestTimeoutMs: opts.requestTimeoutMs,
    });
    return session.s3;
  };
  const list = () =>
    listInputs(opts.inputs, {
      stdin: deps.stdin ?? process.stdin,
      s3,
      outputs: outputPathsOf(opts, deps.files),
      allowBrokenExportChain: opts.allowBrokenExportChain,
    });
  if (opts.listing !== undefined) {
    const store = opts.listing.startsWith('s3://') ? s3ListingStore(opts.listing, s3) : localListingStore(opts.listing);
    const shared = await sharedListing(store, opts.inputs, list, { s3 });
    session.inputSet = shared.set;
    emit({ type: 'listing', where: opts.listing, made: shared.made, parts: shared.set.parts.length, listedAt: shared.listedAt });
  } else {
    session.inputSet = await list();
    refuseUnsharedListing(session.inputSet, opts);
  }
  for (const note of session.inputSet.notes) emit({ type: 'warning', message: note });
  const tableInfo = dryRun?.tableInfo ?? (await describeTable(session.client, ctx.aws, deps.signal));
  dryRun?.onTable?.(tableInfo);
  const keySchema = tableInfo.keySchema;
  checkTypesAgainstKeys(opts.types, keySchema, opts.table);
  const rate: RateChoice = opts.pacing
    ? chooseRate(opts.wcu, tableInfo)
    : { targetWcu: Infinity, reason: '--no-pacing: no rate control, only backoff of throttled writes' };
  session.rateReason = rate.reason;
  if (tableInfo.billingMode === 'PROVISIONED' && tableInfo.provisionedWcu !== undefined) session.tableWcu = tableInfo.provisionedWcu;
  // A dry run's slim writes carry their total cost in `wcu`.
  const costs = dryRun ? undefined : writeCostsOf(tableInfo);
  const costOf = costs ? costs.costOf : (w: PlannedWrite) => w.wcu;
  if (costs) session.capacity = new CapacityReports(costOf);
  if (opts.pacing && costs) {
    session.pacer = new RatePacer({
      controller: new RateController({ targetWcu: rate.targetWcu, keyWcu: opts.keyWcu, ...(rate.growth ? { growth: rate.growth } : {}) }, now()),
      costOf,
      ...(costs.keysOf ? { keysOf: costs.keysOf } : {}),
      now,
      onChange: (change) => emit({ type: 'rateChanged', change }),
    });
  }
  // A checkpoint pins the shard seed, so random:N suffixes come out the same when the load resumes.
  const seed = opts.shard ? (opts.shard.seed ?? randomInt(0, 0xffffffff)) : undefined;
  if (opts.checkpointPath && !dryRun) await openCheckpoint(session, keySchema, seed, ctx.tally, emit, ctx.result);
  const shard = opts.shard ? resolveShardOptions({ ...opts.shard, seed: (session.checkpoint?.file.shardSeed ?? seed)! }, keySchema, opts.table) : undefined;
  // A dry run writes nothing, so there is no manifest to keep.
  if (shard && !dryRun) session.manifest = new ShardManifest(opts.table, packageVersion(), shard);
  const input = readInputSet(session.inputSet, {
    format: opts.inputFormat,
    csv: { delimiter: opts.delimiter, columns: opts.columns },
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  session.input = input;
  const format = await loadFormatOf(session);
  // Written now as well as at the end: a bad path fails before any row, and a crash leaves a manifest.
  if (session.manifest) {
    try {
      await saveManifest(opts.shard!.manifestPath, session.manifest);
    } catch (error) {
      input.close();
      throw error;
    }
  }
  announce(rate, opts.pacing ? opts.keyWcu : undefined, emit);
  emit({ type: 'started', table: opts.table, input: input.name, keySchema, totalBytes: input.totalBytes, snapshot: ctx.result });
  session.started = true;
  return stagesOf(session, ctx, tableInfo, input, format, shard, costOf);
}

/**
 * Workers of one load (--segment i/N, N > 1) that each list a folder, glob or prefix could each see other
 * parts (a part written between two workers' listings): its rows in the other workers' segments would be
 * loaded by none, and every worker would still end complete. So such a load needs --listing (issue 29.7).
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
  if (opts.listing !== undefined && !opts.listing.startsWith('s3://')) paths.push({ option: '--listing', path: opts.listing });
  if (opts.shard) paths.push({ option: '--shard-manifest', path: opts.shard.manifestPath });
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

type PreparedLoadOptions = LoadSession['opts'];

/**
 * How the input is read: in stripes when --order is stripes (the default for a file) and the file can be
 * cut and looks grouped by partition key (src/load/stripedRecords.ts); otherwise whole, in round-robin
 * order for stripes, or in the order asked for. A dry run that simulates the stripes (`onStripes`, the
 * estimate) is told how the file would be read, and reads it whole in input order: where it would be read
 * in stripes, still in the order `stripes`, so that GroupingCheck proves over the whole file (as one part)
 * what the load would prove stripe by stripe.
 */
async function readingOf(
  session: LoadSession,
  { input, format }: { input: OpenedInputSet; format: InputFormat | undefined },
  plannerOptions: RowPlannerOptions,
  onStripes: DryRun['onStripes'],
): Promise<Pick<PreparedLoad, 'records' | 'order' | 'closeInput'> & { parts: number }> {
  const { opts } = session;
  const whole = (order: OrderMode) => ({ records: input.records, order, parts: 0, closeInput: () => input.close() });
  if (opts.order !== 'stripes') return whole(opts.order);
  const notStriped = () => {
    onStripes?.(undefined);
    return whole(onStripes ? 'input' : 'round-robin');
  };
  // Stripes cut one plain local file; several inputs, S3, stdin, an export or deletes are read whole.
  const path = plainLocalFile(session);
  if (path === undefined || format === undefined) return notStriped();
  const syntax = format === 'csv' ? 'csv' : 'jsonl';
  const file = session.inputSet!.parts[0]!.part.name;
  const how = { syntax, delimiter: delimiterOf(file, opts.delimiter), columns: opts.columns } as const;
  // The tests cut small files into many stripes; users never need to.
  const minBytes = Number(process.env['DDB_SPREAD_TEST_STRIPE_BYTES'] ?? MIN_STRIPE_BYTES);
  const parts = INPUT_SYNTAX.has(format) ? await stripeCount(path, input.totalBytes, how, minBytes) : 0;
  const plan =
    parts >= 2
      ? await planStripes({
          path,
          file,
          size: input.totalBytes!,
          how,
          parts,
          probe: recordGroup(createRowPlanner({ ...plannerOptions, shard: undefined }), plannerOptions.keySchema.partitionKey),
          // recordGroup's key for a CSV string key is the cell as it is: the heads are read by that column alone.
          ...(syntax === 'csv' && plannerOptions.keySchema.partitionKey.type === 'S' ? { keyColumn: plannerOptions.keySchema.partitionKey.name } : {}),
        })
      : undefined;
  if (!plan) return notStriped();
  if (onStripes) {
    onStripes(plan.layout);
    return { ...whole('stripes'), parts: 1 };
  }
  const striped = readStripes(path, file, input.totalBytes!, how, plan, session.inputSet!.parts[0]!.part.pin);
  input.close();
  session.input = { ...input, bytesRead: striped.bytesRead };
  return { records: striped.chunks, order: 'stripes', parts: striped.parts, closeInput: striped.close };
}

/** The path of the load's one input when it is a plain local file (not an export, no deletes): what stripes can cut. */
function plainLocalFile(session: LoadSession): string | undefined {
  const parts = session.inputSet?.parts ?? [];
  const only = parts.length === 1 ? parts[0]! : undefined;
  if (!only || only.format !== undefined || session.opts.deletes) return undefined;
  return only.part.path;
}

/**
 * The format of the load as a whole: --input-format, else a single plain file's, by its name or its
 * first bytes (opened and closed again here). Undefined for a set: each part is read by its own.
 */
async function loadFormatOf(session: LoadSession): Promise<InputFormat | undefined> {
  const { opts } = session;
  if (opts.inputFormat !== undefined) return opts.inputFormat;
  const path = plainLocalFile(session);
  if (path === undefined) return undefined;
  const named = formatFromName(path);
  if (named !== undefined) return named;
  const opened = await openInput(path);
  try {
    return await detectFormat(opened);
  } finally {
    opened.stream.destroy();
  }
}

/** Formats a striped read can cut: text with one record per line (CSV's quoted line breaks included). */
const INPUT_SYNTAX = new Set(['csv', 'jsonl', 'ddb-json']);

/** The rate first: a progress display starts on 'started' and should not be interrupted by it. */
function announce(rate: RateChoice, keyWcu: number | undefined, emit: (event: LoadEvent) => void): void {
  emit({ type: 'rateChosen', targetWcu: Number.isFinite(rate.targetWcu) ? rate.targetWcu : undefined, keyWcu, reason: rate.reason });
  if (rate.warning) emit({ type: 'warning', message: rate.warning });
}

/**
 * Write units of one put by the table's GSIs, in all and per partition key it lands on (the table's key
 * by table units, each GSI key by its own: issue 15), computed once per write. A delete is planned at its
 * 1 unit on the table's key (see README, "Deletes").
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

/** The planner, the order and the sink of a load whose table and input are ready. */
async function stagesOf(
  session: LoadSession,
  ctx: PrepareContext,
  tableInfo: TableInfo,
  input: OpenedInputSet,
  format: InputFormat | undefined,
  shard: ResolvedShardOptions | undefined,
  costOf: (w: PlannedWrite) => number,
): Promise<PreparedLoad> {
  const { opts } = session;
  const { deps, now } = ctx;
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
  };
  const planner = createRowPlanner(plannerOptions);
  const reading = await readingOf(session, { input, format }, plannerOptions, deps.dryRun?.onStripes);
  session.order = reading.order;
  ctx.emit({ type: 'reading', order: reading.order });
  const orderer = new WriteOrderer({
    mode: reading.order,
    parts: reading.parts,
    windowRows: opts.windowRows,
    memoryBytes: opts.memoryBytes,
    tempDir: opts.tempDir ?? tmpdir(),
    ...(input.totalBytes === undefined ? {} : { inputBytes: input.totalBytes }),
  });
  session.orderer = orderer;
  // Slots beyond --concurrency while batches are slow (issue 12): see src/pacing/inFlight.ts.
  const inFlight = new InFlightLimit({ start: opts.concurrency });
  const dryRun = deps.dryRun;
  // One watch on the endpoint for every batch: an outage stops the sends, not the rows (issue 29.11).
  if (!dryRun)
    session.watch = new EndpointWatch({
      policy: outagePolicy(opts.outageTimeoutMs),
      endpoint: ctx.aws.endpoint ?? `DynamoDB in region ${ctx.aws.region ?? '(not set)'}`,
      now,
      emit: ctx.emit,
      signal: deps.signal,
    });
  const sink = dryRun
    ? recordingSink((writes) => dryRun.record(writes))
    : dynamoSink(
        {
          client: (deps.directBatchWrites ?? session.ownsClient) ? withDirectBatchWrites(session.client) : session.client,
          ...ctx.aws,
          keySchema,
          maxAttempts: opts.maxAttempts,
          backoff: DEFAULT_BACKOFF,
          random: deps.random ?? Math.random,
          onRetry: (info) => ctx.emit({ type: 'retrying', ...info }),
          pacer: session.pacer,
          ...(session.capacity ? { capacity: session.capacity } : {}),
          ...(session.watch ? { watch: session.watch } : {}),
        },
        inFlight,
        now,
      );
  return {
    tableInfo,
    input: session.input ?? input,
    format,
    planner,
    orderer,
    costOf,
    sink,
    inFlight,
    onPlanned: dryRun ? (w) => dryRun.onPlanned(w) : (w) => w,
    onSkipped: dryRun?.onSkipped,
    countKeys: !dryRun,
    records: reading.records,
    order: reading.order,
    closeInput: reading.closeInput,
  };
}
