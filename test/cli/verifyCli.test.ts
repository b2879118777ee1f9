/**
 * `ddb-spread verify` of the built CLI against DynamoDB Local: after a clean load (CSV with a superseded
 * row and deletes by --operation-column, and JSON Lines) every key matches and it exits 0; after each
 * tampering (an item deleted, an attribute changed, a number's digits, a set's member, a delete undone)
 * it names the key and the attributes and exits 5, with a private differences file in the reject file's
 * format; --sample finds a 1% tampering rate and says what it proves; and nothing is ever written (every
 * call goes through a recording proxy, which also answers with UnprocessedKeys, and the table reads the
 * same before and after).
 */
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import type { TableKeys } from '../support/ddb.js';
import { createForwarder, reply, startProxyServer, TARGET_PREFIX } from '../support/httpForward.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import { rawScan } from '../support/rawScan.js';
import type { VerifyResult } from '../../src/verifying/verifyResult.js';

/** verify --json's object. */
type VerifyJson = VerifyResult & { matched: boolean; sampleStatement?: string };

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'verify-cli', keys: KEYS });
const { dir, newTable } = aws;
const cli = localCli(aws, { stdin: '' });

/** Every DynamoDB operation the verify sends, through a proxy in front of DynamoDB Local; every 3rd BatchGetItem answers with half its keys unprocessed. */
async function recordingProxy(): Promise<{ url: string; operations: string[] }> {
  const operations: string[] = [];
  const upstream = createForwarder(aws.endpoint);
  let gets = 0;
  const server = await startProxyServer('verify-recorder', async (req, res, body) => {
    const operation = String(req.headers['x-amz-target'] ?? '').replace(TARGET_PREFIX, '');
    operations.push(operation);
    if (operation === 'BatchGetItem' && gets++ % 3 === 2) {
      const request = JSON.parse(body.toString()) as { RequestItems: Record<string, { Keys: unknown[] }> };
      const [table, asked] = Object.entries(request.RequestItems)[0]!;
      const half = Math.ceil(asked.Keys.length / 2);
      const sent = { ...request, RequestItems: { [table]: { ...asked, Keys: asked.Keys.slice(0, half) } } };
      const answer = await upstream.forward(req, Buffer.from(JSON.stringify(sent)));
      const parsed = JSON.parse(answer.body.toString()) as Record<string, unknown>;
      if (asked.Keys.length > half) parsed['UnprocessedKeys'] = { [table]: { ...asked, Keys: asked.Keys.slice(half) } };
      reply(res, answer.status, answer.headers, Buffer.from(JSON.stringify(parsed)));
      return;
    }
    const answer = await upstream.forward(req, body);
    reply(res, answer.status, answer.headers, answer.body);
  });
  aws.closeAfterAll({ close: async () => (await server.close(), upstream.close()) });
  return { url: server.url, operations };
}

/** 300 rows: keys u-0..u-99 × sk 0..2; row 150 again at the end with another price (the later row wins); u-5's rows deleted at the end. */
function csvInput(): string {
  const rows = ['op,pk,sk,price,qty,tags,note'];
  for (let i = 0; i < 300; i++) rows.push(`put,u-${i % 100},${Math.floor(i / 100)},${(i * 1.25).toFixed(2)},${i},a|b|t${i % 7},n${i}`);
  rows.push(`put,u-50,1,999.50,1,x|y,superseding`);
  for (let sk = 0; sk < 3; sk++) rows.push(`delete,u-5,${sk},,,,`);
  return `${rows.join('\n')}\n`;
}

const CSV_FLAGS = ['--types', 'price:N,qty:N,tags:SS', '--operation-column', 'op'];

