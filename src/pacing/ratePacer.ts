import { setTimeout as sleepFor } from 'node:timers/promises';
import { classifyThrottle, type RateChange, type RateController } from './rateControl.js';
import type { KeyUnits } from './writeCost.js';
import type { PlannedWrite } from '../shared/types.js';
import type { SendPacer, SendReport } from './sendPacer.js';

export interface RatePacerOptions {
  controller: RateController;
  /** Write units a write costs by the plan: the table and every GSI it lands in. */
  costOf: (write: PlannedWrite) => number;
  /**
   * The partition keys a write spends units on, each with its own units: the table's key its table units,
   * each GSI key its index units (a GSI has partitions of its own). @default the table's key with the whole cost
   */
  keysOf?: (write: PlannedWrite) => KeyUnits[];
  /** Monotonic clock in ms. @default performance.now */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  onChange?: (change: RateChange) => void;
}

/**
 * The I/O side of rate control: before each BatchWriteItem call it waits for the partition keys' buckets
 * (the table's keys by their table units, each GSI key by its index units),
 * then for the table's (so a batch held back by a hot key does not sit on table capacity), and after each
 * call it tells the controller what was stored, what it cost and where any throttle pointed.
 * Sends are never cancelled here: a load that stops still writes what it has read.
 */
export class RatePacer implements SendPacer {
  readonly #controller: RateController;
  readonly #costOf: (write: PlannedWrite) => number;
  readonly #keysOf: (write: PlannedWrite) => KeyUnits[];
  /** Only the table's key, with the whole cost: summed without a KeyUnits array per write. */
  readonly #tableKeyOnly: boolean;
  /** The units of one send per partition key, reused from send to send (sends are paced one at a time). */
  readonly #perKey = new Map<string, number>();
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #onChange: (change: RateChange) => void;

  constructor(options: RatePacerOptions) {
    this.#controller = options.controller;
    this.#costOf = options.costOf;
    this.#keysOf = options.keysOf ?? ((w) => [{ key: w.partitionId, units: this.#costOf(w) }]);
    this.#tableKeyOnly = options.keysOf === undefined;
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? ((ms) => sleepFor(ms));
    this.#onChange = options.onChange ?? (() => undefined);
  }

  get controller(): RateController {
    return this.#controller;
  }

  beforeSend(writes: readonly PlannedWrite[]): Promise<void> | undefined {
    let units = 0;
    const perKey = this.#perKey;
    perKey.clear();
    for (const w of writes) {
      const cost = this.#costOf(w);
      units += cost;
      if (this.#tableKeyOnly) perKey.set(w.partitionId, (perKey.get(w.partitionId) ?? 0) + cost);
      else for (const k of this.#keysOf(w)) perKey.set(k.key, (perKey.get(k.key) ?? 0) + k.units);
    }
    const keyWait = this.#controller.reserveKeyUnits(this.#now(), perKey);
    perKey.clear();
    // Most sends wait for nothing: no promise then, so a send costs no extra turns of the microtask queue.
    if (keyWait > 0) return this.#sleep(keyWait).then(() => this.#reserveTable(units));
    return this.#reserveTable(units);
  }

  /** Reserves `units` on the table's budget once the keys' wait is over; the wait, if any. */
  #reserveTable(units: number): Promise<void> | undefined {
    const tableWait = this.#controller.reserveTable(this.#now(), units);
    return tableWait > 0 ? this.#sleep(tableWait) : undefined;
  }

  afterSend(report: SendReport): void {
    let plannedUnits = 0;
    for (const w of report.stored) plannedUnits += this.#costOf(w);
    // A throttle whose reason names an index (IndexWrite...) points at the refused writes' GSI keys.
    const keysOf = report.throttleReasons.some((r) => r.startsWith('Index'))
      ? (w: PlannedWrite) => {
          const keys = this.#keysOf(w)
            .slice(1)
            .map((k) => k.key);
          return keys.length > 0 ? keys : [w.partitionId];
        }
      : (w: PlannedWrite) => [w.partitionId];
    const throttle =
      report.throttled.length > 0 ? classifyThrottle(report.sent.flatMap(keysOf), report.throttled.flatMap(keysOf), report.throttleReasons) : undefined;
    let throttledUnits = 0;
    for (const w of report.throttled) throttledUnits += this.#costOf(w);
    // A call answered neither stored nor throttled anything: it failed without an answer to count
    // (5xx, reset, timeout, lost reply). Retried by the writer; never a rate signal.
    const error = report.sent.length > 0 && report.stored.length === 0 && report.throttled.length === 0;
    const changes = this.#controller.record(this.#now(), {
      plannedUnits,
      throttledUnits,
      ...(error ? { error } : {}),
      ...(report.consumedUnits !== undefined && report.stored.length > 0 ? { consumedUnits: report.consumedUnits } : {}),
      ...(throttle ? { throttle } : {}),
    });
    for (const change of changes) this.#onChange(change);
  }
}
