import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Segment } from '../load/segment.js';
import { SILENT_AFTER_MS } from '../load/loadStatus.js';
import { nextTarget } from '../load/sharedRate.js';
import { heardFrom, type Heard } from '../load/rateSharing.js';
import type { WorkerDocStore } from '../load/workerBoard.js';

/**
 * One read rate (--rcu, or auto's share of the whole table) shared by the workers of a verify
 * (--segment i/N with --listing), as a load's workers share --total-wcu (load/sharedRate.ts, whose pure
 * rule this uses): each worker writes a small state document beside the listing (its state, its target,
 * its heartbeat; counts only, no row data), reads the others' at each beat, and sets its read rate to its
 * part: an equal part among the live workers, lowered at once, raised only into what the others' published
 * targets leave free. A worker that finishes frees its part for the others' next beat; one killed keeps its
 * part until it has been silent SILENT_AFTER_MS (as `ddb-spread status` counts a load's worker silent).
 */
export interface VerifyWorkerDoc {
  format: typeof VERIFY_WORKER_FORMAT;
  version: 1;
  /** "i/N". */
  segment: string;
  state: 'running' | 'finished' | 'stopped';
  table: string;
  host: string;
  pid: number;
  /** Random, one per process. */
  runId: string;
  startedAt: string;
  updatedAt: string;
  /** The read rate of all the workers together. */
  totalRcu: number;
  /** This worker's part of it now. */
  targetRcu: number;
  /** Read units this worker's reads consumed so far (this run). */
  consumedRcu: number;
}

export const VERIFY_WORKER_FORMAT = 'ddb-spread-verify-worker';

/** Where verify worker `segment` of the workers sharing `listing` writes its document (apart from the load's workers'). */
export function verifyWorkerDocPath(listing: string, segment: Segment): string {
  return `${listing}.verify-worker-${segment.index}-of-${segment.count}.json`;
}

/** A peer's document, or undefined when it is none (not written yet, another format, unparseable). Pure. */
export function parseVerifyWorkerDoc(text: string | undefined): VerifyWorkerDoc | undefined {
  if (text === undefined) return undefined;
  try {
    const doc = JSON.parse(text) as Partial<VerifyWorkerDoc>;
    if (typeof doc !== 'object' || doc === null || doc.format !== VERIFY_WORKER_FORMAT) return undefined;
    if (typeof doc.targetRcu !== 'number' || typeof doc.updatedAt !== 'string' || typeof doc.state !== 'string') return undefined;
    return doc as VerifyWorkerDoc;
  } catch {
    return undefined;
  }
}

/**
 * How a peer's silence is judged: `ages`, how long ago each peer was last heard from by this worker's own
 * clock (SharedReadRate's heardFrom: its document changed since); without them, by the time its document
 * says it was written against `wallMs`, as a document read for the first time is dated.
 */
export interface PeerClock {
  table: string;
  wallMs: number;
  ages?: ReadonlyArray<number | undefined>;
}

/**
 * This worker's next part of `total`, from the documents of its peers (undefined: none seen yet): only
 * those of the same table, running, heard from within SILENT_AFTER_MS count as live. Pure.
 */
export function nextReadTarget(
  total: number,
  mine: number | undefined,
  peers: ReadonlyArray<VerifyWorkerDoc | undefined>,
  how: PeerClock & { workers: number },
): number {
  return nextTarget(
    total,
    mine,
    livePeers(peers, how).map((d) => d.targetRcu),
    how.workers,
  );
}

/** The peers that count: of the same table, running, heard from within SILENT_AFTER_MS. Pure. */
export function livePeers(peers: ReadonlyArray<VerifyWorkerDoc | undefined>, how: PeerClock): VerifyWorkerDoc[] {
  return peers.filter((d, i): d is VerifyWorkerDoc => {
    if (d === undefined || d.table !== how.table || d.state !== 'running') return false;
    const age = how.ages?.[i] ?? how.wallMs - Date.parse(d.updatedAt);
    return age <= SILENT_AFTER_MS;
  });
}

/** Beats a worker that joined with no room waits for the others to make it, before it reads at all. */
const JOIN_BEATS = 5;

export interface SharedReadRateOptions {
  total: number;
  table: string;
  segment: Segment;
  /** This worker's document, and the peers' (every other index of N), each with its store. */
  own: WorkerDocStore;
  peers: readonly WorkerDocStore[];
  beatMs: number;
  /** Sets the reader's rate (TableReader.setRate). */
  setRate: (rcu: number) => void;
  consumed: () => number;
  warn: (message: string) => void;
  /** A monotonic clock, ms (performance.now): when a peer was last heard from is measured on it, never on the peer's clock. */
  now?: () => number;
}

