/**
 * Deletes: DeleteRequest in BatchWriteItem for a key-only delete list (--delete), an operation
 * column, and an incremental export's change records without NewImage; counted in the summary apart
 * from puts; a put and a delete of one key keep their input order.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load, type LoadOptions } from '../../src/index.js';
import { formatSummary } from '../../src/reporting/summary.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { buildExport, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejects } from '../support/rejects.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

const { endpoint, client, dir, newTable } = useLocalAws({ name: 'deletes', processCredentials: true });

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({ endpoint, region: 'us-east-1', rejectsPath: join(dir(), `d-${++runs}.rejects.jsonl`), ...options });

const file = async (name: string, text: string) => {
  const { writeFile } = await import('node:fs/promises');
  const path = join(dir(), `${++runs}-${name}`);
  await writeFile(path, text);
  return path;
};

const keysOf = async (table: string) => (await scanAll(client(), table)).map((i) => `${i.pk!.S}/${i.sk!.N}`).sort();

describe('deletes', () => {
  it('--delete: a key-only list deletes those items (others stay); the summary splits put and deleted', async () => {
    const table = await newTable(KEYS);
    const rows = Array.from({ length: 600 }, (_, i) => `p${i % 30},${i},x${i}`).join('\n');
    await run({ input: await file('items.csv', `pk,sk,v\n${rows}\n`), table });
    const doomed = Array.from({ length: 600 }, (_, i) => i).filter((i) => i % 3 === 0);
    // Extra attributes are ignored, and a key that is not there costs a delete and nothing else.
    const list = `pk,sk,v\n${doomed.map((i) => `p${i % 30},${i},ignored`).join('\n')}\nnope,1,x\n`;
    const result = await run({ input: await file('doomed.csv', list), table, delete: true });
    expect(result).toMatchObject({ rowsRead: 201, written: 201, deleted: 201, rejected: 0 });
    const left = await keysOf(table);
    expect(left.length).toBe(400);
    expect(left.some((k) => doomed.includes(Number(k.split('/')[1])))).toBe(false);
    expect(formatSummary(result)).toMatch(/written\s+201\s+\(0 put, 201 deleted\)/);
  });

  it('an operation column: puts and deletes of one key keep their input order; a bad operation is rejected', async () => {
    const table = await newTable(KEYS);
    const text = ['pk,sk,op,v', 'a,1,put,first', 'a,1,delete,', 'b,2,delete,', 'b,2,put,second', 'c,3,,third', 'd,4,DELETE,', 'e,5,upsert,x'].join('\n');
    const result = await run({ input: await file('ops.csv', `${text}\n`), table, operationColumn: 'op' });
    expect(result).toMatchObject({ rowsRead: 7, rejected: 1, deleted: 2 });
    expect(result.written + result.superseded).toBe(6);
    const items = await scanAll(client(), table);
    expect(items.map((i) => `${i.pk!.S}:${i.v?.S}`).sort()).toEqual(['b:second', 'c:third']);
    // The operation column is not stored.
    expect(items.every((i) => i.op === undefined)).toBe(true);
    const [reject] = await readRejects(result.rejectsPath!);
    expect(reject).toMatchObject({ line: 8, code: 'TYPE_ERROR', field: 'op' });
  });

  it('deletes and puts of many keys across batches, in --order input and round-robin: the last operation of each key wins', async () => {
    for (const order of ['input', 'round-robin'] as const) {
      const table = await newTable(KEYS);
      const lines: string[] = [];
      const expected = new Map<string, boolean>();
      for (let i = 0; i < 3000; i++) {
        const key = `k${i % 97},${i % 500}`;
        const op = (i * 7919) % 3 === 0 ? 'delete' : 'put';
        lines.push(`${key},${op},${i}`);
        expected.set(key.replace(',', '/'), op === 'put');
      }
      await run({ input: await file('mixed.csv', `pk,sk,op,v\n${lines.join('\n')}\n`), table, operationColumn: 'op', order, types: { v: 'S' } });
      const want = [...expected].filter(([, present]) => present).map(([k]) => k);
      expect(await keysOf(table), order).toEqual(want.sort());
    }
  });

  it('a full export followed by its incremental export reproduces the source table (puts, updates, deletes)', async () => {
    const item = (i: number, v: string) => ({ pk: { S: `k${i % 11}` }, sk: { N: String(i) }, v: { S: v } });
    const full = buildExport('t', 'FULL_EXPORT', [
      Array.from({ length: 120 }, (_, i) => ({ Item: item(i, `old${i}`) })),
      Array.from({ length: 80 }, (_, i) => ({ Item: item(120 + i, `old${120 + i}`) })),
    ]);
    const change = (i: number, micros: number, image?: ReturnType<typeof item>) => ({
      Metadata: { WriteTimestampMicros: { N: String(micros) } },
      Keys: { pk: item(i, '').pk, sk: item(i, '').sk },
      ...(image ? { NewImage: image } : {}),
      OldImage: item(i, `old${i}`),
    });
    // Updates of 0..49, deletes of 50..99, new items 200..229.
    const incremental = buildExport('t', 'INCREMENTAL_EXPORT', [
      [...Array.from({ length: 50 }, (_, i) => change(i, 1000 + i, item(i, `new${i}`))), ...Array.from({ length: 25 }, (_, i) => change(50 + i, 2000 + i))],
      [
        ...Array.from({ length: 25 }, (_, i) => change(75 + i, 3000 + i)),
        ...Array.from({ length: 30 }, (_, i) => change(200 + i, 4000 + i, item(200 + i, `new${200 + i}`))),
      ],
      [],
    ]);
    const fullFolder = await writeExport(join(dir(), 'full'), full);
    const incrementalFolder = await writeExport(join(dir(), 'inc'), incremental);
    const table = await newTable(KEYS);
    const result = await run({ input: [fullFolder, incrementalFolder], table });
    expect(result).toMatchObject({ rowsRead: 330, rejected: 0, deleted: 50 });
    const items = await scanAll(client(), table);
    const byKey = new Map(items.map((i) => [Number(i.sk!.N), i.v!.S]));
    expect(items.length).toBe(200 - 50 + 30);
    for (let i = 0; i < 230; i++) {
      const want = i < 50 ? `new${i}` : i < 100 ? undefined : i < 200 ? `old${i}` : `new${i}`;
      expect(byKey.get(i), String(i)).toBe(want);
    }
  });
});
