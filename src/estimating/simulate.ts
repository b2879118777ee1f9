import type { BackoffPolicy } from '../aws/backoff.js';
import { PartitionModel, type AdmitResult, type PartitionModelOptions } from './partitionModel.js';
import { parseIndexKeyId } from '../pacing/writeCost.js';
import { RateController, classifyThrottle, type RateControlOptions } from '../pacing/rateControl.js';
import { setOwn } from '../shared/ownRecord.js';

/**
 * A discrete-event simulation of a load against the partition model, for the estimate: the batches of
 * the planned order go through `concurrency` slots as `load` sends them, each call takes `latencyMs`,
 * pacing waits come from the same RateController `load` uses, refused writes are resent in the same slot
 * after the mean backoff delay, and the partition model decides what is refused. Batches are pushed one
 * at a time in order, so a file of any size is simulated in bounded memory.
 *
 * Pure and deterministic: simulated time only (ms from 0); the backoff delay is the mean of full jitter.
 */
export interface SimulationOptions {
  model: PartitionModelOptions;
  /** Pacing as `load` does it; undefined simulates a loader without rate control (backoff only). */
  rate?: RateControlOptions;
  /** Batches in flight. @default 8 */
  concurrency?: number;
  /** Round trip of one BatchWriteItem call. @default 20 */
  latencyMs?: number;
  backoff: BackoffPolicy;
  /** Sends per write before it is given up. @default 15 */
  maxAttempts?: number;
}

export interface SimWrite {
  /** The partition key value as written (with any shard suffix). */
  key: string;
  /** Write units of the put, table and GSIs. */
  units: number;
  /** Write units on the table's partition; `units` when left out (a table without GSIs). */
  tableUnits?: number;
  /** The GSI partition keys the put lands on (pacing/writeCost.ts's indexKeyId) and their units. */
  indexes?: Array<{ key: string; units: number }>;
}

export interface SimulationOutcome {
  seconds: number;
  /** Refusals by the model (a write refused twice counts twice). */
  throttledItems: number;
  retries: number;
  /** Writes still refused after maxAttempts sends. */
  givenUp: number;
  /** Accepted and refused write units per partition per whole second, from the model. */
  perSecond: Array<{ second: number; acceptedWcu: number[]; throttledWcu: number[] }>;
  partitionWcu: number;
  partitions: number;
  /** The same per GSI written, by index name: a GSI has partitions of its own. */
  indexes?: Record<string, Pick<SimulationOutcome, 'perSecond' | 'partitionWcu' | 'partitions'>>;
}

interface InFlight {
  writes: SimWrite[];
  attempt: number;
}

/**
 * keys: reserve on the keys' buckets now; table: then on the table's (after the key wait, as the pacer
 * does); send: the model admits; done: the answer is back (resend what was refused, or free the slot).
 * Every reservation runs when the clock reaches it, so the controller never sees time go backwards.
 */
type Event = { time: number; seq: number; kind: 'keys' | 'table' | 'send' | 'done'; call: InFlight; refused?: SimWrite[] };

export class LoadSimulator {
  readonly #model: PartitionModel;
  readonly #modelOptions: PartitionModelOptions;
  /** One partition model per GSI, created with its first write: a GSI has partitions of its own. */
  readonly #indexModels = new Map<string, PartitionModel>();
  readonly #controller: RateController | undefined;
  readonly #concurrency: number;
  readonly #latency: number;
  readonly #backoff: BackoffPolicy;
  readonly #maxAttempts: number;
  readonly #events: Event[] = [];
  #seq = 0;
  #clock = 0;
  #busy = 0;
  #end = 0;
  #throttled = 0;
  #retries = 0;
  #givenUp = 0;

  constructor(options: SimulationOptions) {
    this.#model = new PartitionModel(options.model);
    this.#modelOptions = options.model;
    this.#controller = options.rate ? new RateController(options.rate, 0) : undefined;
    this.#concurrency = options.concurrency ?? 8;
    this.#latency = options.latencyMs ?? 20;
    this.#backoff = options.backoff;
    this.#maxAttempts = options.maxAttempts ?? 15;
  }

