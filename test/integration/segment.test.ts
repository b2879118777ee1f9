/**
 * Scale-out: N workers with --segment i/N over the same file load every row exactly once,
 * concurrently, into one table, and each rejected row is reported by exactly one of them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { segmentOfKey } from '../../src/load/segment.js';
import { load, type LoadResult } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { GENERATED_TYPES, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const ORDERS_KEYS: TableKeys = { partitionKey: { name: 'customerId', type: 'S' }, sortKey: { name: 'orderId', type: 'S' } };
const WITH_ERRORS = new URL('../../samples/orders-with-errors.csv', import.meta.url).pathname;

const { endpoint, client, dir, newTable } = useLocalAws({ name: 'segment', processCredentials: true });

describe('--segment i/N', () => {
  it('four workers at once load every row exactly once; each key on one worker', async () => {
    const rows = 20_000;
    const input = join(dir(), 'rows.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    const results = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        load({
          input,
          table,
          endpoint,
          region: 'us-east-1',
          types: GENERATED_TYPES,
          segment: `${i}/4`,
          concurrency: 4,
          rejectsPath: join(dir(), `w${i}.rejects.jsonl`),
        }),
      ),
    );
    for (const [i, r] of results.entries()) {
      expect(r, `worker ${i}`).toMatchObject({ rowsRead: rows, rejected: 0, complete: true, segment: `${i}/4` });
      expect(r.written + r.otherSegments).toBe(rows);
      // A fair share, not everything on one worker: 2,500 keys of 8 rows hash over 4 segments.
      expect(r.written).toBeGreaterThan(rows / 4 / 1.5);
    }
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(rows);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    // Every item of a partition key was written by the worker whose segment the key hashes to.
    for (const item of items.slice(0, 500)) {
      const segment = segmentOfKey(`S${item['pk']!.S!}`, 4);
      expect(results[segment]!.written).toBeGreaterThan(0);
    }
  });

  it('each rejected row is reported by exactly one worker; --total-wcu splits the rate', async () => {
    const table = await newTable(ORDERS_KEYS);
    const whole = await load({
      input: WITH_ERRORS,
      table,
      endpoint,
      region: 'us-east-1',
      types: { total: 'N', gift: 'BOOL' },
      rejectsPath: join(dir(), 'whole.rejects.jsonl'),
    });
    expect(whole.rejected).toBeGreaterThan(0);
    const parts: LoadResult[] = [];
    for (const i of [0, 1, 2]) {
      parts.push(
        await load({
          input: WITH_ERRORS,
          table,
          endpoint,
          region: 'us-east-1',
          types: { total: 'N', gift: 'BOOL' },
          segment: `${i}/3`,
          totalWcu: 300,
          rejectsPath: join(dir(), `part${i}.rejects.jsonl`),
        }),
      );
    }
    expect(parts.reduce((n, r) => n + r.rejected, 0)).toBe(whole.rejected);
    expect(parts.reduce((n, r) => n + r.written + r.superseded, 0)).toBe(whole.written + whole.superseded);
    const lines = (await Promise.all(parts.filter((r) => r.rejectsPath).map((r) => readFile(r.rejectsPath!, 'utf8')))).join('').split('\n').filter(Boolean);
    const wholeLines = (await readFile(whole.rejectsPath!, 'utf8')).split('\n').filter(Boolean);
    expect(lines.map((l) => (JSON.parse(l) as { line: number }).line).sort((a, b) => a - b)).toEqual(
      wholeLines.map((l) => (JSON.parse(l) as { line: number }).line).sort((a, b) => a - b),
    );
    for (const r of parts) expect(r.rate.targetWcu).toBe(100);
  });
});
