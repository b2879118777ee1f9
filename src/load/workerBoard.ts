import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { writePrivateFileAtomically } from '../files/privateFiles.js';
import type { S3Access } from '../reading/s3Part.js';
import type { DivisionSummary, LoadResult } from '../reporting/result.js';
import { LoaderError } from '../shared/errors.js';
import type { Segment } from './segment.js';

/**
 * Where each worker of a load (--segment i/N with --listing) says how it is doing, beside the listing they
 * share (a file on the shared volume, or an object under the same S3 prefix): one small JSON document per
 * worker, written when it starts, every HEARTBEAT_MS while it runs, and when it ends. `ddb-spread status`
 * reads them to say whether the load as a whole is complete (load/loadStatus.ts). Counts, states and
 * paths only: no row content, no key, no error message (those can quote the input).
 */
export interface WorkerDoc {
  format: typeof WORKER_FORMAT;
  version: 1;
  /** "i/N". */
  segment: string;
  /** When the listing this worker loads was made: tells this load's documents from an earlier load's at the same path. */
  listedAt: string;
  /** running: heard from every HEARTBEAT_MS; finished: read its input to the end; stopped: asked to stop (a signal) or failed. */
  state: 'running' | 'finished' | 'stopped';
  table: string;
  /**
   * Which table of that name (TableInfo.identity: its id, or when it was created), once described: a table
   * deleted and created again under its name is another load's. Absent before, and from an earlier ddb-spread.
   */
  tableIdentity?: string | undefined;
  host: string;
  pid: number;
  startedAt: string;
  updatedAt: string;
  rowsRead: number;
  written: number;
  superseded: number;
  rejected: number;
  otherSegments: number;
  /** Rows --skip-expired left out; absent in documents of a ddb-spread before it. */
  skippedExpired?: number;
  /** Rows whose write condition was false (--if-not-exists, --if-newer); absent without a condition. */
  conditionFailed?: number;
  notWritten: number;
  /** --transform: rows it skipped, and the extra items of rows it split (LoadCounters); absent without a transform. */
  skippedByTransform?: number | undefined;
  splitWrites?: number | undefined;
  rejectedByReason: Record<string, number>;
  /** The worker's own verdict: every row of its share written or superseded. */
  complete: boolean;
  /** Average write units per second of this run. */
  wcu: number;
  /** With a shared budget (--total-wcu): this worker's target now, and what it stored over its last seconds (sharedRate.ts). */
  targetWcu?: number | undefined;
  achievedWcu?: number | undefined;
  /** Batches an earlier run of its checkpoint had done, when this run resumed it. */
  resumedFromBatch?: number | undefined;
  rejectsPath?: string | undefined;
  /** Its --condition-failures file, when a line went there. */
  conditionFailuresPath?: string | undefined;
  checkpointPath?: string | undefined;
  division?: DivisionSummary | undefined;
  /** Why a stopped worker stopped: the error's code (ddb-spread's, or the signal), never its message. */
  stopCode?: string | undefined;
  /** Random, one per process: a document written by another process tells a second worker given the same --segment. */
  runId?: string | undefined;
  /**
   * An export chain divided by part (shares.ts): how many exports, from the chain's first, this worker has
   * settled (every row it read of them written, superseded or rejected, and its checkpoint saved). The
   * other workers wait for it before they start the next (exportBarrier.ts). A finished worker settled all.
   */
  settledExports?: number | undefined;
  /** Waiting at that barrier: the export (0-based) it waits to start, and the workers it waits for. */
  barrier?: { next: number; waitingFor: string[] } | undefined;
}

export const WORKER_FORMAT = 'ddb-spread-worker';
/** How often a running worker writes its document: status calls a worker silent after a few of these. */
export const HEARTBEAT_MS = 10_000;
/** How often when the workers share one budget: a part a finished worker frees is taken up within this. */
export const RATE_BEAT_MS = 2_000;

/**
 * A worker's beat when N share a budget: RATE_BEAT_MS, longer past 20 workers, since each beat reads the
 * N-1 others' documents (N² reads a beat in all: 100 workers every 10 s are 1,000 GETs a second, within
 * the 5,500 a second one S3 prefix serves), up to HEARTBEAT_MS, which status's silence is counted in.
 */
export function rateBeatMs(workers: number): number {
  return Math.min(HEARTBEAT_MS, RATE_BEAT_MS * Math.max(1, workers / 20));
}

/** Where worker `segment` of the load sharing `listing` writes its document. */
export function workerDocPath(listing: string, segment: Segment): string {
  return `${listing}.worker-${segment.index}-of-${segment.count}.json`;
}

