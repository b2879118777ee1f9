/**
 * Rate control through the built CLI against DynamoDB Local: --wcu auto reads the table's provisioned
 * capacity and says what it chose, --key-wcu makes a hot key the bottleneck with its shard advice, and
 * bad values are one clear message with exit 1.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../src/index.js';
import { readFile, writeFile } from 'node:fs/promises';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ORDERS = join(ROOT, 'samples', 'orders.csv');
const TYPES = ['--types', 'total:N,gift:BOOL,items:JSON'];
const KEYS = { partitionKey: { name: 'customerId', type: 'S' as const }, sortKey: { name: 'orderId', type: 'S' as const } };

const aws = useLocalAws({ name: 'rate-cli' });
const { client, dir, newTable, trackTable, closeAfterAll } = aws;

/** Runs `node bin/ddb-spread.js ...args` in the temp dir; a run that hangs is killed after 45 s (code null). */
const cli = localCli(aws);

async function provisionedTable(wcu: number): Promise<string> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  await client().send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [
        { AttributeName: 'customerId', AttributeType: 'S' },
        { AttributeName: 'orderId', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'customerId', KeyType: 'HASH' },
        { AttributeName: 'orderId', KeyType: 'RANGE' },
      ],
      BillingMode: 'PROVISIONED',
      ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: wcu },
    }),
  );
  return trackTable(name);
}

