import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { createHotKeySketch, type HeavyHitters } from '../shared/heavyHitters.js';
import type { SimWrite } from './simulate.js';
import { indexKeyId, indexKeyText, type WriteCost } from '../pacing/writeCost.js';
import { ownValue, setOwn } from '../shared/ownRecord.js';
import type { IndexInfo } from '../shared/tableInfo.js';
import type { Item, PlannedWrite } from '../shared/types.js';

/** The hottest partition keys of one GSI, by the index's own write units. */
export interface IndexHotKeys {
  index: string;
  hottest: HeavyHitters;
}

/**
 * The estimate's view of the GSIs: each GSI's partition keys by its own write units (a GSI
 * partition has the same 1,000 WCU/s ceiling as a table's, so a low-cardinality index key is a
 * bottleneck however spread the table's keys are), and what the simulation needs of a write to pace and
 * admit it per key: the table's units and each index key with its units. The order carries slim copies
 * of the writes (no item), so those travel in the slim copy's item, under short names: `t` the table's
 * units, `k<i>` and `u<i>` the i-th index's key value and units. Pure.
 */
export class IndexKeyTally {
  readonly #indexes: Array<{ name: string; keyName: string; hottest: HeavyHitters }>;

  constructor(gsis: readonly IndexInfo[]) {
    this.#indexes = gsis.map((g) => ({ name: g.name, keyName: g.partitionKey.name, hottest: createHotKeySketch() }));
  }

  /** Whether the table has a GSI at all (without one, writes need no slim item). */
  get any(): boolean {
    return this.#indexes.length > 0;
  }

  /** Counts one write's index keys; returns the slim copy's item that carries them to the simulation. */
  add(item: Item, cost: WriteCost): Item {
    const slim: Item = {};
    setOwn(slim, 't', new NumberValue(String(cost.table)));
    this.#indexes.forEach((index, i) => {
      const units = ownValue(cost.indexes, index.name);
      if (units === undefined) return;
      const key = indexKeyText(item, [index.keyName]);
      if (key === undefined) return;
      index.hottest.add(key, units);
      setOwn(slim, `k${i}`, key);
      setOwn(slim, `u${i}`, new NumberValue(String(units)));
    });
    return slim;
  }

  /** A slim copy (from add()) as the simulation's write: table units on the table's key, index units on each index key. */
  simWrite(w: Pick<PlannedWrite, 'item' | 'partitionId' | 'wcu'>): SimWrite {
    const sim: SimWrite = { key: w.partitionId.slice(1), units: w.wcu };
    const table = numberOf(ownValue(w.item, 't'));
    if (table === undefined) return sim;
    sim.tableUnits = table;
    const indexes: Array<{ key: string; units: number }> = [];
    this.#indexes.forEach((index, i) => {
      const key: unknown = ownValue(w.item, `k${i}`);
      const units = numberOf(ownValue(w.item, `u${i}`));
      if (typeof key === 'string' && units !== undefined) indexes.push({ key: indexKeyId(index.name, key), units });
    });
    if (indexes.length > 0) sim.indexes = indexes;
    return sim;
  }

  /** Each GSI's hottest keys, in the table's order of GSIs. */
  hottest(): IndexHotKeys[] {
    return this.#indexes.map((i) => ({ index: i.name, hottest: i.hottest }));
  }
}

function numberOf(value: unknown): number | undefined {
  return value instanceof NumberValue ? Number(value.value) : undefined;
}
