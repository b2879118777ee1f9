/**
 * Which calls ask DynamoDB for ConsumedCapacity (src/pacing/capacityReports.ts), against DynamoDB Local:
 * a load into fresh keys asks on the first 64 calls and one in 16 after, and its consumed units are still
 * exact; a load whose answers stop matching the plan (overwrites of larger items) asks on every call from
 * the first answer that differs, and counts DynamoDB's units from then on.
 */
import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load, type LoadOptions } from '../../src/index.js';
import { formatSummary } from '../../src/reporting/summary.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'capreports', processCredentials: true });

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({ endpoint, region: 'us-east-1', rejectsPath: join(dir(), `c-${++runs}.rejects.jsonl`), types: { sk: 'N' }, ...options });

/** 3,000 rows of one write unit each (a short payload), 30 keys of 100 rows, sorted by key. */
async function rowsFile(): Promise<string> {
  const lines = Array.from({ length: 3000 }, (_, i) => `p${String(Math.floor(i / 100)).padStart(2, '0')},${i},${'v'.repeat(20)}`);
  const path = join(dir(), `${++runs}-rows.csv`);
  await writeFile(path, `pk,sk,payload\n${lines.join('\n')}\n`);
  return path;
}

describe('ConsumedCapacity on some calls', () => {
  it('fresh keys: 120 calls, 67 of them ask (64, then one in 16), and the consumed units equal the planned ones, which DynamoDB charged', async () => {
    const table = await newTable(KEYS);
    const result = await run({ input: await rowsFile(), table, order: 'input', concurrency: 1 });
    expect(result.written).toBe(3000);
    expect(result.capacityReports).toEqual({ calls: 120, asked: 67, inferredUnits: 53 * 25, everyCall: false });
    expect(result.plannedWcu).toBe(3000);
    expect(result.consumedWcu).toBe(3000);
    expect(formatSummary(result)).toContain(
      '3,000 consumed (DynamoDB; reported on 67 of 120 calls, the rest as planned, as every answer matched), 3,000 planned',
    );
    expect(await scanAll(client(), table)).toHaveLength(3000);
  });

  it('overwrites of larger items from row 2,000 on: the first asked call after them turns on every call, and consumed counts what DynamoDB charged from then', async () => {
    const table = await newTable(KEYS);
    // Rows 2,000-2,999 already exist as 3 KB items: DynamoDB charges a put over them 3 units, the plan 1.
    const big = 'x'.repeat(3000);
    for (let i = 2000; i < 3000; i += 25) {
      const requests = Array.from({ length: 25 }, (_, j) => ({
        PutRequest: { Item: { pk: { S: `p${String(Math.floor((i + j) / 100)).padStart(2, '0')}` }, sk: { N: String(i + j) }, big: { S: big } } },
      }));
      await client().send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
    }
    const result = await run({ input: await rowsFile(), table, order: 'input', concurrency: 1 });
    expect(result.written).toBe(3000);
    const reports = result.capacityReports!;
    expect(reports.everyCall).toBe(true);
    // Calls 81-95 (0-based 80-94) went unasked over the first overwrites; call 96 asked and saw 75 units
    // for 25 planned; every call after asked.
    expect(reports).toEqual({ calls: 120, asked: 64 + 1 + 1 + 24, inferredUnits: 30 * 25, everyCall: true });
    const charged = 2000 + 1000 * 3;
    const unaskedOverwrites = 15 * 25;
    expect(result.consumedWcu).toBe(charged - 2 * unaskedOverwrites);
    expect(result.consumedWcu).toBeGreaterThan(result.plannedWcu);
    expect(formatSummary(result)).toContain('reported on 90 of 120 calls, the rest as planned until an answer differed');
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(3000);
    expect(items.filter((i) => i['big'] !== undefined)).toHaveLength(0);
  });
});
