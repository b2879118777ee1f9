import type { PlannedWrite } from '../shared/types.js';

export interface CapacityReportsOptions {
  /** Calls that always ask, so a mismatch with the plan shows before any call goes unasked. @default 64 */
  firstCalls?: number;
  /** After those, one call in this many asks, while every answer matched its plan. @default 16 */
  every?: number;
}

/** What a load's calls asked for and what was counted in their place. */
export interface CapacityReportsSummary {
  /** BatchWriteItem calls made, answered or not. */
  calls: number;
  /**
   * Of them, the calls that asked for ReturnConsumedCapacity and were answered: a call refused whole (a
   * throttle, an error) asked but reported nothing, and stored nothing to count.
   */
  asked: number;
  /** Write units counted as planned for calls that did not ask (part of the load's consumed units). */
  inferredUnits: number;
  /** True once an answer differed from the plan: from then on every call asked. */
  everyCall: boolean;
}

/**
 * Which BatchWriteItem calls ask DynamoDB for ConsumedCapacity (INDEXES), and what a call that did not
 * ask consumed.
 *
 * The plan's cost of a put (src/pacing/writeCost.ts) is exact for an item written where none was: table
 * units from its size, and the units of each GSI it lands in. Each answer is checked against it. While
 * every answer matches, asking on every call tells nothing new, and it is not free on every endpoint:
 * DynamoDB Local spends about 30% more CPU on a call that asks (bench: 29-30 s against 18-21 s per 200k
 * rows), and on a 2-core machine that CPU is the load's speed. So the first `firstCalls` calls ask, then
 * one in `every`; an unasked call's stored writes count as planned. The first answer that differs (an
 * overwrite of a larger item, a GSI key that moved, a delete, an answer without ConsumedCapacity) makes
 * every later call ask, so rate control learns the real cost from every answer again (its cost ratio
 * moves only on answers that report), and the load's consumed units are DynamoDB's own from then on.
 *
 * Between two asked calls at most `every - 1` calls go unasked: a table whose cost drifts from the plan
 * on every call is found within that many calls. Drift confined to calls that do not ask (overwrites of
 * larger items that only ever fall between the asked calls) is not seen, and counts as planned; calls
 * that hold a delete, whose plan is a guess, always ask.
 *
 * Pure: no clock, no I/O; one instance per load.
 */
export class CapacityReports {
  readonly #costOf: (write: PlannedWrite) => number;
  readonly #firstCalls: number;
  readonly #every: number;
  #calls = 0;
  #asked = 0;
  #inferredUnits = 0;
  #everyCall = false;

  constructor(costOf: (write: PlannedWrite) => number, options: CapacityReportsOptions = {}) {
    this.#costOf = costOf;
    this.#firstCalls = options.firstCalls ?? 64;
    this.#every = Math.max(1, options.every ?? 16);
  }

  /**
   * Whether the next call, of `writes`, asks for ConsumedCapacity; counts the call. A call holding a
   * delete always asks: a delete is planned at 1 WCU, and DynamoDB charges the size of the item it
   * removes (and its GSI entries), which no plan knows; counted as planned, deletes of large items that
   * fell only into unasked calls would never be seen (test/integration/capacityReportsAttack.test.ts).
   */
  ask(writes: readonly PlannedWrite[] = []): boolean {
    const n = this.#calls++;
    const asks = this.#everyCall || n < this.#firstCalls || (n - this.#firstCalls) % this.#every === this.#every - 1 || writes.some((w) => w.op === 'delete');
    return asks;
  }

  /**
   * What an asked call came back with: the units DynamoDB reported (undefined when the answer held none)
   * for the writes it stored. A call that stored nothing says nothing about the plan.
   */
  answered(stored: readonly PlannedWrite[], consumedUnits: number | undefined): void {
    this.#asked++;
    if (stored.length === 0 || this.#everyCall) return;
    const planned = this.planned(stored);
    // Units are whole numbers per item; DynamoDB's doubles add up exactly at these sizes.
    if (consumedUnits === undefined || Math.abs(consumedUnits - planned) > 1e-6 * Math.max(1, planned)) this.#everyCall = true;
  }

  /** The units an unasked call's stored writes consumed by the plan, counted as consumed. */
  inferred(stored: readonly PlannedWrite[]): number {
    const units = this.planned(stored);
    this.#inferredUnits += units;
    return units;
  }

  planned(writes: readonly PlannedWrite[]): number {
    let units = 0;
    for (const w of writes) units += this.#costOf(w);
    return units;
  }

  summary(): CapacityReportsSummary {
    return { calls: this.#calls, asked: this.#asked, inferredUnits: this.#inferredUnits, everyCall: this.#everyCall };
  }
}
