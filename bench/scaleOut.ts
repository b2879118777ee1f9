/**
 * The scale-out bench: N workers of one load, each a real process of the CLI (bin/ddb-spread.js over
 * dist/, `--json`), started at once with `--segment i/N --listing <shared file> --total-wcu T`, against
 * one worker (`--segment 0/1`, the same flags) over the same input. Prints figures; asserts nothing.
 *
 * 1. Reading and CPU, into the instant sink (bench/instantSink.ts: the table answers at once, so what is
 *    measured is the workers' own work): a full DynamoDB export of 16 data files in an S3 prefix (s3rver),
 *    16 CSV parts of key-mixed rows in a folder given --parts-disjoint (no primary key is in two parts;
 *    where the CLI does not know the flag yet, it says so and runs without it), and one large key-sorted
 *    CSV (bench/data.ts's skewed file, as a sorted database dump would be: each primary key once) given
 *    --parts-disjoint too, so cut into byte ranges, as a local file and as an S3 object (whose scanned
 *    segments each worker keeps on local disk, and reads its range from). Bytes read by all workers
 *    together (a range's scan for where records start included; a range read back from such a local copy
 *    not) against the input (the export: against what one worker reads, its data files being
 *    gzip), their CPU together against one worker's, wall time. Targets: bytes <= 1.05x, CPU <= 1.15x. The
 *    N workers are also run one after another, so that what each process costs whatever the cores (start-up,
 *    warming up) shows apart from what N processes on few cores cost each other.
 * 2. One shared budget through the partition model (test/support/partitionProxy.ts in front of DynamoDB
 *    Local): the CSV parts at --total-wcu T, N workers against one, the time against the ideal (the rows'
 *    write units / T) and the table's rate over every 10 s window against T. The modelled table has twice
 *    the budget, so that a rate above the budget shows instead of being throttled away. Targets: N
 *    workers within 1.1x of the ideal time, no 10 s window above 1.1x the budget.
 *
 * A worker's CPU is its whole process's user + system time (start-up included: a platform pays it for
 * each worker), written at its exit by a module preloaded with `node --import`; its peak RSS likewise.
 *
 *   npx tsx bench/scaleOut.ts [--rows 96000] [--parts 16] [--workers 4] [--rate-rows 24000] [--budget 800] [--skip-rate] [--skip-reading]
 *   npm run bench -- --scale-out-only
 * Results also go to bench/results/scale-out-latest.json.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn, spawnSync } from 'node:child_process';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { startPartitionProxy } from '../test/support/partitionProxy.js';
import { startS3Local } from '../tools/s3Local.js';
import { startS3Served, type S3Served } from './s3Served.js';
import { Harness, repoRoot, withDynamoDBLocal } from './harness.js';
import { startInstantSink } from './instantSink.js';
import { generateSkewedCsv } from './data.js';
import { generateExport, generateTimeOrderedParts } from './mixedData.js';
import { fmtInt, median, pass, table, takenOn, writeResults } from './report.js';
import { createBenchTable, dropBenchTable } from './tables.js';

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string' },
    parts: { type: 'string' },
    workers: { type: 'string' },
    'rate-rows': { type: 'string' },
    budget: { type: 'string' },
    'skip-rate': { type: 'boolean' },
    'skip-reading': { type: 'boolean' },
  },
  strict: true,
});

function intFlag(name: 'rows' | 'parts' | 'workers' | 'rate-rows' | 'budget', fallback: number): number {
  const text = flags[name];
  if (text === undefined) return fallback;
  const n = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be an integer >= 1, got ${text}`);
  return n;
}

const ROWS = intFlag('rows', 96_000);
const PARTS = intFlag('parts', 16);
const WORKERS = intFlag('workers', 4);
/** Rows of the shared-budget runs: at 800 WCU/s, 24,000 one-unit rows are 30 s of ideal time a run. */
const RATE_ROWS = intFlag('rate-rows', 24_000);
const BUDGET = intFlag('budget', 800);
const SEED = 32;
const TARGET_BYTES = 1.05;
const TARGET_CPU = 1.15;
const TARGET_TIME = 1.1;
const TARGET_WINDOW = 1.1;
const WINDOW_S = 10;
/**
 * --total-wcu of the reading runs: far above what the instant sink ever takes, so that the workers' own
 * work, not their pacing, sets their time. --key-wcu likewise: per-key pacing is not what is measured.
 */
