/**
 * First-write bench: how soon writing starts (target: within seconds) and what a load holds, by write
 * order, on a key-sorted export-like CSV. Prints figures; asserts nothing; not a test.
 *
 *   npx tsx bench/firstWrite.ts                 # 3,000,000 rows (the issue's file, ~210 MB), and 1,000,000
 *   npx tsx bench/firstWrite.ts --rows 500000   # smaller
 *
 * Each run is a child process (runFirstWrite.ts) doing a dry-run load() with the table described offline,
 * so nothing but reading, planning, ordering and batching is measured: the time to the first batch (the
 * first write of a real load), the whole run, peak RSS, and the most the order's temporary folder held at
 * once (sampled every 250 ms) against the input's size. stripes (the default) and round-robin (the
 * default before it) on the large file; stripes on 1M rows as well, to show that its RSS does not grow
 * with the file. Then the orders that spill (target: temp disk <= 1.2x the input, RSS < 256 MB
 * and flat): round-robin and spread on both files, temp disk peak / input, peak RSS and CPU.
 *   npx tsx bench/firstWrite.ts --spill-only   # only those (round-robin and spread, both sizes)
 *   npx tsx bench/firstWrite.ts --sets-only    # only the sets (below)
 * Sets: the 1M-row file split into 16 parts at key boundaries (Spark's sorted output), as a local folder and
 * as an S3 prefix (s3rver on loopback), read in stripes across the parts, against the same rows as one file
 * in the same run (target: first write within 3 s, no temporary files, peak RSS < 256 MB). Before stripes
 * crossed parts, a set was read whole in round-robin order first.
 * Results also go to bench/results/first-write-latest.json.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { startS3Local } from '../tools/s3Local.js';
import { generateSkewedCsv, splitSortedCsv } from './data.js';
import { Harness, watchDiskUse, type Observed } from './harness.js';
import { fmtInt, pass, table, takenOn, writeResults } from './report.js';

const { values: flags } = parseArgs({
  options: { rows: { type: 'string' }, 'small-rows': { type: 'string' }, 'spill-only': { type: 'boolean' }, 'sets-only': { type: 'boolean' } },
});
const SPILL_ONLY = flags['spill-only'] ?? false;
const SETS_ONLY = flags['sets-only'] ?? false;
/** Parts of the sets measured. */
const SET_PARTS = 16;
const ROWS = Number(flags.rows ?? 3_000_000);
const SMALL_ROWS = Number(flags['small-rows'] ?? 1_000_000);
const log = (msg: string) => process.stdout.write(`${msg}\n`);

const harness = new Harness({ log, childTimeoutMs: 30 * 60_000, tablePrefix: 'firstwrite' });
let dir = '';

interface Run {
  order: string;
  rows: number;
  inputBytes: number;
  stats: Observed;
  tempPeakBytes: number;
}

async function measure(input: string, rows: number, order: string, set?: { label: string; bytes: number; args: string[] }): Promise<Run> {
  const temp = join(dir, `temp-${order}-${rows}${set ? `-${set.label}` : ''}`);
  await mkdir(temp, { recursive: true });
  const watch = watchDiskUse(temp);
  const stats = await harness.runChild('runFirstWrite.ts', [
    '--input',
    input,
    '--order',
    order,
    '--temp-dir',
    temp,
    '--rejects',
    join(dir, `${order}.rejects.jsonl`),
    ...(set?.args ?? []),
  ]);
  const tempPeakBytes = await watch.stop();
  const run = { order: set ? `${order} (${set.label})` : order, rows, inputBytes: set?.bytes ?? (await stat(input)).size, stats, tempPeakBytes };
  const x = stats.extra as { firstWriteS: number; order: string };
  log(
    `  ${run.order.padEnd(11)} ${fmtInt(rows).padStart(9)} rows: first write ${x.firstWriteS.toFixed(2)} s, all ${stats.seconds.toFixed(1)} s, peak RSS ${stats.maxRssMB.toFixed(0)} MB, temp peak ${(tempPeakBytes / 1e6).toFixed(0)} MB (in effect: ${x.order})`,
  );
  return run;
}

