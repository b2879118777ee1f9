/**
 * First-write bench for sets of key-sorted parts (Spark's sorted output): a key-sorted CSV split into 16
 * parts at key boundaries, as a local folder and as an S3 prefix (s3rver on loopback), read in stripes
 * across the parts, against the same rows as one file in the same run (target: first write within 3 s,
 * no temporary files, peak RSS < 256 MB). The same rows as an S3 prefix of 2 large objects and as one S3
 * object show the cut inside S3 objects (ranged GETs; before it, an object was one stripe, and one object
 * was read through the window). Each run is a child process (runFirstWrite.ts), as in firstWrite.ts, with
 * the stripes it read. Then a resumed load of each S3 prefix: the CLI loads it into the instant sink with
 * --checkpoint, is killed (SIGKILL) once half its batches are written, and is run again: the time from the
 * second start to its first BatchWriteItem, its peak RSS and temporary files.
 *   npx tsx bench/firstWriteSets.ts [--small-rows 1000000] [--no-resume | --resume-only | --resume-mixed] [--s3-mixed-only]
 * --s3-mixed-only runs only the key-mixed 16-part S3 prefix (time-ordered rows; streamed, not striped), first run and resumed.
 * --resume-mixed measures instead a resumed load of each key-mixed local input of firstWrite.ts (mixedData.ts:
 * a time-ordered CSV, the same as gzip, a full DynamoDB export folder), killed and run again the same way,
 * and of an export chain (that full export then two incrementals, the folder holding them), killed once in
 * the full export and once in the first incremental.
 * Results also go to bench/results/first-write-sets-latest.json.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { startS3Local } from '../tools/s3Local.js';
import { generateSkewedCsv, splitSortedCsv } from './data.js';
import { chainChanges, generateExport, generateExportChain, generateTimeOrderedCsv, generateTimeOrderedGzip, generateTimeOrderedParts } from './mixedData.js';
import { Harness, repoRoot, watchDiskUse, type Observed } from './harness.js';
import { startInstantSink, type InstantSinkStats } from './instantSink.js';
import { fmtInt, pass, table, takenOn, writeResults } from './report.js';

const { values: flags } = parseArgs({
  options: {
    'small-rows': { type: 'string' },
    'no-resume': { type: 'boolean' },
    'resume-only': { type: 'boolean' },
    'resume-mixed': { type: 'boolean' },
    's3-mixed-only': { type: 'boolean' },
  },
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

/** A resumed load: its first write after the second start, its whole time, peak RSS and temp peak. */
interface Resumed {
  input: string;
  /** What the input is and where the first run was killed. */
  label: string;
  killedAtBatch: number;
  /** DeleteRequests written before the kill: an export chain's first run killed inside an incremental wrote some. */
  killedAtDeletes: number;
  firstWriteS: number | undefined;
  allS: number;
  exitCode: number | null;
  peakRssMB: number;
  tempPeakBytes: number;
}

/** Killed once `batches` BatchWriteItem calls are written. */
const afterBatches = (batches: number) => (stats: InstantSinkStats) => stats.batchCalls >= batches;

/**
 * The CLI loading `input` into the instant sink with --checkpoint, killed once `kill` says so (asked
 * every 5 ms with the sink's counts), then run again with the same command.
 */