export interface WorkerDocStore {
  where: string;
  read(): Promise<string | undefined>;
  write(text: string): Promise<void>;
}

export function localWorkerStore(path: string): WorkerDocStore {
  return {
    where: path,
    read: () =>
      readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw new LoaderError('INPUT_UNREADABLE', `cannot read ${path}: ${error.message}`, { file: path, cause: error });
      }),
    // Replaced whole: status never reads half a document.
    write: (text) => writePrivateFileAtomically(path, text),
  };
}

export function s3WorkerStore(url: string, s3: () => Promise<S3Access>): WorkerDocStore {
  return {
    where: url,
    read: async () => (await s3()).readText(url),
    write: async (text) => (await s3()).putText(url, text),
  };
}

/** A worker's document from its result so far. Pure. */
export function workerDoc(
  result: LoadResult,
  how: {
    segment: string;
    listedAt: string;
    state: WorkerDoc['state'];
    startedAt: string;
    now: string;
    stopCode?: string | undefined;
    rate?: { targetWcu: number; achievedWcu: number } | undefined;
    /** The verdict when the result's own does not tell it (a finished checkpoint run again). */
    complete?: boolean | undefined;
    runId?: string | undefined;
    settledExports?: number | undefined;
    barrier?: WorkerDoc['barrier'];
    tableIdentity?: string | undefined;
  },
): WorkerDoc {
  return {
    format: WORKER_FORMAT,
    version: 1,
    segment: how.segment,
    listedAt: how.listedAt,
    state: how.state,
    table: result.table,
    ...(how.tableIdentity !== undefined ? { tableIdentity: how.tableIdentity } : {}),
    host: hostname(),
    pid: process.pid,
    startedAt: how.startedAt,
    updatedAt: how.now,
    rowsRead: result.rowsRead,
    written: result.written,
    superseded: result.superseded,
    rejected: result.rejected,
    otherSegments: result.otherSegments,
    skippedExpired: result.skippedExpired ?? 0,
    ...(result.conditionFailed !== undefined ? { conditionFailed: result.conditionFailed } : {}),
    notWritten: result.notWritten,
    ...(result.transformOutputs !== undefined ? { skippedByTransform: result.skippedByTransform ?? 0, splitWrites: result.splitWrites ?? 0 } : {}),
    rejectedByReason: { ...result.rejectedByReason },
    complete: how.complete ?? result.complete,
    wcu: result.rate.averageWcu,
    resumedFromBatch: result.resumedFromBatch,
    rejectsPath: result.rejectsPath,
    ...(result.conditionFailuresPath !== undefined ? { conditionFailuresPath: result.conditionFailuresPath } : {}),
    checkpointPath: result.checkpointPath,
    division: result.division,
    ...(how.stopCode !== undefined ? { stopCode: how.stopCode } : {}),
    ...(how.rate ? how.rate : {}),
    ...(how.runId !== undefined ? { runId: how.runId } : {}),
    ...(how.settledExports !== undefined ? { settledExports: how.settledExports } : {}),
    ...(how.barrier !== undefined && how.state === 'running' ? { barrier: how.barrier } : {}),
  };
}

/**
 * The document another process wrote in this worker's place since this one last wrote it, if any: a second
 * worker given the same --segment (two Jobs of one load, an index given twice, a pod its replacement runs
 * beside). Only once this worker has written its own: each write replaces the document whole (a local
 * rename, an S3 PUT, read after write in both), so another process's document read after that was written
 * after it, whatever the two machines' clocks say; a worker killed before this one started (a restart, the
 * usual case) left a document this one's first write replaced. Pure.
 */
export function otherWriter(seen: string | undefined, me: { runId: string; listedAt: string; lastWrite: string | undefined }): WorkerDoc | undefined {
  if (seen === undefined || me.lastWrite === undefined) return undefined;
  let doc: Partial<WorkerDoc>;
  try {
    doc = JSON.parse(seen) as Partial<WorkerDoc>;
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || doc.format !== WORKER_FORMAT || doc.listedAt !== me.listedAt) return undefined;
  return typeof doc.runId === 'string' && doc.runId !== me.runId ? (doc as WorkerDoc) : undefined;
}

/**
 * A worker's document kept up to date: written at start, on a timer, and at the end. A write that fails
 * (a full volume, S3 unreachable for a moment) is reported once and retried at the next beat; it never
 * stops the load, whose rows and checkpoint do not depend on it.
 */