/** The orders that spill (target: temp disk <= 1.2x the input, RSS < 256 MB), temp disk against the input and RSS, at both sizes. */
function reportSpills(runs: Run[]): void {
  log('');
  log('orders that spill (target: temp disk peak <= 1.2x the input, peak RSS < 256 MB and flat across sizes):');
  const cpu = (r: Run) => r.stats.cpuUserS + r.stats.cpuSysS;
  log(
    table(
      ['order', 'rows', 'input MB', 'temp peak MB', 'temp peak / input', 'peak RSS MB', 'CPU s', 'all s'],
      runs.map((r) => [
        r.order,
        fmtInt(r.rows),
        (r.inputBytes / 1e6).toFixed(0),
        (r.tempPeakBytes / 1e6).toFixed(0),
        (r.tempPeakBytes / r.inputBytes).toFixed(2),
        r.stats.maxRssMB.toFixed(0),
        cpu(r).toFixed(1),
        r.stats.seconds.toFixed(1),
      ]),
    ),
  );
  for (const order of new Set(runs.map((r) => r.order))) {
    const mine = runs.filter((r) => r.order === order).sort((a, b) => a.rows - b.rows);
    const worst = Math.max(...mine.map((r) => r.tempPeakBytes / r.inputBytes));
    const rss = Math.max(...mine.map((r) => r.stats.maxRssMB));
    const growth = mine[mine.length - 1]!.stats.maxRssMB / mine[0]!.stats.maxRssMB;
    log(
      `${order}: temp disk at most ${worst.toFixed(2)}x the input (${pass(worst <= 1.2)}); peak RSS ${rss.toFixed(0)} MB (${pass(rss < 256)}), largest / smallest input x${growth.toFixed(2)} (${pass(growth <= 1.1)})`,
    );
  }
}

/** --spill-only: round-robin and spread on both files. */
async function spillRuns(big: string, small: string): Promise<void> {
  const spilling: Run[] = [];
  for (const order of ['round-robin', 'spread']) spilling.push(await measure(small, SMALL_ROWS, order), await measure(big, ROWS, order));
  reportSpills(spilling);
  const path = await writeResults('first-write-spill-latest.json', { ...takenOn(cpus().length), rows: ROWS, smallRows: SMALL_ROWS, runs: spilling });
  log(`written ${path}`);
}

/** The small file as 16 sorted parts, a local folder and an S3 prefix, in stripes, against the file itself. */
async function setRuns(small: string): Promise<Run[]> {
  const folder = join(dir, 'parts');
  await mkdir(folder);
  const files = await splitSortedCsv(small, folder, SET_PARTS);
  let bytes = 0;
  for (const file of files) bytes += (await stat(file)).size;
  const s3 = await startS3Local();
  try {
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await client.send(new CreateBucketCommand({ Bucket: 'bench' }));
    for (const file of files) await client.send(new PutObjectCommand({ Bucket: 'bench', Key: `parts/${basename(file)}`, Body: await readFile(file) }));
    client.destroy();
    const runs = [
      await measure(small, SMALL_ROWS, 'stripes', { label: 'one file', bytes: (await stat(small)).size, args: [] }),
      await measure(folder, SMALL_ROWS, 'stripes', { label: `${files.length}-part folder`, bytes, args: [] }),
      await measure('s3://bench/parts/', SMALL_ROWS, 'stripes', { label: `${files.length}-part S3 prefix`, bytes, args: ['--s3-endpoint', s3.endpoint] }),
    ];
    const first = (r: Run) => (r.stats.extra as { firstWriteS: number; order: string }).firstWriteS;
    log('');
    log(
      table(
        ['input', 'order in effect', 'first write s', 'all s', 'peak RSS MB', 'temp peak MB'],
        runs.map((r) => [
          r.order,
          (r.stats.extra as { order: string }).order,
          first(r).toFixed(2),
          r.stats.seconds.toFixed(1),
          r.stats.maxRssMB.toFixed(0),
          (r.tempPeakBytes / 1e6).toFixed(0),
        ]),
      ),
    );
    for (const r of runs.slice(1)) {
      log(
        `${r.order}: first write ${first(r).toFixed(2)} s (${pass(first(r) <= 3)}), ${(first(r) / first(runs[0]!)).toFixed(2)}x the one file's; striped: ${pass((r.stats.extra as { order: string }).order === 'stripes')}; no temporary files: ${pass(r.tempPeakBytes === 0)}; peak RSS ${r.stats.maxRssMB.toFixed(0)} MB (${pass(r.stats.maxRssMB < 256)})`,
      );
    }
    return runs;
  } finally {
    await s3.stop();
  }
}

