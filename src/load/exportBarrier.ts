import { setTimeout as sleep } from 'node:timers/promises';
import type { S3Access } from '../reading/s3Part.js';
import { LoaderError } from '../shared/errors.js';
import { parseWorkerDoc } from './loadStatus.js';
import type { Segment } from './segment.js';
import { localWorkerStore, rateBeatMs, s3WorkerStore, workerDocPath, type WorkerDoc, type WorkerDocStore } from './workerBoard.js';

/**
 * The barrier between the exports of a chain divided by part (shares.ts): an item's record in export k+1
 * may be in another worker's part than its record in export k, and must land after it. So before a worker
 * hands on any row of export k+1 it settles every row it read of exports up to k (the stages empty the
 * order and the batcher, the dispatcher drains, the checkpoint is saved), says so in its document beside
 * the listing (`settledExports`), and waits until every other worker's document says the same.
 *
 * A worker not started yet, silent (killed, being restarted by its Job) or stopped on what a retry fixes
 * (a signal, an unreachable endpoint) is waited for: it will come back and settle. One stopped on what no
 * retry fixes (a bad option, a changed input) will not: the waiting worker stops, its checkpoint saved.
 * Not at first sight: workers restarted together after a fix each find the others' last documents, and
 * a peer's word that it stopped is taken only once it has stood a few beats unchanged (STOP_GRACE_POLLS).
 */

/**
 * Stop codes no run of the same worker gets past (their exit codes are the permanent ones of
 * cli/exitCodes.ts; a unit test keeps the two lists in step). Any other stop is waited out.
 */
export const PERMANENT_STOP_CODES: ReadonlySet<string> = new Set([
  'INVALID_OPTION',
  'INPUT_NOT_FOUND',
  'INPUT_UNREADABLE',
  'INPUT_CHANGED',
  'INPUT_HEADER',
  'TEMP_FILES',
  'TABLE_NOT_FOUND',
  'ACCESS_DENIED',
  'CREDENTIALS_MISSING',
  'ENDPOINT_NOT_DYNAMODB',
  'REJECTS_UNWRITABLE',
  'MANIFEST_UNWRITABLE',
  'CONDITION_FAILURES_UNWRITABLE',
  'MANIFEST_INVALID',
  'REPORT_UNWRITABLE',
  'CHECKPOINT_MISMATCH',
  'CHECKPOINT_INVALID',
  'CHECKPOINT_UNWRITABLE',
  'MAX_REJECTS_REACHED',
  'ORDER_NOT_GROUPED',
  'WORKER_DUPLICATED',
  // A person raises --max-cost and runs the worker again: the same run never gets past it.
  'COST_LIMIT_EXCEEDED',
  'COST_LIMIT_REACHED',
  'BUG',
]);

export interface PeerDoc {
  /** "i/N". */
  segment: string;
  /** Its document; undefined: none yet (not started). */
  doc: WorkerDoc | undefined;
}

export type BarrierVerdict =
  | { go: true }
  | {
      go: false;
      waitingFor: string[];
      /** Those waited for that stopped on what no retry fixes, with the time of their last word. */
      stopped: Array<{ segment: string; code: string; updatedAt: string }>;
    };

/** Reads of the peers' documents a permanent stop must stand unchanged through (and at least STOP_GRACE_MS) before it is believed. */
const STOP_GRACE_POLLS = 5;
const STOP_GRACE_MS = 2_000;

/** How many exports, from the chain's first, a worker's document says it has settled: every one once it finished. */
export function settledOf(doc: WorkerDoc): number {
  return doc.state === 'finished' ? Infinity : (doc.settledExports ?? 0);
}

/**
 * Whether a worker may start export `next` (0-based) of the chain: every peer's document of this load
 * (its listedAt) says it has settled the `next` exports before it. Pure.
 */
export function barrierVerdict(peers: readonly PeerDoc[], listedAt: string, next: number, table?: string): BarrierVerdict {
  const waitingFor: string[] = [];
  const stopped: Array<{ segment: string; code: string; updatedAt: string }> = [];
  for (const { segment, doc } of peers) {
    // A document of an earlier load at the same listing path says nothing of what this one settled: another
    // listing, or the same listing loaded again into another table (the Job run again). A worker of this
    // listing stopped for good is still one the load cannot go on without, whatever table it was given.
    const ours = doc !== undefined && doc.listedAt === listedAt ? doc : undefined;
    const sameTable = ours !== undefined && (table === undefined || ours.table === table);
    if (ours && sameTable && settledOf(ours) >= next) continue;
    waitingFor.push(segment);
    if (ours?.state === 'stopped' && ours.stopCode !== undefined && PERMANENT_STOP_CODES.has(ours.stopCode))
      stopped.push({ segment, code: ours.stopCode, updatedAt: ours.updatedAt });
  }
  return waitingFor.length === 0 ? { go: true } : { go: false, waitingFor, stopped };
}

export interface BarrierOptions {
  segment: Segment;
  listing: string;
  listedAt: string;
  /** The table this load writes: a peer's document of another table is another load's. */
  table: string;
  s3: () => Promise<S3Access>;
  /** The chain's exports' names, in chain order, for messages. */
  exportNames: readonly string[];
  /** The board's beat: the peers' documents are read at most this often while waiting (and at most every 2 s). */
  beatMs: number;
  /** Writes this worker's document saying it settled the exports before `next`. */
  publish: (settled: number) => Promise<void>;
  /** Told once each time the workers waited for change, and with undefined once it waits no more. */
  onWait: (message: string | undefined, waiting?: { next: number; waitingFor: string[] }) => void;
  /** The load is stopping: wait no longer. */
  stopping: () => boolean;
  signal?: AbortSignal | undefined;
  /** How long a peer's permanent stop must stand unchanged before it is believed; default STOP_GRACE_POLLS reads, at least STOP_GRACE_MS. */
  stopGraceMs?: number | undefined;
}

