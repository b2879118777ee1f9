/**
 * Through the CLI: mistakes the input's header or first rows already show stop the load before its first
 * write, naming the file and the fix (a wrong delimiter, a key column spelled otherwise, a --types typo),
 * and the JSON documents people have at hand (an array, `aws dynamodb scan` output) are read, while a
 * batch-write-item request file is refused with its conversion. Each case from a newcomer's first hour.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import { expectedScan, rawScan } from '../support/rawScan.js';

beforeAll(assertCliBuilt);
const ORDERS = { partitionKey: { name: 'customerId', type: 'S' as const }, sortKey: { name: 'orderId', type: 'S' as const } };
const aws = useLocalAws({ name: 'headercli', keys: ORDERS });
const { endpoint, dir, newTable } = aws;
const cli = localCli(aws);
let seq = 0;

async function file(name: string, text: string): Promise<string> {
  const path = join(dir(), `${++seq}-${name}`);
  await writeFile(path, text);
  return path;
}

const rows = (sep: string, header = ['customerId', 'orderId', 'total']) =>
  `${header.join(sep)}\n${['c1', 'o1', '12.50'].join(sep)}\n${['c2', 'o2', '7'].join(sep)}\n`;

/** A load that must stop before its first write: its exit code and message, an empty table, no reject file. */
async function refused(args: string[], table: string, input: string) {
  const run = await cli(['load', ...args, '--table', table]);
  expect(await rawScan(endpoint, table)).toEqual([]);
  expect(existsSync(`${input}.rejects.jsonl`)).toBe(false);
  return run;
}

