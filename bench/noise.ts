/**
 * The noise bench: the same rows loaded with default options through the partition proxy in
 * front of DynamoDB Local, once clean, once with the usual fault mix (5% of calls each answered 500,
 * 503, ThrottlingException, a dropped connection or a lost reply, and 2% of replies held 2.5 s) and once
 * with the harsher mix (ThrottlingException on 15% of calls: 35% failing, 2% held), on a model far above what
 * Local takes, so no fault is about capacity. Prints items/s of each and each mix's ratio to clean
 * (target >= 0.5), rate cuts, cuts undone and errors. Asserts nothing.
 *
 *   npx tsx bench/noise.ts [--rows 50000] [--seed 1] [--dist dist] [--sink]
 *   npm run bench -- --noise-only        (after the build that npm run bench does)
 *
 * --sink puts the instant sink (bench/instantSink.ts) behind the proxy instead of DynamoDB Local: the
 * server's time drops out, as with a table that answers in a few ms, and what is left is the client and
 * the faults. On a busy machine Local answers in tens of ms and bounds every run alike, clean or not, so
 * the cost of batches waiting instead of sending shows there. --latency MS holds every call (faulted ones
 * too) MS before the proxy sees it, as a network round trip would: the slots in flight, not the
 * machine's CPU, then bound a clean load, so figures hold on a busy machine.
 *
 * --dist loads another build's index.js (a copy of dist/ inside the repository, so its imports resolve):
 * the same bench against the code before a change.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { LoadResult } from '../dist/index.js';
import { createForwarder, delay, reply, startProxyServer, type ProxyServer, type UpstreamAnswer } from '../test/support/httpForward.js';
import { startPartitionProxy, type ProxyFaults } from '../test/support/partitionProxy.js';
import { generateCsv } from './data.js';
import { withDynamoDBLocal } from './harness.js';
import { startInstantSink } from './instantSink.js';
import { writeResults } from './report.js';
import { createBenchTable, dropBenchTable } from './tables.js';

const { values: flags } = parseArgs({
  options: { rows: { type: 'string' }, seed: { type: 'string' }, dist: { type: 'string' }, sink: { type: 'boolean' }, latency: { type: 'string' } },
});
const ROWS = Number(flags.rows ?? 50_000);
const SEED = Number(flags.seed ?? 1);
const LATENCY_MS = Number(flags.latency ?? 0);
const MODEL = { tableWcu: 1_000_000, partitions: 8, partitionMaxWcu: 1_000_000 } as const;
export const ISSUE_FAULTS: ProxyFaults = { internal: 0.05, unavailable: 0.05, throttling: 0.05, drop: 0.05, lostReply: 0.05, slow: { rate: 0.02, ms: 2500 } };
/** The usual mix with ThrottlingException on 15% of calls instead of 5%: 35% of calls fail, and 2% more are held 2.5 s. */
export const HARSH_FAULTS: ProxyFaults = { ...ISSUE_FAULTS, throttling: 0.15 };
/**
 * DynamoDB Local (a JVM) speeds up over its first ~150k items: a first, unmeasured clean load warms it,
 * or the clean load, run first, would be the slowest and flatter the ratios.
 */
const MIXES = [
  ['warm-up', undefined],
  ['clean', undefined],
  ['noisy', ISSUE_FAULTS],
  ['harsh', HARSH_FAULTS],
] as const;

interface Row {
  label: string;
  seconds: number;
  itemsPerSecond: number;
  written: number;
  complete: boolean;
  decreases: number;
  restores: number;
  errors: number;
  tableThrottles: number;
  retries: number;
}

