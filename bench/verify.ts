/**
 * The verify bench: `ddb-spread verify` (verify() from dist/, in-process) against a hand-written
 * BatchGetItem loop over the same keys, on DynamoDB Local, in alternating rounds so both meet the same
 * machine; items/s of each and their ratio (median of the rounds). The loop only reads: 100 keys a call,
 * the same number of calls in flight as verify's default --concurrency, UnprocessedKeys sent again, no
 * comparison and no input parsing. verify reads the input twice (its dry run) and compares every attribute,
 * so the ratio is what that work costs over bare reads. Then the estimate's price of the verify against a
 * verify paced at --rcu: predicted read units and seconds (estimate's `verify.batchGet`) beside what
 * DynamoDB Local charged (ConsumedCapacity) and the verify took. Prints figures; asserts nothing.
 *
 *   npm run build && npx tsx bench/verify.ts [--rows 50000] [--rounds 3]
 *
 * Results also go to bench/results/verify-latest.json.
 */
import { BatchGetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { load } from '../dist/load/load.js';
import { DEFAULT_CONCURRENCY } from '../dist/load/options.js';
import { verify } from '../dist/verifying/verify.js';
import { estimate } from '../dist/estimating/estimate.js';
import { generateCsv } from './data.js';
import { withDynamoDBLocal } from './harness.js';
import { fmtInt, median, table, takenOn, writeResults } from './report.js';
import { createBenchTable } from './tables.js';

const { values: flags } = parseArgs({
  options: { rows: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '3' }, 'paced-seconds': { type: 'string', default: '10' } },
  strict: true,
});
const ROWS = Number(flags.rows);
const ROUNDS = Number(flags.rounds);
if (!Number.isInteger(ROWS) || ROWS < 100) throw new Error(`--rows must be an integer >= 100, got ${flags.rows}`);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be an integer >= 1, got ${flags.rounds}`);
/** How long the paced verify should take by the estimate: its --rcu is the estimate's read units over this. */
const PACED_SECONDS = Number(flags['paced-seconds']);
if (!(PACED_SECONDS > 0)) throw new Error(`--paced-seconds must be above 0, got ${flags['paced-seconds']}`);
const log = (msg: string) => process.stderr.write(`[verify bench] ${msg}\n`);

/** The hand-written loop: every key read once, DEFAULT_CONCURRENCY calls of 100 keys in flight. */
async function handLoop(client: DynamoDBClient, tableName: string, keys: Record<string, AttributeValue>[]): Promise<number> {
  let next = 0;
  let found = 0;
  const lane = async () => {
    while (next < keys.length) {
      let pending = keys.slice(next, next + 100);
      next += 100;
      while (pending.length > 0) {
        const answer = await client.send(new BatchGetItemCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }));
        found += answer.Responses?.[tableName]?.length ?? 0;
        pending = answer.UnprocessedKeys?.[tableName]?.Keys ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: DEFAULT_CONCURRENCY }, lane));
  return found;
}

/** The distinct keys of the bench CSV (pk, sk: the first two columns, no quoting in them). */
async function keysOf(path: string): Promise<Record<string, AttributeValue>[]> {
  const seen = new Map<string, Record<string, AttributeValue>>();
  for (const line of (await readFile(path, 'utf8')).split('\n').slice(1)) {
    if (line === '') continue;
    const [pk, sk] = line.split(',', 2) as [string, string];
    seen.set(`${pk}\u0000${sk}`, { pk: { S: pk }, sk: { S: sk } });
  }
  return [...seen.values()];
}

await withDynamoDBLocal(async ({ endpoint, admin }) => {
  const dir = await mkdtemp(join(tmpdir(), 'ddb-spread-verify-bench-'));
  try {
    const file = await generateCsv(join(dir, 'orders.csv'), ROWS, 42);
    const tableName = 'verify_bench';
    await createBenchTable(admin, tableName);
    const common = { input: file.path, table: tableName, endpoint, region: 'us-east-1', types: { amount: 'N' as const, qty: 'N' as const } };
    const loaded = await load({ ...common, rejectsPath: join(dir, 'load.rejects.jsonl') });
    log(`loaded ${fmtInt(loaded.written)} items (${fmtInt(file.rows)} rows)`);
    const keys = await keysOf(file.path);
    // One unmeasured round of each warms DynamoDB Local's JIT for reads.
    await handLoop(admin, tableName, keys);
    await verify({ ...common, differencesPath: join(dir, 'diff.jsonl'), rejectsPath: join(dir, 'load.rejects.jsonl') });
    const rounds: Array<{ verify: number; loop: number; ratio: number; verifyCpuS: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      let t0 = performance.now();
      const found = await handLoop(admin, tableName, keys);
      const loopS = (performance.now() - t0) / 1000;
      t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const result = await verify({ ...common, differencesPath: join(dir, 'diff.jsonl'), rejectsPath: join(dir, 'load.rejects.jsonl') });
      const cpu = process.cpuUsage(cpu0);
      const verifyS = (performance.now() - t0) / 1000;
      if (result.differing !== 0 || result.checked !== found)
        log(`WARNING: verify checked ${result.checked} (${result.differing} differing), the loop found ${found}`);
      const r = {
        verify: result.checked / verifyS,
        loop: found / loopS,
        ratio: result.checked / verifyS / (found / loopS),
        verifyCpuS: (cpu.user + cpu.system) / 1e6,
      };
      rounds.push(r);
      log(`round ${round + 1}: verify ${fmtInt(r.verify)} items/s, loop ${fmtInt(r.loop)} items/s, ratio ${r.ratio.toFixed(2)}`);
    }
    const summary = {
      verify: median(rounds.map((r) => r.verify)),
      loop: median(rounds.map((r) => r.loop)),
      ratio: median(rounds.map((r) => r.ratio)),
    };
    process.stdout.write(
      `${table(
        ['', 'items/s (median)'],
        [
          ['ddb-spread verify', fmtInt(summary.verify)],
          ['hand-written BatchGetItem loop', fmtInt(summary.loop)],
          ['ratio (median of rounds)', summary.ratio.toFixed(2)],
        ],
      )}\n`,
    );
    // The estimate's price of the verify, then a verify paced at the rate that should take PACED_SECONDS.
    const unpriced = await estimate({ ...common, rejectsPath: join(dir, 'estimate.rejects.jsonl') });
    const rcu = Math.max(1, Math.round(unpriced.verify.batchGet.readUnits / PACED_SECONDS));
    const priced = (await estimate({ ...common, rcu, rejectsPath: join(dir, 'estimate.rejects.jsonl') })).verify;
    const t0 = performance.now();
    const paced = await verify({ ...common, rcu, differencesPath: join(dir, 'diff.jsonl'), rejectsPath: join(dir, 'load.rejects.jsonl') });
    const pacedS = (performance.now() - t0) / 1000;
    const prediction = {
      rcu,
      predictedReadUnits: priced.batchGet.readUnits,
      chargedReadUnits: paced.reads.consumedRcu,
      predictedSeconds: priced.batchGet.seconds,
      measuredSeconds: pacedS,
      predictedScanReadUnits: priced.scan.readUnits,
      cheaper: priced.cheaper,
    };
    process.stdout.write(
      `${table(
        ['verify at --rcu ' + fmtInt(rcu), 'estimate', 'measured'],
        [
          ['read units (BatchGetItem)', fmtInt(prediction.predictedReadUnits), fmtInt(prediction.chargedReadUnits)],
          ['seconds', prediction.predictedSeconds.toFixed(1), prediction.measuredSeconds.toFixed(1)],
        ],
      )}\n`,
    );
    const path = await writeResults('verify-latest.json', { takenOn: takenOn(cpus().length), rows: ROWS, keys: keys.length, rounds, summary, prediction });
    log(`results in ${path}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
