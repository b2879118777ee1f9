import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { rejectsBeforePoint, type KeptRejects, type RejectFileState } from '../checkpointing/rejectsBeforePoint.js';
import type { Rejections } from './rejections.js';
import type { ConditionFailureSink } from '../reporting/conditionFailureSink.js';
import { CheckpointStore } from '../checkpointing/checkpoint.js';
import { writeAffectingOptions } from './writeAffectingOptions.js';
import { hashFile } from '../files/hashFile.js';
import type { InputIdentity, RestartPoint } from '../checkpointing/checkpointState.js';
import { outlinesOf, type InputSet } from '../reading/inputSet.js';
import { createHash } from 'node:crypto';
import type { LoadEvent, LoadResult } from '../reporting/events.js';
import { fingerprintFile } from '../files/fingerprintFile.js';
import { LoaderError } from '../shared/errors.js';
import type { KeySchema } from '../shared/types.js';
import type { Disposer } from './disposer.js';
import type { LoadStop } from './loadStop.js';
import type { NormalizedLoadOptions } from './options.js';
import type { LoadTally } from './loadTally.js';
import { FileLock } from '../files/fileLock.js';
import { parseShardManifest, type ShardPlan } from '../sharding/readManifest.js';

/** The checkpoint this run holds, and the batch it resumes from. */
export interface OpenedCheckpoint {
  store: CheckpointStore;
  /** Batches before this one were done by an earlier run of this checkpoint: they are not sent again. */
  resumeFrom: number;
  /** The checkpoint was saved by an earlier run (this run goes on from it), even one that had done no batch. */
  resumed: boolean;
  /** The restart point the read starts at (its batches before all done), or undefined: the input's start. */
  restartFrom: RestartPoint | undefined;
  /** A sharded load resumed at a restart point: the manifest the earlier run saved, with the keys of the rows before it. */
  manifestKept?: ShardPlan;
}

/** What taking the checkpoint needs of the load: its lock and close are deferred on `disposer`. */
export interface CheckpointContext {
  opts: NormalizedLoadOptions;
  inputSet: InputSet;
  /** Which table of its name the load writes (TableInfo.identity): a checkpoint of another is refused. */
  tableIdentity: string | undefined;
  disposer: Disposer;
  stop: LoadStop;
  tally: LoadTally;
  rejections: Rejections;
  /** --condition-failures: cut back to what the checkpoint recorded on resume, removed for a new one. */
  conditionFailures?: ConditionFailureSink | undefined;
  emit: (event: LoadEvent) => void;
  result: () => LoadResult;
}

/**
 * Takes the checkpoint of --checkpoint for this run: locked first (two runs on one checkpoint would both
 * write everything), then opened against the input's identity and the options that decide what is
 * written. A checkpoint of a finished load ends the run at once with its outcome again; one of
 * a stopped load sets the tally and the batch to resume from. When the load ends, the checkpoint is
 * closed complete only when the load finished and every row read is accounted for: a complete checkpoint
 * is never resumed, so a load whose counts do not add up (a bug) stays resumable rather than final.
 */
