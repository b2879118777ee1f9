import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { randomInt } from 'node:crypto';
import { resolve } from 'node:path';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { DEFAULT_BACKOFF } from '../writing/backoff.js';
import { createBatcher, type Batch } from '../batching/batch.js';
import { LoaderError, bug } from '../shared/errors.js';
import { checkTypesAgainstKeys, normalizeOptions, type LoadOptions } from './options.js';
import { createRowPlanner, isRejected, type SourceRecord } from '../typing/planRow.js';
import { indexKeyAttributes } from '../typing/indexKeys.js';
import { isGlobalOrder } from '../ordering/order.js';
import { HeavyHitters } from '../estimating/heavyHitters.js';
import { chooseRate } from '../pacing/rateChoice.js';
import { segmentOfLine, segmentOfWrite } from './segment.js';
import { writeAffectingOptions } from '../checkpointing/checkpointState.js';
import { RateController, findBottleneck } from '../pacing/rateControl.js';
import { InFlightLimit, defaultCeiling } from '../pacing/inFlight.js';
import { createWriteCostModel } from '../pacing/writeCost.js';
import { resolveShardOptions } from '../sharding/shard.js';
import { ShardManifest } from '../sharding/shardManifest.js';
import type { KeySchema, PlannedWrite, RejectedRow } from '../shared/types.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { LoadCounters, LoadEvent, LoadResult } from '../reporting/events.js';
import type { RateSummary } from '../reporting/result.js';
import { createClient } from '../writing/client.js';
import { describeTable } from '../writing/describeTable.js';
import { RatePacer } from '../pacing/ratePacer.js';
import { CheckpointStore } from '../checkpointing/checkpoint.js';
import { hashFile } from '../checkpointing/hashFile.js';
import { logEntriesOf, rejectedRowOf } from '../checkpointing/writeRejectLog.js';
import { fingerprintFile, writeJsonAtomically } from '../reporting/reportFile.js';
import { writeBatch, type SendPacer } from '../writing/writeBatch.js';
import { openInput } from '../reading/openInput.js';
import { readCsv } from '../reading/readCsv.js';
import { WriteOrderer } from '../ordering/writeOrderer.js';
import { readJsonLines } from '../reading/readJsonLines.js';
import { RejectSink } from '../reporting/rejectSink.js';
import { FileLock, prepareOutputFiles, type CallerFiles } from './outputFiles.js';

/** What load() needs from its environment; each has a real default and can be replaced in tests. */
export interface LoadDependencies {
  /** A DynamoDB document client; by default one is built from the region, profile and endpoint options. */
  client?: DynamoDBDocumentClient;
  /** Stops reading when aborted; batches already sent finish, then load() rejects with code ABORTED. */
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
}

/** How often a progress event is emitted, at most. */
const PROGRESS_INTERVAL_MS = 200;

/**
 * Loads a CSV or JSONL file into a DynamoDB table: stream rows, type and validate them, batch them
 * (≤ 25 requests, unique keys), and write with up to `concurrency` BatchWriteItem calls in flight.
 * Resolves with the counters when every row read has been written, superseded or rejected; rejects
 * with a LoaderError (its `result` holds the counters so far) when the load had to stop.
 *
 * Memory is bounded by the stream buffers plus `concurrency` batches of 25 items: the reader is pulled
 * only when a batch slot is free (lib-storage's bounded-worker pattern), never Promise.all over rows.
 */
