import type { ItemSizes } from './estimateTypes.js';
import { DistinctCounter } from './distinctCount.js';
import { createHotKeySketch, type HeavyHitters } from '../shared/heavyHitters.js';
import type { LoadSimulator, SimWrite, SimulationOutcome } from './simulate.js';
import { SizeHistogram } from './sizeHistogram.js';
import { IndexKeyTally, type IndexHotKeys } from './indexKeyTally.js';
import { PlannedOrderStats } from './plannedOrder.js';
import { StripeOrderStats, type StripeLayoutStats } from './stripeOrder.js';
import type { GlobalOrderMode } from '../ordering/order.js';
import { MAX_BATCH_REQUESTS } from '../batching/batch.js';
import type { WriteCostModel } from '../pacing/writeCost.js';
import { readUnitsOf } from '../pacing/readUnits.js';
import { NO_ITEM, type PlannedWrite, type RowOrigin } from '../shared/types.js';
import { ownValue, setOwn } from '../shared/ownRecord.js';

/** What the tally needs of a simulation: batches in, an outcome at the end (a LoadSimulator, or a fake in tests). */
export type Simulator = Pick<LoadSimulator, 'push' | 'finish'>;

export interface EstimateSimulators {
  /** The planned order, fed the batches load() would send, in the order it would send them. */
  planned: Simulator;
  /** The contrast: the input order, cut into batches of 25 as the rows come. */
  input: Simulator;
}

/** Everything the estimate counted, ready for assembleEstimate(). */
export interface EstimateTotals {
  sizes: ItemSizes;
  /**
   * Writes superseded in the planned order's batches, where the order is replayed with its batches (the
   * default order's striped read); otherwise the dry run's own count (its batches in the order it read).
   */
  superseded?: number;
  /** Write units, table and each GSI, of every planned write. */
  writeUnits: { table: number; indexes: Record<string, number>; total: number };
  /** What reading the writes back would cost (the price of a verify, verifyCost.ts). */
  reads: ReadTotals;
  /** Partition key values before sharding (the input's own). */
  hottest: HeavyHitters;
  distinct: number;
  /** Partition key values as written (after --shard). */
  hottestWritten: HeavyHitters;
  distinctWritten: number;
  planned: SimulationOutcome;
  input: SimulationOutcome;
  /** Each GSI's partition keys by the index's own units. */
  indexHottest: IndexHotKeys[];
}

/** Every planned write's read-back, superseded ones included (the estimate keeps no per-key state). */
export interface ReadTotals {
  writes: number;
  /** Sum over writes of max(1, ceil(size / 4 KB)): a delete reads an absent item, the minimum. */
  strongReadUnits: number;
  /** Puts, and the bytes of their items: what the writes leave in the table. */
  puts: number;
  putBytes: number;
}

export interface EstimateTallyOptions {
  /** The table's GSIs (prepareEstimate); none by default. */
  indexes?: IndexKeyTally;
  /**
   * The planned order simulated from statistics (tables without GSIs only): a global order, or the
   * default order's striped read (how the file is read is told later: readAs()).
   */
  plannedOrder?: { mode: GlobalOrderMode; stats?: PlannedOrderStats } | { mode: 'stripes' };
  /** Whether --shard was given. @default true */
  sharded?: boolean;
}

/**
 * The estimate's per-write and per-batch counting, pure: load()'s dry run hands each planned write to
 * add() and each batch to addBatch(). Memory stays bounded whatever the input's size: sketches for keys,
 * bands for sizes, sums for units, and the simulations hold a few batches in flight.
 */
export class EstimateTally {
  readonly #cost: WriteCostModel;
  readonly #simulators: EstimateSimulators;
  readonly #sizes = new SizeHistogram();
  readonly #distinct = new DistinctCounter();
  readonly #distinctWritten = new DistinctCounter();
  readonly #hottest = createHotKeySketch();
  readonly #hottestWritten = createHotKeySketch();
  readonly #units = { table: 0, indexes: {} as Record<string, number>, total: 0 };
  readonly #reads: ReadTotals = { writes: 0, strongReadUnits: 0, puts: 0, putBytes: 0 };
  readonly #indexes: IndexKeyTally;
  #inputBatch: SimWrite[] = [];
  /** The key last counted as distinct, before and after --shard. */
  #lastKey: string | undefined;
  #lastWritten: string | undefined;
  #finished = false;
  /** A global order, simulated from key statistics rather than from the batches of a materialised order. */
  #planned: { mode: GlobalOrderMode; stats: PlannedOrderStats } | undefined;
  /** The default order's striped read, simulated from statistics (stripeOrder.ts). */
  #stripes: StripeOrderStats | undefined;
  /** The planned order comes from statistics, not from addBatch(); for stripes, once readAs() said how. */
  readonly #fromStatistics: 'global' | 'stripes' | undefined;
  #told = false;
  /** Told the file is streamed through the window after all: the planned order comes from addBatch(). */
  #fromBatches = false;
  readonly #sharded: boolean;