async function resumedRun(
  input: string,
  label: string,
  s3Endpoint: string,
  kill: (stats: InstantSinkStats) => boolean,
  what = basename(input),
): Promise<Resumed> {
  const sink = await startInstantSink();
  const temp = join(dir, `temp-resume-${label}`);
  await mkdir(temp, { recursive: true });
  const checkpoint = join(dir, `resume-${label}.checkpoint.json`);
  const args = [
    join(repoRoot, 'bin/ddb-spread.js'),
    'load',
    input,
    '--table',
    'bench',
    '--endpoint-url',
    sink.endpoint,
    '--types',
    'amount:N,qty:N',
    '--checkpoint',
    checkpoint,
    '--temp-dir',
    temp,
    '--rejects',
    join(dir, `resume-${label}.rejects.jsonl`),
    '--s3-endpoint-url',
    s3Endpoint,
    '--s3-path-style',
    '--no-progress',
  ];
  const env = { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };
  /** Runs the CLI; `watch` is asked every 5 ms while it runs, and may kill it. Resolves with its exit code and peak RSS. */
  const cli = (watch: (pid: number) => boolean) =>
    new Promise<{ code: number | null; peakRssMB: number }>((resolveRun, reject) => {
      const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      let peakKb = 0;
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setInterval(() => {
        try {
          peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0));
        } catch {
          // Gone already.
        }
        if (watch(child.pid!)) child.kill('SIGKILL');
      }, 5);
      child.on('error', reject);
      child.on('exit', (code, signal) => {
        clearInterval(timer);
        if (code !== 0 && signal !== 'SIGKILL') reject(new Error(`ddb-spread exited ${code}: ${stderr}`));
        else resolveRun({ code, peakRssMB: peakKb / 1024 });
      });
    });
  try {
    await cli(() => kill(sink.stats));
    const killedAtBatch = sink.stats.batchCalls;
    const killedAtDeletes = sink.stats.deletes;
    const watchTemp = watchDiskUse(temp);
    const t0 = performance.now();
    let firstWriteS: number | undefined;
    const second = await cli(() => {
      if (firstWriteS === undefined && sink.stats.batchCalls > killedAtBatch) firstWriteS = (performance.now() - t0) / 1000;
      return false;
    });
    const allS = (performance.now() - t0) / 1000;
    const resumed = {
      input,
      label: what,
      killedAtBatch,
      killedAtDeletes,
      firstWriteS,
      allS,
      exitCode: second.code,
      peakRssMB: second.peakRssMB,
      tempPeakBytes: await watchTemp.stop(),
    };
    log(
      `  resumed ${what}: killed at batch ${killedAtBatch}${killedAtDeletes > 0 ? ` (${killedAtDeletes} deletes written)` : ''}, first write ${firstWriteS?.toFixed(2) ?? 'none'} s after the second start, all ${allS.toFixed(1)} s, peak RSS ${resumed.peakRssMB.toFixed(0)} MB, temp peak ${(resumed.tempPeakBytes / 1e6).toFixed(0)} MB, exit ${second.code}`,
    );
    return resumed;
  } finally {
    await sink.close();
  }
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
  const x = stats.extra as { firstWriteS: number; order: string; stripes?: number };
  log(
    `  ${run.order.padEnd(11)} ${fmtInt(rows).padStart(9)} rows: first write ${x.firstWriteS.toFixed(2)} s, all ${stats.seconds.toFixed(1)} s, peak RSS ${stats.maxRssMB.toFixed(0)} MB, temp peak ${(tempPeakBytes / 1e6).toFixed(0)} MB (in effect: ${x.order}, ${x.stripes ?? '?'} stripes)`,
  );
  return run;
}

/**
 * The small file as 16 sorted parts, a local folder and an S3 prefix, and as 2 large S3 objects and one, in
 * stripes, against the file itself; then resumed loads of the S3 prefixes.
 */
