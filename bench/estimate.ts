/**
 * The estimate bench.
 * 1. Accuracy: for several inputs (uniform keys, key-sorted, one dominant key, time-bucketed with
 *    sharding, an unpaced sorted load, the default order on sorted inputs), `estimate` with the table
 *    described as the partition proxy models it, then the real load through the proxy in front of
 *    DynamoDB Local: predicted vs measured
 *    duration and throttled items. Target: duration within 15%, throttled items within a factor of 2
 *    (or both under 1% of rows).
 *    Predicted duration counts start-up and the read phase; measured is load()'s.
 * 2. Speed (target: at least 0.5x bare csv-parse): estimate of a key-sorted CSV (default order) and of a
 *    key-mixed one (the window order, which the default order streams such a file in), and of the sorted
 *    rows as JSONL, against bare parsing of the same file (csv-parse; readline + JSON.parse), rows/s and
 *    peak RSS, each in its own child process.
 * Prints figures; asserts nothing.
 *
 *   npx tsx bench/estimate.ts [--speed-rows 1000000] [--mixed-input flights.csv] [--skip-accuracy] [--skip-speed]
 */
import { spawnSync } from 'node:child_process';
import { parse } from 'csv-parse';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { load, type LoadResult } from '../dist/index.js';
import { estimate } from '../dist/estimating/estimate.js';
import type { EstimateResult } from '../dist/estimating/estimateTypes.js';
import { offlineTableInfo } from '../dist/estimating/offlineTable.js';
import type { LoadOptions } from '../dist/load/options.js';
import { startPartitionProxy } from '../test/support/partitionProxy.js';
import { mulberry32 } from '../tools/mulberry32.js';
import { generateMixedFlightsCsv, generateSkewedCsv } from './data.js';
import { benchDir, repoRoot, withDynamoDBLocal } from './harness.js';
import { writeResults } from './report.js';
import { createBenchTable, dropBenchTable } from './tables.js';

const { values: flags } = parseArgs({
  options: {
    'speed-rows': { type: 'string' },
    'mixed-input': { type: 'string' },
    'skip-accuracy': { type: 'boolean' },
    'skip-speed': { type: 'boolean' },
  },
});
const SPEED_ROWS = Number(flags['speed-rows'] ?? 1_000_000);
/** A key-mixed CSV of flights rows (origin, id, delay, distance) to measure instead of a generated one. */
const MIXED_INPUT = flags['mixed-input'];
const MODEL = { tableWcu: 1000, partitions: 4, burstSeconds: 0, initialSeconds: 1 } as const;
const LATENCY_MS = 8;

interface Scenario {
  name: string;
  csv: string;
  rows: number;
  options: Partial<LoadOptions>;
}

/** A CSV pk,sk,ts,payload from (key, rows) pairs, in the order given. */
function csvOf(rows: Array<[string, number]>, random: () => number): string {
  const lines = ['pk,sk,ts,payload'];
  const start = Date.UTC(2024, 0, 15);
  for (const [key, n] of rows)
    for (let sk = 0; sk < n; sk++) lines.push(`${key},${sk},${new Date(start + Math.floor(random() * 48 * 3600_000)).toISOString()},${'x'.repeat(120)}`);
  return `${lines.join('\n')}\n`;
}

function scenarios(dir: string): Array<Scenario & { text: string }> {
  const random = mulberry32(11);
  const keys = (n: number, prefix = 'k') => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
  const uniform = keys(2000).map((k): [string, number] => [k, 4]);
  for (let i = uniform.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [uniform[i], uniform[j]] = [uniform[j]!, uniform[i]!];
  }
  const sorted = keys(60).map((k): [string, number] => [k, 133]);
  const dominant: Array<[string, number]> = [['hot-00000', 2400], ...keys(140).map((k): [string, number] => [k, 40])];
  const devices = keys(12, 'dev').map((k): [string, number] => [k, 667]);
  const list: Array<Omit<Scenario, 'rows' | 'csv'> & { pairs: Array<[string, number]> }> = [
    { name: 'uniform keys, round-robin, paced', pairs: uniform, options: { order: 'round-robin', wcu: 1000 } },
    { name: 'key-sorted, round-robin, paced', pairs: sorted, options: { order: 'round-robin', wcu: 1000 } },
    { name: 'one key 30%, spread, --key-wcu 200', pairs: dominant, options: { order: 'spread', wcu: 1000, keyWcu: 200 } },
    { name: 'time buckets: --shard time:hour:ts + hash:4', pairs: devices, options: { order: 'spread', wcu: 1000, shard: ['time:hour:ts', 'hash:4'] } },
    { name: 'key-sorted, input order, unpaced', pairs: sorted, options: { order: 'input', pacing: false } },
    // The default order: the estimate replays the striped read from a read from the start (stripeOrder.ts).
    { name: 'key-sorted, stripes (default), paced', pairs: sorted, options: { wcu: 1000 } },
    { name: 'one key 30%, stripes (default), --key-wcu 200', pairs: dominant, options: { wcu: 1000, keyWcu: 200 } },
  ];
  return list.map((s, i) => {
    const text = csvOf(s.pairs, random);
    return { name: s.name, csv: join(dir, `scenario-${i}.csv`), rows: s.pairs.reduce((n, [, r]) => n + r, 0), options: s.options, text };
  });
}