export async function load(options: LoadOptions, deps: LoadDependencies = {}): Promise<LoadResult> {
  const startedAt = performance.now();
  const opts = normalizeOptions(options, { dryRun: deps.dryRun !== undefined });
  const emit = deps.onEvent ?? (() => undefined);
  const ownsClient = deps.client === undefined;
  const client = deps.client ?? createClient({ ...opts, maxSockets: Math.max(50, defaultCeiling(opts.concurrency) * 2) });
  // For messages only: where the client actually goes, including AWS_REGION and AWS_ENDPOINT_URL_DYNAMODB.
  const aws = {
    table: opts.table,
    region: opts.region ?? (await resolvedRegion(client)),
    endpoint: opts.endpoint ?? process.env.AWS_ENDPOINT_URL_DYNAMODB ?? process.env.AWS_ENDPOINT_URL,
  };

  const counters: LoadCounters = {
    rowsRead: 0,
    written: 0,
    superseded: 0,
    revived: 0,
    rejected: 0,
    rejectedByReason: {},
    consumedWcu: 0,
    plannedWcu: 0,
    batches: 0,
    retries: 0,
    throttledItems: 0,
    bytesRead: 0,
    otherSegments: 0,
    writtenBeforeResume: 0,
  };
  const rejects = new RejectSink(opts.rejectsPath);
  let rejectsLock: FileLock | undefined;
  let fatal: LoaderError | undefined;
  /** Set once the table is described and the input open: only then do counters mean anything. */
  let started = false;
  let totalBytes: number | undefined;
  let bytesRead = () => 0;
  let orderer: WriteOrderer | undefined;
  let manifest: ShardManifest | undefined;
  let manifestWritten: string | undefined;
  const now = deps.now ?? (() => performance.now());
  const dryRun = deps.dryRun;
  let checkpoint: CheckpointStore | undefined;
  /** Held while this run owns the checkpoint: a second run on it is refused (issue 11.12). */
  let checkpointLock: FileLock | undefined;
  /** Batches before this one were done by an earlier run of this checkpoint: they are not sent again. */
  let resumeFrom = 0;
  /** Write units an earlier run of the checkpoint wrote (not this run's pace). */
  let plannedWcuBeforeResume = 0;
  /** Superseded rows an earlier run of the checkpoint wrote or rejected in place of a refused successor. */
  let revivedBeforeResume = 0;
  const segment = opts.segment;
  let pacer: RatePacer | undefined;
  let rateReason = '';
  /** Write units per partition key written, heaviest tracked in bounded memory (hot keys, bottleneck). */
  const keyUnits = new HeavyHitters(2000);

  const result = (): LoadResult => {
    const elapsedMs = performance.now() - startedAt;
    counters.bytesRead = bytesRead();
    return {
      ...counters,
      rejectedByReason: { ...counters.rejectedByReason },
      table: opts.table,
      input: opts.input,
      rejectsPath: rejects.count > 0 ? opts.rejectsPath : undefined,
      order: opts.order,
      orderTempBytes: orderer?.stats.tempBytes ?? 0,
      shardManifestPath: manifestWritten,
      shardedKeys: manifest?.keyCount ?? 0,
      rate: rateSummary(elapsedMs),
      hotKeys: keyUnits.top(5).map((k) => ({ key: displayKey(k.key), units: k.weight, share: keyUnits.total > 0 ? k.weight / keyUnits.total : 0 })),
      bottleneck: bottleneckOf(elapsedMs),
      elapsedMs,
      itemsPerSecond: elapsedMs > 0 ? ((counters.written - counters.writtenBeforeResume) * 1000) / elapsedMs : 0,
      segment: segment ? `${segment.index}/${segment.count}` : undefined,
      checkpointPath: checkpoint ? opts.checkpointPath : undefined,
      resumedFromBatch: checkpoint?.resumed ? resumeFrom : undefined,
      complete: counters.rejected === 0 && counters.written + counters.superseded + counters.otherSegments === counters.rowsRead,
    };
  };

  const rateSummary = (elapsedMs: number): RateSummary => {
    const snapshot = pacer?.controller.snapshot(now());
    return {
      targetWcu: snapshot?.targetWcu,
      reason: rateReason,
      keyWcu: opts.keyWcu,
      finalWcu: snapshot?.currentWcu,
      peakWcu: snapshot?.peakWcu ?? 0,
      averageWcu: elapsedMs > 0 ? ((counters.plannedWcu - plannedWcuBeforeResume) * 1000) / elapsedMs : 0,
      costRatio: snapshot?.costRatio ?? 1,
      tableThrottles: snapshot?.tableThrottles ?? 0,
      keyThrottles: snapshot?.keyThrottles ?? 0,
      decreases: snapshot?.decreases ?? 0,
      errors: snapshot?.errors ?? 0,
      restores: snapshot?.restores ?? 0,
    };
  };
  const bottleneckOf = (elapsedMs: number) => {
    const heaviest = keyUnits.top(1)[0];
    const target = pacer?.controller.targetWcu ?? Infinity;
    // Without a target, the rate the load reached stands in for it.
    const loadWcu = Number.isFinite(target) ? target : elapsedMs > 0 ? (keyUnits.total * 1000) / elapsedMs : 0;
    const found = opts.pacing ? findBottleneck(heaviest, keyUnits.total, loadWcu, opts.keyWcu) : undefined;
    return found ? { ...found, key: displayKey(found.key) } : undefined;
  };

  let lastProgress = 0;
  const progress = (force = false) => {
    const t = performance.now();
    if (!force && t - lastProgress < PROGRESS_INTERVAL_MS) return;
    lastProgress = t;
    counters.bytesRead = bytesRead();
    const rate = pacer?.controller.snapshot(now());
    emit({ type: 'progress', counters, totalBytes, elapsedMs: t - startedAt, ...(rate ? { rate } : {}) });
  };

  /** Counts and files a rejected row; `announce` false for rejects an earlier run already reported. */
  const rejectRow = async (row: RejectedRow, announce = true) => {
    counters.rejected++;
    counters.rejectedByReason[row.code] = (counters.rejectedByReason[row.code] ?? 0) + 1;
    if (announce) emit({ type: 'rowRejected', row });
    await rejects.write(row);
    if (counters.rejected >= opts.maxRejects && !fatal) {
      fatal = new LoaderError('MAX_REJECTS_REACHED', `stopped after ${counters.rejected} rejected rows (--max-rejects ${opts.maxRejects}); see ${opts.rejectsPath}`, { file: row.origin.file, line: row.origin.line });
    }
  };

  /** Batches under way; every way out of the load waits for them (lib-storage: never strand a write). */
  const running = new Set<Promise<void>>();
  try {
    // Before anything is read: no output is an input, each is writable, and no other load writes these rejects.
    rejectsLock = await prepareOutputFiles(opts, dryRun !== undefined, deps.files);
    const tableInfo = dryRun?.tableInfo ?? (await describeTable(client, aws, deps.signal));
    dryRun?.onTable?.(tableInfo);
    const keySchema: KeySchema = tableInfo.keySchema;
    checkTypesAgainstKeys(opts.types, keySchema, opts.table);
    const rate = opts.pacing ? chooseRate(opts.wcu, tableInfo) : { targetWcu: Infinity, reason: '--no-pacing: no rate control, only backoff of throttled writes' };
    rateReason = rate.reason;
    const costModel = createWriteCostModel(tableInfo);
    const costs = new WeakMap<PlannedWrite, number>();
    /** Write units of one put: the table plus every GSI the item lands in (computed once per write). */
    const costOf = (w: PlannedWrite): number => {
      // Without GSIs the table's units are the cost (a dry run's slim writes carry their total there too).
      if (tableInfo.gsis.length === 0 || dryRun) return w.wcu;
      let cost = costs.get(w);
      if (cost === undefined) {
        cost = costModel(w.item, w.size).total;
        costs.set(w, cost);
      }
      return cost;
    };
    if (opts.pacing && !dryRun) pacer = new RatePacer({
      controller: new RateController({ targetWcu: rate.targetWcu, keyWcu: opts.keyWcu, ...(rate.growth ? { growth: rate.growth } : {}) }, now()),
      costOf,
      now,
      onChange: (change) => emit({ type: 'rateChanged', change }),
    });
    // A checkpoint pins the shard seed, so random:N suffixes come out the same when the load resumes.
    const seed = opts.shard ? (opts.shard.seed ?? randomInt(0, 0xffffffff)) : undefined;
    if (opts.checkpointPath && !dryRun) {
      if (opts.input === '-') throw new LoaderError('INVALID_OPTION', '--checkpoint needs a file input (stdin cannot be read again to resume)');
      // Before anything is read or written: two runs on one checkpoint would both write everything.
      checkpointLock = await FileLock.acquire({ option: '--checkpoint', path: opts.checkpointPath, code: 'CHECKPOINT_UNWRITABLE' });
      const identity = (await fingerprintFile(resolve(opts.input)))!;
      // The key schema decides which rows are one item (superseded), so it is part of what must match.
      const opened = await CheckpointStore.open(opts.checkpointPath, identity, () => hashFile(identity.path), { ...writeAffectingOptions(opts), keySchema: tableInfo.keySchema }, seed);
      // Refused before it is ours to save: a finished checkpoint must stay finished.
      if (opened.file.status === 'complete') {
        const done = new LoaderError('CHECKPOINT_COMPLETE', `checkpoint ${opts.checkpointPath} says this load already completed at ${opened.file.updatedAt}: nothing to do; its outcome follows; delete it to load the file again`, { file: opts.checkpointPath });
        // Its outcome again, so a restarted job that ended with rejects does not now exit 0 (issue 18).
        const { rejectedByReason, ...outcome } = opened.file.outcome!;
        Object.assign(counters, outcome, { rejectedByReason: { ...rejectedByReason }, plannedWcu: opened.file.plannedWcu, consumedWcu: opened.file.consumedWcu, writtenBeforeResume: outcome.written });
        done.result = result();
        throw done;
      }
      checkpoint = opened;
      resumeFrom = checkpoint.progress.batchesDone;
      if (checkpoint.resumed) {
        const saved = checkpoint.file;
        counters.written = saved.written;
        counters.writtenBeforeResume = saved.written;
        counters.plannedWcu = saved.plannedWcu;
        plannedWcuBeforeResume = saved.plannedWcu;
        counters.consumedWcu = saved.consumedWcu;
        // Reading again counts those rows as superseded; they were written or rejected instead.
        revivedBeforeResume = saved.revived ?? 0;
        counters.revived = revivedBeforeResume;
        // The reject file is written anew: rejects of the reading are found again, and those of the
        // writing in done batches are put back, from the write-reject log, as their rows are read again.
        emit({ type: 'resumed', checkpoint: opts.checkpointPath, batchesDone: resumeFrom, written: saved.written });
      }
    }
    const shardSeed = checkpoint?.file.shardSeed ?? seed;
    const shard = opts.shard ? resolveShardOptions({ ...opts.shard, seed: shardSeed! }, keySchema, opts.table) : undefined;
    // A dry run writes nothing, so there is no manifest to keep.
    if (shard && !dryRun) manifest = new ShardManifest(opts.table, shard);
    const input = await openInput(opts.input, deps.stdin);
    totalBytes = input.totalBytes;
    bytesRead = input.bytesRead;
    // Written now as well as at the end: a bad path fails before any row, and a crash leaves a manifest.
    if (manifest && !dryRun) {
      try {
        await saveManifest(opts.shard!.manifestPath, manifest);
      } catch (error) {
        input.stream.destroy();
        throw error;
      }
    }
    // The rate first: a progress display starts on 'started' and should not be interrupted by it.
    emit({ type: 'rateChosen', targetWcu: Number.isFinite(rate.targetWcu) ? rate.targetWcu : undefined, keyWcu: opts.pacing ? opts.keyWcu : undefined, reason: rate.reason });
    if ('warning' in rate && rate.warning) emit({ type: 'warning', message: rate.warning });
    emit({ type: 'started', table: opts.table, input: input.name, keySchema, totalBytes, snapshot: result });
    started = true;

    const records: AsyncGenerator<SourceRecord> =
      opts.inputFormat === 'csv' ? readCsv(input.stream, input.name, { delimiter: opts.delimiter, columns: opts.columns }) : readJsonLines(input.stream, input.name);
    const planner = createRowPlanner({ keySchema, types: opts.types, infer: opts.infer, empty: opts.empty, jsonFlavor: opts.inputFormat === 'ddb-json' ? 'ddb-json' : 'json', ...(shard ? { shard } : {}), indexKeys: indexKeyAttributes(tableInfo) });
    orderer = new WriteOrderer({
      mode: opts.order,
      windowRows: opts.windowRows,
      memoryBytes: opts.memoryBytes,
      tempDir: opts.tempDir ?? tmpdir(),
      ...(input.totalBytes === undefined ? {} : { inputBytes: input.totalBytes }),
    });
    const batcher = createBatcher();
    const limit = pLimit(opts.concurrency);
    // Slots beyond --concurrency while batches are slow (issue 12): see src/core/inFlight.ts.
    const inFlight = new InFlightLimit({ start: opts.concurrency });

    let warnedDynamoJson = false;
    // Keys of batches not yet settled: a batch holding one of them waits for the earlier batch, so two
    // writes to one primary key are never in flight together and the later one always lands last.
    const unsettledKeys = new Map<string, Promise<void>>();
    const writerContext = {
      client,
      ...aws,
      keySchema,
      maxAttempts: opts.maxAttempts,
      backoff: DEFAULT_BACKOFF,
      random: deps.random ?? Math.random,
      onRetry: (info: { reason: string; items: number; attempt: number; delayMs: number }) => emit({ type: 'retrying', ...info }),
      pacer,
    };

    const dispatch = async (batch: Batch) => {
      const index = counters.batches;
      if (index < resumeFrom || checkpoint?.progress.isDone(index)) {
        // Done before the resume: counted from the checkpoint; only the manifest needs its keys again,
        // and the reject file the rows DynamoDB refused.
        counters.batches++;
        if (manifest) for (const w of batch.writes) if (w.unshardedKey !== undefined) manifest.add(w.unshardedKey, w.item[keySchema.partitionKey.name] as string);
        // A refused write's predecessors (issue 11.2) are in no batch's writes: their rejects are put back too.
        for (const write of batch.writes) {
          for (let w: PlannedWrite | undefined = write; w; w = w.predecessor) {
            const entry = checkpoint?.restoredRejects.get(w.origin.line);
            if (entry) await rejectRow(rejectedRowOf(entry, w, keySchema), false);
          }
        }
        return;
      }
      // Gate the reader on p-limit's own counts, so a later change of limit.concurrency takes effect here.
      while (limit.activeCount + limit.pendingCount >= (limit.concurrency = inFlight.limit(now()))) await Promise.race([...running, delay(inFlight.recheckMs())]);
      const waitFor = new Set<Promise<void>>();
      for (const w of batch.writes) {
        const earlier = unsettledKeys.get(w.keyId);
        if (earlier) waitFor.add(earlier);
      }
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      for (const w of batch.writes) unsettledKeys.set(w.keyId, settled);
      counters.batches++;

      const task = limit(async () => {
        if (waitFor.size > 0) await Promise.all(waitFor);
        if (fatal) {
          // The load is stopping: these rows were never sent; they are counted as not written.
          return;
        }
        let outcome;
        if (dryRun) {
          dryRun.record(batch.writes);
          outcome = { written: batch.writes, rejected: [], consumedWcu: 0, throttledItems: 0, retries: 0, revived: 0 };
        } else {
          const slot = inFlight.started(now());
          const context = pacer ? { ...writerContext, pacer: outstandingOnly(pacer, inFlight, slot, now) } : writerContext;
          outcome = await writeBatch(batch.writes, context).finally(() => inFlight.finished(slot, now()));
        }
        counters.written += outcome.written.length;
        // Superseded rows written (or rejected) in place of a refused successor are superseded no more.
        counters.superseded -= outcome.revived;
        counters.revived = (counters.revived ?? 0) + outcome.revived;
        let batchWcu = 0;
        for (const w of outcome.written) {
          const cost = costOf(w);
          batchWcu += cost;
          counters.plannedWcu += cost;
          // The estimate keeps its own tally of keys; a dry run need not count them twice.
          if (!dryRun) keyUnits.add(w.partitionId, cost);
          if (manifest && w.unshardedKey !== undefined) manifest.add(w.unshardedKey, w.item[keySchema.partitionKey.name] as string);
        }
        counters.consumedWcu += outcome.consumedWcu;
        counters.retries += outcome.retries;
        counters.throttledItems += outcome.throttledItems;
        for (const row of outcome.rejected) await rejectRow(row);
        // Done means every write stored or rejected; a batch cut short by a fatal error is not, even
        // when another batch's fatal error came first.
        if (outcome.fatal) fatal ??= outcome.fatal;
        else await checkpoint?.complete(index, { written: outcome.written.length, plannedWcu: batchWcu, consumedWcu: outcome.consumedWcu, writeRejects: outcome.rejected.length, revived: outcome.revived }, logEntriesOf(index, outcome.rejected));
        progress();
      })
        .catch((error: unknown) => {
          if (!fatal) fatal = error instanceof LoaderError ? error : bug(`a batch failed unexpectedly: ${(error as Error)?.message}`);
        })
        .finally(() => {
          settle();
          for (const w of batch.writes) if (unsettledKeys.get(w.keyId) === settled) unsettledKeys.delete(w.keyId);
          running.delete(task);
        });
      running.add(task);
    };

    const feed = async (write: PlannedWrite) => {
      const { full, superseded } = batcher.push(write);
      if (superseded && revivedBeforeResume > 0) revivedBeforeResume--;
      else if (superseded) counters.superseded++;
      if (full) await dispatch(full);
    };
    const stopping = () => fatal !== undefined || deps.signal?.aborted === true;

    try {
      for await (const record of records) {
        if (fatal || deps.signal?.aborted) break;
        counters.rowsRead++;
        const planned = planner.plan(record);
        if (!warnedDynamoJson && planner.suspectedDynamoJsonLine !== undefined) {
          warnedDynamoJson = true;
          emit({ type: 'warning', message: `line ${planner.suspectedDynamoJsonLine} of ${input.name} looks like DynamoDB JSON ({"attr":{"S":"..."}}) but is read as plain JSON; pass --input-format ddb-json if it is DynamoDB JSON` });
        }
        if (isRejected(planned)) {
          if (segment && segmentOfLine(planned.origin.line, segment.count) !== segment.index) counters.otherSegments++;
          else await rejectRow(planned);
          continue;
        }
        if (segment && segmentOfWrite(planned, segment.count) !== segment.index) {
          counters.otherSegments++;
          continue;
        }
        for (const write of await orderer.push(dryRun ? dryRun.onPlanned(planned) : planned)) await feed(write);
        progress();
      }
    } finally {
      await records.return(undefined);
      input.stream.destroy();
    }
    if (!stopping()) {
      if (isGlobalOrder(opts.order)) emit({ type: 'ordering', mode: opts.order, rows: orderer.held, spilled: orderer.stats.spilled });
      // Rows still held by the order are not written when stopping: they were never sent, and are
      // reported as not written.
      for await (const write of orderer.drain()) {
        if (stopping()) break;
        await feed(write);
        progress();
      }
    }
    // Rows already read are written even when stopping on a signal: at most one partial batch. Not with
    // a checkpoint: a partial batch is not a batch of the load's fixed sequence, and resuming counts on it.
    const last = batcher.flush();
    if (last && !fatal && !(checkpoint && stopping())) await dispatch(last);
    while (running.size > 0) await Promise.all(running);
  } catch (error) {
    if (!fatal) fatal = error instanceof LoaderError ? error : bug(`unexpected failure: ${(error as Error)?.message ?? String(error)}`);
  } finally {
    // A failure out of the reading (a truncated .gz, a full disk) must not leave batches writing behind
    // the counters, the reject file and the checkpoint being closed.
    while (running.size > 0) await Promise.allSettled(running);
    try {
      await rejects.close();
    } catch (error) {
      if (!fatal) fatal = error as LoaderError;
    }
    await rejectsLock?.release();
    try {
      await orderer?.close();
    } catch (error) {
      emit({ type: 'warning', message: `could not remove the temporary files in ${orderer?.stats.tempPath}: ${(error as Error).message}` });
    }
    if (manifest && started && !dryRun) {
      try {
        manifestWritten = await saveManifest(opts.shard!.manifestPath, manifest);
      } catch (error) {
        if (!fatal) fatal = error as LoaderError;
      }
    }
    if (checkpoint) {
      const { rowsRead, written, superseded, rejected, rejectedByReason, otherSegments, batches } = counters;
      // Complete only when every row read is accounted for: a checkpoint saved complete is never resumed,
      // so a load whose counts do not add up (a bug) stays resumable rather than final.
      const accounted = written + superseded + rejected + otherSegments === rowsRead;
      const finished = !fatal && deps.signal?.aborted !== true && accounted;
      try {
        await checkpoint.close(finished ? 'complete' : 'stopped', finished ? { rowsRead, written, superseded, rejected, rejectedByReason, otherSegments, batches } : undefined);
      } catch (error) {
        if (!fatal) fatal = error as LoaderError;
      }
    }
    await checkpointLock?.release().catch(() => undefined);
    if (ownsClient) client.destroy();
  }

  progress(true);
  const final = result();
  if (!fatal && deps.signal?.aborted) {
    fatal = new LoaderError('ABORTED', `stopped on request after ${final.rowsRead} rows; batches already sent were finished, rows not yet sent are counted as not written`);
  }
  if (fatal) {
    if (started) fatal.result = final;
    throw fatal;
  }
  if (final.written + final.superseded + final.rejected + final.otherSegments !== final.rowsRead) {
    const error = bug(`row accounting does not add up: read ${final.rowsRead}, written ${final.written}, superseded ${final.superseded}, rejected ${final.rejected}, other segments ${final.otherSegments}`);
    error.result = final;
    throw error;
  }
  return final;
}

