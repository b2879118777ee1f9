/**
 * `ddb-spread estimate` prices the verify after the load (its `verify` section), offline and against
 * DynamoDB Local: the read units are worked out here from the input by DynamoDB's rules (each key rounded
 * up to 4 KB for BatchGetItem, the table's bytes in 4 KB for a Scan), and against a loaded table they are
 * held to what DynamoDB Local charges a real `ddb-spread verify`.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import type { TableKeys } from '../support/ddb.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'estimate-verify', keys: KEYS });
const { dir, newTable } = aws;
const cli = localCli(aws, { stdin: '' });

interface Input {
  path: string;
  /** DynamoDB size of each item: the attribute names and the strings' UTF-8 bytes. */
  sizes: number[];
}

/**
 * `rows` keys, each once: pk u-i and a string `blob` whose length walks across the 4 KB boundaries (1 byte
 * to 11 KB, a few exactly at 4,096 and one past), so rounding each key up and rounding the whole apart differ.
 */
async function input(name: string, rows: number): Promise<Input> {
  const lines = ['pk,blob'];
  const sizes: number[] = [];
  let seed = 7;
  for (let i = 0; i < rows; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const pk = `u-${i}`;
    // Every 50th item is exactly 4,096 bytes (1 unit), the next one byte more (2 units).
    const sized = (bytes: number) => bytes - 'pk'.length - pk.length - 'blob'.length;
    const length = i % 50 === 0 ? sized(4096) : i % 50 === 1 ? sized(4097) : 1 + (seed % (11 * 1024));
    lines.push(`${pk},${'x'.repeat(length)}`);
    sizes.push('pk'.length + pk.length + 'blob'.length + length);
  }
  const path = join(dir(), `${name}.csv`);
  await writeFile(path, `${lines.join('\n')}\n`);
  return { path, sizes };
}

const strongUnits = (sizes: number[]) => sizes.reduce((sum, s) => sum + Math.max(1, Math.ceil(s / 4096)), 0);
const bytesOf = (sizes: number[]) => sizes.reduce((sum, s) => sum + s, 0);

async function estimateJson(args: string[]): Promise<EstimateResult> {
  const run = await cli(['estimate', ...args, '--json']);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as EstimateResult;
}