describe('rate control from the CLI', () => {
  it('--wcu auto takes 80% of the provisioned WCU and says so before the load and in the summary', async () => {
    const table = await provisionedTable(400);
    const { code, stderr } = await cli(['load', ORDERS, '--table', table, ...TYPES, '--wcu', 'auto']);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("ddb-spread: rate: --wcu auto: 80% of the table's provisioned 400 WCU = 320 WCU/s; no partition key above 1,000 WCU/s");
    expect(stderr).toMatch(/^ {2}rate {10}target 320 WCU\/s \(--wcu auto: 80% .*\); average \d+/m);
    expect(stderr).toMatch(/^ {2}throttles {5}0 table, 0 key; rate cut 0 times/m);
    expect((await scanAll(client(), table)).length).toBe(256);
  });

  it('--key-wcu makes the hot key the bottleneck; the summary gives the shard count and flags (key hidden by --no-excerpts)', async () => {
    const table = await newTable(KEYS);
    const started = performance.now();
    const { code, stderr } = await cli(['load', ORDERS, '--table', table, ...TYPES, '--wcu', '200', '--key-wcu', '60']);
    const seconds = (performance.now() - started) / 1000;
    expect(code, stderr).toBe(0);
    // cust-0007 holds 120 of the 256 rows: 2 s at 60 WCU/s, against 1.3 s for the load at 200 WCU/s.
    expect(seconds).toBeGreaterThanOrEqual(1.8);
    expect(stderr).toContain('hottest keys  "cust-0007" 46.9%');
    expect(stderr).toMatch(/bottleneck {4}partition key "cust-0007": 120 WCU take 2\.0 s at --key-wcu 60, the rest of the load 1\.3 s/);
    // required = 120 WCU / 1.28 s = 94 WCU/s -> ceil(94 / 60) = 2 shards, 4 with headroom.
    expect(stderr).toContain('shard it 4 ways (at least 2; twice that for headroom): --shard hash:4 --shard-keys cust-0007');

    const hidden = await cli([
      'load',
      ORDERS,
      '--table',
      table,
      ...TYPES,
      '--wcu',
      '200',
      '--key-wcu',
      '60',
      '--no-excerpts',
      '--rejects',
      join(dir(), 'r.jsonl'),
    ]);
    expect(hidden.code).toBe(0);
    expect(hidden.stderr).toContain('partition key (key hidden by --no-excerpts)');
    expect(hidden.stderr).not.toContain('cust-0007');
  });

  it('--json carries the rate, the hottest keys and the bottleneck', async () => {
    const table = await newTable(KEYS);
    const { code, stdout } = await cli(['load', ORDERS, '--table', table, ...TYPES, '--wcu', '200', '--key-wcu', '60', '--json']);
    expect(code).toBe(0);
    const summary = JSON.parse(stdout) as LoadResult;
    expect(summary.rate).toMatchObject({ targetWcu: 200, keyWcu: 60, reason: '--wcu 200', tableThrottles: 0, keyThrottles: 0, decreases: 0 });
    expect(summary.hotKeys[0]).toMatchObject({ key: 'cust-0007', units: 120 });
    expect(summary.bottleneck).toMatchObject({ key: 'cust-0007', units: 120, minShards: 2, recommendedShards: 4 });
  });

  it("no --wcu: a hot key held to its partition's limit is named the bottleneck in the summary, the JSON report and the estimate", async () => {
    // The load scaled down: one key of 900 rows among 900 others, through a proxy that gives each
    // partition 300 WCU/s (--key-wcu 300 to match, as 1,000 matches DynamoDB). The key sets the load's time
    // (3 s), and drags the rate reached down to its own; the rest would take under a second.
    const rows = ['pk,sk'];
    for (let i = 0; i < 900; i++) rows.push(`hot,${i}`, `k${i % 150},${i}`);
    const input = join(dir(), 'hot.csv');
    await writeFile(input, `${rows.join('\n')}\n`);
    const proxy = closeAfterAll(
      await startPartitionProxy(aws.endpoint, {
        model: { tableWcu: 100_000, partitions: 16, partitionMaxWcu: 300, adaptiveCapacity: true, burstSeconds: 0, initialSeconds: 1 },
        partitionKeyName: 'pk',
      }),
    );
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    const env = localEnv(proxy.url);
    const report = join(dir(), 'hot.report.json');
    const { code, stderr } = await cli(['load', input, '--table', table, '--types', 'sk:N', '--key-wcu', '300', '--report', report], { env });
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/bottleneck {4}partition key "hot": 900 WCU take 3\.0 s at --key-wcu 300, the rest of the load 0\.\d s/);
    expect(stderr).toMatch(/--shard hash:\d+ --shard-keys hot/);
    const summary = JSON.parse(await readFile(report, 'utf8')) as LoadResult;
    expect(summary.written).toBe(1800);
    expect(summary.rate.targetWcu).toBeUndefined();
    expect(summary.bottleneck, JSON.stringify(summary.rate)).toMatchObject({ key: 'hot', units: 900 });

    const estimate = await cli(['estimate', input, '--table', table, '--types', 'sk:N', '--key-wcu', '300', '--json'], { env });
    expect(estimate.code, estimate.stderr).toBe(0);
    // The estimate names the same key with the same advice: both weigh it against what the table takes at once.
    expect(JSON.parse(estimate.stdout)).toMatchObject({
      time: { bottleneck: { kind: 'key', key: 'hot' } },
      shardAdvice: [{ key: 'hot', minShards: summary.bottleneck!.minShards, recommendedShards: summary.bottleneck!.recommendedShards }],
    });
  });

  it('throttles are counted by the kind DynamoDB gives, and a key slowed for a key-range reason says so', async () => {
    // One key written far above what its partition takes (--key-wcu 3,000 against the proxy's 200 WCU/s):
    // calls of that key alone are refused whole, with TableWriteKeyRangeThroughputExceeded.
    const rows = ['pk,sk'];
    for (let i = 0; i < 1200; i++) rows.push(`hot,${i}`);
    const input = join(dir(), 'reasons.csv');
    await writeFile(input, `${rows.join('\n')}\n`);
    const proxy = closeAfterAll(
      await startPartitionProxy(aws.endpoint, {
        model: { tableWcu: 100_000, partitions: 16, partitionMaxWcu: 200, adaptiveCapacity: false, burstSeconds: 0, initialSeconds: 1 },
        partitionKeyName: 'pk',
      }),
    );
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    const report = join(dir(), 'reasons.report.json');
    const { code, stderr } = await cli(['load', input, '--table', table, '--types', 'sk:N', '--key-wcu', '3000', '--report', report, '--verbose'], {
      env: localEnv(proxy.url),
    });
    expect(code, stderr).toBe(0);
    const summary = JSON.parse(await readFile(report, 'utf8')) as LoadResult;
    expect(summary.written).toBe(1200);
    const byReason = summary.throttlesByReason ?? {};
    expect(byReason['TableWriteKeyRangeThroughputExceeded'], JSON.stringify(byReason)).toBeGreaterThan(0);
    // Every kind is a calls' count, and only calls that were throttled are counted.
    expect(Object.values(byReason).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(summary.throttledItems);
    expect(stderr).toMatch(/throttled by {2}.*TableWriteKeyRangeThroughputExceeded \d+ calls?/);
    // The key's first cut may follow a call refused in part (no reason given): then the cooldown keeps the
    // later cuts, with their reason, from being said. Whichever came first is said, with the reason if it had one.
    expect(stderr).toMatch(/throttled on one partition key( \(DynamoDB: TableWriteKeyRangeThroughputExceeded\))?; that key slowed to/);
  });

  it.each([
    [['--wcu', 'fast'], /--wcu.*auto.*"fast"/],
    [['--wcu', 'auto:0%'], /percentage from 1 to 100/],
    [['--wcu', '0'], /--wcu/],
    [['--key-wcu', '0'], /--key-wcu.*from 1 up/],
    [['--no-pacing', '--wcu', '100'], /wcu.*pacing.*--no-pacing/],
  ])('%j: exit 64 (EX_USAGE) with one clear message, nothing written', async (args, message) => {
    const table = await newTable(KEYS);
    const { code, stderr } = await cli(['load', ORDERS, '--table', table, ...TYPES, ...args]);
    expect(code).toBe(64); // EX_USAGE
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect((await scanAll(client(), table)).length).toBe(0);
  });
});