const UNBOUNDED_WCU = 1_000_000;
/** The modelled table: twice the budget (see above), DynamoDB's partition ceiling, adaptive capacity, no burst. */
const MODEL = { tableWcu: 2 * BUDGET, partitions: 4, partitionMaxWcu: 1000, adaptiveCapacity: true, burstSeconds: 0, initialSeconds: 1 } as const;
const CSV_TYPES = ['--types', 'amount:N,qty:N'];
// The SDK's notice about Node.js versions, once for the S3 client here (the CLI silences its own).
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
const ENV = { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };

/**
 * Preloaded into each worker (`node --import`): at exit, the process's own user and system CPU (every
 * thread's: getrusage of the process) and its peak RSS (VmHWM where there is one: childStats.ts says why
 * not maxRSS), written to the file named by $SCALE_OUT_STATS. The CLI is run unchanged.
 */
const STATS_AT_EXIT = `data:text/javascript,${encodeURIComponent(
  [
    "import { readFileSync, writeFileSync } from 'node:fs';",
    "process.on('exit', () => {",
    '  const u = process.resourceUsage();',
    '  let kb = u.maxRSS;',
    "  try { kb = Number(/^VmHWM:\\s+(\\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]); } catch {}",
    '  writeFileSync(process.env.SCALE_OUT_STATS, JSON.stringify({ cpuS: (u.userCPUTime + u.systemCPUTime) / 1e6, peakRssMB: kb / 1024 }));',
    '});',
  ].join('\n'),
)}`;

const log = (msg: string) => process.stdout.write(`${msg}\n`);
const harness = new Harness({ log, childTimeoutMs: 10 * 60_000, tablePrefix: 'scaleout' });
let dir = '';

/** The fields of the CLI's --json summary read here (src/reporting/result.ts). */
interface CliResult {
  rowsRead: number;
  written: number;
  superseded: number;
  rejected: number;
  otherSegments: number;
  notWritten: number;
  bytesRead: number;
  plannedWcu: number;
  complete: boolean;
  /** Divided by range: the bytes scanned for where records start, besides bytesRead. */
  division?: { scannedBytes?: number; copiedBytes?: number };
}

interface Worker {
  segment: string;
  code: number | null;
  /** From the start of all the workers of the run to this one's exit. */
  wallS: number;
  cpuS: number;
  peakRssMB: number;
  result: CliResult | undefined;
  stderr: string;
}

interface Run {
  label: string;
  workers: Worker[];
  /** From the start of the workers to the last one's exit. */
  wallS: number;
  bytesRead: number;
  cpuS: number;
  rowsRead: number;
  written: number;
}

/** One worker: the CLI with the stats preload; resolves when it has exited, whatever its code. */
function worker(args: string[], statsPath: string, t0: number, segment: string): Promise<Worker> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, ['--import', STATS_AT_EXIT, join(repoRoot, 'bin/ddb-spread.js'), ...args], {
      cwd: dir,
      env: { ...ENV, SCALE_OUT_STATS: statsPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      const wallS = (performance.now() - t0) / 1000;
      void readFile(statsPath, 'utf8')
        .then((text) => JSON.parse(text) as { cpuS: number; peakRssMB: number })
        .catch(() => ({ cpuS: Number.NaN, peakRssMB: Number.NaN }))
        .then(({ cpuS, peakRssMB }) => {
          let result: CliResult | undefined;
          try {
            result = JSON.parse(stdout.trim().split('\n').pop() ?? '') as CliResult;
          } catch {
            result = undefined;
          }
          resolveRun({ segment, code, wallS, cpuS, peakRssMB, result, stderr });
        });
    });
  });
}

