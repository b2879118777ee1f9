import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { RateController } from '../../../src/pacing/rateControl.js';
import { RatePacer } from '../../../src/pacing/ratePacer.js';
import { createKeyCostModel, indexKeyId, parseIndexKeyId } from '../../../src/pacing/writeCost.js';
import type { TableInfo } from '../../../src/shared/tableInfo.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import { itemSize } from '../../../src/typing/itemSize.js';

// A table keyed on origin with a GSI on destination (ALL): each put costs 1 unit on the table's
// key and 1 on the index's key, and the two must be paced apart.
const TABLE: Pick<TableInfo, 'keySchema' | 'gsis'> = {
  keySchema: { partitionKey: { name: 'origin', type: 'S' }, sortKey: { name: 'id', type: 'N' } },
  gsis: [{ name: 'byDestination', partitionKey: { name: 'destination', type: 'S' }, projection: 'ALL', nonKeyAttributes: [] }],
};

function write(origin: string, id: number, destination?: string): PlannedWrite {
  const item = { origin, id: new NumberValue(String(id)), ...(destination === undefined ? {} : { destination }) };
  const size = itemSize(item);
  return { origin: { file: 'f', line: id, raw: '' }, item, keyId: `S${origin}|${id}`, partitionId: `S${origin}`, size, wcu: 1 };
}

describe('createKeyCostModel', () => {
  it("puts the table's units on the table's key and each GSI's units on the GSI's key", () => {
    const costs = createKeyCostModel(TABLE)(write('ATL', 1, 'LAX'));
    expect(costs.total).toBe(2);
    expect(costs.keys).toEqual([
      { key: 'SATL', units: 1 },
      { key: indexKeyId('byDestination', 'LAX'), units: 1 },
    ]);
    expect(parseIndexKeyId(costs.keys[1]!.key)).toEqual({ index: 'byDestination', value: 'LAX' });
    expect(parseIndexKeyId('SATL')).toBeUndefined();
  });

  it('an item without the index key (sparse index) costs the index nothing and has no index key', () => {
    const costs = createKeyCostModel(TABLE)(write('ATL', 1));
    expect(costs).toEqual({ total: 1, keys: [{ key: 'SATL', units: 1 }] });
  });

  it('a GSI key value equal to a table key value is another key', () => {
    const keys = createKeyCostModel(TABLE)(write('ATL', 1, 'ATL')).keys.map((k) => k.key);
    expect(new Set(keys).size).toBe(2);
  });
});

describe('RatePacer with keysOf', () => {
  /** Sends `writes` in batches of 25 through a pacer on a fake clock; returns the simulated seconds. */
  async function pacedSeconds(writes: PlannedWrite[], split: boolean): Promise<number> {
    let clock = 0;
    const model = createKeyCostModel(TABLE);
    const pacer = new RatePacer({
      controller: new RateController({ targetWcu: 100_000, keyWcu: 100 }, 0),
      costOf: (w) => model(w).total,
      ...(split ? { keysOf: (w: PlannedWrite) => model(w).keys } : {}),
      now: () => clock,
      sleep: (ms) => {
        clock += ms;
        return Promise.resolve();
      },
    });
    for (let i = 0; i < writes.length; i += 25) await pacer.beforeSend(writes.slice(i, i + 25));
    return clock / 1000;
  }

  it('a hot table key whose GSI writes go to many keys is held to its own units, not to the GSI units too', async () => {
    // 500 rows of ATL, each to another destination: 500 units on ATL at 100 WCU/s is 5 s; charged the
    // GSI's 500 as well it would be 10 s.
    const writes = Array.from({ length: 500 }, (_, i) => write('ATL', i, `D${i}`));
    const split = await pacedSeconds(writes, true);
    const whole = await pacedSeconds(writes, false);
    expect(split).toBeGreaterThan(4.5);
    expect(split).toBeLessThan(5.5);
    expect(whole).toBeGreaterThan(9.5);
  });

  it('a hot GSI key is paced at --key-wcu of its own units although every table key is distinct', async () => {
    const writes = Array.from({ length: 500 }, (_, i) => write(`O${i}`, i, 'ACTIVE'));
    const split = await pacedSeconds(writes, true);
    expect(split).toBeGreaterThan(4.5);
    expect(split).toBeLessThan(5.5);
    // Without the index keys nothing holds the load back.
    expect(await pacedSeconds(writes, false)).toBeLessThan(0.5);
  });
});

describe('RateController.reachableWcu', () => {
  it('is the target, or with on-demand growth the initial rate until a peak is a window old', () => {
    expect(new RateController({ targetWcu: 500 }, 0).reachableWcu(0)).toBe(500);
    const grown = new RateController({ targetWcu: 32_000, growth: { initial: 3_200, factor: 2, windowMs: 60_000, cap: 32_000 } }, 0);
    expect(grown.reachableWcu(1_000)).toBe(3_200);
  });
});
