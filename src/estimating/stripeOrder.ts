import { StripeSchedule } from '../ordering/stripeSchedule.js';
import { MAX_KEYS_TRACKED } from './plannedOrder.js';
import type { SimWrite } from './simulate.js';

/** Where a striped read's stripes lie (src/load/stripedRecords.ts's StripeLayout). */
export interface StripeLayoutStats {
  /** Each stripe's bytes, as StripeSchedule weighs them. */
  sizes: readonly number[];
  /** The line of each stripe's first row, ascending (the first stripe's is not read). */
  firstLines: readonly number[];
  /**
   * The text of each stripe's first row, where known: a stripe starts at the row with its first line or
   * its first text, whichever comes first (the read from the start can count lines short of the cut's).
   */
  firstRaws?: readonly (string | undefined)[];
}

/**
 * A run of one stripe's rows that keep their key, past MAX_KEYS_TRACKED named runs and under HOT_RUN
 * writes, is folded into its neighbour: its writes keep their stripe, their units and their bytes, and the
 * replay gives them keys of their own (one per folded key), so only cold keys lose their names.
 */
const HOT_RUN = 1_000;

/** Names of folded keys in the replay: a prefix no partition identity has. */
const FOLDED_KEY = '\u0000folded-';

/**
 * The default order's writes (`--order stripes`) from statistics gathered in input order, so the estimate
 * reads the file once from the start instead of at up to 64 points at once (which costs 30-45% more CPU:
 * docs/BENCHMARKS.md, "What the default order costs the estimate"). Issue 14.
 *
 * A striped read's order is a function of the file: the next row comes from the stripe furthest behind by
 * its share of bytes read (StripeSchedule: each row advances its stripe by its text's length + 1; ties to
 * the lower stripe). Stripes are runs of whole keys in file order, so in input order each key's writes are
 * one run inside one stripe (the load's GroupingCheck, run by the dry run over the whole file, proves
 * it). Per run this keeps its stripe, its key, its writes, their units and their bytes; the replay runs
 * the same schedule over the runs, each write advancing its stripe by its run's mean bytes. Where every
 * row of a key has one length (and no row is rejected), that is the striped read's order exactly; where
 * lengths vary inside a key, writes of a key move by a fraction of a row against its neighbours'. Each
 * write carries its run's mean units, as plannedOrder.ts's writes carry their key's.
 *
 * Written by hand: no library replays a weighted merge from run-length statistics.
 *
 * Memory: a run is ~40 bytes and its key's text. Past `maxKeys` named runs, a cold run (under HOT_RUN
 * writes) is folded into the run before it when that one is folded too and in the same stripe, so memory
 * stays bounded by the named runs, the hot ones (at most one per HOT_RUN writes) and a folded run per
 * stripe boundary.
 */
export class StripeOrderStats {
  readonly #sizes: readonly number[];
  readonly #firstLines: readonly number[];
  readonly #firstRaws: readonly (string | undefined)[];
  readonly #maxKeys: number;
  /** The stripe of the latest row: advances as rows reach each stripe's first row. */
  #at = 0;
  /** The stripe of the run at hand. */
  #part = 0;
  // The run at hand.
  #key: string | undefined;
  #count = 0;
  #units = 0;
  #bytes = 0;
  // Closed runs, in input order (so each stripe's runs are one stretch of them).
  #runs = 0;
  #named = 0;
  #names: (string | undefined)[] = [];
  #runPart = new Uint32Array(1024);
  #runCount = new Float64Array(1024);
  #runUnits = new Float64Array(1024);
  #runBytes = new Float64Array(1024);
  /** Keys in a folded run (1 for a named run). */
  #runKeys = new Float64Array(1024);

  constructor(layout: StripeLayoutStats, maxKeys = MAX_KEYS_TRACKED) {
    this.#sizes = layout.sizes;
    this.#firstLines = layout.firstLines;
    this.#firstRaws = layout.firstRaws ?? [];
    this.#maxKeys = maxKeys;
  }

  /** Runs kept, named or folded (for tests of the bound). */
  get runs(): number {
    return this.#runs + (this.#key === undefined ? 0 : 1);
  }