async function accuracy(dir: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  await withDynamoDBLocal(async ({ endpoint, admin }) => {
    let n = 0;
    for (const s of scenarios(dir)) {
      await writeFile(s.csv, s.text);
      const common: LoadOptions = {
        input: s.csv,
        table: 'x',
        types: { sk: 'N' },
        maxAttempts: 100,
        ...s.options,
        rejectsPath: join(dir, `${n}.rejects.jsonl`),
        ...(s.options.shard ? { shardManifestPath: join(dir, `${n}.shards.json`) } : {}),
      };
      const predicted = await estimate({
        ...common,
        table: 'estimate',
        tableInfo: offlineTableInfo('estimate', {
          partitionKey: { name: 'pk', type: 'S' },
          sortKey: { name: 'sk', type: 'N' },
          billing: 'provisioned',
          tableWcu: MODEL.tableWcu,
        }),
        simulation: { partitions: MODEL.partitions, burstSeconds: MODEL.burstSeconds, latencyMs: LATENCY_MS },
      });
      const table = `estimate_bench_${process.pid}_${++n}`;
      await createBenchTable(admin, table, { sortKeyType: 'N' });
      const proxy = await startPartitionProxy(endpoint, { model: MODEL, partitionKeyName: 'pk' });
      try {
        const measured = await load({ ...common, table, endpoint: proxy.url, region: 'us-east-1' });
        out.push(compare(s, predicted, measured, proxy.stats().throttledItems));
      } finally {
        await proxy.close();
        await dropBenchTable(admin, table);
      }
    }
  });
  return out;
}

/** Predicted against measured for one scenario: the row of the report, also printed. */
function compare(s: Scenario, predicted: EstimateResult, measured: LoadResult, mThrottled: number): Record<string, unknown> {
  const mSeconds = measured.elapsedMs / 1000;
  const pSeconds = predicted.time.estimatedSeconds;
  const pThrottled = predicted.simulations.planned.throttledItems;
  const durationOk = Math.abs(pSeconds / mSeconds - 1) <= 0.15;
  const bothSmall = mThrottled < 0.01 * s.rows && pThrottled < 0.01 * s.rows;
  const throttleOk = bothSmall || (pThrottled > 0 && mThrottled > 0 && pThrottled / mThrottled <= 2 && mThrottled / pThrottled <= 2);
  console.log(
    `  ${s.name.padEnd(44)} ${String(s.rows).padStart(6)} rows  duration ${pSeconds.toFixed(1)} s predicted / ${mSeconds.toFixed(1)} s measured (${((pSeconds / mSeconds - 1) * 100).toFixed(0)}%, ${durationOk ? 'ok' : 'MISSED'}; start-up ${predicted.time.startupSeconds.toFixed(2)} s + reading ${predicted.time.readSeconds.toFixed(2)} s + writing ${predicted.time.writeSeconds.toFixed(1)} s; without them ${((predicted.time.writeSeconds / mSeconds - 1) * 100).toFixed(0)}%)  throttled ${pThrottled} / ${mThrottled} (${throttleOk ? 'ok' : 'MISSED'})`,
  );
  return {
    scenario: s.name,
    rows: s.rows,
    predictedSeconds: pSeconds,
    predictedStartupSeconds: predicted.time.startupSeconds,
    predictedReadSeconds: predicted.time.readSeconds,
    predictedWriteSeconds: predicted.time.writeSeconds,
    measuredSeconds: mSeconds,
    predictedThrottled: pThrottled,
    measuredThrottled: mThrottled,
    durationOk,
    throttleOk,
  };
}