async function loadedCsv(): Promise<{ table: string; input: string }> {
  const table = await newTable();
  const input = join(dir(), `${table}.csv`);
  await writeFile(input, csvInput());
  const run = await cli(['load', input, '--table', table, ...CSV_FLAGS]);
  expect(run.code, run.stderr).toBe(0);
  // The load's summary says how to check it: this very command, verify for load.
  expect(run.stderr).toContain(`ddb-spread: to check the table against the input: ddb-spread verify ${input} --table ${table} ${CSV_FLAGS.join(' ')}`);
  return { table, input };
}

describe('ddb-spread verify', () => {
  it('after a clean CSV load (a superseded row, deletes): every key matches, exit 0, and nothing is written', async () => {
    const { table, input } = await loadedCsv();
    const before = await rawScan(aws.endpoint, table);
    const proxy = await recordingProxy();
    const run = await cli(['verify', input, '--table', table, ...CSV_FLAGS, '--json', '--endpoint-url', proxy.url]);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as VerifyJson;
    expect(result.matched).toBe(true);
    // 300 keys: 297 items as written (u-50/1 from its later row), 3 deleted and absent.
    expect(result.outcomes).toEqual({
      matched: 297,
      absent: 3,
      missing: 0,
      different: 0,
      deletedButPresent: 0,
      rejectedButPresent: 0,
      extra: 0,
      expired: 0,
      conditionKept: 0,
    });
    expect(result.writes).toEqual({ planned: 304, checked: 300, superseded: 4, notSampled: 0 });
    expect(result.differencesPath).toBeUndefined();
    // Only reads: DescribeTable and BatchGetItem (with UnprocessedKeys sent again), never a write.
    expect(new Set(proxy.operations)).toEqual(new Set(['DescribeTable', 'BatchGetItem']));
    expect(result.reads.retries).toBeGreaterThan(0);
    expect(await rawScan(aws.endpoint, table)).toEqual(before);
    await expect(stat(`${input}.differences.jsonl`)).rejects.toThrow();
  });

  it('names each tampering (item deleted, attribute changed, digits, set member, delete undone), exits 5, and writes a private differences file', async () => {
    const { table, input } = await loadedCsv();
    const c = aws.client();
    const key = (pk: string, sk: number) => ({ pk: { S: pk }, sk: { N: String(sk) } });
    await c.send(new DeleteItemCommand({ TableName: table, Key: key('u-10', 0) }));
    await c.send(
      new UpdateItemCommand({
        TableName: table,
        Key: key('u-11', 0),
        UpdateExpression: 'SET note = :v',
        ExpressionAttributeValues: { ':v': { S: 'changed' } },
      }),
    );
    // 13.75 stored as 13.76: one digit.
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
    // Not a difference: the same number spelt otherwise (1.50 is 1.5), the same set in another order.
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

    const run = await cli(['verify', input, '--table', table, ...CSV_FLAGS, '--rcu', '500']);
    expect(run.code, run.stdout + run.stderr).toBe(5);
    expect(run.stdout).toContain('5 keys not as the input leaves them');
    expect(run.stdout).toMatch(/:12 \{"pk":"u-10","sk":"0"\}: the table has no item/);
    expect(run.stdout).toContain('"note": expected {"S":"n11"}, stored {"S":"changed"}');
    expect(run.stdout).toContain('"price": expected {"N":"138.75"}, stored {"N":"138.76"}');
    expect(run.stdout).toMatch(/"tags": expected \{"SS":\[[^\]]*"t2"[^\]]*\]\}, stored \{"SS":\["a","b","zz"\]\}/);
    expect(run.stdout).toMatch(/\{"pk":"u-5","sk":"1"\}: the row deletes this key, but the table still has an item/);

    const path = `${input}.differences.jsonl`;
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const records = (await readFile(path, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; line: number; code: string; key: Record<string, string>; raw: string; field?: string });
    expect(records.map((r) => `${r.code} ${r.key.pk}/${r.key.sk}`).sort()).toEqual([
      'DELETED_BUT_PRESENT u-5/1',
      'DIFFERENT u-11/0',
      'DIFFERENT u-11/1',
      'DIFFERENT u-12/2',
      'MISSING u-10/0',
    ]);
    // The reject file's fields: the row's file, line and text, to be fed back to load.
    const missing = records.find((r) => r.code === 'MISSING')!;
    expect(missing).toMatchObject({ file: input, line: 12, raw: 'put,u-10,0,12.50,10,a|b|t3,n10' });
    expect(records.find((r) => r.key.pk === 'u-11' && r.key.sk === '1')!.field).toBe('price');
    expect(await rawScan(aws.endpoint, table)).toEqual(before);

    // --no-excerpts: names of attributes, never their values or the keys, on the terminal.
    const hidden = await cli(['verify', input, '--table', table, ...CSV_FLAGS, '--no-excerpts', '--differences', join(dir(), `${table}.hidden.jsonl`)]);
    expect(hidden.code).toBe(5);
    expect(hidden.stdout).toContain('the stored item differs in "price"');
    expect(hidden.stdout).not.toContain('138.76');
    expect(hidden.stdout).not.toContain('u-10');
  });

  it('--scan finds an item no row writes (extra), in parallel segments, and nothing else on a clean table', async () => {
    const { table, input } = await loadedCsv();
    const clean = await cli(['verify', input, '--table', table, ...CSV_FLAGS, '--scan', '3', '--json']);
    expect(clean.code, clean.stderr).toBe(0);
    const cleanResult = JSON.parse(clean.stdout) as VerifyJson;
    // 297 items: the 3 keys deleted at the end are absent, and no item is extra.
    expect(cleanResult.scan).toEqual({ segments: 3, items: 297 });
    expect(cleanResult.outcomes.extra).toBe(0);

    await aws.client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'stranger' }, sk: { N: '9' }, note: { S: 'not from the input' } } }));
    const run = await cli(['verify', input, '--table', table, ...CSV_FLAGS, '--scan', '3', '--differences', join(dir(), `${table}.extra.jsonl`)]);
    expect(run.code).toBe(5);
    expect(run.stdout).toContain('1 key not as the input leaves them');
    expect(run.stdout).toContain('table:' + table + ':0 {"pk":"stranger","sk":"9"}: the table has an item with this key, which no row of the input writes');
    const records = (await readFile(join(dir(), `${table}.extra.jsonl`), 'utf8')).trim().split('\n');
    expect(records.map((l) => (JSON.parse(l) as { code: string }).code)).toEqual(['EXTRA']);
  });

  it('after a clean JSON Lines load: every key matches', async () => {
    const table = await newTable();
    const input = join(dir(), `${table}.jsonl`);
    const lines = Array.from({ length: 120 }, (_, i) =>
      JSON.stringify({ pk: `j-${i % 40}`, sk: i % 3, n: 1e-3 * i, m: { deep: [i, `s${i}`, { b: i % 2 === 0 }] }, empty: null }),
    );
    await writeFile(input, `${lines.join('\n')}\n`);
    expect((await cli(['load', input, '--table', table])).code).toBe(0);
    const run = await cli(['verify', input, '--table', table, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as VerifyJson;
    expect(result.outcomes.matched).toBe(120);
    // A nested value changed deep in a map is found.
    await aws.client().send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: 'j-7' }, sk: { N: '1' } },
        UpdateExpression: 'SET m.deep[2].b = :v',
        ExpressionAttributeValues: { ':v': { BOOL: true } },
      }),
    );
    const after = await cli(['verify', input, '--table', table, '--json']);
    expect(after.code).toBe(5);
    const changed = JSON.parse(after.stdout) as VerifyJson;
    expect(changed.outcomes.different).toBe(1);
    expect(changed.examples[0]).toMatchObject({ outcome: 'different', attributes: ['m'], key: { pk: 'j-7', sk: '1' } });
  });

  it('--sample finds a 1% tampering rate, checks the same keys on a rerun, and states what a clean sample proves', async () => {
    const table = await newTable();
    const input = join(dir(), `${table}.csv`);
    const rows = ['pk,sk,v'];
    for (let i = 0; i < 4000; i++) rows.push(`s-${i},0,${i}`);
    await writeFile(input, `${rows.join('\n')}\n`);
    expect((await cli(['load', input, '--table', table, '--types', 'v:N'])).code).toBe(0);

    const clean = await cli(['verify', input, '--table', table, '--types', 'v:N', '--sample', '50%', '--json']);
    expect(clean.code, clean.stderr).toBe(0);
    const cleanResult = JSON.parse(clean.stdout) as VerifyJson;
    const n = cleanResult.checked as number;
    expect(n).toBeGreaterThan(1800);
    expect(n).toBeLessThan(2200);
    expect(cleanResult.writes.notSampled).toBe(4000 - n);
    expect(cleanResult.sample?.upperBound95).toBeCloseTo(1 - 0.05 ** (1 / n), 12);
    expect(cleanResult.sampleStatement).toMatch(
      new RegExp(`^0 differences in ${n.toLocaleString('en-US')} sampled keys: fewer than 0\\.1[45]% of the input's keys differ, at 95% confidence$`),
    );

    // 1% of the items changed (every 100th key).
    for (let i = 0; i < 4000; i += 100)
      await aws.client().send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: `s-${i}` }, sk: { N: '0' } },
          UpdateExpression: 'SET v = :v',
          ExpressionAttributeValues: { ':v': { N: '-1' } },
        }),
      );
    const runs = await Promise.all(
      [1, 2].map(() =>
        cli([
          'verify',
          input,
          '--table',
          table,
          '--types',
          'v:N',
          '--sample',
          '50%',
          '--json',
          '--differences',
          join(dir(), `${table}.${Math.random()}.jsonl`),
        ]),
      ),
    );
    const [first, second] = runs.map((r) => {
      expect(r.code).toBe(5);
      return JSON.parse(r.stdout) as VerifyJson;
    });
    // The same keys each time; about half of the 40 tampered keys fall in a 50% sample.
    expect(first!.checked).toBe(n);
    expect(second!.differing).toBe(first!.differing);
    expect(first!.differing).toBeGreaterThan(8);
    expect(first!.differing).toBeLessThan(32);
    expect(first!.sampleStatement).toBe(
      `${first!.differing} of ${n.toLocaleString('en-US')} sampled keys differ: an observed rate of ${Number(((100 * first!.differing) / n).toPrecision(2))}%`,
    );
  });

  it('refuses what it cannot do before reading the table: stdin, a differences file that is an input, --scan with --segment, a bad --sample', async () => {
    const input = join(dir(), 'refused.csv');
    await writeFile(input, 'pk,sk\na,1\n');
    const stdin = await cli(['verify', '-', '--table', 'Tbl', '--input-format', 'csv'], { stdin: 'pk,sk\na,1\n' });
    expect(stdin.code).toBe(64);
    expect(stdin.stderr).toContain('verify reads its input twice and cannot read stdin');
    const self = await cli(['verify', input, '--table', 'Tbl', '--differences', input]);
    expect(self.code).toBe(64);
    expect(self.stderr).toContain(`--differences ${input} is an input, which the verify reads`);
    const scan = await cli(['verify', input, '--table', 'Tbl', '--scan', '2', '--segment', '0/2']);
    expect(scan.code).toBe(64);
    expect(scan.stderr).toContain('--scan reads the whole table');
    const sample = await cli(['verify', input, '--table', 'Tbl', '--sample', '0%']);
    expect(sample.code).toBe(64);
    expect(sample.stderr).toContain('--sample takes a share of the keys');
    const missing = await cli(['verify', input, '--table', 'NoSuchTable', '--json']);
    expect(missing.code).toBe(78);
    expect(JSON.parse(missing.stdout)).toMatchObject({ complete: false, error: { code: 'TABLE_NOT_FOUND' } });
  });
});