  /**
   * `indexes`: the table's GSIs, whose keys the simulations pace and admit per write.
   * `plannedOrder`: the planned order is a global one (round-robin, spread), which the tally makes from
   * its key statistics at finish(); the dry run then runs in input order and addBatch() is not needed.
   * The statistics hold per table key only its writes and units, not each write's GSI keys (which vary
   * row by row, unbounded), so a table with GSIs is estimated from the materialised order instead
   * (estimate.ts decides; the tally refuses the combination). `sharded`: whether --shard was given;
   * without it, keys as written are the input's, counted once.
   */
  constructor(cost: WriteCostModel, simulators: EstimateSimulators, options: EstimateTallyOptions = {}) {
    this.#cost = cost;
    this.#simulators = simulators;
    this.#indexes = options.indexes ?? new IndexKeyTally([]);
    this.#sharded = options.sharded ?? true;
    const plannedOrder = options.plannedOrder;
    if (plannedOrder && this.#indexes.any) throw new Error('EstimateTally cannot simulate a table with GSIs from key statistics; this is a bug');
    if (plannedOrder?.mode === 'stripes') this.#fromStatistics = 'stripes';
    else if (plannedOrder) {
      this.#fromStatistics = 'global';
      this.#planned = { mode: plannedOrder.mode, stats: plannedOrder.stats ?? new PlannedOrderStats() };
    }
  }

  /**
   * How the load would read the file, for a planned order of `stripes` or `auto`: in these stripes, or
   * ('own') in an order the dry run makes itself (the auto order's window, a set read in stripes: its
   * batches are the order then), or
   * (undefined) whole in round-robin order. Once, before the first add().
   */
  readAs(layout: StripeLayoutStats | 'own' | undefined): void {
    if (this.#fromStatistics !== 'stripes' || this.#told) throw new Error('EstimateTally.readAs() out of turn; this is a bug');
    this.#told = true;
    if (layout === 'own') this.#fromBatches = true;
    else if (layout) this.#stripes = new StripeOrderStats(layout);
    else this.#planned = { mode: 'round-robin', stats: new PlannedOrderStats() };
  }

  /** One planned write, in input order: counts it and returns the slim copy the write order carries instead. */
  add(w: PlannedWrite): PlannedWrite {
    const cost = this.#cost(w.item, w.size);
    const gsis = this.#indexes.any;
    this.#units.table += cost.table;
    this.#units.total += cost.total;
    // Walked in place, not through Object.entries: without GSIs the cost names no index, and no array is made per row for it.
    const indexUnits = cost.indexes;
    for (const name in indexUnits) {
      if (Object.hasOwn(indexUnits, name)) setOwn(this.#units.indexes, name, (ownValue(this.#units.indexes, name) ?? 0) + indexUnits[name]!);
    }
    this.#sizes.add(w.size);
    this.#reads.writes++;
    this.#reads.strongReadUnits += readUnitsOf(w.size, true);
    if (w.op !== 'delete') {
      this.#reads.puts++;
      this.#reads.putBytes += w.size;
    }
    // partitionId is the key type letter + the value as written (any shard suffix included); unshardedKey is set only when sharded.
    const written = w.partitionId.slice(1);
    const original = w.unshardedKey ?? written;
    // Counting a value again changes no distinct count: a run of one key's rows (a sorted file) hashes it once.
    if (original !== this.#lastKey) this.#distinct.add(original);
    this.#lastKey = original;
    // A table key's own units: GSI units land on the index's keys, counted by #indexes.
    this.#hottest.add(original, cost.table);
    if (this.#sharded) {
      if (written !== this.#lastWritten) this.#distinctWritten.add(written);
      this.#lastWritten = written;
      this.#hottestWritten.add(written, cost.table);
    } else if (w.unshardedKey !== undefined) throw new Error('EstimateTally was told there is no --shard, and a write is sharded; this is a bug');
    const slimItem = gsis ? this.#indexes.add(w.item, cost) : NO_ITEM;
    // Without GSIs the simulation's write is the key as written and the write's units (simWrite's answer for a slim item without `t`).
    this.#inputBatch.push(gsis ? this.#indexes.simWrite({ item: slimItem, partitionId: w.partitionId, wcu: cost.total }) : { key: written, units: cost.total });
    // Only without GSIs (see the constructor): a write's units are then its table key's.
    this.#planned?.stats.add(written, cost.total);
    this.#stripes?.add(written, cost.total, w.origin.line, w.origin.raw.length + 1, w.origin.raw, w.keyId);
    if (this.#inputBatch.length === MAX_BATCH_REQUESTS) {
      this.#simulators.input.push(this.#inputBatch);
      this.#inputBatch = [];
    }
    // The order only needs keys and costs: a slim copy keeps --memory (and temporary files) small. Its
    // size is 0 so the order's memory accounting sees what it holds; sizes were counted above, and the
    // batcher's 16 MB limit cannot bind on 25 items of at most 400 KB.
    if (w.item === NO_ITEM && slimItem === NO_ITEM && w.origin.raw === '') {
      // Already slim (a write the planning thread handed over, held by nothing else): made so in place.
      w.size = 0;
      w.wcu = cost.total;
      return w;
    }
    const slim: PlannedWrite = {
      // The part too: a striped read's order checks each stripe's keys by it (without it every stripe
      // counted as the first, and a sorted file looked unsorted and was estimated again in round-robin).
      origin:
        w.origin.part === undefined
          ? { file: w.origin.file, line: w.origin.line, raw: '' }
          : { file: w.origin.file, line: w.origin.line, raw: '', part: w.origin.part },
      item: slimItem,
      keyId: w.keyId,
      partitionId: w.partitionId,
      size: 0,
      wcu: cost.total,
    };
    if (w.unshardedKey !== undefined) slim.unshardedKey = w.unshardedKey;
    return slim;
  }

  /** A row read and not written (rejected, or of another segment), in input order: it moves its stripe along. */
  skip(origin: RowOrigin): void {
    this.#stripes?.skip(origin.line, origin.raw.length + 1, origin.raw);
  }

  /** One batch (of slim copies from add()) in the order load() would send it. */
  addBatch(writes: readonly PlannedWrite[]): void {
    if (this.#fromStatistics && !this.#fromBatches) return;
    const indexes = this.#indexes;
    this.#simulators.planned.push(indexes.any ? writes.map((w) => indexes.simWrite(w)) : writes.map((w) => ({ key: w.partitionId.slice(1), units: w.wcu })));
  }

  /** Sends the input order's last partial batch, runs both simulations to their end, and returns the counts. Once. */
  finish(): EstimateTotals {
    if (this.#finished) throw new Error('EstimateTally.finish() was called twice; this is a bug');
    this.#finished = true;
    if (this.#inputBatch.length > 0) this.#simulators.input.push(this.#inputBatch);
    this.#inputBatch = [];
    if (this.#fromStatistics === 'stripes' && !this.#told) throw new Error('EstimateTally was never told how the file is read; this is a bug');
    const ordered: Iterable<SimWrite & { replaces?: number }> | undefined = this.#stripes
      ? this.#stripes.ordered()
      : this.#planned?.stats.ordered(this.#planned.mode);
    if (ordered) {
      let batch: SimWrite[] = [];
      for (const w of ordered) {
        // The replay of a striped read batches as load's batcher does: a repeat takes its partner's slot.
        if (w.replaces !== undefined && w.replaces >= 0) {
          batch[w.replaces] = w;
          continue;
        }
        batch.push(w);
        if (batch.length === MAX_BATCH_REQUESTS) {
          this.#simulators.planned.push(batch);
          batch = [];
        }
      }
      if (batch.length > 0) this.#simulators.planned.push(batch);
    }
    return {
      sizes: this.#sizes.toJSON(),
      writeUnits: this.#units,
      reads: { ...this.#reads },
      hottest: this.#hottest,
      distinct: this.#distinct.estimate,
      hottestWritten: this.#sharded ? this.#hottestWritten : this.#hottest,
      distinctWritten: this.#sharded ? this.#distinctWritten.estimate : this.#distinct.estimate,
      planned: this.#simulators.planned.finish(),
      input: this.#simulators.input.finish(),
      indexHottest: this.#indexes.hottest(),
      ...(this.#stripes?.superseded !== undefined ? { superseded: this.#stripes.superseded } : {}),
    };
  }
}
