/**
 * verify's Scan read (`--scan N`, `--scan auto`) of the built CLI against DynamoDB Local: the same
 * tamperings are found as by BatchGetItem of the keys (deleted item, changed attribute, a number's
 * digits, a set's member, a delete undone), with identical outcome counts and differences, plus the extra
 * item only a Scan can see; only reads are sent; --scan auto takes the Scan when the table is about the
 * input's size and BatchGetItem when it is much bigger. (Pacing and resume: test/integration/verifyScan.test.ts.)
 */
import { BatchWriteItemCommand, DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import type { TableKeys } from '../support/ddb.js';
import { createForwarder, reply, startProxyServer, TARGET_PREFIX } from '../support/httpForward.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import { rawScan } from '../support/rawScan.js';
import type { VerifyResult } from '../../src/verifying/verifyResult.js';

type VerifyJson = VerifyResult & { matched: boolean };
type DifferenceLine = { file: string; line: number; code: string; key: Record<string, string>; raw: string; field?: string; message: string };

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'verify-scan', keys: KEYS });
const { dir, newTable } = aws;
const cli = localCli(aws, { stdin: '' });

/** The DynamoDB operations sent through a proxy in front of DynamoDB Local. */
async function recordingProxy(): Promise<{ url: string; operations: string[] }> {
  const operations: string[] = [];
  const upstream = createForwarder(aws.endpoint);
  const server = await startProxyServer('verify-scan-recorder', async (req, res, body) => {
    operations.push(String(req.headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, ''));
    const answer = await upstream.forward(req, body);
    reply(res, answer.status, answer.headers, answer.body);
  });
  aws.closeAfterAll({ close: async () => (await server.close(), upstream.close()) });
  return { url: server.url, operations };
}

/** `rows` keys (u-0.. × sk 0..2); one row superseded at the end; u-5's rows deleted at the end. */
function csvInput(rows = 300): string {
  const lines = ['op,pk,sk,price,qty,tags,note'];
  const keys = rows / 3;
  for (let i = 0; i < rows; i++) lines.push(`put,u-${i % keys},${Math.floor(i / keys)},${(i * 1.25).toFixed(2)},${i},a|b|t${i % 7},n${i}`);
  lines.push(`put,u-50,1,999.50,1,x|y,superseding`);
  for (let sk = 0; sk < 3; sk++) lines.push(`delete,u-5,${sk},,,,`);
  return `${lines.join('\n')}\n`;
}

const FLAGS = ['--types', 'price:N,qty:N,tags:SS', '--operation-column', 'op'];

async function loaded(rows = 300): Promise<{ table: string; input: string }> {
  const table = await newTable();
  const input = join(dir(), `${table}.csv`);
  await writeFile(input, csvInput(rows));
  const run = await cli(['load', input, '--table', table, ...FLAGS]);
  expect(run.code, run.stderr).toBe(0);
  return { table, input };
}

const key = (pk: string, sk: number) => ({ pk: { S: pk }, sk: { N: String(sk) } });