  /** The next batch of the order: it is sent as soon as a slot is free (and pacing allows). */
  push(writes: SimWrite[]): void {
    if (writes.length === 0) return;
    while (this.#busy >= this.#concurrency) this.#step();
    this.#busy++;
    this.#schedule(this.#clock, { writes, attempt: 1 });
  }

  /** Runs every batch to its end; returns what happened. */
  finish(): SimulationOutcome {
    while (this.#events.length > 0) this.#step();
    const stats = this.#model.stats();
    const indexes: NonNullable<SimulationOutcome['indexes']> = {};
    for (const [name, model] of this.#indexModels) {
      const s = model.stats();
      setOwn(indexes, name, { perSecond: s.perSecond, partitionWcu: s.partitionWcu, partitions: s.partitions });
    }
    return {
      seconds: this.#end / 1000,
      throttledItems: this.#throttled,
      retries: this.#retries,
      givenUp: this.#givenUp,
      perSecond: stats.perSecond,
      partitionWcu: stats.partitionWcu,
      partitions: stats.partitions,
      ...(this.#indexModels.size > 0 ? { indexes } : {}),
    };
  }

  /** A send that may go at `ready`: paced first (keys, then table) when there is rate control. */
  #schedule(ready: number, call: InFlight): void {
    this.#push({ time: ready, seq: this.#seq++, kind: this.#controller ? 'keys' : 'send', call });
  }

  #step(): void {
    const event = this.#pop();
    if (!event) throw new Error('simulation has no event to run; this is a bug');
    this.#clock = Math.max(this.#clock, event.time);
    const now = this.#clock;
    if (event.kind === 'keys') {
      const wait = this.#controller!.reserveKeys(now, keyUnitsOf(event.call.writes));
      this.#push({ time: now + wait, seq: this.#seq++, kind: 'table', call: event.call });
      return;
    }
    if (event.kind === 'table') {
      let units = 0;
      for (const w of event.call.writes) units += w.units;
      const wait = this.#controller!.reserveTable(now, units);
      this.#push({ time: now + wait, seq: this.#seq++, kind: 'send', call: event.call });
      return;
    }
    if (event.kind === 'send') {
      const refused: SimWrite[] = [];
      let stored = 0;
      let refusedUnits = 0;
      let tableScope = false;
      event.call.writes.forEach((w) => {
        const r = this.#admit(now, w);
        if (r.accepted) stored += w.units;
        else {
          refused.push(w);
          refusedUnits += w.units;
          if (r.scope === 'table') tableScope = true;
        }
      });
      this.#throttled += refused.length;
      if (this.#controller) {
        const all = refused.length === event.call.writes.length;
        // What DynamoDB would say: a call refused whole carries a ThrottlingReason; a partial refusal does not.
        const reasons = all ? [tableScope ? 'TableWriteProvisionedThroughputExceeded' : 'TableWriteKeyRangeThroughputExceeded'] : [];
        const throttle =
          refused.length > 0
            ? classifyThrottle(
                event.call.writes.map((w) => w.key),
                refused.map((w) => w.key),
                reasons,
              )
            : undefined;
        this.#controller.record(now, { plannedUnits: stored, ...(throttle ? { throttle, throttledUnits: refusedUnits } : {}) });
      }
      this.#push({ time: now + this.#latency, seq: this.#seq++, kind: 'done', call: event.call, refused });
      return;
    }
    this.#end = Math.max(this.#end, now);
    const refused = event.refused ?? [];
    if (refused.length === 0) {
      this.#busy--;
      return;
    }
    if (event.call.attempt >= this.#maxAttempts) {
      this.#givenUp += refused.length;
      this.#busy--;
      return;
    }
    this.#retries++;
    const ceiling = Math.min(this.#backoff.capMs, this.#backoff.baseMs * 2 ** (event.call.attempt - 1));
    this.#schedule(now + ceiling / 2, { writes: refused, attempt: event.call.attempt + 1 });
  }

  /** Each GSI the write lands in first (own key, own units), then the table (its own units), as the partition proxy does. */
  #admit(now: number, w: SimWrite): AdmitResult {
    // Not `w.indexes ?? []`: an array made per write, twice per row (both simulations), without GSIs.
    if (w.indexes)
      for (const index of w.indexes) {
        const id = parseIndexKeyId(index.key);
        const name = id?.index ?? '';
        let model = this.#indexModels.get(name);
        if (!model) {
          model = new PartitionModel(this.#modelOptions);
          this.#indexModels.set(name, model);
        }
        const r = model.admitOne(now, id?.value ?? index.key, index.units);
        if (!r.accepted) return r;
      }
    return this.#model.admitOne(now, w.key, w.tableUnits ?? w.units);
  }

  // A binary min-heap of events by (time, seq): seq keeps equal times in the order they were made.
  #push(event: Event): void {
    const heap = this.#events;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i]!, heap[parent]!)) break;
      // Swapped through a variable: a destructuring swap made an array per step of every event.
      const moved = heap[i]!;
      heap[i] = heap[parent]!;
      heap[parent] = moved;
      i = parent;
    }
  }

