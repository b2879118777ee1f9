/**
 * The hot-partition bench: a key-sorted, skewed input loaded through the partition model
 * (test/support/partitionProxy.ts) in front of DynamoDB Local, with the target rate at the table's
 * capacity. For each write order, with pacing (--wcu at capacity, --key-wcu at the scaled partition
 * ceiling) and without (--no-pacing, backoff only, as other loaders do): wall time as a multiple of the
 * ideal time (write units / target), throttled items, retries, and WCU/s achieved against the target.
 * Prints figures; asserts nothing.
 *
 *   npx tsx bench/rate.ts [--rows 20000] [--modes auto,input,window,round-robin,spread]
 *   npm run bench -- --rate-only        (after the build that npm run bench does)
 *
 * The table: 4 partitions, 1,000 WCU/s, each partition at most 500 WCU/s with idealised adaptive
 * capacity (a busy partition may take what the table has left, up to its ceiling): DynamoDB's 1,000 WCU/s
 * partition ceiling scaled down by two, so a load at capacity takes seconds, not hours.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { load } from '../dist/index.js';
import type { OrderMode } from '../dist/ordering/order.js';
import { startPartitionProxy, type PartitionProxy } from '../test/support/partitionProxy.js';
import { generateSkewedCsv } from './data.js';
import { withDynamoDBLocal } from './harness.js';
import { writeResults } from './report.js';
import { createBenchTable, dropBenchTable } from './tables.js';

const { values: flags } = parseArgs({
  options: { rows: { type: 'string' }, modes: { type: 'string' }, seed: { type: 'string' } },
});
const ROWS = Number(flags.rows ?? 20_000);
/** `auto`, the default order (on this sorted input: stripes), is what the target is about; the others for contrast. */
const MODES = (flags.modes ?? 'auto,input,window,round-robin,spread').split(',') as OrderMode[];
const SEED = Number(flags.seed ?? 7);
const MODEL = { tableWcu: 1000, partitions: 4, partitionMaxWcu: 500, adaptiveCapacity: true, burstSeconds: 0, initialSeconds: 1 } as const;
const KEY_WCU = MODEL.partitionMaxWcu;

interface Row {
  mode: OrderMode;
  paced: boolean;
  seconds: number;
  idealSeconds: number;
  throttled: number;
  retries: number;
  achievedWcu: number;
  written: number;
  complete: boolean;
  bottleneck: string;
}