const readLines = async (path: string) =>
  (await readFile(path, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as DifferenceLine);

describe('ddb-spread verify --scan', () => {
  it('finds the same tamperings as BatchGetItem of the keys, with the same counts and differences, and the extra item besides; only reads', async () => {
    const { table, input } = await loaded();
    const c = aws.client();
    await c.send(new DeleteItemCommand({ TableName: table, Key: key('u-10', 0) }));
    await c.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key('u-11', 0),
        UpdateExpression: 'SET note = :v',
        ExpressionAttributeValues: { ':v': { S: 'changed' } },
      }),
    );
    // 138.75 stored as 138.76: one digit.
    await c.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key('u-11', 1),
        UpdateExpression: 'SET price = :v',
        ExpressionAttributeValues: { ':v': { N: '138.76' } },
      }),
    );
    await c.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key('u-12', 2),
        UpdateExpression: 'SET tags = :v',
        ExpressionAttributeValues: { ':v': { SS: ['a', 'b', 'zz'] } },
      }),
    );
    await c.send(new PutItemCommand({ TableName: table, Item: { ...key('u-5', 1), note: { S: 'back' } } }));
    await c.send(new PutItemCommand({ TableName: table, Item: { ...key('stranger', 9), note: { S: 'not from the input' } } }));
    // Not differences: the same number spelt otherwise, the same set in another order (a fingerprint must see them equal).
    await c.send(
      new UpdateItemCommand({ TableName: table, Key: key('u-2', 0), UpdateExpression: 'SET price = :v', ExpressionAttributeValues: { ':v': { N: '2.500' } } }),
    );
    await c.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key('u-3', 0),
        UpdateExpression: 'SET tags = :v',
        ExpressionAttributeValues: { ':v': { SS: ['t3', 'b', 'a'] } },
      }),
    );
    const before = await rawScan(aws.endpoint, table);

    const byKeys = join(dir(), `${table}.keys.jsonl`);
    const keysRun = await cli(['verify', input, '--table', table, ...FLAGS, '--json', '--differences', byKeys]);
    expect(keysRun.code, keysRun.stderr).toBe(5);
    const keys = JSON.parse(keysRun.stdout) as VerifyJson;
    expect(keys.tableRead.read).toBe('batch-get');

    const proxy = await recordingProxy();
    const byScan = join(dir(), `${table}.scan.jsonl`);
    const scanRun = await cli(['verify', input, '--table', table, ...FLAGS, '--json', '--scan', '4', '--differences', byScan, '--endpoint-url', proxy.url]);
    expect(scanRun.code, scanRun.stderr).toBe(5);
    const scan = JSON.parse(scanRun.stdout) as VerifyJson;
    expect(scan.tableRead).toEqual({ read: 'scan', segments: 4, why: '--scan 4: a Scan of the table in 4 segments' });
    // 300 keys: 5 not as the input leaves them (u-5/1's delete undone), 2 deleted and absent; the Scan also sees the stranger.
    expect(keys.outcomes).toEqual({
      matched: 293,
      absent: 2,
      missing: 1,
      different: 3,
      deletedButPresent: 1,
      rejectedButPresent: 0,
      extra: 0,
      expired: 0,
      conditionKept: 0,
    });
    expect(scan.outcomes).toEqual({ ...keys.outcomes, extra: 1 });
    expect(scan.writes).toEqual(keys.writes);
    expect(scan.differing).toBe(keys.differing + 1);
    // 297 items in the table (300 keys, 3 deleted, u-10/0 deleted, u-5/1 back, the stranger).
    expect(scan.scan).toEqual({ segments: 4, items: 298 });
    // The differences file lists the same keys, lines and messages, then the extra item.
    const fromKeys = await readLines(byKeys);
    const fromScan = await readLines(byScan);
    expect(fromScan.slice(0, -1)).toEqual(fromKeys);
    expect(fromScan.at(-1)).toMatchObject({ code: 'EXTRA', file: `table:${table}`, key: { pk: 'stranger', sk: '9' } });
    expect(fromKeys.map((r) => `${r.code} ${r.key.pk}/${r.key.sk}`).sort()).toEqual([
      'DELETED_BUT_PRESENT u-5/1',
      'DIFFERENT u-11/0',
      'DIFFERENT u-11/1',
      'DIFFERENT u-12/2',
      'MISSING u-10/0',
    ]);
    expect(fromScan.find((r) => r.key.pk === 'u-11' && r.key.sk === '1')!.message).toContain('"price": expected {"N":"138.75"}, stored {"N":"138.76"}');
    // The Scan replaced the BatchGetItem pass: only the 4 keys whose items differ from the Scan's were read again by key.
    expect(scan.reads.keys).toBe(4);
    expect(keys.reads.keys).toBe(300);
    expect(scan.reads.scanCalls).toBeGreaterThanOrEqual(4);
    expect(new Set(proxy.operations)).toEqual(new Set(['DescribeTable', 'Scan', 'BatchGetItem']));
    expect(await rawScan(aws.endpoint, table)).toEqual(before);

    // The summary says how the table was read.
    const text = await cli(['verify', input, '--table', table, ...FLAGS, '--scan', '2', '--differences', join(dir(), `${table}.text.jsonl`)]);
    expect(text.code).toBe(5);
    expect(text.stdout).toContain('  table read       --scan 2: a Scan of the table in 2 segments');
    expect(text.stdout).toMatch(/reads {12}\d+ Scan calls?, \d BatchGetItem calls? \(keys read again to name what differs\)/);
  }, 120_000);

  it('--scan auto takes the Scan when the table is about the input, BatchGetItem when the table is much bigger', async () => {
    const { table, input } = await loaded();
    const small = await cli(['verify', input, '--table', table, ...FLAGS, '--json', '--scan', 'auto']);
    expect(small.code, small.stderr).toBe(0);
    const smallResult = JSON.parse(small.stdout) as VerifyJson;
    expect(smallResult.tableRead.read).toBe('scan');
    expect(smallResult.tableRead.segments).toBe(1);
    // ~100-byte items: each key costs a whole read unit by key, the whole table a few by a Scan.
    expect(smallResult.tableRead.why).toMatch(
      /^--scan auto: a Scan of the table reads [\d.]+ read units, BatchGetItem of the keys 300 \(\d+x as many\): rounding each key up to 4 KB costs more than reading the whole table \(the table [\d.]+ KB\)$/,
    );
    expect(smallResult.outcomes.matched).toBe(297);
    // The same from a config file; and estimate takes --scan auto too (it prices both reads anyway).
    const config = join(dir(), `${table}.job.json`);
    await writeFile(config, JSON.stringify({ table, types: 'price:N,qty:N,tags:SS', operationColumn: 'op', scan: 'auto' }));
    const fromConfig = await cli(['verify', input, '--config', config, '--json']);
    expect(fromConfig.code, fromConfig.stderr).toBe(0);
    expect((JSON.parse(fromConfig.stdout) as VerifyJson).tableRead).toEqual(smallResult.tableRead);
    const estimate = await cli(['estimate', input, '--table', table, ...FLAGS, '--scan', 'auto', '--json']);
    expect(estimate.code, estimate.stderr).toBe(0);
    expect((JSON.parse(estimate.stdout) as { verify: { cheaper: string } }).verify.cheaper).toBe('scan');

    // 400 items of 8 KB no row writes: the table is ~3 MB, a Scan ~800 read units against 300 by key.
    const pad = 'x'.repeat(8000);
    for (let start = 0; start < 400; start += 25)
      await aws.client().send(
        new BatchWriteItemCommand({
          RequestItems: {
            [table]: Array.from({ length: 25 }, (_, i) => ({ PutRequest: { Item: { ...key(`big-${start + i}`, 0), pad: { S: pad } } } })),
          },
        }),
      );
    const big = await cli(['verify', input, '--table', table, ...FLAGS, '--json', '--scan', 'auto']);
    expect(big.code, big.stderr).toBe(0);
    const bigResult = JSON.parse(big.stdout) as VerifyJson;
    expect(bigResult.tableRead.read).toBe('batch-get');
    expect(bigResult.tableRead.why).toMatch(
      /^--scan auto: BatchGetItem of the keys reads 300 read units, a Scan of the table [\d,.]+ \(\d+(\.\d)?x as many\) \(the table 3\.\d MB\)$/,
    );
    expect(bigResult.scan).toBeUndefined();
    expect(bigResult.reads.keys).toBe(300);
    // The same table read by a Scan anyway: the 400 items are extra.
    const forced = await cli(['verify', input, '--table', table, ...FLAGS, '--json', '--scan', '2', '--differences', join(dir(), `${table}.forced.jsonl`)]);
    expect(forced.code).toBe(5);
    const forcedResult = JSON.parse(forced.stdout) as VerifyJson;
    expect(forcedResult.outcomes.extra).toBe(400);
    expect(forcedResult.reads.consumedRcu).toBeGreaterThan(bigResult.reads.consumedRcu);
  }, 120_000);
});
