import { LoaderError } from '../shared/errors.js';
import { HEARTBEAT_MS, WORKER_FORMAT, type WorkerDoc } from './workerBoard.js';

/**
 * One answer for a load run by N workers (`ddb-spread status <listing>`): from the listing they share and
 * each worker's state beside it (workerBoard.ts), whether the load as a whole is complete, with its totals,
 * its rate and every worker's rejects. Pure.
 *
 * Complete means every worker read its share to the end and wrote or superseded every row of it; finished
 * with rejects, that every worker read its share to the end and every row is in the table or in a reject
 * file. Anything else is not complete yet: a worker not started, running, stopped (a signal, a failure), or
 * silent (no word for SILENT_AFTER_MS while it said it was running: killed, or its machine lost), each
 * named with what to do.
 *
 * One listing can serve several loads (the same Job run again into a new table, or into its table deleted and
 * created again): a load is the workers of one listing writing one table: the one asked for (status --table),
 * else that of the worker started last, and of that name the one the last started of them described. A worker whose document names another table has
 * not started this load: counting its earlier run's rows would call the load complete while rows of its share
 * are in another table only.
 */
export type WorkerState = 'not started' | 'running' | 'silent' | 'finished' | 'stopped';

export interface WorkerStatus {
  segment: string;
  state: WorkerState;
  /** Its document, when it has written one. */
  doc: WorkerDoc | undefined;
  /** Since its last word, in ms. */
  quietMs: number | undefined;
  /** Not started for this load's table: its document (not counted) is of a load of this listing into that table. */
  otherTable?: string | undefined;
}

export interface LoadStatus {
  /** The table the load writes (that of the worker started last); absent when no worker has started. */
  table?: string;
  workers: WorkerStatus[];
  /** Every worker finished, and every row is written or superseded. */
  complete: boolean;
  /** Every worker finished: every row is in the table or in a reject file. */
  finished: boolean;
  /** Rows of the input read so far: each counted by the one worker whose row it is. */
  rows: number;
  /** --transform: rows skipped by it, and extra items of split rows (counted in `rows`), over all workers. */
  skippedByTransform?: number;
  splitWrites?: number;
  written: number;
  superseded: number;
  rejected: number;
  /** Rows --skip-expired left out (their TTL was past). */
  skippedExpired: number;
  /** Rows whose write condition was false: the table kept its item (--if-not-exists, --if-newer). */
  conditionFailed: number;
  notWritten: number;
  rejectedByReason: Record<string, number>;
  /** Write units per second of the workers running now, each its own run's average. */
  wcu: number;
  /** Reject files with rows in them, by worker. */
  rejectFiles: Array<{ segment: string; path: string; rejected: number }>;
  /** --condition-failures files with rows in them, by worker; absent when no worker wrote one. */
  conditionFailuresFiles?: Array<{ segment: string; path: string; conditionFailed: number }>;
}

/** A worker is silent after this long without a word while it said it was running. */
export const SILENT_AFTER_MS = 3 * HEARTBEAT_MS;