let runSeq = 0;

/**
 * `n` workers of one load started at once, each `load <input> <args> --segment i/n --listing <a new
 * listing> --total-wcu <totalWcu> --json`. Throws when a worker fails (its stderr in the message).
 */
async function runWorkers(label: string, n: number, input: string, args: string[], totalWcu: number, oneAtATime = false): Promise<Run> {
  const id = ++runSeq;
  const listing = join(dir, `run${id}.listing.json`);
  const t0 = performance.now();
  const start = (i: number) =>
    worker(
      [
        'load',
        input,
        ...args,
        '--segment',
        `${i}/${n}`,
        '--listing',
        listing,
        '--total-wcu',
        String(totalWcu),
        '--rejects',
        join(dir, `run${id}.seg${i}.rejects.jsonl`),
        '--json',
        '--no-progress',
      ],
      join(dir, `run${id}.seg${i}.stats.json`),
      t0,
      `${i}/${n}`,
    );
  const workers: Worker[] = [];
  if (oneAtATime) for (let i = 0; i < n; i++) workers.push(await start(i));
  else workers.push(...(await Promise.all(Array.from({ length: n }, (_, i) => start(i)))));
  const wallS = (performance.now() - t0) / 1000;
  const failed = workers.find((w) => w.code !== 0 || w.result === undefined);
  if (failed) throw new WorkerFailed(label, failed);
  const sum = (f: (w: Worker) => number) => workers.reduce((a, w) => a + f(w), 0);
  const run: Run = {
    label,
    workers,
    wallS,
    // Divided by range, a worker also reads its segment once to find where records start: those bytes count
    // too; those of its range it then read back from its local copy of an S3 segment were not fetched again.
    bytesRead: sum(fetched),
    cpuS: sum((w) => w.cpuS),
    rowsRead: sum((w) => w.result!.rowsRead),
    written: sum((w) => w.result!.written),
  };
  log(
    `  ${label}, ${n} worker${n === 1 ? '' : 's'}${oneAtATime ? ' one at a time' : ''}: ${run.wallS.toFixed(1)} s wall, CPU ${run.cpuS.toFixed(2)} s (${workers.map((w) => w.cpuS.toFixed(2)).join(' + ')}), ` +
      `read ${(run.bytesRead / 1e6).toFixed(2)} MB (${workers.map((w) => (fetched(w) / 1e6).toFixed(2)).join(' + ')}), ` +
      `rows read ${fmtInt(run.rowsRead)}, written ${fmtInt(run.written)}, peak RSS ${Math.max(...workers.map((w) => w.peakRssMB)).toFixed(0)} MB`,
  );
  return run;
}

/** The bytes a worker read of the input: its rows', its scans', less those read back from its local copies. */
const fetched = (w: Worker): number => w.result!.bytesRead + (w.result!.division?.scannedBytes ?? 0) - (w.result!.division?.copiedBytes ?? 0);

class WorkerFailed extends Error {
  constructor(
    label: string,
    readonly worker: Worker,
  ) {
    super(`${label}: worker ${worker.segment} exited ${worker.code}: ${worker.stderr.slice(-3000)}`);
  }
}

/** The CLI refuses a flag it does not know with exit 64 naming it: the sign that --parts-disjoint has not landed. */
const refusedFlag = (error: unknown, flag: string): boolean =>
  error instanceof WorkerFailed && error.worker.code === 64 && error.worker.stderr.includes(`unknown option '${flag}'`);

interface Reading {
  input: string;
  inputBytes: number;
  /** What the bytes target divides by: the input's bytes, or (gzip data files) what one worker read. */
  reference: 'input' | 'one worker';
  partsDisjoint: boolean | undefined;
  one: Run;
  many: Run;
  /** The same N workers run one after another: their CPU with no other worker on the cores. */
  sequential: Run;
  bytesRatio: number;
  cpuRatio: number;
  /** The same with each worker's start-up CPU taken out: the share of the work itself that was repeated. */
  cpuRatioLessStartup: number;
  /** The N workers' CPU run one at a time against one worker's: what each process costs whatever the cores. */
  cpuRatioOneAtATime: number;
  wallRatio: number;
  rowsOk: boolean;
}