export class WorkerBoard {
  readonly #store: WorkerDocStore;
  readonly #segment: string;
  readonly #listedAt: string;
  readonly #result: () => LoadResult;
  readonly #warn: (message: string) => void;
  readonly #startedAt = new Date().toISOString();
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();
  #warned = false;
  readonly #runId = randomBytes(8).toString('hex');
  /** When this worker's document was last written (its updatedAt), once a write has succeeded. */
  #lastWrite: string | undefined;
  #duplicated = false;
  #writes = 0;
  /** Told once when another process writes this worker's document: a second worker with the same --segment. */
  onDuplicate: ((other: WorkerDoc) => void) | undefined;
  /** Set by a shared budget (rateSharing.ts): what the document says of the rate, and what each beat does after writing it. */
  rate: (() => { targetWcu: number; achievedWcu: number } | undefined) | undefined;
  onBeat: (() => Promise<void>) | undefined;
  /** Set by an export chain's barrier (exportBarrier.ts): the exports this worker has settled. */
  settledExports: number | undefined;
  /** Which table of its name this worker writes, once described (WorkerDoc.tableIdentity). */
  tableIdentity: string | undefined;
  /** What this worker's document of this load said it had settled of a chain before this run (Infinity: finished), 0 if nothing. */
  earlierSettled = 0;
  barrier: WorkerDoc['barrier'];

  constructor(store: WorkerDocStore, segment: Segment, listedAt: string, result: () => LoadResult, warn: (message: string) => void) {
    this.#store = store;
    this.#segment = `${segment.index}/${segment.count}`;
    this.#listedAt = listedAt;
    this.#result = result;
    this.#warn = warn;
  }

  /** How many of its writes have succeeded: a shared budget tells from it how long the others have not heard from it. */
  get writes(): number {
    return this.#writes;
  }

  /** The interval of its beats, once started. */
  beatMs = HEARTBEAT_MS;

  start(heartbeatMs = HEARTBEAT_MS): Promise<void> {
    this.beatMs = heartbeatMs;
    this.#timer = setInterval(() => void this.#beat(), heartbeatMs);
    this.#timer.unref();
    return this.#post('running');
  }

  /** Writes the running state now, between beats. */
  refresh(): Promise<void> {
    return this.#post('running');
  }

  async #beat(): Promise<void> {
    await this.#checkOthers();
    // The last word may have been written while the read was out: a 'running' after it would undo it
    // (status would call a finished worker silent, a chain's peers would wait for it), and a later pass of
    // the same process would take it for another writer.
    if (this.#timer === undefined) return;
    await this.#post('running');
    // Only while running: the last word may already be written.
    if (this.#timer !== undefined) await this.onBeat?.();
  }

  /** Reads the document before writing it again: a write by another process since this one's says two workers share one --segment. */
  async #checkOthers(): Promise<void> {
    if (this.#duplicated || this.onDuplicate === undefined) return;
    // A read that fails is no evidence: the write after it reports its own trouble.
    const seen = await this.#store.read().catch(() => undefined);
    const other = otherWriter(seen, { runId: this.#runId, listedAt: this.#listedAt, lastWrite: this.#lastWrite });
    if (!other) return;
    this.#duplicated = true;
    this.onDuplicate(other);
  }

  /** The last word: finished, or stopped with why. Waits for the write. */
  async end(state: 'finished' | 'stopped', stopCode?: string, complete?: boolean): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#post(state, stopCode, complete);
  }

  /** Writes one at a time, in order: a slow beat never lands after the last word. */
  #post(state: WorkerDoc['state'], stopCode?: string, complete?: boolean): Promise<void> {
    const now = new Date().toISOString();
    const doc = workerDoc(this.#result(), {
      segment: this.#segment,
      listedAt: this.#listedAt,
      state,
      startedAt: this.#startedAt,
      now,
      stopCode,
      rate: this.rate?.(),
      complete,
      runId: this.#runId,
      settledExports: this.settledExports,
      barrier: this.barrier,
      tableIdentity: this.tableIdentity,
    });
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    this.#writing = this.#writing.then(() =>
      this.#store.write(text).then(
        () => {
          this.#lastWrite = now;
          this.#writes++;
        },
        (error: unknown) => {
          if (this.#warned) return;
          this.#warned = true;
          this.#warn(
            `cannot write this worker's state to ${this.#store.where} (${(error as Error).message}); ddb-spread status will not see it until a later write succeeds`,
          );
        },
      ),
    );
    return this.#writing;
  }
}