interface ChildRun {
  items: number;
  seconds: number;
  cpuUserS: number;
  cpuSysS: number;
  maxRssMB: number;
  extra?: Record<string, number>;
}

function child(script: string, args: string[]): ChildRun {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(benchDir, script), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`${script} failed: ${run.stderr}`);
  const last = run.stdout.trim().split('\n').pop()!;
  return JSON.parse(last) as ChildRun;
}

/** The CSV as JSONL, one object a row, amount and qty as JSON numbers (the estimate's types for the CSV). */
async function toJsonl(csvPath: string, jsonlPath: string): Promise<number> {
  const out = createWriteStream(jsonlPath);
  let lines: string[] = [];
  for await (const record of createReadStream(csvPath).pipe(parse({ columns: true })) as AsyncIterable<Record<string, string>>) {
    lines.push(JSON.stringify({ ...record, amount: Number(record['amount']), qty: Number(record['qty']) }));
    if (lines.length === 10_000) {
      if (!out.write(`${lines.join('\n')}\n`)) await once(out, 'drain');
      lines = [];
    }
  }
  out.end(lines.length > 0 ? `${lines.join('\n')}\n` : '');
  await once(out, 'finish');
  return (await stat(jsonlPath)).size;
}

const rowsPerSecond = (run: ChildRun) => run.items / run.seconds;
const rowsPerCpuSecond = (run: ChildRun) => run.items / (run.cpuUserS + run.cpuSysS);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const SPEED_TARGET = 0.5;

/** One estimate child against one bare parse of the same file: the line printed and the figures kept. */
function compareSpeed(label: string, parse: ChildRun, bare: string, est: ChildRun): Record<string, unknown> {
  const ratio = rowsPerSecond(est) / rowsPerSecond(parse);
  const cpuRatio = rowsPerCpuSecond(est) / rowsPerCpuSecond(parse);
  const x = est.extra ?? {};
  console.log(
    `  ${label}: ${bare} ${fmt(rowsPerSecond(parse))} rows/s (RSS ${parse.maxRssMB.toFixed(0)} MB); estimate ${fmt(rowsPerSecond(est))} rows/s (RSS ${est.maxRssMB.toFixed(0)} MB) = ${ratio.toFixed(2)}x bare (by CPU ${cpuRatio.toFixed(2)}x; target >= ${SPEED_TARGET}: ${ratio >= SPEED_TARGET ? 'met' : 'MISSED'})`,
  );
  console.log(
    `        its predicted load (${String(x['order'])}): ${(Number(x['estimatedSeconds']) || 0).toFixed(1)} s = start-up ${(Number(x['startupSeconds']) || 0).toFixed(2)} s + reading ${(Number(x['readSeconds']) || 0).toFixed(1)} s + writing ${(Number(x['writeSeconds']) || 0).toFixed(1)} s`,
  );
  return {
    bareParser: bare,
    bareRowsPerSecond: rowsPerSecond(parse),
    estimateRowsPerSecond: rowsPerSecond(est),
    ratio,
    cpuRatio,
    bareRssMB: parse.maxRssMB,
    estimateRssMB: est.maxRssMB,
    predicted: x,
  };
}

/**
 * Estimate rows/s (target: at least 0.5x) as a ratio of bare parsing rows/s on the same file (csv-parse with
 * columns for CSV, readline + JSON.parse for JSONL), each in its own process, one after the other, on two
 * files: key-sorted (generateSkewedCsv, estimated in the default order, which reads it in stripes) and
 * key-mixed (generateMixedFlightsCsv, or --mixed-input, estimated in the window order, which the default
 * order streams such a file in, and in the default order as asked today). The ratio by CPU seconds is
 * printed too: on a shared machine it moves less with the other processes.
 */