async function setRuns(small: string): Promise<{ runs: Run[]; resumed: Resumed[] }> {
  const folder = join(dir, 'parts');
  await mkdir(folder);
  const files = await splitSortedCsv(small, folder, SET_PARTS);
  let bytes = 0;
  for (const file of files) bytes += (await stat(file)).size;
  const twoFolder = join(dir, 'two');
  await mkdir(twoFolder);
  const two = await splitSortedCsv(small, twoFolder, 2);
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
    for (const file of two) await client.send(new PutObjectCommand({ Bucket: 'bench', Key: `two/${basename(file)}`, Body: await readFile(file) }));
    await client.send(new PutObjectCommand({ Bucket: 'bench', Key: 'one/small.csv', Body: await readFile(small) }));
    // The same count of rows in time order (keys mixed: a log, an export in time order) as 16 S3 objects:
    // no stripes, the window from the first object's first rows.
    const mixed = await generateTimeOrderedParts(join(dir, 'mixed-parts'), SMALL_ROWS, SET_PARTS, 7);
    for (const file of await readdir(mixed.path))
      await client.send(new PutObjectCommand({ Bucket: 'bench', Key: `mixed/${file}`, Body: await readFile(join(mixed.path, file)) }));
    client.destroy();
    const smallBytes = (await stat(small)).size;
    const mixedOnly = flags['s3-mixed-only'] === true;
    const mixedRun = () =>
      measure('s3://bench/mixed/', SMALL_ROWS, 'default', {
        label: `${SET_PARTS}-part S3 prefix, keys mixed`,
        bytes: mixed.bytes,
        args: ['--s3-endpoint', s3.endpoint],
      });
    const runs = flags['resume-only']
      ? []
      : mixedOnly
        ? [await mixedRun()]
        : [
            await measure(small, SMALL_ROWS, 'default', { label: 'one file', bytes: (await stat(small)).size, args: [] }),
            await measure(folder, SMALL_ROWS, 'default', { label: `${files.length}-part folder`, bytes, args: [] }),
            await measure('s3://bench/parts/', SMALL_ROWS, 'default', { label: `${files.length}-part S3 prefix`, bytes, args: ['--s3-endpoint', s3.endpoint] }),
            await measure('s3://bench/two/', SMALL_ROWS, 'default', {
              label: `${two.length}-object S3 prefix`,
              bytes: smallBytes,
              args: ['--s3-endpoint', s3.endpoint],
            }),
            await measure('s3://bench/one/small.csv', SMALL_ROWS, 'default', { label: '1 S3 object', bytes: smallBytes, args: ['--s3-endpoint', s3.endpoint] }),
            await mixedRun(),
          ];
    const first = (r: Run) => (r.stats.extra as { firstWriteS: number; order: string }).firstWriteS;
    if (runs.length > 0) log('');
    if (runs.length > 0)
      log(
        table(
          ['input', 'order in effect', 'stripes', 'first write s', 'all s', 'peak RSS MB', 'temp peak MB'],
          runs.map((r) => [
            r.order,
            (r.stats.extra as { order: string }).order,
            String((r.stats.extra as { stripes?: number }).stripes ?? '?'),
            first(r).toFixed(2),
            r.stats.seconds.toFixed(1),
            r.stats.maxRssMB.toFixed(0),
            (r.tempPeakBytes / 1e6).toFixed(0),
          ]),
        ),
      );
    // The one file too: its RSS is a target as much as the sets'.
    for (const [i, r] of runs.entries()) {
      const against = i === 0 ? '' : `, ${(first(r) / first(runs[0]!)).toFixed(2)}x the one file's`;
      log(
        `${r.order}: first write ${first(r).toFixed(2)} s (${pass(first(r) <= 3)})${against}; ${r.order.includes('keys mixed') ? 'streamed (no stripes)' : 'striped'}: ${pass(((r.stats.extra as { order: string }).order === 'stripes') !== r.order.includes('keys mixed'))}; no temporary files: ${pass(r.tempPeakBytes === 0)}; peak RSS ${r.stats.maxRssMB.toFixed(0)} MB (${pass(r.stats.maxRssMB < 256)})`,
      );
    }
    // Killed half way through its batches (the rows over 25 a batch, about).
    const killAt = Math.round(SMALL_ROWS / 25 / 2);
    const mixedResumed = () => resumedRun('s3://bench/mixed/', 'mixed', s3.endpoint, afterBatches(killAt), `${SET_PARTS}-part S3 prefix, keys mixed`);
    const resumed = flags['no-resume']
      ? []
      : mixedOnly
        ? [await mixedResumed()]
        : [
            await resumedRun('s3://bench/parts/', 'parts', s3.endpoint, afterBatches(killAt)),
            await resumedRun('s3://bench/two/', 'two', s3.endpoint, afterBatches(killAt)),
            await mixedResumed(),
          ];
    for (const r of resumed)
      log(
        `resumed ${r.input}: first write ${r.firstWriteS?.toFixed(2) ?? 'none'} s (${pass(r.firstWriteS !== undefined && r.firstWriteS <= 3)}); no temporary files: ${pass(r.tempPeakBytes === 0)}; peak RSS ${r.peakRssMB.toFixed(0)} MB (${pass(r.peakRssMB < 256)}); exit ${r.exitCode}`,
      );
    return { runs, resumed };
  } finally {
    await s3.stop();
  }
}