export async function runRateBench(rows = ROWS, modes = MODES): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ddb-spread-rate-bench-'));
  const results: Row[] = [];
  try {
    await withDynamoDBLocal(async ({ endpoint, admin }) => {
      const input = await generateSkewedCsv(join(dir, 'skewed.csv'), rows, SEED);
      console.log(
        `input: ${input.rows.toLocaleString('en-US')} rows sorted by key, ${input.keys.toLocaleString('en-US')} keys, heaviest ${input.hotKey} with ${input.hotRows} rows (${((input.hotRows / input.rows) * 100).toFixed(1)}%)`,
      );
      console.log(
        `table: ${MODEL.partitions} partitions, ${MODEL.tableWcu} WCU/s, partition ceiling ${MODEL.partitionMaxWcu} WCU/s (adaptive capacity); paced runs: --wcu ${MODEL.tableWcu} --key-wcu ${KEY_WCU}`,
      );
      // DynamoDB Local's JVM answers its first thousands of calls slowly (JIT warm-up): charged to the first mode
      // measured, it made whichever came first look worst. One unmeasured load first, straight to DynamoDB Local.
      const warmUp = `rate_bench_${process.pid}_warm`;
      await createBenchTable(admin, warmUp, { provisionedWcu: MODEL.tableWcu });
      try {
        await load(
          {
            input: input.path,
            table: warmUp,
            endpoint,
            region: 'us-east-1',
            types: { amount: 'N', qty: 'N' },
            rejectsPath: join(dir, 'warm.rejects.jsonl'),
            pacing: false,
          },
          {},
        );
      } finally {
        await dropBenchTable(admin, warmUp);
      }
      let n = 0;
      for (const mode of modes) {
        for (const paced of [true, false]) {
          const table = `rate_bench_${process.pid}_${++n}`;
          await createBenchTable(admin, table, { provisionedWcu: MODEL.tableWcu });
          const proxy = await startPartitionProxy(endpoint, { model: MODEL, partitionKeyName: 'pk' });
          try {
            results.push(await pacedOrUnpaced(input.path, table, proxy, mode, paced, dir));
            console.log(formatRow(results.at(-1)!));
          } finally {
            await proxy.close();
            await dropBenchTable(admin, table);
          }
        }
      }
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return results;
}

/** One load through the proxy, in the given order, paced at the table's capacity or not at all. */
async function pacedOrUnpaced(path: string, table: string, proxy: PartitionProxy, mode: OrderMode, paced: boolean, dir: string): Promise<Row> {
  const result = await load(
    {
      input: path,
      table,
      endpoint: proxy.url,
      region: 'us-east-1',
      types: { amount: 'N', qty: 'N' },
      order: mode,
      rejectsPath: join(dir, `${table}.rejects.jsonl`),
      maxAttempts: 100,
      ...(paced ? { wcu: MODEL.tableWcu, keyWcu: KEY_WCU } : { pacing: false }),
    },
    {},
  );
  return {
    mode,
    paced,
    seconds: result.elapsedMs / 1000,
    idealSeconds: result.plannedWcu / MODEL.tableWcu,
    throttled: proxy.stats().throttledItems,
    retries: result.retries,
    achievedWcu: (result.plannedWcu * 1000) / result.elapsedMs,
    written: result.written,
    complete: result.complete,
    bottleneck: result.bottleneck ? `${result.bottleneck.key} (${result.bottleneck.recommendedShards} shards)` : '-',
  };
}

function formatRow(r: Row): string {
  const pct = (r.throttled / r.written) * 100;
  return `  ${r.mode.padEnd(12)} ${(r.paced ? 'paced' : 'unpaced').padEnd(8)} ${r.seconds.toFixed(1).padStart(6)} s = ${(r.seconds / r.idealSeconds).toFixed(2)}x ideal  throttled ${String(r.throttled).padStart(6)} (${pct.toFixed(2)}% of rows)  retries ${String(r.retries).padStart(5)}  ${Math.round(r.achievedWcu)} / ${MODEL.tableWcu} WCU/s  ${r.complete ? 'complete' : 'INCOMPLETE'}  bottleneck ${r.bottleneck}`;
}

/** The target is the default order's (paced at capacity): within 1.1x of the ideal time, under 1% of writes throttled. */
export function summarize(rows: Row[]): string[] {
  const paced = rows.filter((r) => r.paced);
  const verdict = (r: Row) =>
    `${r.mode}, ${(r.seconds / r.idealSeconds).toFixed(2)}x ideal, ${((r.throttled / r.written) * 100).toFixed(2)}% throttled; target (<= 1.1x ideal, < 1% throttled): ${
      r.seconds / r.idealSeconds <= 1.1 && r.throttled < 0.01 * r.written ? 'met' : 'MISSED'
    }`;
  const lines: string[] = [];
  const chosen = paced.find((r) => r.mode === 'auto');
  if (chosen) lines.push(`default order, paced: ${verdict(chosen)}`);
  const best = [...paced].sort((a, b) => a.seconds / a.idealSeconds - b.seconds / b.idealSeconds)[0];
  if (best && best !== chosen) lines.push(`best paced mode: ${verdict(best)}`);
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await runRateBench();
  for (const line of summarize(rows)) console.log(line);
  await writeResults('rate-latest.json', { date: new Date().toISOString(), model: MODEL, keyWcu: KEY_WCU, rows });
}
