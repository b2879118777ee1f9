/**
 * --prewarm against a table whose warm throughput the test can see: DynamoDB Local has none (its
 * DescribeTable leaves WarmThroughput out and its UpdateTable refuses one), so test/support/warmProxy.ts
 * stands in front of it, answers UpdateTable with WarmThroughput, records the call, and reports the table
 * UPDATING for a few DescribeTable calls before ACTIVE. Every other call is DynamoDB Local's.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';
import { startWarmProxy, type WarmProxy } from '../support/warmProxy.js';

const KEYS: TableKeys = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'N' },
  gsis: [{ name: 'byName', partitionKey: { name: 'name', type: 'S' } }],
};
const ROWS = 400;

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'prewarm', keys: KEYS });

let input = '';
beforeAll(async () => {
  assertCliBuilt();
  input = join(dir(), 'rows.csv');
  await writeGeneratedCsv(input, ROWS);
});

const run = (at: string, args: string[], kill?: Parameters<typeof runCli>[1]['kill']) =>
  runCli(args, { cwd: dir(), env: { ...localEnv(at), DDB_SPREAD_TEST_PREWARM_POLL_MS: '50' }, ...(kill ? { kill } : {}) });
const loadArgs = (table: string, extra: string[]) => ['load', input, '--table', table, '--types', GENERATED_TYPES_FLAG, '--json', ...extra];
const estimateArgs = (table: string, extra: string[]) => ['estimate', input, '--table', table, '--types', GENERATED_TYPES_FLAG, '--json', ...extra];

async function proxy(options: Parameters<typeof startWarmProxy>[1] = {}): Promise<WarmProxy> {
  return closeAfterAll(await startWarmProxy(endpoint, options));
}

describe('--prewarm', () => {
  it('raises the table and its GSI to the target, waits until ACTIVE, then loads every row; a second load raises nothing', async () => {
    const table = await newTable();
    const warm = await proxy({ updatingDescribes: 3 });
    const first = await run(warm.url, loadArgs(table, ['--wcu', '20000', '--prewarm']));
    expect(first.code, first.stderr).toBe(0);
    expect(warm.updates).toEqual([{ table, tableWrite: 20_000, indexes: [{ name: 'byName', write: 20_000 }] }]);
    // The DescribeTable of the load, then the three that said UPDATING, then the one that said ACTIVE.
    expect(warm.describes()).toBeGreaterThanOrEqual(5);
    expect(first.stderr).toMatch(/--prewarm: raising warm write throughput/);
    expect(first.stderr).toMatch(/--prewarm: waiting for DynamoDB \(warm throughput UPDATING, GSI byName warm throughput UPDATING\)/);
    expect(first.stderr).toMatch(/is warm after/);
    const summary = JSON.parse(first.stdout) as { written: number; complete: boolean; rate: { reason: string } };
    expect(summary).toMatchObject({ written: ROWS, complete: true });
    expect((await scanAll(client(), table)).length).toBe(ROWS);

    // Warm already at 20,000: only upward, so no second UpdateTable.
    const second = await run(warm.url, loadArgs(table, ['--wcu', '20000', '--prewarm']));
    expect(second.code, second.stderr).toBe(0);
    expect(warm.updates.length).toBe(1);
    expect(second.stderr).toMatch(/already warm for 20000/);
  });

  it('--wcu auto warms to the table quota, and the load then starts from the raised warm throughput', async () => {
    const table = await newTable();
    const warm = await proxy({ updatingDescribes: 1 });
    const result = await run(warm.url, loadArgs(table, ['--wcu', 'auto', '--prewarm']));
    expect(result.code, result.stderr).toBe(0);
    expect(warm.updates[0]).toMatchObject({ tableWrite: 40_000 });
    const summary = JSON.parse(result.stdout) as { rate: { reason: string } };
    expect(summary.rate.reason).toMatch(/its warm throughput of 40,000 WCU\/s = 32,000 WCU\/s/);
  });

  it("an UpdateTable crossed by another worker's (ResourceInUse) waits for that raise and makes none of its own", async () => {
    const table = await newTable();
    const warm = await proxy({ crossedOnce: true, updatingDescribes: 2 });
    const result = await run(warm.url, loadArgs(table, ['--wcu', '20000', '--prewarm']));
    expect(result.code, result.stderr).toBe(0);
    expect(warm.updates.length).toBe(1);
    expect(result.stderr).toMatch(/is warm after/);
    expect((await scanAll(client(), table)).length).toBe(ROWS);
  });

  it('a raise DynamoDB never applies ends after three UpdateTable calls, nothing written', async () => {
    const table = await newTable();
    const warm = await proxy({ neverApplied: true, updatingDescribes: 1 });
    const result = await run(warm.url, loadArgs(table, ['--wcu', '20000', '--prewarm']));
    expect(result.code).toBe(1);
    expect(warm.updates.length).toBe(3);
    expect((JSON.parse(result.stdout) as { error: { message: string } }).error.message).toMatch(/still below the load's target after 3 UpdateTable calls/);
    expect((await scanAll(client(), table)).length).toBe(0);
  });

  it('estimate and --dry-run say what it would raise and what it saves, and never call UpdateTable', async () => {
    const table = await newTable();
    const warm = await proxy();
    const given = await run(warm.url, estimateArgs(table, ['--wcu', '20000', '--prewarm']));
    expect(given.code, given.stderr).toBe(0);
    const withPrewarm = JSON.parse(given.stdout) as {
      prewarm: { given: boolean; raises: Array<{ index: string | null; to: number }> };
      rate: { assumedWcu: number };
    };
    expect(withPrewarm.prewarm.given).toBe(true);
    expect(withPrewarm.prewarm.raises).toEqual([
      { index: null, from: 4000, to: 20_000 },
      { index: 'byName', from: 4000, to: 20_000 },
    ]);
    // The figures assume the warmed table: the load runs at its 20,000 at once.
    expect(withPrewarm.rate.assumedWcu).toBe(20_000);

    // Unasked, the advice comes when it saves a second or more: here the table reports 100 write units/s warm.
    const cold = await proxy({ initialWrite: 100 });
    const advised = await run(cold.url, estimateArgs(table, ['--wcu', '20000']));
    expect(advised.code, advised.stderr).toBe(0);
    const without = JSON.parse(advised.stdout) as {
      prewarm: { given: boolean; command: string; savedSeconds: number; cost: string };
      rate: { assumedWcu: number };
      managedPaths: Array<{ name: string; serves: boolean; cost: string }>;
    };
    expect(without.prewarm.given).toBe(false);
    expect(without.prewarm.command).toContain(`aws dynamodb update-table --table-name ${table} --warm-throughput WriteUnitsPerSecond=20000`);
    expect(without.prewarm.savedSeconds).toBeGreaterThan(0);
    expect(without.prewarm.cost).toMatch(/billed by AWS/);
    expect(without.prewarm.savedSeconds).toBeGreaterThanOrEqual(1);
    expect(without.rate.assumedWcu).toBe(100);
    expect(cold.updates).toEqual([]);
    // An empty table and a CSV: Import from S3 would serve (a new table); bulk put items reads no CSV.
    expect(without.managedPaths.map((m) => [m.name, m.serves])).toEqual([
      ['import-from-s3', true],
      ['bulk-put-items', false],
    ]);

    const dry = await run(warm.url, ['load', input, '--table', table, '--types', GENERATED_TYPES_FLAG, '--wcu', '20000', '--prewarm', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    const text = dry.stdout.replace(/\s+/g, ' ');
    expect(text).toMatch(/Pre-warming --prewarm raises before the first write: table 4,000 → 20,000 write units\/s; GSI byName 4,000 → 20,000 write units\/s/);
    expect(text).toMatch(/Managed paths Import from S3 would serve: the table is empty: it loads the input into a NEW table/);
    expect(text).toMatch(/bulk put items would not serve: it reads only DynamoDB JSON or Ion/);
    expect(warm.updates).toEqual([]);
    expect((await scanAll(client(), table)).length).toBe(0);
  });

  it('Ctrl-C while it waits for the table stops with nothing written', async () => {
    const table = await newTable();
    const warm = await proxy({ updatingDescribes: 1_000_000 });
    const stopped = await run(warm.url, loadArgs(table, ['--wcu', '20000', '--prewarm']), { signal: 'SIGINT', when: () => warm.describes() >= 4 });
    expect(stopped.code).toBe(130);
    const summary = JSON.parse(stopped.stdout) as { complete: boolean; error: { code: string; message: string } };
    expect(summary.complete).toBe(false);
    expect(summary.error.code).toBe('ABORTED');
    expect(summary.error.message).toMatch(/while waiting for its warm throughput/);
    expect((await scanAll(client(), table)).length).toBe(0);
  });

  it('an endpoint without warm throughput (DynamoDB Local itself) fails before the first write, saying so', async () => {
    const table = await newTable();
    const result = await run(endpoint, loadArgs(table, ['--wcu', '20000', '--prewarm']));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/UpdateTable could not raise the warm throughput/);
    expect(result.stderr).toMatch(/DynamoDB Local does not/);
    expect((await scanAll(client(), table)).length).toBe(0);
  });

  it('needs a target rate', async () => {
    const table = await newTable();
    const result = await run(endpoint, loadArgs(table, ['--prewarm']));
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/prewarm/);
  });
});
