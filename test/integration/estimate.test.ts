/**
 * The estimate against DynamoDB Local and the partition proxy: it reads like load, writes
 * nothing, works offline, and predicts what a real load through the partition model then does.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import { offlineTableInfo } from '../../src/estimating/offlineTable.js';
import { partitionOf } from '../../src/estimating/partitionModel.js';
import { estimate } from '../../src/estimating/estimate.js';
import { load } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin', 'ddb-spread.js');
const ORDERS = join(ROOT, 'samples', 'orders.csv');
const WITH_ERRORS = join(ROOT, 'samples', 'orders-with-errors.csv');
const ORDER_TYPES = { total: 'N', gift: 'BOOL', items: 'JSON' } as const;
/** orders-with-errors.csv has no items column: naming it in --types stops a load before its first write. */
const WITH_ERRORS_TYPES = { total: 'N', gift: 'BOOL' } as const;
const ORDERS_KEYS: TableKeys = { partitionKey: { name: 'customerId', type: 'S' }, sortKey: { name: 'orderId', type: 'S' } };
const OFFLINE = ['--partition-key', 'customerId:S', '--sort-key', 'orderId:S', '--types', 'total:N,gift:BOOL,items:JSON'];

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'estimate', processCredentials: true, keys: ORDERS_KEYS });

const cli = (args: string[], env: NodeJS.ProcessEnv) => promisify(execFile)(process.execPath, [BIN, ...args], { cwd: dir(), env, maxBuffer: 16 * 1024 * 1024 });