/**
 * One worker, then WORKERS at once, over `input` into a fresh instant sink each; `disjoint`: given
 * --parts-disjoint, or without it where the CLI does not know the flag.
 */
async function readingRuns(
  label: string,
  input: { path: string; bytes: number; rows: number; reference: Reading['reference']; disjoint: boolean },
  args: string[],
  startupS: number,
  /** For an input in S3: the bytes the server handed out, which then are the bytes read. */
  s3?: S3Served,
): Promise<Reading> {
  const { rows, reference } = input;
  let partsDisjoint = input.disjoint ? true : undefined;
  const run = async (n: number, oneAtATime = false) => {
    const sink = await startInstantSink();
    try {
      const common = ['--table', 'bench', '--endpoint-url', sink.endpoint, '--key-wcu', String(UNBOUNDED_WCU), ...args];
      if (s3) s3.served.bytes = 0;
      const result = await runWorkers(label, n, input.path, [...common, ...(partsDisjoint ? ['--parts-disjoint'] : [])], UNBOUNDED_WCU, oneAtATime);
      if (s3) {
        log(
          `    fetched from S3, counted by the server: ${(s3.served.bytes / 1e6).toFixed(2)} MB (the workers' own count: ${(result.bytesRead / 1e6).toFixed(2)} MB)`,
        );
        result.bytesRead = s3.served.bytes;
      }
      if (sink.stats.items !== rows) log(`  WARNING ${label}, ${n} workers: ${fmtInt(rows)} rows in the input, ${fmtInt(sink.stats.items)} put in the sink`);
      return result;
    } finally {
      await sink.close();
    }
  };
  let one: Run;
  try {
    one = await run(1);
  } catch (error) {
    if (!refusedFlag(error, '--parts-disjoint')) throw error;
    log(`  this CLI does not know --parts-disjoint (exit 64, unknown option): ${label} runs without it`);
    partsDisjoint = false;
    one = await run(1);
  }
  const many = await run(WORKERS);
  // The same workers one after another: CPU that four processes pay on two cores (contention) apart from what
  // each process pays whatever it runs beside (start-up, its JIT and heap warming up on fewer rows).
  const sequential = await run(WORKERS, true);
  const bytesRatio = many.bytesRead / (reference === 'input' ? input.bytes : one.bytesRead);
  const rowsOk = one.written === rows && many.written === rows && many.rowsRead - sumOther(many) === rows;
  return {
    input: label,
    inputBytes: input.bytes,
    reference,
    partsDisjoint,
    one,
    many,
    sequential,
    bytesRatio,
    cpuRatio: many.cpuS / one.cpuS,
    cpuRatioLessStartup: (many.cpuS - WORKERS * startupS) / (one.cpuS - startupS),
    cpuRatioOneAtATime: sequential.cpuS / one.cpuS,
    wallRatio: many.wallS / one.wallS,
    rowsOk,
  };
}

const sumOther = (run: Run) => run.workers.reduce((a, w) => a + w.result!.otherSegments, 0);

async function folderBytes(folder: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(folder, { recursive: true })) {
    const s = await stat(join(folder, name));
    if (s.isFile()) bytes += s.size;
  }
  return bytes;
}

/**
 * The CPU a worker spends whatever its share: one CLI process loading a 2-row CSV into the instant sink
 * (Node, the SDK, the listing, DescribeTable), the median of 3. Each of N workers pays it once.
 */
async function startupCpu(): Promise<number> {
  const path = join(dir, 'two-rows.csv');
  await writeFile(path, 'pk,sk,status,amount,qty,payload\nA,1,PAID,1.00,1,x\nB,2,PAID,2.00,2,y\n');
  const sink = await startInstantSink();
  try {
    const args = ['--table', 'bench', '--endpoint-url', sink.endpoint, ...CSV_TYPES];
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) runs.push((await runWorkers('start-up (2 rows)', 1, path, args, UNBOUNDED_WCU)).cpuS);
    return median(runs);
  } finally {
    await sink.close();
  }
}