async function allRuns(big: string, small: string): Promise<void> {
  const spilling: Run[] = [];
  const stripesBig = await measure(big, ROWS, 'stripes');
  const roundRobinBig = await measure(big, ROWS, 'round-robin');
  const stripesSmall = await measure(small, SMALL_ROWS, 'stripes');
  spilling.push(await measure(small, SMALL_ROWS, 'round-robin'), roundRobinBig, await measure(small, SMALL_ROWS, 'spread'), await measure(big, ROWS, 'spread'));
  const first = (r: Run) => (r.stats.extra as { firstWriteS: number }).firstWriteS;
  const rows = [stripesBig, roundRobinBig, stripesSmall].map((r) => [
    r.order,
    fmtInt(r.rows),
    first(r).toFixed(2),
    r.stats.seconds.toFixed(1),
    fmtInt(r.rows / r.stats.seconds),
    r.stats.maxRssMB.toFixed(0),
    (r.tempPeakBytes / r.inputBytes).toFixed(2),
  ]);
  log('');
  log(table(['order', 'rows', 'first write s', 'all s', 'rows/s', 'peak RSS MB', 'temp peak / input'], rows));
  const rssGrowth = stripesBig.stats.maxRssMB / stripesSmall.stats.maxRssMB;
  log('');
  log(`first write (default order, ${fmtInt(ROWS)} rows) within 3 s: ${first(stripesBig).toFixed(2)} s (${pass(first(stripesBig) <= 3)})`);
  log(`first write against round-robin's (which reads the whole file first): ${(first(stripesBig) / first(roundRobinBig)).toFixed(3)}x`);
  log(`whole run, stripes against round-robin: ${(stripesBig.stats.seconds / roundRobinBig.stats.seconds).toFixed(2)}x the time`);
  log(
    `temp disk of the default order: ${(stripesBig.tempPeakBytes / stripesBig.inputBytes).toFixed(2)}x the input (${pass(stripesBig.tempPeakBytes <= 1.2 * stripesBig.inputBytes)}); round-robin: ${(roundRobinBig.tempPeakBytes / roundRobinBig.inputBytes).toFixed(2)}x`,
  );
  log(
    `peak RSS of the default order under 256 MB: ${stripesBig.stats.maxRssMB.toFixed(0)} MB (${pass(stripesBig.stats.maxRssMB < 256)}), ${fmtInt(ROWS)} / ${fmtInt(SMALL_ROWS)} rows: x${rssGrowth.toFixed(2)} (${pass(rssGrowth <= 1.1)})`,
  );
  reportSpills(spilling);
  const sets = await setRuns(small);
  const path = await writeResults('first-write-latest.json', {
    ...takenOn(cpus().length),
    rows: ROWS,
    smallRows: SMALL_ROWS,
    runs: [stripesBig, roundRobinBig, stripesSmall, ...spilling, ...sets],
  });
  log(`written ${path}`);
}

try {
  dir = await harness.makeTempDir('ddb-spread-first-write-');
  harness.cleanupOnSignals();
  await harness.compileChildren(['childStats.ts', 'runFirstWrite.ts']);
  log(`first-write bench: ${fmtInt(ROWS)} and ${fmtInt(SMALL_ROWS)} key-sorted rows, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`);
  const big = join(dir, 'big.csv');
  const small = join(dir, 'small.csv');
  if (!SETS_ONLY) await generateSkewedCsv(big, ROWS, 14);
  await generateSkewedCsv(small, SMALL_ROWS, 14);
  if (SETS_ONLY) {
    const runs = await setRuns(small);
    log(`written ${await writeResults('first-write-sets-latest.json', { ...takenOn(cpus().length), smallRows: SMALL_ROWS, runs })}`);
  } else if (SPILL_ONLY) await spillRuns(big, small);
  else await allRuns(big, small);
} catch (error) {
  process.stderr.write(`first-write bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await harness.cleanup();
}