export async function openCheckpoint(
  keySchema: KeySchema,
  seed: number | undefined,
  ctx: CheckpointContext,
  restartEveryRows: number,
  /** The load starts over through the window (load.ts): the checkpoint starts over too, recording why. */
  notGrouped = false,
): Promise<OpenedCheckpoint> {
  const { opts, tally, emit, disposer, stop } = ctx;
  const path = opts.checkpointPath!;
  if (opts.inputs.includes('-')) throw new LoaderError('INVALID_OPTION', '--checkpoint needs a file input (stdin cannot be read again to resume)');
  const lock = await FileLock.acquire({ option: '--checkpoint', path, code: 'CHECKPOINT_UNWRITABLE' });
  disposer.defer(() => lock.release().catch(() => undefined));
  const { identity, hash, hashPart } = await identityOf(ctx.inputSet);
  // Reading every byte of a large input takes a while before the first row: said, not silent.
  const bytes = ctx.inputSet.parts.reduce(
    (sum, { part, range }) => sum + (part.path === undefined ? 0 : range ? range.end - range.start : (part.size ?? 0)),
    0,
  );
  const announcedHash = async () => {
    emit({ type: 'hashing', checkpoint: path, bytes });
    const started = performance.now();
    const sha256 = await hash();
    emit({ type: 'hashed', checkpoint: path, bytes, ms: performance.now() - started });
    return sha256;
  };
  // A resumed load judges expiry at the load time its checkpoint pinned, unless one is given.
  if (opts.skipExpired && opts.skipExpired.at === undefined)
    opts.skipExpired.at = (await pinnedLoadTime(path, opts.skipExpired.attribute)) ?? Math.floor(Date.now() / 1000);
  // The key schema decides which rows are one item (superseded), so it is part of what must match.
  const opened = await CheckpointStore.open(
    path,
    identity,
    announcedHash,
    { ...writeAffectingOptions(opts), keySchema },
    seed,
    restartEveryRows,
    hashPart,
    notGrouped,
    ctx.tableIdentity === undefined ? undefined : { name: opts.table, identity: ctx.tableIdentity },
  );
  // Refused before it is ours to save: a finished checkpoint must stay finished.
  if (opened.file.status === 'complete') {
    const done = new LoaderError(
      'CHECKPOINT_COMPLETE',
      `checkpoint ${path} says this load already completed at ${opened.file.updatedAt}: nothing to do; its outcome follows; delete it to load the file again`,
      { file: path },
    );
    // Its outcome again, so a restarted job that ended with rejects does not now exit 0.
    tally.restoreFinished(opened.file.outcome!, opened.file.plannedWcu, opened.file.consumedWcu);
    done.result = await withConditionFailuresFile(await withRejectsFile(ctx.result(), opts.rejectsPath), opts.conditionFailuresPath);
    throw done;
  }
  disposer.defer(async () => {
    // Complete only when the input was read to its end and every row read is accounted for.
    const finished = !stop.stopping && tally.inputEnded && tally.accounted;
    try {
      await opened.close(finished ? 'complete' : 'stopped', finished ? tally.outcome() : undefined);
    } catch (error) {
      stop.fail(error);
    }
  });
  const resumeFrom = opened.progress.batchesDone;
  let restartFrom = opened.resumed ? opened.resumePoint : undefined;
  let manifestPlan: ShardPlan | undefined;
  if (opened.resumed) {
    const saved = opened.file;
    // Reading again counts those rows as superseded; they were written or rejected instead.
    tally.resume(saved);
    // The reject file is written anew: rejects of the reading are found again, and those of the writing in
    // done batches are put back, from the write-reject log, as their rows are read again. The rows before
    // a restart point are not read again: their rejects are kept from the file as the checkpoint recorded it.
    // A sharded load's keys of the rows before the point come from the manifest the earlier run saved.
    const manifest = restartFrom && opts.shard ? await manifestKept(opts.shard.manifestPath, opts.table, saved.shardSeed) : undefined;
    if (manifest && 'refused' in manifest) {
      emit({
        type: 'warning',
        message: `the shard manifest ${opts.shard!.manifestPath} cannot be resumed (${manifest.refused}): reading the input from its start again, so that every sharded key is listed again`,
      });
      restartFrom = undefined;
    } else if (manifest) manifestPlan = manifest;
    const kept = restartFrom ? await rejectsKept(opts.rejectsPath, saved.rejectsFile, restartFrom, ctx.inputSet) : { lines: [], codes: [] };
    if ('refused' in kept) {
      emit({
        type: 'warning',
        message: `the reject file ${opts.rejectsPath} cannot be resumed (${kept.refused}): reading the input from its start again, so that every reject is found again`,
      });
      restartFrom = undefined;
    }
    await ctx.rejections.restore('refused' in kept ? { lines: [], codes: [] } : kept);
    // The rows before the restart point are not read again: their counts are the point's.
    if (restartFrom) tally.resumeAt(restartFrom);
    emit({ type: 'resumed', checkpoint: path, batchesDone: resumeFrom, written: saved.written, rowsSkipped: restartFrom?.rowsRead ?? 0 });
  }
  opened.trackRejectFile(ctx.rejections.file);
  const failures = ctx.conditionFailures;
  if (failures) {
    // Resumed: the lines of the batches done are kept, those written after the last save cut (their batches
    // are sent again). A new checkpoint: an earlier file goes. Recorded with every save from now on.
    if (opened.resumed) await failures.resume(opened.file.conditionFailuresFile, opened.file.conditionFailed ?? 0, path);
    else await failures.startFresh();
    // Closed here too should a later step of the setup fail (load() closes it before this otherwise; twice is once).
    disposer.defer(() => failures.close().catch(() => undefined));
    opened.trackConditionFailures(failures);
  }
  return { store: opened, resumeFrom, resumed: opened.resumed, restartFrom, ...(restartFrom && manifestPlan ? { manifestKept: manifestPlan } : {}) };
}