/** Part 1: the export in S3, the CSV parts in a folder and the one sorted CSV, one worker against WORKERS. */
async function readingBench(startupS: number): Promise<Reading[]> {
  const csv = await generateTimeOrderedParts(join(dir, 'parts'), ROWS, PARTS, SEED);
  const exported = await generateExport(join(dir, 'export'), ROWS, PARTS, SEED);
  const dataBytes = await folderBytes(join(exported.path, 'data'));
  const sorted = await generateSkewedCsv(join(dir, 'sorted.csv'), ROWS, SEED);
  log(
    `inputs: ${fmtInt(ROWS)} key-mixed rows as ${PARTS} CSV parts (${(csv.bytes / 1e6).toFixed(2)} MB) and as a full DynamoDB export of ${PARTS} data files (${(dataBytes / 1e6).toFixed(2)} MB gzip); ${fmtInt(ROWS)} key-sorted rows in one CSV (${(sorted.bytes / 1e6).toFixed(2)} MB)`,
  );
  const s3 = await startS3Local();
  let served: S3Served | undefined;
  try {
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await client.send(new CreateBucketCommand({ Bucket: 'bench' }));
    const root = join(dir, 'export');
    for (const name of await readdir(root, { recursive: true })) {
      const path = join(root, name);
      if ((await stat(path)).isFile()) await client.send(new PutObjectCommand({ Bucket: 'bench', Key: `export/${name}`, Body: await readFile(path) }));
    }
    await client.send(new PutObjectCommand({ Bucket: 'bench', Key: 'sorted.csv', Body: await readFile(sorted.path) }));
    // The same rows as Spark writes a sorted table: PARTS parts, each a stretch of keys with its own header.
    const [header, ...rows] = (await readFile(sorted.path, 'utf8')).trimEnd().split('\n');
    const perPart = Math.ceil(rows.length / PARTS);
    for (let i = 0; i < PARTS; i++)
      await client.send(
        new PutObjectCommand({
          Bucket: 'bench',
          Key: `sorted-parts/part-${String(i).padStart(5, '0')}.csv`,
          Body: `${header}\n${rows.slice(i * perPart, (i + 1) * perPart).join('\n')}\n`,
        }),
      );
    client.destroy();
    const prefix = `s3://bench/export/${relative(root, exported.path)}/`;
    served = await startS3Served(s3.endpoint);
    const s3Args = ['--s3-endpoint-url', served.endpoint, '--s3-path-style'];
    return [
      await readingRuns(
        `export in S3 (${PARTS} data files)`,
        { path: prefix, bytes: dataBytes, rows: ROWS, reference: 'one worker', disjoint: false },
        s3Args,
        startupS,
        served,
      ),
      await readingRuns(
        `${PARTS} CSV parts in a folder`,
        { path: csv.path, bytes: csv.bytes, rows: ROWS, reference: 'input', disjoint: true },
        CSV_TYPES,
        startupS,
      ),
      await readingRuns('one key-sorted CSV', { path: sorted.path, bytes: sorted.bytes, rows: ROWS, reference: 'input', disjoint: true }, CSV_TYPES, startupS),
      // The same file as one S3 object: the scanned segments are kept on local disk, so each byte is fetched once.
      await readingRuns(
        'one key-sorted CSV in S3',
        { path: 's3://bench/sorted.csv', bytes: sorted.bytes, rows: ROWS, reference: 'input', disjoint: true },
        [...s3Args, ...CSV_TYPES],
        startupS,
        served,
      ),
      // The key-sorted rows as ${PARTS} S3 parts: each worker cuts its parts into stripes (fewer than 16 parts each).
      await readingRuns(
        `${PARTS} key-sorted CSV parts in S3`,
        {
          path: 's3://bench/sorted-parts/',
          bytes: sorted.bytes + (PARTS - 1) * Buffer.byteLength(`${header}\n`),
          rows: ROWS,
          reference: 'input',
          disjoint: true,
        },
        [...s3Args, ...CSV_TYPES],
        startupS,
        served,
      ),
    ];
  } finally {
    await served?.close();
    await s3.stop();
  }
}

