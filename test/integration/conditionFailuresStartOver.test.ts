/**
 * --condition-failures when a conditional load starts over: a striped read (the default order) that finds the
 * file not grouped writes every row again through the window. The second pass must not count the rows the
 * first pass wrote as conditionFailed, nor list them in the file: their items are the load's own writes.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { LoadEvent } from '../../src/index.js';
import { scanAll } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const aws = useLocalAws({
  name: 'cf-start-over',
  processCredentials: true,
  keys: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } },
});
const { client, newTable, dropTable } = aws;
const { inputFile, run, path } = localLoad(aws);

interface Row {
  pk: string;
  sk: string;
  v: string;
}

const key = (j: number) => `k${String(j).padStart(4, '0')}`;

/**
 * 2,400 rows sorted by partition key (480 keys of 5 items), and a second row of item k0002/s0 past the first
 * 2,048 rows (which the order's first look reads), so that a striped read finds it: its condition truly false
 * (the file put the item earlier).
 */
const SORTED = 2400;
const LATE_AT = 2200;
function rows(): Row[] {
  const sorted = Array.from({ length: SORTED }, (_, i) => ({ pk: key(Math.floor(i / 5)), sk: `s${i % 5}`, v: `v${i}` }));
  return [...sorted.slice(0, LATE_AT), { pk: key(2), sk: 's0', v: 'late' }, ...sorted.slice(LATE_AT)];
}

const csv = (list: Row[]) => `pk,sk,v\n${list.map((r) => `${r.pk},${r.sk},${r.v}`).join('\n')}\n`;

async function linesOf(file: string): Promise<Array<{ line: number; key: Record<string, unknown> }>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { line: number; key: Record<string, unknown> });
}

describe('--condition-failures across a start over through the window', () => {
  it.each([{ checkpoint: false }, { checkpoint: true }])(
    'lists only the rows whose condition was false, once (checkpoint: $checkpoint)',
    async ({ checkpoint }) => {
      const list = rows();
      const file = await inputFile('late-key.csv', csv(list));
      const table = await newTable();
      // k0010/s0..k0019/s0 are in the table before the load: their rows' conditions are false.
      for (let j = 10; j < 20; j++)
        await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: key(j) }, sk: { S: 's0' }, v: { S: 'before' } } }));
      const failuresPath = path('kept.jsonl');
      const reading: string[] = [];
      try {
        const result = await run(
          {
            input: file,
            table,
            ifNotExists: true,
            conditionFailuresPath: failuresPath,
            concurrency: 4,
            ...(checkpoint ? { checkpointPath: path('job.ckpt') } : {}),
          },
          {
            testSeams: { stripeBytes: 6000 },
            onEvent: (e: LoadEvent) => {
              if (e.type === 'reading') reading.push(e.order);
            },
          },
        );
        // No second pass (before the fix: stripes, then the window, whose pass found the first pass's own items
        // and counted those 1,340 rows conditionFailed, listed in the file).
        expect(reading).toEqual(['window']);
        expect(result.rowsRead).toBe(list.length);
        // Applied one by one: k0010..k0019 kept, and the late k0002 (its key written earlier in the file).
        expect(result.conditionFailed).toBe(11);
        expect(result.written).toBe(list.length - 11);
        expect(result.rejected + result.notWritten).toBe(0);
        const lines = await linesOf(failuresPath);
        expect(lines.map((l) => l.key['pk']).sort()).toEqual([key(2), ...Array.from({ length: 10 }, (_, i) => key(10 + i))].sort());
        expect(lines.find((l) => l.key['pk'] === key(2))!.line).toBe(LATE_AT + 2);
        const items = await scanAll(client(), table);
        expect(items.length).toBe(SORTED);
        expect(items.find((i) => i['pk']!.S === key(2) && i['sk']!.S === 's0')!['v']!.S).toBe(list[10]!.v);
      } finally {
        await dropTable(table);
      }
    },
  );
});