describe('estimate: the price of a verify', () => {
  it('offline: BatchGetItem per key rounded up to 4 KB, the Scan on the bytes the load leaves, at --rcu, eventually consistent, sampled', async () => {
    const { path, sizes } = await input('offline', 1_000);
    expect(sizes.filter((s) => s === 4096).length).toBe(20);
    expect(sizes.filter((s) => s === 4097).length).toBe(20);
    const bytes = bytesOf(sizes);
    const units = strongUnits(sizes);

    const whole = (await estimateJson([path, '--partition-key', 'pk:S'])).verify;
    expect(whole.keys).toBe(1_000);
    expect(whole.batchGet.readUnits).toBe(units);
    expect(whole.batchGet.calls).toBe(10);
    expect(whole.table).toEqual({ bytes, items: 1_000, source: 'input' });
    // A Scan of the items the load leaves: their bytes in 4 KB, and a unit of rounding per 1 MB page at most.
    const pages = Math.floor(bytes / (1024 * 1024)) + 1;
    expect(whole.scan.readUnits).toBe(Math.ceil(bytes / 4096) + pages);
    expect(whole.scan.segments).toBe(1);
    // On demand, without --rcu: 80% of the 12,000 reads/s of a new on-demand table, at $0.125 per million.
    expect(whole.rcu).toBe(9_600);
    expect(whole.rcuSource).toBe('on-demand-default');
    expect(whole.batchGet.usd).toBeCloseTo((units / 1e6) * 0.125, 12);
    expect(whole.flags).toBe('--rcu 9600');
    // Which costs less, worked out here from the same figures.
    expect(whole.cheaper).toBe(Math.ceil(bytes / 4096) + pages < units ? 'scan' : 'batch-get');

    const paced = (await estimateJson([path, '--partition-key', 'pk:S', '--rcu', '50', '--no-consistent-read', '--sample', '10%', '--scan', '3'])).verify;
    expect(paced.rcuSource).toBe('given');
    expect(paced.consistentRead).toBe(false);
    expect(paced.sample).toBe(0.1);
    expect(paced.keys).toBe(100);
    // The sample's share of the keys, eventually consistent: half; the Scan reads the whole table regardless.
    expect(paced.batchGet.readUnits).toBeCloseTo((units * 0.1) / 2, 1);
    expect(paced.batchGet.seconds).toBeCloseTo((units * 0.1) / 2 / 50, 1);
    expect(paced.scan.segments).toBe(3);
    expect(paced.scan.readUnits).toBe((Math.ceil(bytes / 4096) + Math.floor(bytes / (1024 * 1024)) + 3) / 2);
    expect(paced.cheaper).toBe('batch-get');
    expect(paced.flags).toBe('');

    // The text report: the section, both ways, and what to run.
    const text = await cli(['estimate', path, '--partition-key', 'pk:S', '--rcu', '50']);
    expect(text.code, text.stderr).toBe(0);
    const section = text.stdout.slice(text.stdout.indexOf('\nVerify\n'));
    expect(section).toContain(`BatchGetItem    ${units.toLocaleString('en-US')} read units, 10 calls`);
    expect(section).toContain(`Scan            ${(Math.ceil(bytes / 4096) + pages).toLocaleString('en-US')} read units, 1 segment`);
    expect(section).toMatch(/keys +1,000, strongly consistent, at 50 read units\/s \(--rcu\)/);
    expect(section).toContain('ddb-spread verify');
  });

  it('offline, small items: the Scan is the cheaper way and says so; one --segment never scans', async () => {
    const lines = ['pk,v'];
    for (let i = 0; i < 3_000; i++) lines.push(`k${i},${i}`);
    const path = join(dir(), 'small.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    const verify = (await estimateJson([path, '--partition-key', 'pk:S'])).verify;
    // 3,000 keys of a few bytes: 3,000 units by key, a few by Scan.
    expect(verify.batchGet.readUnits).toBe(3_000);
    expect(verify.scan.readUnits).toBeLessThan(30);
    expect(verify.cheaper).toBe('scan');
    expect(verify.why).toContain('3,000');
    const segment = (await estimateJson([path, '--partition-key', 'pk:S', '--segment', '0/2'])).verify;
    expect(segment.cheaper).toBe('batch-get');
    expect(segment.why).toContain('--segment');
  });

  it('takes them from --config as from flags, and load --dry-run prices the verify too', async () => {
    const { path, sizes } = await input('config', 200);
    const job = join(dir(), 'job.json');
    await writeFile(job, JSON.stringify({ input: path, 'partition-key': 'pk:S', rcu: 25, 'consistent-read': false, sample: '50%', scan: 2 }));
    const verify = (await estimateJson(['--config', job])).verify;
    expect(verify).toMatchObject({ keys: 100, sample: 0.5, consistentRead: false, rcu: 25, rcuSource: 'given' });
    expect(verify.scan.segments).toBe(2);
    expect(verify.batchGet.readUnits).toBeCloseTo((strongUnits(sizes) * 0.5) / 2, 1);

    const table = await newTable();
    const dry = await cli(['load', path, '--table', table, '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const priced = (JSON.parse(dry.stdout) as EstimateResult).verify;
    expect(priced.batchGet.readUnits).toBe(strongUnits(sizes));
    expect(priced.consistentRead).toBe(true);
  });

  it("prices the reads at --price-read-request and --price-rcu-hour, labelled as given, the load's write prices left alone", async () => {
    const { path, sizes } = await input('prices', 100);
    const units = strongUnits(sizes);
    const result = await estimateJson([path, '--partition-key', 'pk:S', '--price-read-request', '2', '--price-rcu-hour', '0.5']);
    expect(result.verify.prices).toEqual({ region: 'as given', date: 'as given', onDemandPerMillionReads: 2, provisionedPerRcuHour: 0.5 });
    expect(result.verify.batchGet.onDemandUsd).toBeCloseTo((units / 1e6) * 2, 12);
    // Under an hour at 9,600 units/s: one started hour of 9,600 RCU.
    expect(result.verify.batchGet.provisionedRcuHours).toBe(9_600);
    expect(result.verify.batchGet.provisionedUsd).toBeCloseTo(9_600 * 0.5, 9);
    expect(result.cost.prices).toMatchObject({ region: 'us-east-1', onDemandPerMillionWrites: 0.625 });
    const provisioned = await estimateJson([
      path,
      '--partition-key',
      'pk:S',
      '--billing',
      'provisioned',
      '--table-wcu',
      '10',
      '--table-rcu',
      '40',
      '--price-rcu-hour',
      '0.5',
    ]);
    // 80% of 40 RCU: 32 units/s; the price on a provisioned table is the RCU-hours'.
    expect(provisioned.verify).toMatchObject({ rcu: 32, rcuSource: 'provisioned' });
    expect(provisioned.verify.batchGet.usd).toBeCloseTo(32 * Math.ceil(units / 32 / 3600) * 0.5, 9);
  });

  it('refuses a nonsense --rcu, --sample or --scan before reading the input', async () => {
    const { path } = await input('bad', 3);
    for (const [flag, value] of [
      ['--rcu', '0'],
      ['--sample', '0%'],
      ['--scan', '0'],
    ] as const) {
      const run = await cli(['estimate', path, '--partition-key', 'pk:S', flag, value]);
      expect(run.code, `${flag} ${value}`).toBe(64);
      expect(run.stderr).toContain(flag);
    }
  });

  it('against DynamoDB Local: DescribeTable sizes the Scan, and a real verify is charged what the estimate said', async () => {
    const table = await newTable();
    const { path, sizes } = await input(table, 600);
    const load = await cli(['load', path, '--table', table]);
    expect(load.code, load.stderr).toBe(0);
    const described = (await aws.client().send(new DescribeTableCommand({ TableName: table }))).Table!;
    const before = { bytes: described.TableSizeBytes ?? 0, items: described.ItemCount ?? 0 };
    expect(before.items).toBe(600);

    const verify = (await estimateJson([path, '--table', table])).verify;
    // The table after the load: as described now, plus what the load leaves (an upper bound: these keys are there already).
    expect(verify.table).toEqual({ bytes: before.bytes + bytesOf(sizes), items: 1_200, source: 'describe-table' });
    expect(verify.batchGet.readUnits).toBe(strongUnits(sizes));
    expect(verify.rcuSource).toBe('on-demand-default');

    // The verify itself: DynamoDB Local's ConsumedCapacity for its BatchGetItem calls is the estimate's figure.
    const run = await cli(['verify', path, '--table', table, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const measured = JSON.parse(run.stdout) as { reads: { consumedRcu: number; calls: number } };
    expect(measured.reads.consumedRcu).toBe(verify.batchGet.readUnits);
    expect(measured.reads.calls).toBe(verify.batchGet.calls);
    // With --scan the verify reads the table by a Scan instead (no key read again on a clean table): DynamoDB
    // Local charges it within the model's figure for the table as it is (its bytes in 4 KB, a unit of rounding
    // per page at most), and not below its bytes.
    const scanned = await cli(['verify', path, '--table', table, '--json', '--scan', '1']);
    expect(scanned.code, scanned.stderr).toBe(0);
    const scanReads = (JSON.parse(scanned.stdout) as { reads: { consumedRcu: number; keys: number } }).reads;
    expect(scanReads.keys).toBe(0);
    const scanUnits = scanReads.consumedRcu;
    expect(scanUnits).toBeLessThanOrEqual(Math.ceil(before.bytes / 4096) + Math.floor(before.bytes / (1024 * 1024)) + 1);
    expect(scanUnits).toBeGreaterThanOrEqual(before.bytes / 4096 / 2);
  });
});
