import type { ItemSizes } from './estimateTypes.js';
import { DistinctCounter } from './distinctCount.js';
import { createHotKeySketch, type HeavyHitters } from './heavyHitters.js';
import type { LoadSimulator, SimWrite, SimulationOutcome } from './simulate.js';
import { SizeHistogram } from './sizeHistogram.js';
import { IndexKeyTally, type IndexHotKeys } from './indexKeyTally.js';
import { MAX_BATCH_REQUESTS } from '../batching/batch.js';
import type { WriteCostModel } from '../pacing/writeCost.js';
import type { PlannedWrite } from '../shared/types.js';
import { ownValue } from '../shared/ownRecord.js';
import { setOwn } from '../typing/json.js';

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
  /** Write units, table and each GSI, of every planned write. */
  writeUnits: { table: number; indexes: Record<string, number>; total: number };
  /** Partition key values before sharding (the input's own). */
  hottest: HeavyHitters;
  distinct: number;
  /** Partition key values as written (after --shard). */
  hottestWritten: HeavyHitters;
  distinctWritten: number;
  planned: SimulationOutcome;
  input: SimulationOutcome;
  /** Each GSI's partition keys by the index's own units (issue 15). */
  indexHottest: IndexHotKeys[];
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
  readonly #indexes: IndexKeyTally;
  #inputBatch: SimWrite[] = [];
  #finished = false;

  constructor(cost: WriteCostModel, simulators: EstimateSimulators, indexes: IndexKeyTally = new IndexKeyTally([])) {
    this.#cost = cost;
    this.#simulators = simulators;
    this.#indexes = indexes;
  }

  /** One planned write, in input order: counts it and returns the slim copy the write order carries instead. */
  add(w: PlannedWrite): PlannedWrite {
    const cost = this.#cost(w.item, w.size);
    this.#units.table += cost.table;
    this.#units.total += cost.total;
    for (const [name, n] of Object.entries(cost.indexes)) setOwn(this.#units.indexes, name, (ownValue(this.#units.indexes, name) ?? 0) + n);
    this.#sizes.add(w.size);
    // partitionId is the key type letter + the value as written (any shard suffix included); unshardedKey is set only when sharded.
    const written = w.partitionId.slice(1);
    const original = w.unshardedKey ?? written;
    this.#distinct.add(original);
    this.#distinctWritten.add(written);
    // A table key's own units: GSI units land on the index's keys (issue 15), counted by #indexes.
    this.#hottest.add(original, cost.table);
    this.#hottestWritten.add(written, cost.table);
    const slimItem = this.#indexes.any ? this.#indexes.add(w.item, cost) : {};
    this.#inputBatch.push(this.#indexes.simWrite({ item: slimItem, partitionId: w.partitionId, wcu: cost.total }));
    if (this.#inputBatch.length === MAX_BATCH_REQUESTS) {
      this.#simulators.input.push(this.#inputBatch);
      this.#inputBatch = [];
    }
    // The order only needs keys and costs: a slim copy keeps --memory (and temporary files) small. Its
    // size is 0 so the order's memory accounting sees what it holds; sizes were counted above, and the
    // batcher's 16 MB limit cannot bind on 25 items of at most 400 KB.
    const slim: PlannedWrite = {
      origin: { file: w.origin.file, line: w.origin.line, raw: '' },
      item: slimItem,
      keyId: w.keyId,
      partitionId: w.partitionId,
      size: 0,
      wcu: cost.total,
    };
    if (w.unshardedKey !== undefined) slim.unshardedKey = w.unshardedKey;
    return slim;
  }

  /** One batch (of slim copies from add()) in the order load() would send it. */
  addBatch(writes: readonly PlannedWrite[]): void {
    this.#simulators.planned.push(writes.map((w) => this.#indexes.simWrite(w)));
  }

  /** Sends the input order's last partial batch, runs both simulations to their end, and returns the counts. Once. */
  finish(): EstimateTotals {
    if (this.#finished) throw new Error('EstimateTally.finish() was called twice; this is a bug');
    this.#finished = true;
    if (this.#inputBatch.length > 0) this.#simulators.input.push(this.#inputBatch);
    this.#inputBatch = [];
    return {
      sizes: this.#sizes.toJSON(),
      writeUnits: this.#units,
      hottest: this.#hottest,
      distinct: this.#distinct.estimate,
      hottestWritten: this.#hottestWritten,
      distinctWritten: this.#distinctWritten.estimate,
      planned: this.#simulators.planned.finish(),
      input: this.#simulators.input.finish(),
      indexHottest: this.#indexes.hottest(),
    };
  }
}