  /**
   * The next write in input order: its partition key as written, its write units, the line its row starts
   * on, its row's text length + 1 (what it advances its stripe by) and, where known, that text.
   */
  add(key: string, units: number, line: number, bytes: number, raw?: string): void {
    const part = this.#partOf(line, raw);
    if (key !== this.#key || part !== this.#part) {
      this.#close();
      this.#part = part;
      this.#key = key;
    }
    this.#count++;
    this.#units += units;
    this.#bytes += bytes;
  }

  /** The stripe of the next row: its first line or first text reached. */
  #partOf(line: number, raw: string | undefined): number {
    const lines = this.#firstLines;
    const raws = this.#firstRaws;
    let at = this.#at;
    while (at + 1 < lines.length && (line >= lines[at + 1]! || (raw !== undefined && raw === raws[at + 1]))) at++;
    this.#at = at;
    return at;
  }

  /** The striped read's writes, one at a time. Call once, after the last add(). */
  *ordered(): Generator<SimWrite> {
    this.#close();
    const stripes = this.#sizes.length;
    // Each stripe's runs: one stretch [begin, end) of the runs, as lines ascend.
    const begin = new Float64Array(stripes).fill(-1);
    const end = new Float64Array(stripes);
    for (let r = 0; r < this.#runs; r++) {
      const p = this.#runPart[r]!;
      if (begin[p] === -1) begin[p] = r;
      end[p] = r + 1;
    }
    const run = Array.from(begin, (b) => (b === -1 ? 0 : b));
    const taken = new Float64Array(stripes);
    const schedule = new StripeSchedule(this.#sizes);
    for (let k = schedule.next(); k !== undefined; k = schedule.next()) {
      const r = run[k]!;
      if (begin[k] === -1 || r >= end[k]!) {
        schedule.end(k);
        continue;
      }
      const count = this.#runCount[r]!;
      const n = taken[k]!;
      const name = this.#names[r];
      // A folded run's writes: its keys one after the other, each with its share of the writes.
      const key = name ?? `${FOLDED_KEY}${r}-${Math.floor((n * this.#runKeys[r]!) / count)}`;
      yield { key, units: this.#runUnits[r]! / count };
      schedule.advance(k, this.#runBytes[r]! / count);
      if (n + 1 < count) taken[k] = n + 1;
      else {
        taken[k] = 0;
        run[k] = r + 1;
      }
    }
  }

  /** Ends the run at hand: kept by its name, or folded into the run before it. */
  #close(): void {
    if (this.#key === undefined) return;
    const last = this.#runs - 1;
    const fold = this.#named >= this.#maxKeys && this.#count < HOT_RUN;
    if (fold && last >= 0 && this.#names[last] === undefined && this.#runPart[last] === this.#part) {
      this.#runCount[last]! += this.#count;
      this.#runUnits[last]! += this.#units;
      this.#runBytes[last]! += this.#bytes;
      this.#runKeys[last]!++;
    } else {
      if (this.#runs === this.#runPart.length) this.#grow();
      const r = this.#runs++;
      this.#names[r] = fold ? undefined : this.#key;
      if (!fold) this.#named++;
      this.#runPart[r] = this.#part;
      this.#runCount[r] = this.#count;
      this.#runUnits[r] = this.#units;
      this.#runBytes[r] = this.#bytes;
      this.#runKeys[r] = 1;
    }
    this.#key = undefined;
    this.#count = 0;
    this.#units = 0;
    this.#bytes = 0;
  }

  #grow(): void {
    const grow = <T extends Float64Array | Uint32Array>(a: T, make: (n: number) => T): T => {
      const b = make(a.length * 2);
      b.set(a);
      return b;
    };
    this.#runPart = grow(this.#runPart, (n) => new Uint32Array(n));
    this.#runCount = grow(this.#runCount, (n) => new Float64Array(n));
    this.#runUnits = grow(this.#runUnits, (n) => new Float64Array(n));
    this.#runBytes = grow(this.#runBytes, (n) => new Float64Array(n));
    this.#runKeys = grow(this.#runKeys, (n) => new Float64Array(n));
  }
}
