/**
 * Attack on the window interleaver's parked queues (src/ordering/order.ts keeps an emptied key's queue for
 * its next write, at most 4,096, and hands back a shared answer array) in a real load against DynamoDB
 * Local: more distinct keys than it parks, each emptied, then written again in a mix (keys parked, keys
 * dropped past the bound, a hot key), overwriting their own primary keys. The table must be what applying
 * the rows one by one gives, every row counted once.
 */
import { describe, expect, it } from 'vitest';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { plainItem } from '../support/plainItem.js';
import { mulberry32 } from '../../tools/mulberry32.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 'window-parked', processCredentials: true, keys: KEYS });
const { inputFile, run } = localLoad(aws);

describe('a window over more emptied keys than it parks', () => {
  it('keys parked, dropped past the bound and written again: the table is the rows applied one by one', async () => {
    const random = mulberry32(31);
    const rows: { pk: string; sk: string; v: number }[] = [];
    // 5,000 keys, each once: with a window of 30 each queue empties, and past 4,096 they are dropped, not parked.
    for (let i = 0; i < 5000; i++) rows.push({ pk: `k${i}`, sk: 'a', v: rows.length });
    // Then the same keys again, mixed, overwriting their own items or adding one, and a hot key between them.
    for (let i = 0; i < 4000; i++) {
      const pk = random() < 0.2 ? 'hot' : `k${random() < 0.5 ? Math.floor(random() * 4096) : 4096 + Math.floor(random() * 904)}`;
      rows.push({ pk, sk: random() < 0.7 ? 'a' : 'b', v: rows.length });
    }
    const table = await aws.newTable();
    const input = await inputFile('parked.csv', `pk,sk,v\n${rows.map((r) => `${r.pk},${r.sk},${r.v}`).join('\n')}\n`);
    const result = await run({ input, table, types: { v: 'N' }, order: 'window', window: 30 });
    expect(result).toMatchObject({ rowsRead: rows.length, rejected: 0, complete: true, order: 'window' });
    expect(result.written + result.superseded).toBe(rows.length);

    const expected = new Map<string, number>();
    for (const r of rows) expected.set(`${r.pk}|${r.sk}`, r.v);
    const got = new Map<string, number>();
    for (const raw of await scanAll(aws.client(), table)) {
      const item = plainItem(raw) as { pk: { S: string }; sk: { S: string }; v: { N: string } };
      got.set(`${item.pk.S}|${item.sk.S}`, Number(item.v.N));
    }
    const wrong = [...expected].filter(([k, v]) => got.get(k) !== v).slice(0, 5);
    expect(wrong.map(([key, v]) => ({ key, expected: v, actual: got.get(key) }))).toEqual([]);
    expect(got.size).toBe(expected.size);
  }, 240_000);
});