/**
 * The shard manifest an earlier run of this load saved, when it is this load's (its table and seed): the
 * keys of the rows before a restart point, which a resume there does not read again. Why not, otherwise.
 */
async function manifestKept(path: string, table: string, seed: number | undefined): Promise<ShardPlan | { refused: string }> {
  let plan: ShardPlan;
  try {
    plan = parseShardManifest(await readFile(path, 'utf8'), path);
  } catch (error) {
    return { refused: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it is gone' : (error as Error).message };
  }
  if (plan.table !== table) return { refused: `it is table ${plan.table}'s` };
  if (plan.seed !== seed) return { refused: "its seed is not the checkpoint's" };
  return plan;
}

/**
 * The rejects of the rows before `point`, from the reject file as the checkpoint recorded it; a checkpoint
 * that did not record it (an earlier ddb-spread's) resumes only at points before any reject, so has none.
 */
async function rejectsKept(
  path: string,
  recorded: RejectFileState | undefined,
  point: RestartPoint,
  set: InputSet,
): Promise<KeptRejects | { refused: string }> {
  if (recorded === undefined || recorded.bytes === 0) return { lines: [], codes: [] };
  let text: Buffer;
  try {
    text = await readFile(path);
  } catch (error) {
    return { refused: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it is gone' : (error as Error).message };
  }
  return rejectsBeforePoint(text, recorded, point, partOfLine(set));
}

/**
 * The part of the set a row of `file` at `line` is in. A file may be several parts of a worker's share (byte
 * ranges of it, load/rangeCuts.ts, in the file's order): the last that starts at or before the line holds it.
 */
function partOfLine(set: InputSet): (file: string, line: number) => number | undefined {
  const parts = new Map<string, { index: number; line: number }[]>();
  for (const [index, { part, range }] of set.parts.entries()) parts.set(part.name, [...(parts.get(part.name) ?? []), { index, line: range?.line ?? 1 }]);
  return (file, line) => {
    const ofFile = parts.get(file);
    return (ofFile?.findLast((p) => p.line <= line) ?? ofFile?.[0])?.index;
  };
}

/**
 * What identifies the input for a checkpoint. One local file: as before (its size, edges and SHA-256).
 * Several parts: every part's name, size and edges (an S3 object's ETag) in order, and for the
 * content hash each part's SHA-256 (a local file) or ETag (S3); each part's own identity is recorded too
 * (not the newest part's time for all), so a part changed in place is found whatever the other parts' times. A part added,
 * removed, renamed or changed is another input, and the load does not resume on it. A local file's
 * identity is taken from the version pinned when it was listed: changed since, it is an error.
 */
async function identityOf(set: InputSet): Promise<{ identity: InputIdentity; hash: () => Promise<string>; hashPart?: (index: number) => Promise<string> }> {
  const only = set.parts.length === 1 ? set.parts[0]! : undefined;
  if (only && !only.part.name.startsWith('s3://') && only.expected === undefined) {
    const pin = only.part.pin;
    const identity = (await fingerprintFile(resolve(only.part.name)))!;
    await pin?.check();
    const hash = async () => {
      // A worker's range of the file (a part cut by range) is hashed alone: the others' bytes are theirs to read.
      const sha256 = await hashFile(identity.path, only.range);
      await pin?.check();
      return sha256;
    };
    return { identity, hash };
  }
  // outline() and contentHash() check a local part against its pin.
  const outlines = await outlinesOf(set);
  const edges = createHash('sha256');
  for (const o of outlines) edges.update(`${o.name}\t${o.size}\t${o.edges}\n`);
  const identity: InputIdentity = {
    path: set.name,
    size: outlines.reduce((sum, o) => sum + o.size, 0),
    mtimeMs: Math.max(0, ...outlines.map((o) => o.mtimeMs)),
    edgesSha256: edges.digest('hex'),
    parts: outlines.map((o) => ({ name: o.name, size: o.size, mtimeMs: o.mtimeMs, edges: o.edges })),
  };
  // Each part hashed once, for its own identity and the whole's.
  const hashes = new Map<number, Promise<string>>();
  const hashPart = (index: number) => {
    let found = hashes.get(index);
    if (found === undefined) hashes.set(index, (found = contentHashOf(set.parts[index]!)));
    return found;
  };
  const hash = async () => {
    const all = createHash('sha256');
    for (const [i, { part }] of set.parts.entries()) all.update(`${part.name}\t${await hashPart(i)}\n`);
    return all.digest('hex');
  };
  return { identity, hash, hashPart };
}

/** A part's content hash; a worker's range of a local file (a part cut by range) hashed alone, as a single file's is. */
async function contentHashOf(listed: InputSet['parts'][number]): Promise<string> {
  const { part, range } = listed;
  if (range === undefined || part.path === undefined) return part.contentHash();
  const sha256 = await hashFile(part.path, range);
  await part.pin?.check();
  return sha256;
}

/**
 * A finished load's outcome told again names the reject file its run wrote, when it is still there: the
 * rejected rows are reported in it (the summary points at it, and --accept-rejects counts on it). One
 * deleted since is not named, and the rows it held are then reported nowhere.
 */
async function withRejectsFile(again: LoadResult, rejectsPath: string): Promise<LoadResult> {
  if (again.rejected === 0) return again;
  const file = await stat(rejectsPath).catch(() => undefined);
  return file?.isFile() === true && file.size > 0 ? { ...again, rejectsPath } : again;
}

/** A finished load's outcome told again names its --condition-failures file too, when it is still there. */
async function withConditionFailuresFile(again: LoadResult, path: string | undefined): Promise<LoadResult> {
  if (path === undefined || !again.conditionFailed) return again;
  const file = await stat(path).catch(() => undefined);
  return file?.isFile() === true && file.size > 0 ? { ...again, conditionFailuresPath: path } : again;
}

/**
 * The load time a saved checkpoint pinned for --skip-expired of `attribute`, if it holds one. Unreadable or of
 * another attribute: undefined (CheckpointStore.open then says what is wrong with it, or what differs).
 */
export async function pinnedLoadTime(path: string, attribute: string): Promise<number | undefined> {
  try {
    const saved = (JSON.parse(await readFile(path, 'utf8')) as { options?: { skipExpired?: { attribute?: unknown; at?: unknown } } }).options?.skipExpired;
    return saved?.attribute === attribute && typeof saved.at === 'number' && Number.isSafeInteger(saved.at) ? saved.at : undefined;
  } catch {
    return undefined;
  }
}