export async function runNoiseBench(rows = ROWS, seed = SEED): Promise<{ rows: Row[]; ratio: number; harshRatio: number }> {
  const { load } = (await import(pathToFileURL(join(process.cwd(), flags.dist ?? 'dist', 'index.js')).href)) as typeof import('../dist/index.js');
  const dir = await mkdtemp(join(tmpdir(), 'ddb-spread-noise-bench-'));
  const results: Row[] = [];
  let inputRows = 0;
  try {
    await withTarget(async ({ endpoint, createTable, dropTable }) => {
      const input = await generateCsv(join(dir, 'rows.csv'), rows, seed);
      inputRows = input.rows;
      console.log(
        `input: ${input.rows.toLocaleString('en-US')} rows; default options (no --wcu, --concurrency 8); ${flags.dist ?? 'dist'}/ into ${flags.sink ? 'the instant sink' : 'DynamoDB Local'}${LATENCY_MS > 0 ? `, each call held ${LATENCY_MS} ms` : ''}`,
      );
      console.log(`  noisy: ${JSON.stringify(ISSUE_FAULTS)}\n  harsh: ${JSON.stringify(HARSH_FAULTS)}`);
      let n = 0;
      for (const [label, faults] of MIXES) {
        const table = `noise_bench_${process.pid}_${++n}`;
        await createTable(table);
        const proxy = await startPartitionProxy(endpoint, { model: MODEL, partitionKeyName: 'pk', seed, ...(faults ? { faults } : {}) });
        const front = LATENCY_MS > 0 ? await startLatency(proxy.url, LATENCY_MS) : undefined;
        try {
          const result: LoadResult = await load(
            {
              input: input.path,
              table,
              endpoint: front?.url ?? proxy.url,
              region: 'us-east-1',
              types: { amount: 'N', qty: 'N' },
              rejectsPath: join(dir, `${table}.rejects.jsonl`),
            },
            {},
          );
          const row: Row = {
            label,
            seconds: result.elapsedMs / 1000,
            itemsPerSecond: result.itemsPerSecond,
            written: result.written,
            complete: result.complete,
            decreases: result.rate.decreases,
            restores: result.rate.restores,
            errors: result.rate.errors,
            tableThrottles: result.rate.tableThrottles,
            retries: result.retries,
          };
          if (label !== 'warm-up') results.push(row);
          console.log(
            `  ${label.padEnd(7)} ${row.seconds.toFixed(1).padStart(6)} s  ${Math.round(row.itemsPerSecond).toLocaleString('en-US').padStart(6)} items/s  written ${row.written}  ${row.complete ? 'complete' : 'INCOMPLETE'}  rate cuts ${row.decreases}, undone ${row.restores}; table throttles ${row.tableThrottles}, errors ${row.errors}, retries ${row.retries}`,
          );
        } finally {
          await front?.close();
          await proxy.close();
          await dropTable(table);
        }
      }
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const complete = results.every((r) => r.complete && r.written === inputRows);
  const [ratio, harshRatio] = [1, 2].map((i) => results[i]!.itemsPerSecond / results[0]!.itemsPerSecond) as [number, number];
  for (const [label, r] of [
    ['noisy', ratio],
    ['harsh', harshRatio],
  ] as const) {
    console.log(`${label} / clean items/s: ${r.toFixed(2)}; target (>= 0.5, nothing lost): ${r >= 0.5 && complete ? 'met' : 'MISSED'}`);
  }
  return { rows: results, ratio, harshRatio };
}

interface Target {
  endpoint: string;
  createTable(name: string): Promise<void>;
  dropTable(name: string): Promise<void>;
}

/** Holds each call `ms` before forwarding it to `target`; a connection the target drops is dropped here too. */
async function startLatency(target: string, ms: number): Promise<ProxyServer> {
  const upstream = createForwarder(target);
  const server = await startProxyServer('latency', async (req, res, body) => {
    await delay(ms);
    let answer: UpstreamAnswer;
    try {
      answer = await upstream.forward(req, body);
    } catch {
      res.destroy();
      return;
    }
    reply(res, answer.status, answer.headers, answer.body);
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      upstream.close();
    },
  };
}

/** DynamoDB Local, or with --sink the instant sink (every table exists there, and nothing is stored). */
async function withTarget(fn: (target: Target) => Promise<void>): Promise<void> {
  if (!flags.sink) {
    await withDynamoDBLocal(({ endpoint, admin }) =>
      fn({ endpoint, createTable: (name) => createBenchTable(admin, name), dropTable: (name) => dropBenchTable(admin, name) }),
    );
    return;
  }
  const sink = await startInstantSink();
  process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';
  try {
    await fn({ endpoint: sink.endpoint, createTable: () => Promise.resolve(), dropTable: () => Promise.resolve() });
  } finally {
    await sink.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outcome = await runNoiseBench();
  await writeResults('noise-latest.json', {
    date: new Date().toISOString(),
    target: flags.sink ? 'instant sink' : 'DynamoDB Local',
    model: MODEL,
    faults: ISSUE_FAULTS,
    harshFaults: HARSH_FAULTS,
    ...outcome,
  });
}