/**
 * The pacer, with the batch's slot paused except while a call is outstanding: waiting for the rate or
 * in backoff is not a slow call, and more batches waiting on the same buckets would only queue deeper.
 */
function outstandingOnly(pacer: SendPacer, inFlight: InFlightLimit, slot: number, now: () => number): SendPacer {
  return {
    beforeSend: async (writes) => {
      inFlight.pause(slot, now());
      try {
        await pacer.beforeSend(writes);
      } finally {
        inFlight.resume(slot, now());
      }
    },
    afterSend: (report) => {
      // No answer at all (5xx, reset, timeout): its backoff lends the slot; a throttle keeps it.
      if (report.stored.length === 0 && report.throttled.length === 0 && report.sent.length > 0) inFlight.idle(slot, now());
      else inFlight.pause(slot, now());
      pacer.afterSend(report);
    },
  };
}

/** A timer that never keeps the process alive on its own. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Writes the manifest atomically, so a reader never sees half a file. */
async function saveManifest(path: string, manifest: ShardManifest): Promise<string> {
  await writeJsonAtomically(path, manifest.toJSON(), '--shard-manifest', (error) =>
    new LoaderError('MANIFEST_UNWRITABLE', `cannot write the shard manifest ${path}: ${error.message}; choose another path with --shard-manifest`, { file: path, cause: error }),
  );
  return path;
}

/** A partition identity (type letter + value) as the user wrote the key. */
function displayKey(partitionId: string): string {
  return partitionId.slice(1);
}

async function resolvedRegion(client: DynamoDBDocumentClient): Promise<string | undefined> {
  try {
    return await client.config.region();
  } catch {
    return undefined;
  }
}