describe('the header shows it: stopped before the first write', () => {
  it("a ';'-separated file without --delimiter: 65, the fix --delimiter ';' (then it loads)", async () => {
    const table = await newTable();
    const input = await file('orders.csv', rows(';'));
    const run = await refused([input], table, input);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(input);
    expect(run.stderr).toContain("--delimiter ';'");
    expect(run.stderr).not.toMatch(/MISSING_KEY/);
    const fixed = await cli(['load', input, '--table', table, '--delimiter', ';']);
    expect(fixed.code).toBe(0);
    expect((await rawScan(endpoint, table)).length).toBe(2);
  });

  it.each([
    ['a key column that differs by case', ['CustomerId', 'orderId', 'total'], '"CustomerId", which differs only by case'],
    ['a key column with a leading space', ['customerId', ' orderId', 'total'], '" orderId", which has spaces around it'],
    ['a tab-separated file named .csv', ['customerId\torderId\ttotal'], '--delimiter tab'],
  ])('%s: 65 naming the column and the fix', async (_what, header, says) => {
    const table = await newTable();
    const input = await file('orders.csv', rows(header.length === 1 ? '\t' : ',', header.length === 1 ? header[0]!.split('\t') : header));
    const run = await refused([input], table, input);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(says);
  });

  it('--types totl:N (a typo): 64 with the closest column, where it used to load every total as a string', async () => {
    const table = await newTable();
    const input = await file('orders.csv', rows(','));
    const run = await refused([input, '--types', 'totl:N'], table, input);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('did you mean "total"');
  });

  it('a set of parts: the part with the bad header is named, and no part is written', async () => {
    const table = await newTable();
    const folder = join(dir(), `${++seq}-parts`);
    await mkdir(folder);
    await writeFile(join(folder, 'a.csv'), rows(','));
    await writeFile(join(folder, 'b.csv'), rows(',', ['customerId', 'OrderId', 'total']).replace(/c1/, 'c3').replace(/c2/, 'c4'));
    const run = await cli(['load', folder, '--table', table]);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(join(folder, 'b.csv'));
    expect(run.stderr).toContain('"OrderId"');
    expect(await rawScan(endpoint, table)).toEqual([]);
  });

  it('the estimate and a dry run stop the same way; --segment workers each do', async () => {
    const table = await newTable();
    const input = await file('orders.csv', rows(';'));
    for (const args of [['estimate', input], ['load', input, '--dry-run'], ['load', input, '--segment', '0/2'], ['load', input, '--segment', '1/2', '--strict']]) {
      const run = await cli([...args, '--table', table]);
      expect(run.code, args.join(' ')).toBe(65);
      expect(run.stderr).toContain("--delimiter ';'");
    }
    expect(await rawScan(endpoint, table)).toEqual([]);
  });

  it('JSON Lines whose first rows spell the key otherwise: 65; a key left out of some rows still loads the rest', async () => {
    const table = await newTable();
    const input = await file('orders.jsonl', '{"CustomerId":"c1","orderId":"o1"}\n{"CustomerId":"c2","orderId":"o2"}\n');
    const run = await refused([input], table, input);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('"CustomerId"');
    const sparse = await file('sparse.jsonl', '{"orderId":"o0"}\n{"customerId":"c1","orderId":"o1"}\n');
    const loaded = await cli(['load', sparse, '--table', table]);
    expect(loaded.code).toBe(2);
    expect(await rawScan(endpoint, table)).toEqual(expectedScan('{"customerId":{"S":"c1"},"orderId":{"S":"o1"}}'));
  });

  it('what is fine is not refused: --columns for a headerless file, a GSI key column absent (a sparse index), a checkpointed rerun', async () => {
    const table = await newTable({ ...ORDERS, gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' } }] });
    const headerless = await file('headerless.csv', 'c9,o9,5\n');
    expect((await cli(['load', headerless, '--table', table, '--columns', 'customerId,orderId,total'])).code).toBe(0);
    const input = await file('orders.csv', rows(','));
    const checkpoint = join(dir(), `${++seq}.checkpoint`);
    expect((await cli(['load', input, '--table', table, '--checkpoint', checkpoint])).code).toBe(0);
    const again = await cli(['load', input, '--table', table, '--checkpoint', checkpoint]);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toMatch(/ddb-spread: error/);
    expect((await rawScan(endpoint, table)).length).toBe(3);
  });
});

const SCAN = `{
    "Items": [
        {
            "customerId": {
                "S": "c1"
            },
            "orderId": {
                "S": "o1"
            },
            "total": {
                "N": "12345678901234567890123456789012345678"
            },
            "tags": {
                "SS": [
                    "a",
                    "b"
                ]
            },
            "blob": {
                "B": "AAEC"
            }
        },
        {
            "customerId": {
                "S": "c2"
            },
            "orderId": {
                "S": "o2"
            }
        }
    ],
    "Count": 2,
    "ScannedCount": 2,
    "ConsumedCapacity": null
}
`;

describe('common JSON shapes', () => {
  it('aws dynamodb scan output loads its Items with their types exactly', async () => {
    const table = await newTable();
    const input = await file('scan.json', SCAN);
    const run = await cli(['load', input, '--table', table]);
    expect(run.stderr).not.toMatch(/ddb-spread: error/);
    expect(run.code).toBe(0);
    expect(await rawScan(endpoint, table)).toEqual(
      expectedScan(
        '{"customerId":{"S":"c1"},"orderId":{"S":"o1"},"total":{"N":"12345678901234567890123456789012345678"},"tags":{"SS":["a","b"]},"blob":{"B":"AAEC"}}',
        '{"customerId":{"S":"c2"},"orderId":{"S":"o2"}}',
      ),
    );
  });

  it('a JSON array of items loads; a bad element is rejected with its line', async () => {
    const table = await newTable();
    const input = await file('orders.json', '[\n  {"customerId": "c1", "orderId": "o1", "total": 5},\n  {"orderId": "o2"}\n]\n');
    const run = await cli(['load', input, '--table', table]);
    expect(run.code).toBe(2);
    expect(await rawScan(endpoint, table)).toEqual(expectedScan('{"customerId":{"S":"c1"},"orderId":{"S":"o1"},"total":{"N":"5"}}'));
    const rejects = (await readFile(`${input}.rejects.jsonl`, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { line: number; code: string });
    expect(rejects.map((r) => [r.line, r.code])).toEqual([[3, 'MISSING_KEY']]);
  });

  it('a batch-write-item request file is refused at once with the jq command that converts it', async () => {
    const table = await newTable();
    const input = await file('requests.json', '{\n  "Orders": [\n    {"PutRequest": {"Item": {"customerId": {"S": "c1"}, "orderId": {"S": "o1"}}}}\n  ]\n}\n');
    const run = await refused([input], table, input);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('batch-write-item');
    expect(run.stderr).toContain(`jq -c '.["Orders"][] | .PutRequest.Item // empty'`);
  });

  it('a 39-digit number: the hint names the column, and the --types it gives stores every digit', async () => {
    const table = await newTable();
    const digits = '123456789012345678901234567890123456789';
    const input = await file('big.jsonl', `{"customerId":"c1","orderId":"o1","total":${digits}}\n`);
    const first = await cli(['load', input, '--table', table]);
    expect(first.code).toBe(2);
    const reject = JSON.parse(await readFile(`${input}.rejects.jsonl`, 'utf8')) as { message: string };
    expect(reject.message).toContain('--types total:S');
    const fixed = await cli(['load', input, '--table', table, '--types', 'total:S', '--rejects', `${input}.2.rejects.jsonl`]);
    expect(fixed.code).toBe(0);
    expect(await rawScan(endpoint, table)).toEqual(expectedScan(`{"customerId":{"S":"c1"},"orderId":{"S":"o1"},"total":{"S":"${digits}"}}`));
  });
});