describe('estimate', () => {
  it('offline (--partition-key, no AWS reachable): counts rows, units, keys and sizes of samples/orders.csv', async () => {
    // An endpoint nobody listens on: an estimate with offline flags must not need it.
    const env = { ...localEnv('http://127.0.0.1:9'), AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' };
    const { stdout } = await cli(['estimate', ORDERS, ...OFFLINE, '--json'], env);
    const result = JSON.parse(stdout) as EstimateResult;
    expect(result.version).toBe(1);
    expect(result.input).toMatchObject({ rows: 256, validRows: 256, rejected: 0 });
    expect(result.table).toMatchObject({ source: 'flags', billingMode: 'PAY_PER_REQUEST', partitionsNow: 4 });
    expect(result.items.histogram.reduce((n, b) => n + b.items, 0)).toBe(256);
    expect(result.writeUnits.table).toBe(result.writeUnits.total);
    expect(result.writeUnits.total).toBeGreaterThanOrEqual(256);
    expect(result.keys.distinct).toBe(result.keys.distinctWritten);
    expect(result.keys.hottest[0]).toMatchObject({ key: 'cust-0007', rows: 120 });
    expect(result.keys.hottest[0]!.rowShare).toBeCloseTo(120 / 256, 3);
    // 256-odd write request units at $0.625 a million: a fraction of a cent, rounded to cents in the JSON.
    expect(result.cost.prices).toMatchObject({ region: 'us-east-1', onDemandPerMillionWrites: 0.625 });
    expect(result.cost.onDemandUsd).toBe(0);
    expect(result.cost.importFromS3).toMatch(/Import from S3/);
    // A file too small to cut streams through the window (which, holding all 256 rows, writes them in round-robin).
    expect(result.simulations.planned.order).toBe('window');
    expect(result.simulations.input.order).toBe('input');
  });

  it('against the table: DescribeTable, nothing written, the same rejects and reject file as load', async () => {
    const table = await newTable();
    const estimateRejects = join(dir(), 'estimate.rejects.jsonl');
    const result = await estimate({ input: WITH_ERRORS, table, endpoint, region: 'us-east-1', types: WITH_ERRORS_TYPES, rejectsPath: estimateRejects });
    expect(result.table.source).toBe('describe-table');
    expect((await scanAll(client(), table)).length).toBe(0);

    const loadRejects = join(dir(), 'load.rejects.jsonl');
    const loaded = await load({ input: WITH_ERRORS, table, endpoint, region: 'us-east-1', types: WITH_ERRORS_TYPES, rejectsPath: loadRejects }).catch(
      (e: { result?: unknown }) => e.result as never,
    );
    expect(result.input.rejected).toBe(loaded.rejected);
    expect(result.input.rejectedByReason).toEqual(loaded.rejectedByReason);
    expect(result.input.validRows).toBe(loaded.written + loaded.superseded);
    expect(await readFile(estimateRejects, 'utf8')).toBe(await readFile(loadRejects, 'utf8'));
  });

  it('shard advice for a key over --key-wcu, and sharding with that advice changes the hottest written keys', async () => {
    const offline = offlineTableInfo('estimate', { partitionKey: ORDERS_KEYS.partitionKey, sortKey: ORDERS_KEYS.sortKey! });
    const base = { input: ORDERS, table: 'estimate', types: ORDER_TYPES, tableInfo: offline, rejectsPath: join(dir(), 'x.rejects.jsonl') };
    const before = await estimate({ ...base, wcu: 200, keyWcu: 60 });
    expect(before.time.bottleneck).toMatchObject({ kind: 'key', key: 'cust-0007' });
    expect(before.shardAdvice[0]).toMatchObject({ key: 'cust-0007', minShards: 2, recommendedShards: 4, flags: '--shard hash:4 --shard-keys cust-0007' });

    const after = await estimate({ ...base, wcu: 200, keyWcu: 60, shard: ['hash:4'], shardKeys: ['cust-0007'] });
    expect(after.keys.sharded).toBe(true);
    expect(after.keys.hottest[0]!.key).toBe('cust-0007');
    expect(after.keys.hottestWritten[0]!.key).toMatch(/^cust-0007#[0-3]$/);
    expect(after.keys.hottestWritten[0]!.rows).toBeLessThan(60);
    // One key became four (the HyperLogLog count is exact to within one at this size).
    expect(Math.abs(after.keys.distinctWritten - (before.keys.distinct + 3))).toBeLessThanOrEqual(1);
    expect(after.time.bottleneck.kind).toBe('table');
    expect(after.time.estimatedSeconds).toBeLessThan(before.time.estimatedSeconds);
  });

  it('predicts a paced load through the partition model: duration within 15%, throttles both under 1% of rows', async () => {
    // 40 keys, 10 in each of 4 partitions of 100 WCU/s, sorted: the rate test's table.
    const keys: string[] = [];
    const per = new Map<number, number>();
    for (let i = 0; keys.length < 40; i++) {
      const key = `cust-${String(i).padStart(4, '0')}`;
      const p = partitionOf(key, 4);
      if ((per.get(p) ?? 0) >= 10) continue;
      per.set(p, (per.get(p) ?? 0) + 1);
      keys.push(key);
    }
    const lines = ['pk,sk,payload', ...keys.sort().flatMap((k) => Array.from({ length: 50 }, (_, sk) => `${k},${sk},${'x'.repeat(40)}`))];
    const input = join(dir(), 'predict.csv');
    await writeFile(input, `${lines.join('\n')}\n`);
    const rows = lines.length - 1;

    const predicted = await estimate({
      input,
      table: 'estimate',
      types: { sk: 'N' },
      wcu: 400,
      tableInfo: offlineTableInfo('estimate', {
        partitionKey: { name: 'pk', type: 'S' },
        sortKey: { name: 'sk', type: 'N' },
        billing: 'provisioned',
        tableWcu: 400,
      }),
      simulation: { partitions: 4, burstSeconds: 0, latencyMs: 5 },
      rejectsPath: join(dir(), 'p.rejects.jsonl'),
    });
    const proxy = await startPartitionProxy(endpoint, { model: { tableWcu: 400, partitions: 4, burstSeconds: 0, initialSeconds: 1 }, partitionKeyName: 'pk' });
    closeAfterAll(proxy);
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    const measured = await load({
      input,
      table,
      endpoint: proxy.url,
      region: 'us-east-1',
      types: { sk: 'N' },
      wcu: 400,
      rejectsPath: join(dir(), 'm.rejects.jsonl'),
    });
    expect(measured.written).toBe(rows);
    const measuredSeconds = measured.elapsedMs / 1000;
    expect(
      predicted.time.estimatedSeconds / measuredSeconds,
      `predicted ${predicted.time.estimatedSeconds.toFixed(2)} s, measured ${measuredSeconds.toFixed(2)} s`,
    ).toBeGreaterThan(0.85);
    expect(predicted.time.estimatedSeconds / measuredSeconds).toBeLessThan(1.15);
    expect(predicted.simulations.planned.throttledItems).toBeLessThan(0.01 * rows);
    expect(proxy.stats().throttledItems).toBeLessThan(0.01 * rows);
    // The contrast the report shows: the same sorted file unpaced in input order throttles.
    expect(predicted.simulations.input.throttledItems).toBeGreaterThan(0.1 * rows);
  });

  it('load --dry-run prints the estimate and writes nothing; estimate without --table or --partition-key is one clear error', async () => {
    const table = await newTable();
    const env = localEnv(endpoint);
    const { stdout } = await cli(['load', ORDERS, '--table', table, '--types', 'total:N,gift:BOOL,items:JSON', '--dry-run'], env);
    expect(stdout).toMatch(/cust-0007/);
    expect(stdout).not.toMatch(/\x1b\[/);
    expect((await scanAll(client(), table)).length).toBe(0);

    const failed = await cli(['estimate', ORDERS], env).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(64); // EX_USAGE
    expect(failed?.stderr).toContain('estimate needs --table (read with DescribeTable) or --partition-key name:TYPE');

    const misplaced = await cli(['load', ORDERS, '--table', table, '--partition-key', 'customerId:S'], env).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(misplaced?.code).toBe(64);
    expect(misplaced?.stderr).toContain('--partition-key is for ddb-spread estimate (or load --dry-run)');
  });
});
