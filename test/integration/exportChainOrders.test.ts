/**
 * An export chain read by one process ends as the source table in every order given by name, and with a
 * window small enough to flush within an export: the order and batcher empty between exports (stages.ts)
 * where the order can, and a global order goes on across them, so a key updated, deleted and revived
 * across the exports ends as the last export leaves it, its rows counted once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load } from '../../src/load/load.js';
import type { OrderMode } from '../../src/ordering/order.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { chainExports, simulateChain, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable, dropTable } = useLocalAws({ name: 'export-chain-orders', processCredentials: true, keys: KEYS });

describe('an export chain read by one process, in each order', () => {
  it.each<[OrderMode, number | undefined]>([
    ['auto', undefined],
    ['auto', 4],
    ['window', 4],
    ['round-robin', undefined],
    ['stripes', undefined],
    ['input', undefined],
  ])('--order %s --window %s: the table ends as the source table', async (order, window) => {
    const chain = simulateChain(7, { items: 120, windows: 2, changesPerWindow: 90, partitions: 3 });
    const root = join(dir(), `${order}-${window ?? 'default'}`);
    for (const fixture of chainExports(chain, 'src')) await writeExport(root, fixture);
    const records = [chain.full, ...chain.incrementals].reduce((n, parts) => n + parts.flat().length, 0);
    const table = await newTable();
    try {
      const result = await load({
        input: join(root, 'src', 'AWSDynamoDB'),
        table,
        endpoint,
        region: 'us-east-1',
        order,
        ...(window !== undefined ? { window } : {}),
        rejectsPath: join(root, 'rejects.jsonl'),
      });
      expect(result.rejected).toBe(0);
      expect(result.rowsRead).toBe(records);
      expect(result.written + result.superseded).toBe(records);
      const items = await scanAll(client(), table);
      const got = new Map(items.map((i) => [`${i.pk!.S}/${i.sk!.N}`, `${i.v!.S}|${i.n!.N}`]));
      const want = new Map([...chain.final].map(([k, i]) => [k, `${i.v!.S}|${i.n!.N}`]));
      expect(got).toEqual(want);
    } finally {
      await dropTable(table);
    }
  });
});