async function speed(dir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { rows: SPEED_ROWS };
  const rejects = (name: string) => ['--rejects', join(dir, `speed-${name}.rejects.jsonl`)];

  // Key-sorted, as a database export: CSV in the default order, and the same rows as JSONL.
  const file = await generateSkewedCsv(join(dir, 'speed.csv'), SPEED_ROWS, 5);
  const jsonlPath = join(dir, 'speed.jsonl');
  const jsonlBytes = await toJsonl(file.path, jsonlPath);
  out['keys'] = file.keys;
  const sortedParse = child('runParseOnly.ts', ['csv-parse', '--input', file.path]);
  console.log(
    `  key-sorted CSV, ${SPEED_ROWS.toLocaleString('en-US')} rows (${(file.bytes / 1024 ** 2).toFixed(0)} MB, ${file.keys.toLocaleString('en-US')} keys):`,
  );
  const sorted = compareSpeed('default order', sortedParse, 'csv-parse', child('runEstimateOnly.ts', ['--input', file.path, ...rejects('sorted')]));
  out['csv'] = { bytes: file.bytes, ...sorted };
  const jsonlParse = child('runParseOnly.ts', ['jsonl-parse', '--input', jsonlPath]);
  const jsonlEst = child('runEstimateOnly.ts', ['--input', jsonlPath, ...rejects('jsonl')]);
  console.log(`  the same rows as JSONL (${(jsonlBytes / 1024 ** 2).toFixed(0)} MB):`);
  out['jsonl'] = { bytes: jsonlBytes, ...compareSpeed('default order', jsonlParse, 'jsonl-parse', jsonlEst) };
  // JSONL against csv-parse of the same rows: what reading JSONL instead of CSV gains end to end.
  console.log(`        = ${(rowsPerSecond(jsonlEst) / rowsPerSecond(sortedParse)).toFixed(2)}x bare csv-parse of the same rows as CSV`);

  // Key-mixed, as a table dumped in date order.
  const mixed = MIXED_INPUT
    ? { path: MIXED_INPUT, bytes: (await stat(MIXED_INPUT)).size, rows: undefined }
    : await generateMixedFlightsCsv(join(dir, 'mixed.csv'), SPEED_ROWS, 7);
  const flights = ['--pk', 'origin:S', '--sk', 'id:N', '--types', 'delay:N,distance:N'];
  const mixedParse = child('runParseOnly.ts', ['csv-parse', '--input', mixed.path]);
  console.log(
    `  key-mixed CSV ${MIXED_INPUT ?? '(flights-like, in date order)'}, ${mixedParse.items.toLocaleString('en-US')} rows (${(mixed.bytes / 1024 ** 2).toFixed(0)} MB):`,
  );
  const window = compareSpeed(
    '--order window',
    mixedParse,
    'csv-parse',
    child('runEstimateOnly.ts', ['--input', mixed.path, ...flights, '--order', 'window', ...rejects('mixed-window')]),
  );
  const mixedDefault = compareSpeed(
    'default order',
    mixedParse,
    'csv-parse',
    child('runEstimateOnly.ts', ['--input', mixed.path, ...flights, ...rejects('mixed-default')]),
  );
  // The contrast: the same estimate with its rows planned on its own thread (before load/planningThread.ts).
  const oneThread = compareSpeed(
    'default order, one thread',
    mixedParse,
    'csv-parse',
    child('runEstimateOnly.ts', ['--input', mixed.path, ...flights, '--one-thread', ...rejects('mixed-one-thread')]),
  );
  out['mixed'] = { input: MIXED_INPUT ?? 'generated', bytes: mixed.bytes, window, default: mixedDefault, oneThread };
  // By CPU is no measure of speed with a second thread: the rows are planned beside the simulation, not in less CPU.
  console.log(
    `  estimate / csv-parse rows/s, default order: key-mixed ${(mixedDefault['ratio'] as number).toFixed(2)}x (window ${(window['ratio'] as number).toFixed(2)}x, one thread ${(oneThread['ratio'] as number).toFixed(2)}x), key-sorted ${(sorted['ratio'] as number).toFixed(2)}x; target >= ${SPEED_TARGET} on both`,
  );
  return out;
}

const dir = await mkdtemp(join(tmpdir(), 'ddb-spread-estimate-bench-'));
const results: Record<string, unknown> = { date: new Date().toISOString(), model: MODEL, latencyMs: LATENCY_MS };
try {
  if (!flags['skip-accuracy']) {
    console.log(`estimate accuracy: predicted vs measured through the partition model (${MODEL.partitions} partitions, ${MODEL.tableWcu} WCU/s, no burst)`);
    results['accuracy'] = await accuracy(dir);
  }
  if (!flags['skip-speed']) {
    console.log('estimate speed (each in its own process):');
    results['speed'] = await speed(dir);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
await writeResults('estimate-latest.json', results);
