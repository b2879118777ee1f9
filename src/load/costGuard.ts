import { LoaderError } from '../shared/errors.js';
import { formatBytes, formatCount, formatPrice } from '../shared/format.js';

/**
 * --max-cost: what a load may spend on write units, counted from the start of the whole load (a resumed
 * load's earlier units included, as its checkpoint counted them), so a resume goes on only under a higher
 * limit. Pure: the dispatcher asks it before each batch is sent and tells it what was sent and booked.
 *
 * Before the first batch of a run is sent, the rows planned so far price the whole input: their write
 * units per byte of row text times the input's bytes. That needs no second read, and it is as good as the
 * rows are like the rest of the input; a compressed input's bytes are its compressed size, so there the
 * prediction is low by the compression ratio (a refusal is then never wrong, only late), and an input of
 * unknown size (stdin) is not predicted at all. The stop during the load does not depend on it. An estimate
 * of the same input (`maxCostEstimate`: its write units, every row counted) is taken instead of the sample.
 *
 * During the load it stops before the units it counts would pass the limit: those DynamoDB reported as
 * consumed (LoadTally's consumedWcu, as the load counts them), plus the planned units of batches in flight,
 * plus the next batch's. No batch is sent past it; the batches in flight finish.
 */
export class CostGuard {
  readonly #maxUsd: number;
  readonly #usdPerUnit: number;
  readonly #totalBytes: number | undefined;
  readonly #pricing: string;
  readonly #estimate: { writeUnits: number; source: string } | undefined;
  /** Planned units of batches sent and not yet booked. */
  #inFlight = 0;
  /** Rows planned before the first send of this run: their units and the bytes of their text. */
  #sampleUnits = 0;
  #sampleBytes = 0;
  #sampleRows = 0;
  #predicted = false;

  constructor(options: {
    maxUsd: number;
    usdPerUnit: number;
    totalBytes: number | undefined;
    pricing: string;
    /** The write units an estimate of this input counted (ddb-spread estimate --json, writeUnits.total), and where it is. */
    estimate?: { writeUnits: number; source: string } | undefined;
  }) {
    this.#estimate = options.estimate;
    this.#maxUsd = options.maxUsd;
    this.#usdPerUnit = options.usdPerUnit;
    this.#totalBytes = options.totalBytes;
    this.#pricing = options.pricing;
  }

  /** Whether the guard still samples planned rows (until the first send of the run). */
  get sampling(): boolean {
    return !this.#predicted;
  }

  /**
   * Before the first send: a write's units (table and GSIs), and a row's bytes of text (a row read once, however
   * many writes it made or none): the units per byte of input the whole input is priced by.
   */
  sample(units: number, bytes: number): void {
    this.#sampleUnits += units;
    this.#sampleBytes += bytes;
    if (bytes > 0) this.#sampleRows++;
  }

  /** USD of `units` write units. */
  usd(units: number): number {
    return units * this.#usdPerUnit;
  }

  /**
   * Asked before a batch of `units` planned units is sent, with the units consumed so far (this run's and the
   * earlier runs'): undefined to send it, or the error that stops the load (refused at the first send when
   * the sample prices the whole input above the limit; stopped when this batch would pass it).
   */
  beforeSend(units: number, consumedUnits: number): LoaderError | undefined {
    if (!this.#predicted) {
      this.#predicted = true;
      const refusal = this.#prediction();
      if (refusal) return refusal;
    }
    const counted = consumedUnits + this.#inFlight;
    if (this.usd(counted + units) <= this.#maxUsd) return undefined;
    // Nothing of the whole load counted yet: the first batch alone passes the limit, which is a refusal (exit 3), not a stop.
    if (counted === 0)
      return new LoaderError(
        'COST_LIMIT_EXCEEDED',
        `refused by the cost guard before the first write: the first batch alone (${formatCount(units)} write units, ${formatPrice(this.usd(units))} at ${this.#pricing}) would pass --max-cost ${formatPrice(this.#maxUsd)}. Nothing was written. Raise --max-cost`,
      );
    return new LoaderError(
      'COST_LIMIT_REACHED',
      `stopped by the cost guard: ${formatPrice(this.usd(counted))} of write units counted so far (${formatCount(Math.round(counted))} units at ${this.#pricing}, the whole load's, resumes included), and the next batch (${formatCount(units)} units) would pass --max-cost ${formatPrice(this.#maxUsd)}. No batch was sent past it, the batches in flight finished; the rows not yet sent are counted as not written. To go on, run the same command with a higher --max-cost (with --checkpoint it resumes where this run stopped)`,
    );
  }

  /** A batch of `units` planned units was sent. */
  sent(units: number): void {
    this.#inFlight += units;
  }

  /** A sent batch was booked: its consumed units are in the tally now. */
  settled(units: number): void {
    this.#inFlight -= units;
  }

  /** The estimate's refusal, when one was given: asked before anything is read. */
  refusalByEstimate(): LoaderError | undefined {
    const estimate = this.#estimate;
    if (!estimate || this.usd(estimate.writeUnits) <= this.#maxUsd) return undefined;
    this.#predicted = true;
    return new LoaderError(
      'COST_LIMIT_EXCEEDED',
      `refused by the cost guard before the first write: the estimate ${estimate.source} counts ${formatCount(estimate.writeUnits)} write units, ${formatPrice(this.usd(estimate.writeUnits))} at ${this.#pricing}, above --max-cost ${formatPrice(this.#maxUsd)}. Nothing was written. Raise --max-cost, or load less`,
    );
  }

  #prediction(): LoaderError | undefined {
    if (this.#estimate) return this.refusalByEstimate();
    const total = this.#totalBytes;
    if (total === undefined || total <= 0 || this.#sampleBytes <= 0) return undefined;
    const units = (this.#sampleUnits / this.#sampleBytes) * total;
    if (this.usd(units) <= this.#maxUsd) return undefined;
    return new LoaderError(
      'COST_LIMIT_EXCEEDED',
      `refused by the cost guard before the first write: the first ${formatCount(this.#sampleRows)} rows (${formatCount(this.#sampleUnits)} write units over ${formatBytes(this.#sampleBytes)} of rows) price the whole input (${formatBytes(total)}) at about ${formatPrice(this.usd(units))} (${formatCount(Math.round(units))} units at ${this.#pricing}), above --max-cost ${formatPrice(this.#maxUsd)}. Nothing was written. Raise --max-cost, or ask ddb-spread estimate for the cost of every row`,
    );
  }
}
