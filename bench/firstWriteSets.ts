/**
 * First-write bench for sets of key-sorted parts (Spark's sorted output): a key-sorted CSV split into 16
 * parts at key boundaries, as a local folder and as an S3 prefix (s3rver on loopback), read in stripes
 * across the parts, against the same rows as one file in the same run (target: first write within 3 s,
 * no temporary files, peak RSS < 256 MB). Before stripes crossed parts, a set was read whole in
 * round-robin order first. Each run is a child process (runFirstWrite.ts), as in firstWrite.ts.
 *   npx tsx bench/firstWriteSets.ts [--small-rows 1000000]
 * Results also go to bench/results/first-write-sets-latest.json.
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
  options: { 'small-rows': { type: 'string' } },
});
/** Parts of the sets measured. */
const SET_PARTS = 16;
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
  const temp = join(dir, `temp-${order}-${rows}${set ? `-${set.label.replace(/\W+/g, '-')}` : ''}`);
  await mkdir(temp, { recursive: true });
  const watch = watchDiskUse(temp);
  const stats = await harness.runChild('runFirstWrite.ts', [
    '--input',
    input,
    // The default order (auto), which decides stripes for a grouped set.
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
      await measure(small, SMALL_ROWS, 'default', { label: 'one file', bytes: (await stat(small)).size, args: [] }),
      await measure(folder, SMALL_ROWS, 'default', { label: `${files.length}-part folder`, bytes, args: [] }),
      await measure('s3://bench/parts/', SMALL_ROWS, 'default', { label: `${files.length}-part S3 prefix`, bytes, args: ['--s3-endpoint', s3.endpoint] }),
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

try {
  dir = await harness.makeTempDir('ddb-spread-first-write-');
  harness.cleanupOnSignals();
  await harness.compileChildren(['childStats.ts', 'runFirstWrite.ts']);
  log(`first-write bench, sets of sorted parts: ${fmtInt(SMALL_ROWS)} key-sorted rows, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`);
  const small = join(dir, 'small.csv');
  await generateSkewedCsv(small, SMALL_ROWS, 14);
  const runs = await setRuns(small);
  log(`written ${await writeResults('first-write-sets-latest.json', { ...takenOn(cpus().length), smallRows: SMALL_ROWS, runs })}`);
} catch (error) {
  process.stderr.write(`first-write bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await harness.cleanup();
}