export function loadStatus(
  count: number,
  docs: ReadonlyArray<WorkerDoc | undefined>,
  now: number,
  listedAt?: string,
  /** The load's table when known (status --table); else that of the worker started last. */
  ofTable?: string,
): LoadStatus {
  const workers: WorkerStatus[] = [];
  // A document of an earlier load that used the same listing path is not this load's.
  const ofListing = Array.from({ length: count }, (_, i) =>
    docs[i] !== undefined && (listedAt === undefined || docs[i]!.listedAt === listedAt) ? docs[i] : undefined,
  );
  const { table, identity } = loadTable(ofListing, ofTable);
  for (let i = 0; i < count; i++) {
    const mine = ofListing[i];
    const otherTable =
      mine === undefined
        ? undefined
        : mine.table !== table
          ? mine.table
          : identity !== undefined && mine.tableIdentity !== undefined && mine.tableIdentity !== identity
            ? `${mine.table} (${mine.tableIdentity}), deleted and created again since`
            : undefined;
    const doc = otherTable === undefined ? mine : undefined;
    const quietMs = doc ? Math.max(0, now - Date.parse(doc.updatedAt)) : undefined;
    let state: WorkerState = 'not started';
    if (doc) state = doc.state === 'running' && quietMs! > SILENT_AFTER_MS ? 'silent' : doc.state;
    workers.push({ segment: `${i}/${count}`, state, doc, quietMs, ...(otherTable !== undefined ? { otherTable } : {}) });
  }
  const sum = (field: 'written' | 'superseded' | 'rejected' | 'skippedExpired' | 'conditionFailed' | 'notWritten') =>
    workers.reduce((n, w) => n + (w.doc?.[field] ?? 0), 0);
  const rejectedByReason: Record<string, number> = {};
  for (const w of workers)
    for (const [reason, n] of Object.entries(w.doc?.rejectedByReason ?? {})) rejectedByReason[reason] = (rejectedByReason[reason] ?? 0) + n;
  const finished = workers.every((w) => w.state === 'finished');
  return {
    ...(table !== undefined ? { table } : {}),
    workers,
    finished,
    complete: finished && workers.every((w) => w.doc!.complete),
    // What each worker accounts for as its own: with a transform, the extra items of split rows too (each worker
    // reads every row of a division by key, and each item is one worker's).
    rows: workers.reduce((n, w) => n + (w.doc ? w.doc.rowsRead + (w.doc.splitWrites ?? 0) - w.doc.otherSegments : 0), 0),
    ...(workers.some((w) => w.doc?.skippedByTransform !== undefined)
      ? {
          skippedByTransform: workers.reduce((n, w) => n + (w.doc?.skippedByTransform ?? 0), 0),
          splitWrites: workers.reduce((n, w) => n + (w.doc?.splitWrites ?? 0), 0),
        }
      : {}),
    written: sum('written'),
    superseded: sum('superseded'),
    rejected: sum('rejected'),
    skippedExpired: sum('skippedExpired'),
    conditionFailed: sum('conditionFailed'),
    notWritten: sum('notWritten'),
    rejectedByReason,
    wcu: workers.reduce((n, w) => n + (w.state === 'running' ? w.doc!.wcu : 0), 0),
    rejectFiles: workers.flatMap((w) =>
      w.doc?.rejectsPath && w.doc.rejected > 0 ? [{ segment: w.segment, path: w.doc.rejectsPath, rejected: w.doc.rejected }] : [],
    ),
    ...conditionFailuresFiles(workers),
  };
}

/**
 * The load's table (`table`, else that of the worker started last: its run's start, then its last word), and
 * which table of that name: the identity the last started of its workers that knew it said.
 */
function loadTable(docs: ReadonlyArray<WorkerDoc | undefined>, table: string | undefined): { table: string | undefined; identity: string | undefined } {
  const byStart = docs
    .filter((doc): doc is WorkerDoc => doc !== undefined)
    .sort((a, b) => (a.startedAt !== b.startedAt ? (a.startedAt < b.startedAt ? 1 : -1) : a.updatedAt < b.updatedAt ? 1 : -1));
  const name = table ?? byStart[0]?.table;
  return { table: name, identity: byStart.find((doc) => doc.table === name && doc.tableIdentity !== undefined)?.tableIdentity };
}

function conditionFailuresFiles(workers: readonly WorkerStatus[]): Pick<LoadStatus, 'conditionFailuresFiles'> {
  const files = workers.flatMap((w) =>
    typeof w.doc?.conditionFailuresPath === 'string' && (w.doc.conditionFailed ?? 0) > 0
      ? [{ segment: w.segment, path: w.doc.conditionFailuresPath, conditionFailed: w.doc.conditionFailed! }]
      : [],
  );
  return files.length > 0 ? { conditionFailuresFiles: files } : {};
}

/** A worker's document as written by workerBoard.ts, checked as far as status relies on it. */
export function parseWorkerDoc(text: string, where: string, segment: string): WorkerDoc {
  const bad = (why: string) =>
    new LoaderError('INPUT_UNREADABLE', `${where} is not a worker state ddb-spread wrote (${why}); remove it and run that worker again`, { file: where });
  let doc: Partial<WorkerDoc> | null;
  try {
    doc = JSON.parse(text) as Partial<WorkerDoc> | null;
  } catch {
    throw bad('not JSON');
  }
  if (typeof doc !== 'object' || doc === null || doc.format !== WORKER_FORMAT || doc.version !== 1) throw bad(`no "format": "${WORKER_FORMAT}", version 1`);
  if (doc.segment !== segment) throw bad(`it is worker ${String(doc.segment)}'s, not ${segment}'s`);
  if (doc.state !== 'running' && doc.state !== 'finished' && doc.state !== 'stopped') throw bad('no "state"');
  if (typeof doc.updatedAt !== 'string' || Number.isNaN(Date.parse(doc.updatedAt))) throw bad('no "updatedAt"');
  for (const field of ['rowsRead', 'written', 'superseded', 'rejected', 'otherSegments', 'notWritten', 'wcu'] as const)
    if (typeof doc[field] !== 'number') throw bad(`no "${field}"`);
  if (typeof doc.complete !== 'boolean') throw bad('no "complete"');
  return doc as WorkerDoc;
}
