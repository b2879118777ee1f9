/**
 * The estimate bench (issue 5).
 * 1. Accuracy: for several inputs (uniform keys, key-sorted, one dominant key, time-bucketed with
 *    sharding, and an unpaced sorted load), `estimate` with the table described as the partition proxy
 *    models it, then the real load through the proxy in front of DynamoDB Local: predicted vs measured
 *    duration and throttled items. Target: duration within 15%, throttled items within a factor of 2
 *    (or both under 1% of rows).
 * 2. Speed: estimate of a skewed CSV against parse-only (read + type + batch), rows/s and peak RSS,
 *    each in its own child process. Target: at least half the rows/s of parsing alone.
 * Prints figures; asserts nothing.
 *
 *   npx tsx bench/estimate.ts [--speed-rows 1000000] [--skip-accuracy] [--skip-speed]
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
import { generateSkewedCsv } from './data.js';
import { benchDir, repoRoot, withDynamoDBLocal } from './harness.js';
import { writeResults } from './report.js';
import { createBenchTable, dropBenchTable } from './tables.js';

const { values: flags } = parseArgs({
  options: { 'speed-rows': { type: 'string' }, 'skip-accuracy': { type: 'boolean' }, 'skip-speed': { type: 'boolean' } },
});
const SPEED_ROWS = Number(flags['speed-rows'] ?? 1_000_000);
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
    `  ${s.name.padEnd(44)} ${String(s.rows).padStart(6)} rows  duration ${pSeconds.toFixed(1)} s predicted / ${mSeconds.toFixed(1)} s measured (${((pSeconds / mSeconds - 1) * 100).toFixed(0)}%, ${durationOk ? 'ok' : 'MISSED'})  throttled ${pThrottled} / ${mThrottled} (${throttleOk ? 'ok' : 'MISSED'})`,
  );
  return {
    scenario: s.name,
    rows: s.rows,
    predictedSeconds: pSeconds,
    measuredSeconds: mSeconds,
    predictedThrottled: pThrottled,
    measuredThrottled: mThrottled,
    durationOk,
    throttleOk,
  };
}

function child(script: string, args: string[]): { items: number; seconds: number; maxRssMB: number } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(benchDir, script), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`${script} failed: ${run.stderr}`);
  const last = run.stdout.trim().split('\n').pop()!;
  return JSON.parse(last) as { items: number; seconds: number; maxRssMB: number };
}

async function speed(dir: string): Promise<Record<string, unknown>> {
  const file = await generateSkewedCsv(join(dir, 'speed.csv'), SPEED_ROWS, 5);
  const parse = child('runParseOnly.ts', ['ddb-spread', '--input', file.path]);
  const est = child('runEstimateOnly.ts', ['--input', file.path, '--rejects', join(dir, 'speed.rejects.jsonl')]);
  const parseRate = parse.items / parse.seconds;
  const estimateRate = est.items / est.seconds;
  console.log(
    `  ${SPEED_ROWS.toLocaleString('en-US')} rows (${(file.bytes / 1024 ** 2).toFixed(0)} MB, ${file.keys.toLocaleString('en-US')} keys): parse-only ${Math.round(parseRate).toLocaleString('en-US')} rows/s (peak RSS ${parse.maxRssMB.toFixed(0)} MB); estimate ${Math.round(estimateRate).toLocaleString('en-US')} rows/s (peak RSS ${est.maxRssMB.toFixed(0)} MB) = ${(estimateRate / parseRate).toFixed(2)} of parse-only (target >= 0.5: ${estimateRate / parseRate >= 0.5 ? 'met' : 'MISSED'})`,
  );
  return {
    rows: SPEED_ROWS,
    parseRowsPerSecond: parseRate,
    estimateRowsPerSecond: estimateRate,
    ratio: estimateRate / parseRate,
    parseRssMB: parse.maxRssMB,
    estimateRssMB: est.maxRssMB,
  };
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
