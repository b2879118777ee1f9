import { StripeSchedule } from '../ordering/stripes/stripeSchedule.js';
import { MAX_KEYS_TRACKED } from './plannedOrder.js';
import { ReplayBatcher, RunRepeats } from './runRepeats.js';
import type { SimWrite } from './simulate.js';
import { doubled } from '../shared/typedArrays.js';

/** Where a striped read's stripes lie (src/ordering/stripes/stripedRecords.ts's StripeLayout). */
export interface StripeLayoutStats {
  /** Each stripe's bytes, as StripeSchedule weighs them. */
  sizes: readonly number[];
  /** The line of each stripe's first row, ascending (the first stripe's is not read). */
  firstLines: readonly number[];
  /**
   * The text of each stripe's first row, where known: a stripe starts at the row with its first line or
   * its first text, whichever comes first (should the read from the start ever count lines short of the cut's).
   */
  firstRaws?: readonly (string | undefined)[];
}

/** A write of the replay, and the slot of the batch being filled it takes over (-1: a slot of its own). */
export interface ReplayedWrite extends SimWrite {
  replaces: number;
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
 * docs/BENCHMARKS.md, "What the default order costs the estimate").
 *
 * A striped read's order is a function of the file: the next row comes from the stripe furthest behind by
 * its share of bytes read (StripeSchedule: each row advances its stripe by its text's length + 1; ties to
 * the lower stripe). Stripes are runs of whole keys in file order, so in input order each key's writes are
 * one run inside one stripe (the load's GroupingCheck, run by the dry run over the whole file, proves
 * it). Per run this keeps its stripe, its key, its writes, their units and their bytes; the replay runs
 * the same schedule over the runs, each write advancing its stripe by its run's mean bytes. Where every
 * row of a key has one length (and no row is rejected), that is the striped read's order exactly; where
 * lengths vary inside a key, writes of a key move by a fraction of a row against its neighbours'. Each
 * write carries its run's mean units, as plannedOrder.ts's writes carry their key's. Rows read and not
 * written (rejected, or of another segment: skip()) move their stripe along as in the striped read: before
 * a run, as its lead (exactly); inside one, in its mean bytes.
 *
 * The writes come with their batch slots as load's batcher would fill them (RunRepeats, ReplayBatcher), so
 * a primary key written again soon after supersedes the earlier write only where the striped read puts
 * both in one batch.
 *
 * Written by hand: no library replays a weighted merge from run-length statistics.
 *
 * Memory: a run is ~40 bytes and its key's text. Past `maxKeys` named runs, a cold run (under HOT_RUN
 * writes) is folded into the run before it when that one is folded too and in the same stripe, so memory
 * stays bounded by the named runs, the hot ones (at most one per HOT_RUN writes), a folded run per
 * stripe boundary, and the repeats RunRepeats keeps (at most MAX_REPEAT_PAIRS).
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
  /** Bytes of rows skipped since the latest write, in stripe #at. */
  #skipped = 0;
  /** Bytes of rows skipped before the run at hand, in its stripe. */
  #lead = 0;
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
  /** Bytes of rows skipped before the run's first write, in its stripe. */
  #runLead = new Float64Array(1024);
  /** Primary keys written again close together in a run, for batching as load's batcher does. */
  readonly #repeats: RunRepeats;
  #superseded = 0;

  constructor(layout: StripeLayoutStats, maxKeys = MAX_KEYS_TRACKED, maxRepeatPairs?: number) {
    this.#sizes = layout.sizes;
    this.#firstLines = layout.firstLines;
    this.#firstRaws = layout.firstRaws ?? [];
    this.#maxKeys = maxKeys;
    this.#repeats = new RunRepeats(maxRepeatPairs);
  }

  /**
   * Writes the replay's batches superseded (a later write of the same primary key in the same batch),
   * after ordered(); undefined when there were too many repeats to keep (RunRepeats) and none was replayed.
   */
  get superseded(): number | undefined {
    return this.#repeats.overflowed ? undefined : this.#superseded;
  }

  /** Runs kept, named or folded (for tests of the bound). */
  get runs(): number {
    return this.#runs + (this.#key === undefined ? 0 : 1);
  }

  /**
   * The next write in input order: its partition key as written, its write units, the line its row starts
   * on, its row's text length + 1 (what it advances its stripe by), where known that text, and its
   * primary key's identity (`id`: without it, no write supersedes another in the replay's batches).
   */
  add(key: string, units: number, line: number, bytes: number, raw?: string, id?: string): void {
    const before = this.#at;
    const part = this.#partOf(line, raw);
    // Rows skipped at the end of the stripe before come before no write of it: they move nothing.
    const skipped = part === before ? this.#skipped : 0;
    this.#skipped = 0;
    if (key !== this.#key || part !== this.#part) {
      this.#close();
      this.#part = part;
      this.#key = key;
      this.#lead = skipped;
    } else this.#bytes += skipped;
    if (id !== undefined) this.#repeats.add(id, this.#count);
    this.#count++;
    this.#units += units;
    this.#bytes += bytes;
  }

  /** The next row in input order that is read and not written (as add(), without a key or units). */
  skip(line: number, bytes: number, raw?: string): void {
    const at = this.#at;
    // Rows skipped at the end of a stripe come before no write of it: they move nothing.
    if (this.#partOf(line, raw) !== at) this.#skipped = 0;
    this.#skipped += bytes;
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

  /**
   * The striped read's writes, one at a time, each with the slot of the batch being filled that it takes
   * over from an earlier write of its primary key (`replaces`), or -1. Call once, after the last add().
   */
  *ordered(): Generator<ReplayedWrite> {
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
    /** Whether the run at hand of each stripe has moved it by its lead. */
    const led = new Uint8Array(stripes);
    const schedule = new StripeSchedule(this.#sizes);
    const batcher = this.#repeats.overflowed ? undefined : new ReplayBatcher(this.#repeats, stripes);
    const started = new Float64Array(stripes).fill(-1);
    for (let k = schedule.next(); k !== undefined; k = schedule.next()) {
      const r = run[k]!;
      if (begin[k] === -1 || r >= end[k]!) {
        schedule.end(k);
        continue;
      }
      if (started[k] !== r) {
        started[k] = r;
        batcher?.startRun(k, r);
      }
      // The rows skipped before the run: read as one, as the striped read reads them one by one (no write
      // of another stripe can come between them and the run's first write that would not come anyway).
      if (led[k] === 0 && this.#runLead[r]! > 0) {
        led[k] = 1;
        schedule.advance(k, this.#runLead[r]!);
        continue;
      }
      const count = this.#runCount[r]!;
      const n = taken[k]!;
      const name = this.#names[r];
      // A folded run's writes: its keys one after the other, each with its share of the writes.
      const key = name ?? `${FOLDED_KEY}${r}-${Math.floor((n * this.#runKeys[r]!) / count)}`;
      yield { key, units: this.#runUnits[r]! / count, replaces: batcher ? batcher.place(k, r, n) : -1 };
      schedule.advance(k, this.#runBytes[r]! / count);
      if (n + 1 < count) taken[k] = n + 1;
      else {
        taken[k] = 0;
        led[k] = 0;
        run[k] = r + 1;
      }
    }
    this.#superseded = batcher?.superseded ?? 0;
  }

  /** Ends the run at hand: kept by its name, or folded into the run before it. */
  #close(): void {
    if (this.#key === undefined) return;
    const last = this.#runs - 1;
    const fold = this.#named >= this.#maxKeys && this.#count < HOT_RUN;
    if (fold && last >= 0 && this.#names[last] === undefined && this.#runPart[last] === this.#part) {
      this.#repeats.close(last, this.#runCount[last]!);
      this.#runCount[last]! += this.#count;
      this.#runUnits[last]! += this.#units;
      this.#runBytes[last]! += this.#lead + this.#bytes;
      this.#runKeys[last]!++;
    } else {
      if (this.#runs === this.#runPart.length) this.#grow();
      const r = this.#runs++;
      this.#repeats.close(r, 0);
      this.#names[r] = fold ? undefined : this.#key;
      if (!fold) this.#named++;
      this.#runPart[r] = this.#part;
      this.#runCount[r] = this.#count;
      this.#runUnits[r] = this.#units;
      this.#runBytes[r] = this.#bytes;
      this.#runKeys[r] = 1;
      this.#runLead[r] = this.#lead;
    }
    this.#key = undefined;
    this.#count = 0;
    this.#units = 0;
    this.#bytes = 0;
    this.#lead = 0;
  }

  #grow(): void {
    this.#runPart = doubled(this.#runPart);
    this.#runCount = doubled(this.#runCount);
    this.#runUnits = doubled(this.#runUnits);
    this.#runBytes = doubled(this.#runBytes);
    this.#runKeys = doubled(this.#runKeys);
    this.#runLead = doubled(this.#runLead);
  }
}
