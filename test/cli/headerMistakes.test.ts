/**
 * Through the CLI, a newcomer's first hour: a ';'-separated file without --delimiter, a --types typo,
 * `aws dynamodb scan` output, a batch-write-item request file and a 39-digit number. Each mistake the
 * input already shows stops before the first write with its exit code (65 the input, 64 an option) and
 * the fix, which then works. More mistakes of these kinds, in process: test/integration/headerCheck.test.ts.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
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

/** A load that must stop before its first write: the table empty, no reject file. */
async function refused(input: string, table: string, more: string[] = []) {
  const run = await cli(['load', input, '--table', table, ...more]);
  expect(await rawScan(endpoint, table)).toEqual([]);
  expect(existsSync(`${input}.rejects.jsonl`)).toBe(false);
  return run;
}

describe('the header shows it: stopped before the first write', () => {
  it("a ';'-separated file without --delimiter: 65 with --delimiter ';', which then loads it", async () => {
    const table = await newTable();
    const input = await file('orders.csv', 'customerId;orderId;total\nc1;o1;12.50\nc2;o2;7\n');
    const run = await refused(input, table);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain(input);
    expect(run.stderr).toContain("--delimiter ';'");
    const fixed = await cli(['load', input, '--table', table, '--delimiter', ';']);
    expect(fixed.code).toBe(0);
    expect((await rawScan(endpoint, table)).length).toBe(2);
  });

  it('--types totl:N (a typo): 64 with the closest column, where every total was silently a string', async () => {
    const table = await newTable();
    const input = await file('orders.csv', 'customerId,orderId,total\nc1,o1,12.50\n');
    const run = await refused(input, table, ['--types', 'totl:N']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('did you mean "total"');
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
    const run = await cli(['load', await file('scan.json', SCAN), '--table', table]);
    expect(run.stderr).not.toMatch(/ddb-spread: error/);
    expect(run.code).toBe(0);
    expect(await rawScan(endpoint, table)).toEqual(
      expectedScan(
        '{"customerId":{"S":"c1"},"orderId":{"S":"o1"},"total":{"N":"12345678901234567890123456789012345678"},"tags":{"SS":["a","b"]},"blob":{"B":"AAEC"}}',
        '{"customerId":{"S":"c2"},"orderId":{"S":"o2"}}',
      ),
    );
  });

  it('a batch-write-item request file: 65 at once, with the jq command that converts it', async () => {
    const table = await newTable();
    const input = await file('requests.json', '{\n  "Orders": [\n    {"PutRequest": {"Item": {"customerId": {"S": "c1"}, "orderId": {"S": "o1"}}}}\n  ]\n}\n');
    const run = await refused(input, table);
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('batch-write-item');
    expect(run.stderr).toContain(`jq -c '.["Orders"][] | .PutRequest.Item // empty'`);
  });

  it('a 39-digit number: the hint names the column, and the --types it gives stores every digit', async () => {
    const table = await newTable();
    const digits = '123456789012345678901234567890123456789';
    const input = await file('big.jsonl', `{"customerId":"c1","orderId":"o1","total":${digits}}\n`);
    expect((await cli(['load', input, '--table', table])).code).toBe(2);
    const reject = JSON.parse(await readFile(`${input}.rejects.jsonl`, 'utf8')) as { message: string };
    expect(reject.message).toContain('--types total:S');
    const fixed = await cli(['load', input, '--table', table, '--types', 'total:S', '--rejects', `${input}.2.rejects.jsonl`]);
    expect(fixed.code).toBe(0);
    expect(await rawScan(endpoint, table)).toEqual(expectedScan(`{"customerId":{"S":"c1"},"orderId":{"S":"o1"},"total":{"S":"${digits}"}}`));
  });
});