  #pop(): Event | undefined {
    const heap = this.#events;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < heap.length && earlier(heap[l]!, heap[min]!)) min = l;
        if (r < heap.length && earlier(heap[r]!, heap[min]!)) min = r;
        if (min === i) break;
        const moved = heap[i]!;
        heap[i] = heap[min]!;
        heap[min] = moved;
        i = min;
      }
    }
    return top;
  }
}

/** The partition keys a batch spends units on: each table key its table units, each GSI key its own. */
function keyUnitsOf(writes: readonly SimWrite[]): ReadonlyArray<{ key: string; units: number }> {
  // A table without GSIs: each write is already its key and its units, so no copy is made per batch.
  if (writes.every((w) => w.tableUnits === undefined && w.indexes === undefined)) return writes;
  const out: Array<{ key: string; units: number }> = [];
  for (const w of writes) {
    out.push({ key: w.key, units: w.tableUnits ?? w.units });
    for (const index of w.indexes ?? []) out.push(index);
  }
  return out;
}

function earlier(a: Event, b: Event): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

/**
 * Heat of each partition over time: accepted plus refused write units per bucket, as a share of what the
 * partition sustains in that time (1 = full). At most `maxBuckets` buckets of whole seconds.
 */
export function heatOf(
  outcome: Pick<SimulationOutcome, 'perSecond' | 'partitionWcu' | 'partitions'>,
  maxBuckets = 60,
): { bucketSeconds: number; partitions: number[][] } {
  const seconds = outcome.perSecond.length;
  const bucketSeconds = Math.max(1, Math.ceil(seconds / maxBuckets));
  const buckets = Math.ceil(seconds / bucketSeconds);
  const partitions = Array.from({ length: outcome.partitions }, () => new Array<number>(buckets).fill(0));
  for (const s of outcome.perSecond) {
    const b = Math.floor(s.second / bucketSeconds);
    for (let p = 0; p < outcome.partitions; p++) partitions[p]![b]! += (s.acceptedWcu[p] ?? 0) + (s.throttledWcu[p] ?? 0);
  }
  const capacity = outcome.partitionWcu * bucketSeconds;
  for (const row of partitions) for (let b = 0; b < row.length; b++) row[b] = capacity > 0 ? row[b]! / capacity : 0;
  return { bucketSeconds, partitions };
}

/**
 * The highest rate at which no partition would be asked for more than it sustains, scaling the rate
 * simulated (`simulatedWcu`) by the busiest partition-second of demand (accepted + refused units).
 * An approximation: it assumes the order's shares per partition stay as they were at the simulated rate.
 */
export function throttleFreeRate(outcome: Pick<SimulationOutcome, 'perSecond' | 'partitionWcu' | 'partitions' | 'indexes'>, simulatedWcu: number): number {
  // The table's partitions and each GSI's: the first to fill bounds the rate.
  let rate = partitionFreeRate(outcome, simulatedWcu);
  for (const index of Object.values(outcome.indexes ?? {})) rate = Math.min(rate, partitionFreeRate(index, simulatedWcu));
  return rate;
}

function partitionFreeRate(outcome: Pick<SimulationOutcome, 'perSecond' | 'partitionWcu' | 'partitions'>, simulatedWcu: number): number {
  let peak = 0;
  // The last second is partial; skip it unless it is the only one.
  const seconds = outcome.perSecond.length > 1 ? outcome.perSecond.slice(0, -1) : outcome.perSecond;
  for (const s of seconds) {
    for (let p = 0; p < outcome.partitions; p++) peak = Math.max(peak, (s.acceptedWcu[p] ?? 0) + (s.throttledWcu[p] ?? 0));
  }
  if (peak <= 0) return simulatedWcu;
  return (simulatedWcu * outcome.partitionWcu) / peak;
}