interface Shared {
  workers: number;
  run: Run;
  idealS: number;
  /** Wall time / ideal time. */
  ratio: number;
  /** The highest mean rate over any WINDOW_S whole seconds, WCU/s, as the model accepted it. */
  peakWindowWcu: number | undefined;
  /** Accepted WCU in each whole second since the proxy started (just before the workers). */
  perSecond: number[];
  /** The first second the table accepted a write in: the workers' start-up, listing and first reads. */
  firstWriteSecond: number;
  /** (Wall time - firstWriteSecond) / ideal time: the pace once writing, start-up left out. */
  ratioFromFirstWrite: number;
  /** What `estimate --workers n` predicted for the run, seconds (offline, the modelled table described by flags). */
  predictedS: number | undefined;
}

/**
 * `estimate <input> --workers n --total-wcu <budget>` of the run's input, offline, the table as the proxy
 * models it (provisioned at MODEL.tableWcu): the whole load's predicted seconds, or undefined if it failed.
 */
async function predictWhole(input: string, n: number, partsDisjoint: boolean): Promise<number | undefined> {
  const args = [
    join(repoRoot, 'bin/ddb-spread.js'),
    'estimate',
    input,
    '--partition-key',
    'pk:S',
    '--sort-key',
    'sk:S',
    '--billing',
    'provisioned',
    '--table-wcu',
    String(MODEL.tableWcu),
    ...CSV_TYPES,
    '--workers',
    String(n),
    '--total-wcu',
    String(BUDGET),
    ...(partsDisjoint ? ['--parts-disjoint'] : []),
    '--rejects',
    join(dir, `estimate${n}.rejects.jsonl`),
    '--json',
  ];
  const run = spawnSync(process.execPath, args, { cwd: dir, env: ENV, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) {
    log(`    estimate --workers ${n} failed (${run.status}): ${run.stderr.trim().split('\n').pop() ?? ''}`);
    return undefined;
  }
  return (JSON.parse(run.stdout) as { time: { estimatedSeconds: number } }).time.estimatedSeconds;
}

/** Part 2: the CSV parts at one --total-wcu through the partition model, one worker against WORKERS. */
async function sharedBudgetBench(partsDisjoint: boolean): Promise<Shared[]> {
  const csv = await generateTimeOrderedParts(join(dir, 'rate-parts'), RATE_ROWS, PARTS, SEED + 1);
  log(
    `shared budget: ${fmtInt(RATE_ROWS)} rows as ${PARTS} CSV parts, --total-wcu ${BUDGET}; modelled table ${MODEL.tableWcu} WCU/s, ${MODEL.partitions} partitions`,
  );
  return withDynamoDBLocal(async ({ endpoint, admin }) => {
    const out: Shared[] = [];
    for (const n of [1, WORKERS]) {
      const name = `scaleout_${process.pid}_${n}`;
      await createBenchTable(admin, name, { provisionedWcu: BUDGET });
      const proxy = await startPartitionProxy(endpoint, { model: MODEL, partitionKeyName: 'pk' });
      try {
        const args = ['--table', name, '--endpoint-url', proxy.url, ...CSV_TYPES, ...(partsDisjoint ? ['--parts-disjoint'] : [])];
        const predictedS = await predictWhole(csv.path, n, partsDisjoint);
        const run = await runWorkers(`shared budget ${BUDGET} WCU/s`, n, csv.path, args, BUDGET);
        const planned = run.workers.reduce((a, w) => a + w.result!.plannedWcu, 0);
        const perSecond = (proxy.stats().tables[name]?.perSecond ?? []).map((s) => s.acceptedWcu.reduce((a, b) => a + b, 0));
        const idealS = planned / BUDGET;
        const firstWriteSecond = Math.max(
          0,
          perSecond.findIndex((x) => x > 0),
        );
        const shared: Shared = {
          workers: n,
          run,
          idealS,
          ratio: run.wallS / idealS,
          peakWindowWcu: peakWindow(perSecond, WINDOW_S),
          perSecond,
          firstWriteSecond,
          ratioFromFirstWrite: (run.wallS - firstWriteSecond) / idealS,
          predictedS,
        };
        log(
          `    ${n} worker${n === 1 ? '' : 's'}: ${run.wallS.toFixed(1)} s = ${shared.ratio.toFixed(2)}x the ideal ${idealS.toFixed(1)} s; highest ${WINDOW_S} s window ${shared.peakWindowWcu?.toFixed(0) ?? '-'} WCU/s; estimate --workers ${n} predicted ${predictedS?.toFixed(1) ?? '-'} s`,
        );
        out.push(shared);
      } finally {
        await proxy.close();
        await dropBenchTable(admin, name);
      }
    }
    return out;
  });
}

/** The highest mean over `width` consecutive seconds; undefined when there are fewer seconds than that. */
function peakWindow(perSecond: number[], width: number): number | undefined {
  if (perSecond.length < width) return undefined;
  let sum = perSecond.slice(0, width).reduce((a, b) => a + b, 0);
  let peak = sum;
  for (let i = width; i < perSecond.length; i++) {
    sum += perSecond[i]! - perSecond[i - width]!;
    peak = Math.max(peak, sum);
  }
  return peak / width;
}

function report(reading: Reading[], shared: Shared[], startupS: number): string[] {
  const lines = ['', `Scale-out: ${WORKERS} workers against 1 (each a CLI process, --segment i/N --listing, started at once)`];
  lines.push(
    table(
      ['input', 'flag', 'bytes read 1 / N MB', 'bytes N / ref', 'CPU 1 / N s', 'CPU N / 1', 'less start-up', 'one at a time', 'wall 1 / N s', 'rows'],
      reading.map((r) => [
        r.input,
        r.partsDisjoint === undefined ? '-' : r.partsDisjoint ? '--parts-disjoint' : 'none (unknown)',
        `${(r.one.bytesRead / 1e6).toFixed(2)} / ${(r.many.bytesRead / 1e6).toFixed(2)}`,
        `${r.bytesRatio.toFixed(2)}x ${r.reference === 'input' ? 'input' : '1 worker'}`,
        `${r.one.cpuS.toFixed(2)} / ${r.many.cpuS.toFixed(2)}`,
        `${r.cpuRatio.toFixed(2)}x`,
        `${r.cpuRatioLessStartup.toFixed(2)}x`,
        `${r.cpuRatioOneAtATime.toFixed(2)}x`,
        `${r.one.wallS.toFixed(1)} / ${r.many.wallS.toFixed(1)}`,
        r.rowsOk ? 'all once' : 'MISMATCH',
      ]),
    ),
  );
  for (const r of reading)
    lines.push(
      `${r.input}: bytes ${r.bytesRatio.toFixed(2)}x (<= ${TARGET_BYTES}x: ${pass(r.bytesRatio <= TARGET_BYTES)}), CPU ${r.cpuRatio.toFixed(2)}x (<= ${TARGET_CPU}x: ${pass(r.cpuRatio <= TARGET_CPU)})`,
    );
  lines.push(
    `(CPU: user + system of each whole worker process, start-up included; a worker's start-up alone is ${startupS.toFixed(2)} s (the CLI loading 2 rows),`,
    ` which ${WORKERS} workers pay ${WORKERS} times: "less start-up" takes it out of both sides; "one at a time": the same ${WORKERS} workers run one after`,
    ` another, so no two share the cores: what is left over 1x is each process's own cost, the rest of "CPU N / 1" is contention. Bytes: the --json bytesRead of each worker, summed, with its scans less what it read back from its copies; for an input in S3, the GET bytes the S3 server handed out)`,
  );
  if (shared.length > 0) {
    lines.push('', `Shared budget: --total-wcu ${BUDGET} through the partition model (table modelled at ${MODEL.tableWcu} WCU/s so that overshoot shows)`);
    lines.push(
      table(
        [
          'workers',
          'wall s',
          'ideal s',
          'wall / ideal',
          'first write s',
          'from it / ideal',
          `peak ${WINDOW_S} s WCU/s`,
          'peak / budget',
          'estimate s',
          'estimate / wall',
        ],
        shared.map((s) => [
          String(s.workers),
          s.run.wallS.toFixed(1),
          s.idealS.toFixed(1),
          `${s.ratio.toFixed(2)}x`,
          String(s.firstWriteSecond),
          `${s.ratioFromFirstWrite.toFixed(2)}x`,
          s.peakWindowWcu?.toFixed(0) ?? '-',
          s.peakWindowWcu === undefined ? '-' : `${(s.peakWindowWcu / BUDGET).toFixed(2)}x`,
          s.predictedS?.toFixed(1) ?? '-',
          s.predictedS === undefined ? '-' : `${(s.predictedS / s.run.wallS).toFixed(2)}x`,
        ]),
      ),
    );
    const many = shared.find((s) => s.workers === WORKERS);
    const one = shared.find((s) => s.workers === 1);
    if (many) {
      const over = many.peakWindowWcu === undefined ? undefined : many.peakWindowWcu / BUDGET;
      lines.push(
        `${WORKERS} workers: ${many.ratio.toFixed(2)}x the ideal time (<= ${TARGET_TIME}x: ${pass(many.ratio <= TARGET_TIME)})${one ? `, ${(many.run.wallS / one.run.wallS).toFixed(2)}x one worker's` : ''}; ` +
          `highest ${WINDOW_S} s window ${over === undefined ? 'not measured (run shorter than a window)' : `${over.toFixed(2)}x the budget (<= ${TARGET_WINDOW}x: ${pass(over <= TARGET_WINDOW)})`}`,
      );
      lines.push(`table's rate each second, ${WORKERS} workers (WCU/s): ${many.perSecond.map((x) => x.toFixed(0)).join(' ')}`);
    }
  }
  return lines;
}

try {
  dir = await harness.makeTempDir('ddb-spread-scale-out-');
  harness.cleanupOnSignals();
  const loadAtStart = loadavg()[0]!;
  log(`scale-out bench: ${cpus().length} cores, load average ${loadAtStart.toFixed(1)}`);
  const t0 = performance.now();
  const startupS = await startupCpu();
  const reading = flags['skip-reading'] ? [] : await readingBench(startupS);
  // The reading part finds out whether the build takes --parts-disjoint; without it, this build does.
  const partsDisjoint = flags['skip-reading'] ? true : (reading.find((r) => r.partsDisjoint !== undefined)?.partsDisjoint ?? false);
  const shared = flags['skip-rate'] ? [] : await sharedBudgetBench(partsDisjoint);
  const lines = report(reading, shared, startupS);
  // N workers on few cores: the machine's other work moves their CPU seconds and wall time alike.
  if (loadAtStart > cpus().length * 0.5)
    lines.push('', `CAUTION: load average ${loadAtStart.toFixed(1)} on ${cpus().length} cores at the start: other work was running, figures are noisy`);
  lines.push('', `scale-out bench time ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  log(lines.join('\n'));
  const strip = (run: Run) => ({ ...run, workers: run.workers.map(({ stderr: _stderr, ...w }) => w) });
  log(
    `written ${await writeResults('scale-out-latest.json', {
      ...takenOn(cpus().length),
      options: { rows: ROWS, parts: PARTS, workers: WORKERS, rateRows: RATE_ROWS, budget: BUDGET, model: MODEL },
      reading: reading.map((r) => ({ ...r, one: strip(r.one), many: strip(r.many), sequential: strip(r.sequential) })),
      shared: shared.map((s) => ({ ...s, run: strip(s.run) })),
      report: lines.join('\n'),
    })}`,
  );
} catch (error) {
  process.stderr.write(`scale-out bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await harness.cleanup();
}