/**
 * The beat of one verify worker: its part taken before its first read, then at every beat its document
 * written and the others' read. A write or read that fails is told once and tried again at the next beat:
 * it never stops the verify. A peer whose document cannot be read keeps the last one read.
 */
export class SharedReadRate {
  readonly #o: SharedReadRateOptions;
  readonly #runId = randomBytes(8).toString('hex');
  readonly #startedAt = new Date().toISOString();
  readonly #known = new Map<number, VerifyWorkerDoc | undefined>();
  /** When each peer was last heard from by this worker's clock (its document changed): as a load's workers judge (load/rateSharing.ts). */
  readonly #heard = new Map<number, Heard>();
  #firstRead = true;
  #mine: number | undefined;
  /** An equal part among the live workers at the last beat: what this worker is owed. */
  #owed: number;
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();
  #warned = false;

  constructor(options: SharedReadRateOptions) {
    this.#o = options;
    this.#owed = options.total / options.segment.count;
  }

  /** This worker's part now (before start: undefined). */
  get target(): number | undefined {
    return this.#mine;
  }

  /** Takes this worker's part and publishes it at once, so the others make room at their next beat. */
  async start(): Promise<void> {
    await this.#adjust();
    await this.#post('running');
    // Joined with no room (the others took the part of a worker still reading its input): wait a few beats
    // for them to give it back, as a load's worker does (load/rateSharing.ts), rather than reserve a call's
    // units at the least part, whose wait (a large item at 2% of a part: minutes) would outlast the room.
    for (let beat = 0; beat < JOIN_BEATS && this.#mine! < 0.9 * Math.min(this.#owed, this.#o.total / this.#o.segment.count); beat++) {
      await new Promise((resolve) => setTimeout(resolve, this.#o.beatMs));
      await this.#adjust();
      await this.#post('running');
    }
    this.#timer = setInterval(() => void this.#beat(), this.#o.beatMs);
    this.#timer.unref();
  }

  /** The last word: its part freed for the others. */
  async end(state: 'finished' | 'stopped'): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    // After a beat in flight: a 'running' written after the last word would keep its part from the others.
    this.#chain = this.#chain.then(() => this.#post(state));
    await this.#chain;
  }

  #beat(): Promise<void> {
    // One beat at a time, and none after the last word.
    this.#chain = this.#chain.then(async () => {
      if (this.#timer === undefined) return;
      await this.#adjust();
      if (this.#timer === undefined) return;
      await this.#post('running');
    });
    return this.#chain;
  }

  async #adjust(): Promise<void> {
    const docs = await Promise.all(
      this.#o.peers.map(async (store, i) => {
        try {
          this.#known.set(i, parseVerifyWorkerDoc(await store.read()));
        } catch (error) {
          this.#tell(`cannot read ${store.where} (${(error as Error).message})`);
        }
        return this.#known.get(i);
      }),
    );
    // A peer is silent when its document has not changed for SILENT_AFTER_MS by this worker's own clock: the
    // time it writes in it is its own clock's (60 s behind, a live peer looked silent and its part was taken;
    // ahead, a killed one kept its part for as long).
    const at = (this.#o.now ?? (() => performance.now()))();
    const wallMs = Date.now();
    const ages = docs.map((d, i) => {
      if (d === undefined) return undefined;
      const heard = heardFrom(this.#heard.get(i), d.updatedAt, { at, wall: wallMs, first: this.#firstRead });
      this.#heard.set(i, heard);
      return at - heard.at;
    });
    this.#firstRead = false;
    const how = { table: this.#o.table, workers: this.#o.segment.count, wallMs, ages };
    this.#owed = this.#o.total / (livePeers(docs, how).length + 1);
    const next = nextReadTarget(this.#o.total, this.#mine, docs, how);
    if (this.#mine === undefined || Math.abs(next - this.#mine) > 1e-6) this.#o.setRate(next);
    this.#mine = next;
  }

  async #post(state: VerifyWorkerDoc['state']): Promise<void> {
    const doc: VerifyWorkerDoc = {
      format: VERIFY_WORKER_FORMAT,
      version: 1,
      segment: `${this.#o.segment.index}/${this.#o.segment.count}`,
      state,
      table: this.#o.table,
      host: hostname(),
      pid: process.pid,
      runId: this.#runId,
      startedAt: this.#startedAt,
      updatedAt: new Date().toISOString(),
      totalRcu: this.#o.total,
      targetRcu: this.#mine ?? 0,
      consumedRcu: this.#o.consumed(),
    };
    try {
      await this.#o.own.write(`${JSON.stringify(doc, null, 2)}\n`);
    } catch (error) {
      this.#tell(
        `cannot write this verify worker's state to ${this.#o.own.where} (${(error as Error).message}); the other workers keep its part until it has been silent ${SILENT_AFTER_MS / 1000} s`,
      );
    }
  }

  #tell(message: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#o.warn(message);
  }
}