/** The barrier's I/O: this worker's word, and the peers' documents read until they agree. */
export class ExportBarrier {
  readonly #o: BarrierOptions;
  readonly #peers: Array<{ segment: string; store: WorkerDocStore }>;
  /** A peer's last document read: a read that fails for a moment keeps what it said before. */
  readonly #known = new Map<string, WorkerDoc | undefined>();
  /** A peer's permanent stop: its last word, and when this worker first read it. */
  readonly #stopSeen = new Map<string, { updatedAt: string; at: number }>();

  constructor(options: BarrierOptions) {
    this.#o = options;
    const { segment, listing, s3 } = options;
    this.#peers = Array.from({ length: segment.count }, (_, index) => index)
      .filter((index) => index !== segment.index)
      .map((index) => {
        const path = workerDocPath(listing, { index, count: segment.count });
        return { segment: `${index}/${segment.count}`, store: path.startsWith('s3://') ? s3WorkerStore(path, s3) : localWorkerStore(path) };
      });
  }

  /**
   * Called with every row of exports before `next` settled: says so, then waits until every other worker
   * has said it too. Returns at once when the load is stopping; throws PEER_STOPPED when a worker waited
   * for has stopped on what no retry fixes.
   */
  async cross(next: number): Promise<void> {
    await this.#o.publish(next);
    const pollMs = Math.min(this.#o.beatMs, rateBeatMs(this.#o.segment.count));
    let said = '';
    try {
      await this.#wait(next, pollMs, (message, waitingFor) => {
        if (message !== said) this.#o.onWait(message, { next, waitingFor });
        said = message;
      });
    } finally {
      if (said !== '') this.#o.onWait(undefined);
    }
  }

  async #wait(next: number, pollMs: number, waiting: (message: string, waitingFor: string[]) => void): Promise<void> {
    for (;;) {
      const verdict = barrierVerdict(await this.#read(), this.#o.listedAt, next, this.#o.table);
      if (verdict.go) return;
      const given = this.#givenUp(verdict.stopped, pollMs);
      if (given) throw this.#peerStopped(next, given);
      if (this.#o.stopping()) return;
      waiting(this.#waitMessage(next, verdict.waitingFor), verdict.waitingFor);
      try {
        await sleep(pollMs, undefined, this.#o.signal ? { signal: this.#o.signal } : {});
      } catch {
        // Aborted: the loop sees the load stopping.
      }
    }
  }

  /**
   * A peer stopped on what no retry fixes, once its stop has stood unchanged (the same last word) through
   * the grace: one started again meanwhile writes a new document, and the wait goes on.
   */
  #givenUp(stopped: ReadonlyArray<{ segment: string; code: string; updatedAt: string }>, pollMs: number): { segment: string; code: string } | undefined {
    const now = Date.now();
    const graceMs = this.#o.stopGraceMs ?? Math.max(STOP_GRACE_MS, STOP_GRACE_POLLS * pollMs);
    for (const peer of stopped) {
      const seen = this.#stopSeen.get(peer.segment);
      if (seen?.updatedAt !== peer.updatedAt) this.#stopSeen.set(peer.segment, { updatedAt: peer.updatedAt, at: now });
      else if (now - seen.at >= graceMs) return peer;
    }
    return undefined;
  }

  async #read(): Promise<PeerDoc[]> {
    return Promise.all(
      this.#peers.map(async ({ segment, store }) => {
        try {
          const text = await store.read();
          this.#known.set(segment, text === undefined ? undefined : parseWorkerDoc(text, store.where, segment));
        } catch {
          // Unreadable now (S3 unreachable for a moment, a document half replaced by hand): what it said last.
        }
        return { segment, doc: this.#known.get(segment) };
      }),
    );
  }

  #name(index: number): string {
    const name = this.#o.exportNames[index];
    return `export ${index + 1} of ${this.#o.exportNames.length}${name ? ` (${name})` : ''}`;
  }

  /** The exports before `next`, for messages. */
  #before(next: number): string {
    return next === 1 ? this.#name(0) : `exports 1 to ${next} of the chain`;
  }

  #waitMessage(next: number, waitingFor: readonly string[]): string {
    const workers = waitingFor.length === 1 ? `worker ${waitingFor[0]}` : `workers ${waitingFor.join(', ')}`;
    return `waiting for ${workers} to write ${this.#before(next)} before reading ${this.#name(next)}: an item's record in a later export must land after its record in an earlier one`;
  }

  #peerStopped(next: number, stopped: { segment: string; code: string }): LoaderError {
    const self = `${this.#o.segment.index}/${this.#o.segment.count}`;
    return new LoaderError(
      'PEER_STOPPED',
      `worker ${stopped.segment} stopped (${stopped.code}) before it had written ${this.#before(next)}, and this worker must not read ${this.#name(next)} until it has. This worker wrote every row it read before it and saved its checkpoint: fix what stopped worker ${stopped.segment} (its output says what; ddb-spread status ${this.#o.listing} names it), run it again, then run worker ${self} again`,
    );
  }
}