try {
  dir = await harness.makeTempDir('ddb-spread-first-write-');
  harness.cleanupOnSignals();
  await harness.compileChildren(['childStats.ts', 'runFirstWrite.ts']);
  log(`first-write bench, sets of sorted parts: ${fmtInt(SMALL_ROWS)} key-sorted rows, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}`);
  if (flags['resume-mixed']) {
    // Key-mixed local inputs, each killed half way and run again (no S3: the endpoint given is never called).
    const killAt = Math.round(SMALL_ROWS / 25 / 2);
    const inputs = [
      (await generateTimeOrderedCsv(join(dir, 'mixed.csv'), SMALL_ROWS, 7)).path,
      (await generateTimeOrderedGzip(join(dir, 'mixed.csv.gz'), SMALL_ROWS, 7)).path,
      (await generateExport(join(dir, 'export'), SMALL_ROWS, 16, 7)).path,
    ];
    const resumed: Resumed[] = [];
    for (const [i, input] of inputs.entries()) resumed.push(await resumedRun(input, `mixed-${i}`, 'http://127.0.0.1:9', afterBatches(killAt)));
    // An export chain (the full export above, then two incrementals), the folder that holds the three: killed half
    // way through the full export, and half way through the first incremental (its deletes, the only ones in
    // the chain, say when: once half of them are written, the full export is done and the incremental half read).
    const chain = await generateExportChain(join(dir, 'chain'), SMALL_ROWS, 16, chainChanges(SMALL_ROWS), 7);
    resumed.push(await resumedRun(chain.path, 'chain-full', 'http://127.0.0.1:9', afterBatches(killAt), 'export chain, killed in the full export'));
    const halfFirstDeletes = Math.round(chain.incrementals[0]!.deletes / 2);
    resumed.push(
      await resumedRun(chain.path, 'chain-incremental', 'http://127.0.0.1:9', (s) => s.deletes >= halfFirstDeletes, 'export chain, killed in incremental 1'),
    );
    for (const r of resumed)
      log(
        `resumed ${r.label}: first write ${r.firstWriteS?.toFixed(2) ?? 'none'} s (${pass(r.firstWriteS !== undefined && r.firstWriteS <= 3)}); no temporary files: ${pass(r.tempPeakBytes === 0)}; peak RSS ${r.peakRssMB.toFixed(0)} MB (${pass(r.peakRssMB < 256)}); exit ${r.exitCode}`,
      );
    log(`written ${await writeResults('first-write-resume-mixed-latest.json', { ...takenOn(cpus().length), rows: SMALL_ROWS, resumed })}`);
  } else {
    const small = join(dir, 'small.csv');
    await generateSkewedCsv(small, SMALL_ROWS, 14);
    const { runs, resumed } = await setRuns(small);
    log(`written ${await writeResults('first-write-sets-latest.json', { ...takenOn(cpus().length), smallRows: SMALL_ROWS, runs, resumed })}`);
  }
} catch (error) {
  process.stderr.write(`first-write bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await harness.cleanup();
}
