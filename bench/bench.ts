/**
 * ddb-spread benchmark against DynamoDB Local. Prints figures; asserts nothing; not a test.
 *
 *   npm run bench                     # build, then everything below at the default sizes
 *   npm run bench -- --rows 50000     # or BENCH_ROWS=50000
 *
 * Options (flag or env):
 *   --rows N          rows of the main CSV (BENCH_ROWS, default 200000)
 *   --sweep-rows N    rows of the concurrency-sweep CSV (BENCH_SWEEP_ROWS, default 20000; 50000 took
 *                     over two minutes on 2 cores, which broke the bench's ~6-minute budget)
 *   --sweep LIST      concurrencies to sweep, e.g. 1,4,8 (BENCH_SWEEP, default 1,2,4,8,16,32); "" skips it
 *   --repeats N       measured loads per loader (BENCH_REPEATS, default 2)
 *   --minimal-rcc     the minimal loop asks for ReturnConsumedCapacity=INDEXES on every call
 *                     (BENCH_MINIMAL_RCC=1). Off by default: the baseline is the bare loop. DynamoDB Local
 *                     spent 30-50% more CPU on such calls, and Local's CPU is what bounds items/s on 2
 *                     cores; ddb-spread asks on its first 64 calls and one in 16 after, while DynamoDB's
 *                     answers match its plan (src/pacing/capacityReports.ts).
 *   --sink-only       run only the instant-sink bench (against the hand loop; bench/sink.ts): ddb-spread with
 *                     default options and with --order spread against the minimal loop, into
 *                     bench/instantSink.ts, which answers every BatchWriteItem at once; items/s and client CPU
 *                     per item (~2 minutes at 200k rows). It runs in the main bench by default, before
 *                     DynamoDB Local starts; --skip-sink leaves it out. Then the same on key-mixed data (the
 *                     rows in time order, bench/mixedData.ts; target: >= 1.2x the loop's items/s, CPU per
 *                     item <= the loop's) with --key-wcu MIXED_SINK_KEY_WCU (per-key pacing is not what is
 *                     measured there) and with the default --key-wcu.
 *   --order-bench     then run the write-order bench, bench/order.ts (BENCH_ORDER=1): each --order mode on
 *                     a 1M-row skewed input (ordering alone) and in loads to DynamoDB Local. Off by default:
 *                     it takes ~9 more minutes on 2 cores, which would take the whole run past 10 minutes.
 *   --order-only      run only the write-order bench (after the build that `npm run bench` does)
 *   --rate-only       run only the hot-partition bench, bench/rate.ts: each --order mode paced and unpaced
 *                     through the partition model at the table's capacity (~3 minutes). It runs after the
 *                     main bench by default; --skip-rate leaves it out. --rate-rows N sets its input size.
 *   --noise-only      run only the noise bench, bench/noise.ts: the same rows with default
 *                     options clean, with the usual fault mix and with the harsher one (15%
 *                     ThrottlingException) through the partition proxy; items/s of each and their ratios
 *                     to clean (~4 minutes at 50k rows). It runs after the main bench by default;
 *                     --skip-noise leaves it out. --noise-rows N sets its input size.
 *   --estimate-only   run only the estimate bench, bench/estimate.ts: predicted vs measured duration and
 *                     throttles for five inputs through the partition model, and estimate rows/s against
 *                     parse-only (~3 minutes). It runs after the main bench by default; --skip-estimate
 *                     leaves it out. --estimate-rows N sets the speed input (default 1M; the issue's 3M:
 *                     --estimate-rows 3000000, ~4 more minutes). --skip-accuracy leaves out its accuracy part.
 *   --first-write-only run only the first-write bench, bench/firstWrite.ts: time to the first
 *                     write, temp files and peak RSS of the default order on key-mixed inputs (a 3M-row
 *                     time-ordered CSV, 16 parts, gzip, a DynamoDB export, that export then two
 *                     incrementals: an export chain, ~2 minutes of it at 3M), then of the default order
 *                     against round-robin on a key-sorted 3M-row CSV (~40 minutes on a loaded 2-core
 *                     machine). It runs after the main bench by default; --skip-first-write leaves it out;
 *                     then bench/firstWriteSets.ts: 16 key-sorted parts as a folder and an S3 prefix (s3rver),
 *                     read in stripes across the parts (--first-write-sets-rows N, default 1M);
 *                     --first-write-rows N sets the key-sorted input's size, --first-write-mixed-rows N the
 *                     key-mixed inputs' (e.g. 200000 for a quick run), --first-write-flights FILE takes a real
 *                     flights CSV (e.g. /work/scratch/flights-3m.csv) for the time-ordered one;
 *                     --first-write-mixed-only runs only the key-mixed part.
 *   --scale-out-only  run only the scale-out bench, bench/scaleOut.ts: 4 workers against 1, each a CLI process
 *                     started at once with --segment i/N --listing --total-wcu: bytes read and CPU over a
 *                     DynamoDB export in S3 (s3rver) and 16 CSV parts into the instant sink, then one shared
 *                     --total-wcu through the partition model (~3 minutes on 2 cores). Off in the default run
 *                     (it would take it ~3 minutes longer); --scale-out adds it. --scale-out-rows N sets
 *                     the reading input's size (default 96000).
 *   --startup-only    run only the start-up bench, bench/startup.ts: CPU and wall from the process's start to
 *                     --version, load --help, the first write of a small load and an offline estimate, against
 *                     bare node and node importing @aws-sdk/client-dynamodb (~1 minute). It runs after the main
 *                     bench by default; --skip-startup leaves it out. --startup-bin FILE compares another
 *                     build's bin/ddb-spread.js in the same rounds (e.g. the main branch's).
 *   --verify-only     run only the verify bench, bench/verify.ts: `ddb-spread verify` against a hand-written
 *                     BatchGetItem loop on DynamoDB Local, items/s as a ratio, and its predicted time (~1 minute at
 *                     20k rows). It runs after the main bench by default; --skip-verify leaves it out;
 *                     --verify-rows N sets its size.
 *   --transform-only  run only the transform bench, bench/transform.ts: client CPU per item with an identity
 *                     --transform against none, into the instant sink (~1 minute at 50k rows). It runs after the
 *                     main bench by default; --skip-transform leaves it out; --transform-rows N.
 *   --conditional-only run only the conditional-writes bench, bench/conditional.ts: items/s and client CPU per
 *                     item with --if-not-exists against without, into the instant sink and DynamoDB Local (~2
 *                     minutes). It runs after the main bench by default; --skip-conditional leaves it out;
 *                     --conditional-rows N (instant sink), --conditional-local-rows N (DynamoDB Local).
 *   --order-rows N, --order-large-rows N, --order-load-rows N
 *                     passed to bench/order.ts as --rows, --large-rows, --load-rows (see there)
 *
 * What it does: generates a deterministic CSV shaped like a sorted database export (skewed partition
 * keys, one hot key), measures read+type throughput without writes, then loads the file into a fresh
 * table on DynamoDB Local with ddb-spread and with a minimal hand-written BatchWrite loop, and sweeps
 * ddb-spread's concurrency. Every measured load runs in its own child process, so client CPU and peak
 * RSS are the loader's alone. DynamoDB Local's own CPU is read from /proc for context. Needs a built
 * dist/ (npm run bench builds first); results also go to bench/results/latest.json.
 */
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SIMULATOR_VERSION } from '../tools/dynamodbLocal.js';
import { DEFAULT_CONCURRENCY } from '../dist/load/options.js';
import { FLIGHTS_FIT_SKEW, generateCsv, generateFlightsCsv, type DataFile } from './data.js';
import { benchDir, Harness, repoRoot, type Observed } from './harness.js';
import { cpuOf, fmtInt, median, pass, phaseTimer, table, takenOn, writeResults } from './report.js';
import { generateTimeOrderedCsv } from './mixedData.js';
import { sinkBench, type SinkResult } from './sink.js';
import { DEFAULT_KEY_WCU } from '../src/pacing/rateControl.js';

const benchStarted = performance.now();

/* ==== options ==== */

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string' },
    'sweep-rows': { type: 'string' },
    sweep: { type: 'string' },
    repeats: { type: 'string' },
    'minimal-rcc': { type: 'boolean' },
    'sink-only': { type: 'boolean' },
    'skip-sink': { type: 'boolean' },
    'order-bench': { type: 'boolean' },
    'order-only': { type: 'boolean' },
    'order-rows': { type: 'string' },
    'order-large-rows': { type: 'string' },
    'order-load-rows': { type: 'string' },
    'rate-only': { type: 'boolean' },
    'skip-rate': { type: 'boolean' },
    'rate-rows': { type: 'string' },
    'noise-only': { type: 'boolean' },
    'skip-noise': { type: 'boolean' },
    'noise-rows': { type: 'string' },
    'estimate-only': { type: 'boolean' },
    'first-write-only': { type: 'boolean' },
    'skip-first-write': { type: 'boolean' },
    'first-write-rows': { type: 'string' },
    'first-write-mixed-rows': { type: 'string' },
    'first-write-sets-rows': { type: 'string' },
    'first-write-flights': { type: 'string' },
    'first-write-mixed-only': { type: 'boolean' },
    'skip-estimate': { type: 'boolean' },
    'estimate-rows': { type: 'string' },
    'skip-accuracy': { type: 'boolean' },
    'scale-out-only': { type: 'boolean' },
    'scale-out': { type: 'boolean' },
    'scale-out-rows': { type: 'string' },
    'startup-only': { type: 'boolean' },
    'verify-only': { type: 'boolean' },
    'skip-verify': { type: 'boolean' },
    'verify-rows': { type: 'string' },
    'transform-only': { type: 'boolean' },
    'skip-transform': { type: 'boolean' },
    'transform-rows': { type: 'string' },
    'conditional-only': { type: 'boolean' },
    'skip-conditional': { type: 'boolean' },
    'conditional-rows': { type: 'string' },
    'conditional-local-rows': { type: 'string' },
    'skip-startup': { type: 'boolean' },
    'startup-bin': { type: 'string' },
  },
  strict: true,
});

function intOption(name: 'rows' | 'sweep-rows' | 'repeats', env: string, fallback: number, min: number): number {
  const text = flags[name] ?? process.env[env];
  if (text === undefined || text === '') return fallback;
  const n = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} (or ${env}) must be an integer >= ${min}, got ${text}`);
  return n;
}

const ROWS = intOption('rows', 'BENCH_ROWS', 200_000, 1);
const SWEEP_ROWS = intOption('sweep-rows', 'BENCH_SWEEP_ROWS', 20_000, 1);
const REPEATS = intOption('repeats', 'BENCH_REPEATS', 2, 1);
const SWEEP = (flags.sweep ?? process.env['BENCH_SWEEP'] ?? '1,2,4,8,16,32')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean)
  .map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`--sweep: ${s} is not a concurrency from 1 to 256`);
    return n;
  });
const MINIMAL_RCC = flags['minimal-rcc'] ?? process.env['BENCH_MINIMAL_RCC'] === '1';
const ESTIMATE_ONLY = flags['estimate-only'] ?? false;
const FIRST_WRITE_ONLY = flags['first-write-only'] ?? false;
const RATE_ONLY = flags['rate-only'] ?? false;
const ORDER_ONLY = flags['order-only'] ?? false;
const NOISE_ONLY = flags['noise-only'] ?? false;
const SINK_ONLY = flags['sink-only'] ?? false;
const SCALE_OUT_ONLY = flags['scale-out-only'] ?? false;
const STARTUP_ONLY = flags['startup-only'] ?? false;
const VERIFY_ONLY = flags['verify-only'] ?? false;
const TRANSFORM_ONLY = flags['transform-only'] ?? false;
const CONDITIONAL_ONLY = flags['conditional-only'] ?? false;
const SINK_BENCH = SINK_ONLY || !(flags['skip-sink'] ?? false);
/** The main bench (parse, loads, sweep) is left out by --order-only and --rate-only. */
const SKIP_MAIN =
  ORDER_ONLY ||
  RATE_ONLY ||
  ESTIMATE_ONLY ||
  NOISE_ONLY ||
  FIRST_WRITE_ONLY ||
  SCALE_OUT_ONLY ||
  STARTUP_ONLY ||
  VERIFY_ONLY ||
  TRANSFORM_ONLY ||
  CONDITIONAL_ONLY;
/** --sink-only runs the main bench's data generation and instant-sink phase, and nothing after it. */
const SINK_ALONE = SINK_ONLY && !SKIP_MAIN;
const FIRST_WRITE_BENCH = FIRST_WRITE_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-first-write'] ?? false));
const NOISE_BENCH = NOISE_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-noise'] ?? false));
const ORDER_BENCH = !RATE_ONLY && !ESTIMATE_ONLY && (ORDER_ONLY || (flags['order-bench'] ?? process.env['BENCH_ORDER'] === '1'));
const RATE_BENCH = RATE_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-rate'] ?? false));
const ESTIMATE_BENCH = ESTIMATE_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-estimate'] ?? false));
const SCALE_OUT_BENCH = SCALE_OUT_ONLY || (!SKIP_MAIN && !SINK_ONLY && (flags['scale-out'] ?? false));
const STARTUP_BENCH = STARTUP_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-startup'] ?? false));
const VERIFY_BENCH = VERIFY_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-verify'] ?? false));
const TRANSFORM_BENCH = TRANSFORM_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-transform'] ?? false));
const CONDITIONAL_BENCH = CONDITIONAL_ONLY || (!SKIP_MAIN && !SINK_ONLY && !(flags['skip-conditional'] ?? false));
/**
 * DynamoDB Local is a JVM and keeps getting faster for its first ~150k items (JIT): its CPU per 50k items
 * went 25 s -> 17 s -> 11 s. 30k rows of warm-up were not enough (the first measured load ran ~25% slower).
 */
const WARM_UP_ROWS = 100_000;
const CONCURRENCY = DEFAULT_CONCURRENCY; // the library default: the load comparison runs at it
const CHILD_TIMEOUT_MS = 10 * 60 * 1000;
const TARGET_RATIO = 0.9;
const TARGET_RSS_MB = 200;
/** Items/s against the hand loop's on key-mixed data: nothing to reorder there, so ddb-spread's concurrency should tell. */
const MIXED_SINK_TARGET_RATIO = 1.2;
/**
 * --key-wcu of the key-mixed sink run: far above what any key gets at the loop's rate (its biggest key,
 * ~3.5% of the rows, needs ~1,000 WCU/s at 28,000 items/s), so that the figures are the client's, not the pacing's.
 */
const MIXED_SINK_KEY_WCU = 1_000_000;

/* ==== phases (where the bench's own time goes) ==== */

const { phases, phase } = phaseTimer();

const log = (msg: string) => process.stderr.write(`[bench ${((performance.now() - benchStarted) / 1000).toFixed(0).padStart(3)}s] ${msg}\n`);

/* ==== child processes and DynamoDB Local (harness.ts) ==== */

/**
 * The child scripts run as plain JS with plain `node`: under `--import tsx` each child carried tsx's
 * loader thread, ~28 MB of extra RSS that a user of the CLI would never pay.
 */
const CHILD_SOURCES = ['childStats.ts', 'runDdbSpread.ts', 'runMinimalLoop.ts', 'runParseOnly.ts', 'pipeline.ts'];
const harness = new Harness({ log, childTimeoutMs: CHILD_TIMEOUT_MS, tablePrefix: 'bench' });

interface Measured extends Observed {
  itemsPerSecond: number;
  /** Rows DynamoDB Local reports in the table afterwards (DescribeTable ItemCount). */
  tableItemCount?: number;
}

type Loader = 'ddb-spread' | 'minimal';
const LOADER_SCRIPT: Record<Loader, string> = { 'ddb-spread': 'runDdbSpread.ts', minimal: 'runMinimalLoop.ts' };

/** One measured load into a fresh table, which is dropped afterwards so DynamoDB Local's heap stays flat. */
async function measuredLoad(loader: Loader, file: DataFile, concurrency: number, label: string): Promise<Measured> {
  const table = await harness.createTable();
  try {
    const stats = await harness.runChild(LOADER_SCRIPT[loader], [
      '--input',
      file.path,
      '--table',
      table,
      '--endpoint',
      harness.endpoint,
      '--concurrency',
      String(concurrency),
      '--rejects',
      join(tmp!, `${table}.rejects.jsonl`),
      ...(loader === 'minimal' && MINIMAL_RCC ? ['--rcc'] : []),
    ]);
    const count = await harness.itemCount(table);
    const m: Measured = { ...stats, itemsPerSecond: stats.items / stats.seconds };
    if (count !== undefined) m.tableItemCount = count;
    if (m.items !== file.rows || (m.tableItemCount !== undefined && m.tableItemCount !== file.rows)) {
      log(`WARNING ${label}: ${file.rows} rows in the file, ${m.items} reported written, ${m.tableItemCount ?? '?'} in the table`);
    }
    log(
      `${label}: ${fmtInt(m.itemsPerSecond)} items/s, ${m.seconds.toFixed(1)} s wall, client CPU ${(m.cpuUserS + m.cpuSysS).toFixed(1)} s, ` +
        `peak RSS ${m.maxRssMB.toFixed(0)} MB, DynamoDB Local CPU ${m.serverCpuS?.toFixed(1) ?? '?'} s, other processes ${m.otherCpuS?.toFixed(1) ?? '?'} s (${m.otherCpuS === undefined ? '?' : ((100 * m.otherCpuS) / (cpus().length * m.childWallS)).toFixed(0)}% of the machine)`,
    );
    return m;
  } finally {
    await harness.dropTable(table);
  }
}

/* ==== statistics and formatting ==== */

interface Summary {
  runs: Measured[];
  itemsPerSecond: { best: number; median: number };
  clientCpuS: { best: number; median: number };
  clientCpuUsPerItem: { best: number; median: number };
  peakRssMB: { best: number; median: number; worst: number };
  serverCpuS: { median: number } | undefined;
}

function summarize(runs: Measured[]): Summary {
  const ips = runs.map((r) => r.itemsPerSecond);
  const cpu = runs.map(cpuOf);
  const perItem = runs.map((r) => (cpuOf(r) * 1e6) / Math.max(1, r.items));
  const rss = runs.map((r) => r.maxRssMB);
  const server = runs.map((r) => r.serverCpuS).filter((x): x is number => x !== undefined);
  return {
    runs,
    itemsPerSecond: { best: Math.max(...ips), median: median(ips) },
    clientCpuS: { best: Math.min(...cpu), median: median(cpu) },
    clientCpuUsPerItem: { best: Math.min(...perItem), median: median(perItem) },
    peakRssMB: { best: Math.min(...rss), median: median(rss), worst: Math.max(...rss) },
    serverCpuS: server.length ? { median: median(server) } : undefined,
  };
}

/* ==== main ==== */

let tmp: string | undefined;
let loadAtStart: number[] = [];
harness.cleanupOnSignals();
const cleanup = () => harness.cleanup();

async function main(): Promise<void> {
  tmp = await harness.makeTempDir('ddb-spread-bench-');
  await harness.compileChildren(CHILD_SOURCES);
  const cores = cpus().length;
  loadAtStart = loadavg();
  if (loadAtStart[0]! > cores * 0.5)
    log(
      `WARNING: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} on ${cores} cores before starting: other work is running, figures will be noisy`,
    );
  log(
    `${ROWS.toLocaleString('en-US')} rows, sweep ${SWEEP.join('/') || '(none)'} on ${SWEEP_ROWS.toLocaleString('en-US')} rows, ${REPEATS} runs per loader; ${cores} cores; temp ${tmp}`,
  );

  const { main, sinkFile, mixedFile, sweepFile, warmFile } = await phase('generate data', async () => ({
    // Flights-like (as 200k real flights rows): 228 keys, sorted, every one under the default --key-wcu in a proportional schedule.
    main: await generateFlightsCsv(join(tmp!, `flights-${ROWS}.csv`), ROWS, 20240601),
    // The sink bench's input: the same rows over keys that fit under --key-wcu at the loop's rate (bench/data.ts).
    sinkFile: SINK_BENCH ? await generateFlightsCsv(join(tmp!, `flights-fit-${ROWS}.csv`), ROWS, 20240601, FLIGHTS_FIT_SKEW) : undefined,
    // The same keys and skew as `main`, in time order: consecutive rows hit different keys.
    mixedFile: SINK_BENCH ? await generateTimeOrderedCsv(join(tmp!, `mixed-${ROWS}.csv`), ROWS, 31) : undefined,
    sweepFile: SWEEP.length && !SINK_ONLY ? await generateCsv(join(tmp!, `sweep-${SWEEP_ROWS}.csv`), SWEEP_ROWS, 20240602) : undefined,
    warmFile: await generateCsv(join(tmp!, `warm-up-${WARM_UP_ROWS}.csv`), Math.min(WARM_UP_ROWS, ROWS), 20240603),
  }));
  log(`generated ${(main.bytes / 1e6).toFixed(1)} MB; hot key ${main.hotKey} has ${main.hotRows} rows (${((100 * main.hotRows) / main.rows).toFixed(1)}%)`);

  // The instant sink first: no DynamoDB Local (a JVM) running beside the client, so the machine is quieter.
  let sink: SinkResult | undefined;
  let sinkHotKey: SinkResult | undefined;
  let sinkMixed: SinkResult | undefined;
  if (SINK_BENCH) {
    sink = await phase('instant sink', () => sinkBench({ harness, file: sinkFile!, repeats: REPEATS, concurrency: CONCURRENCY, tmp: tmp!, log }));
    // The main file too: its biggest key is at --key-wcu near the loop's rate, which shows what a hot key costs.
    sinkHotKey = await phase('instant sink, hot key', () => sinkBench({ harness, file: main, repeats: REPEATS, concurrency: CONCURRENCY, tmp: tmp!, log }));
    sinkMixed = await phase('instant sink, mixed keys', () =>
      sinkBench({
        harness,
        file: mixedFile!,
        repeats: REPEATS,
        concurrency: CONCURRENCY,
        tmp: tmp!,
        log,
        variants: [
          { name: `ddb-spread --key-wcu ${fmtInt(MIXED_SINK_KEY_WCU)}`, args: [], keyWcu: MIXED_SINK_KEY_WCU },
          { name: 'ddb-spread', args: [], keyWcu: DEFAULT_KEY_WCU },
        ],
        targetRatio: MIXED_SINK_TARGET_RATIO,
        title: { target: 'key-mixed data, default order', data: 'in time order' },
      }),
    );
  }
  if (SINK_ALONE) {
    await phase('clean up', cleanup);
    const text = [
      '',
      ...sink!.lines,
      '',
      ...sinkHotKey!.lines,
      '',
      ...sinkMixed!.lines,
      '',
      `bench time ${((performance.now() - benchStarted) / 1000).toFixed(0)} s`,
    ].join('\n');
    process.stdout.write(`${text}\n`);
    const jsonPath = await writeResults('sink-latest.json', {
      ...takenOn(cores),
      options: { rows: ROWS, repeats: REPEATS, concurrency: CONCURRENCY },
      sink,
      sinkHotKey,
      sinkMixed,
      report: text,
    });
    process.stdout.write(`written ${jsonPath}\n`);
    return;
  }

  // Parse-only first, before DynamoDB Local takes memory and a share of the CPU.
  const parse: Record<'ddb-spread' | 'csv-parse', Observed[]> = { 'ddb-spread': [], 'csv-parse': [] };
  await phase('parse-only', async () => {
    for (let i = 0; i < REPEATS; i++) {
      for (const mode of ['ddb-spread', 'csv-parse'] as const) {
        const s = await harness.runChild('runParseOnly.ts', [mode, '--input', main.path]);
        parse[mode].push(s);
        log(`parse-only ${mode} #${i + 1}: ${fmtInt(s.items / s.seconds)} rows/s, ${s.seconds.toFixed(1)} s, peak RSS ${s.maxRssMB.toFixed(0)} MB`);
      }
    }
  });

  await phase('start DynamoDB Local', () => harness.startLocal());

  // DynamoDB Local is a JVM: its first few seconds are JIT warm-up, which would tax whichever loader
  // ran first (5k rows were not enough: the first measured load then ran at half speed). One unmeasured
  // load warms it up.
  await phase('warm-up (unmeasured)', async () => {
    await measuredLoad('minimal', warmFile, CONCURRENCY, 'warm-up (minimal loop, not reported)');
  });

  const loads: Record<Loader, Measured[]> = { 'ddb-spread': [], minimal: [] };
  await phase('ddb-spread vs minimal loop', async () => {
    // ABBA order (ddb-spread, minimal, minimal, ddb-spread, ...): DynamoDB Local keeps speeding up over
    // the first minutes (JIT), and strict ABAB would hand that drift to the minimal loop every time.
    for (let i = 0; i < REPEATS; i++) {
      for (const loader of i % 2 === 0 ? (['ddb-spread', 'minimal'] as const) : (['minimal', 'ddb-spread'] as const)) {
        loads[loader].push(await measuredLoad(loader, main, CONCURRENCY, `${loader} #${i + 1} (concurrency ${CONCURRENCY})`));
      }
    }
  });

  const sweep: { concurrency: number; run: Measured }[] = [];
  if (sweepFile) {
    await phase('concurrency sweep', async () => {
      for (const c of SWEEP) sweep.push({ concurrency: c, run: await measuredLoad('ddb-spread', sweepFile, c, `sweep ddb-spread concurrency ${c}`) });
    });
  }

  await phase('stop DynamoDB Local + clean up', cleanup);
  const totalSeconds = (performance.now() - benchStarted) / 1000;

  /* ---- report ---- */
  const ds = summarize(loads['ddb-spread']);
  const mn = summarize(loads.minimal);
  const ratioBest = ds.itemsPerSecond.best / mn.itemsPerSecond.best;
  const ratioMedian = ds.itemsPerSecond.median / mn.itemsPerSecond.median;
  const parseRate = (xs: Observed[]) => ({
    best: Math.max(...xs.map((s) => s.items / s.seconds)),
    median: median(xs.map((s) => s.items / s.seconds)),
    cpuS: median(xs.map(cpuOf)),
    maxRssMB: Math.max(...xs.map((s) => s.maxRssMB)),
  });
  const pD = parseRate(parse['ddb-spread']);
  const pC = parseRate(parse['csv-parse']);
  // How much of the machine other processes took while we measured: the bench cannot control that.
  const measured: Observed[] = [...loads['ddb-spread'], ...loads.minimal, ...sweep.map((x) => x.run), ...parse['ddb-spread'], ...parse['csv-parse']];
  const otherCpu = measured.reduce((a, r) => a + (r.otherCpuS ?? 0), 0);
  const measuredWall = measured.reduce((a, r) => a + r.childWallS, 0);
  const otherShare = measuredWall > 0 ? otherCpu / (cores * measuredWall) : 0;
  const loadAtEnd = loadavg();
  const medianOf = REPEATS === 2 ? 'median (of 2 = mean)' : `median of ${REPEATS}`;

  const out: string[] = [];
  out.push('');
  out.push(
    `ddb-spread bench — ${new Date().toISOString()} — node ${process.version}, ${cores} cores, DynamoDB Local (${`amplify-dynamodb-simulator@${SIMULATOR_VERSION}`}, in-memory)`,
  );
  out.push(
    `data: ${fmtInt(main.rows)} rows, ${(main.bytes / 1e6).toFixed(1)} MB CSV sorted by pk,sk; ${main.customersWithRows} partition keys, hot key ${((100 * main.hotRows) / main.rows).toFixed(1)}% of rows`,
  );
  if (sink) out.push(...sink.lines, '');
  if (sinkHotKey) out.push(...sinkHotKey.lines, '');
  if (sinkMixed) out.push(...sinkMixed.lines, '');
  out.push(`NOTE: ${cores} cores shared by the loader, DynamoDB Local (a JVM) and this script: expect ±15% noise between runs.`);
  out.push(
    `      Other processes took ${(100 * otherShare).toFixed(0)}% of the machine's CPU while children ran (load average ${loadAtStart[0]?.toFixed(1)} at start, ${loadAtEnd[0]?.toFixed(1)} at end)${otherShare > 0.1 ? ': figures are NOT reliable, rerun on a quiet machine' : ''}.`,
  );
  out.push(`      Items/s here measure the client against a local emulator, not DynamoDB; use them to compare loaders, not to predict AWS.`);
  out.push(`      DynamoDB Local has no partitions and never throttles, so the hot key costs nothing here.`);
  out.push('');
  out.push(
    `Load (concurrency ${CONCURRENCY}, ${REPEATS} runs each, alternating ABBA after ${fmtInt(warmFile.rows)} rows of warm-up; best and ${medianOf}; minimal loop ${MINIMAL_RCC ? 'WITH' : 'without'} ReturnConsumedCapacity)`,
  );
  out.push(
    table(
      ['', 'items/s best', 'items/s median', 'client CPU s', 'CPU µs/item', 'peak RSS MB', 'Local CPU s', 'target'],
      [
        [
          'ddb-spread',
          fmtInt(ds.itemsPerSecond.best),
          fmtInt(ds.itemsPerSecond.median),
          ds.clientCpuS.median.toFixed(1),
          ds.clientCpuUsPerItem.median.toFixed(0),
          `${ds.peakRssMB.median.toFixed(0)} (max ${ds.peakRssMB.worst.toFixed(0)})`,
          ds.serverCpuS?.median.toFixed(1) ?? '?',
          `RSS < ${TARGET_RSS_MB} MB: ${pass(ds.peakRssMB.worst < TARGET_RSS_MB)}`,
        ],
        [
          'minimal loop',
          fmtInt(mn.itemsPerSecond.best),
          fmtInt(mn.itemsPerSecond.median),
          mn.clientCpuS.median.toFixed(1),
          mn.clientCpuUsPerItem.median.toFixed(0),
          `${mn.peakRssMB.median.toFixed(0)} (max ${mn.peakRssMB.worst.toFixed(0)})`,
          mn.serverCpuS?.median.toFixed(1) ?? '?',
          '',
        ],
      ],
    ),
  );
  out.push(
    `ratio ddb-spread / minimal items/s: best ${ratioBest.toFixed(2)}, median ${ratioMedian.toFixed(2)}  (target >= ${TARGET_RATIO}: ${pass(ratioMedian >= TARGET_RATIO)})`,
  );
  const cpuRatio = ds.clientCpuUsPerItem.median / mn.clientCpuUsPerItem.median;
  out.push(`client CPU per item ddb-spread / minimal: ${cpuRatio.toFixed(2)} (median) — the client's own overhead, independent of DynamoDB Local's speed`);
  out.push('(client CPU and µs/item: median over runs, timed section only; peak RSS: whole child process; Local CPU: DynamoDB Local during the run)');
  // Same work, same code: if its CPU seconds move a lot between runs, the CPU itself got slower or faster
  // (host contention under the VM is invisible from /proc).
  const drift = Math.max(...[ds, mn].map((x) => Math.max(...x.runs.map(cpuOf)) / Math.min(...x.runs.map(cpuOf))));
  if (REPEATS > 1 && drift > 1.15) {
    out.push(
      `CAUTION: one loader's client CPU for identical work varied ${((drift - 1) * 100).toFixed(0)}% between runs: the machine's speed changed during the bench.`,
    );
  }
  const localRatio = ds.serverCpuS && mn.serverCpuS ? ds.serverCpuS.median / mn.serverCpuS.median : undefined;
  if (!MINIMAL_RCC && localRatio !== undefined && localRatio > 1.1) {
    out.push(
      `DynamoDB Local spent ${((localRatio - 1) * 100).toFixed(0)}% more CPU on ddb-spread's calls, and Local (not only the client) bounds items/s here: its calls write 64 stripes`,
    );
    out.push(
      'of keys at once where the loop appends one key at a time, and its first 64 calls and one in 16 after ask for ReturnConsumedCapacity=INDEXES (src/pacing/capacityReports.ts).',
    );
  }
  out.push('');
  out.push(`Parse only, no writes (${fmtInt(main.rows)} rows; child processes; best and ${medianOf})`);
  out.push(
    table(
      ['', 'rows/s best', 'rows/s median', 'CPU s', 'peak RSS MB'],
      [
        ['ddb-spread read+type+batch', fmtInt(pD.best), fmtInt(pD.median), pD.cpuS.toFixed(1), pD.maxRssMB.toFixed(0)],
        ['csv-parse columns:true', fmtInt(pC.best), fmtInt(pC.median), pC.cpuS.toFixed(1), pC.maxRssMB.toFixed(0)],
      ],
    ),
  );
  out.push(`ratio ddb-spread / csv-parse rows/s: best ${(pD.best / pC.best).toFixed(2)}, median ${(pD.median / pC.median).toFixed(2)}`);
  if (sweep.length) {
    const bestC = Math.max(...sweep.map((s) => s.run.itemsPerSecond));
    out.push('');
    out.push(`Concurrency sweep (ddb-spread, ${fmtInt(SWEEP_ROWS)} rows, one run each; current default ${CONCURRENCY})`);
    out.push(
      table(
        ['concurrency', 'items/s', 'vs best', 'client CPU s', 'peak RSS MB', 'Local CPU s'],
        sweep.map(({ concurrency, run }) => [
          `${concurrency}${concurrency === CONCURRENCY ? ' (default)' : ''}`,
          fmtInt(run.itemsPerSecond),
          `${((100 * run.itemsPerSecond) / bestC).toFixed(0)}%`,
          cpuOf(run).toFixed(1),
          run.maxRssMB.toFixed(0),
          run.serverCpuS?.toFixed(1) ?? '?',
        ]),
      ),
    );
    out.push('(one run per setting: differences under ~15% are noise on this machine)');
  }
  out.push('');
  out.push(
    `bench time ${totalSeconds.toFixed(0)} s: ${Object.entries(phases)
      .map(([k, v]) => `${k} ${v.toFixed(0)} s`)
      .join(', ')}`,
  );
  const text = out.join('\n');
  process.stdout.write(`${text}\n`);

  const json = {
    ...takenOn(cores),
    options: {
      rows: ROWS,
      sweepRows: SWEEP_ROWS,
      sweep: SWEEP,
      repeats: REPEATS,
      concurrency: CONCURRENCY,
      warmUpRows: Math.min(WARM_UP_ROWS, ROWS),
      minimalRcc: MINIMAL_RCC,
    },
    data: { rows: main.rows, bytes: main.bytes, partitionKeys: main.customersWithRows, hotKeyRows: main.hotRows },
    load: {
      ddbSpread: ds,
      minimal: mn,
      ratio: { best: ratioBest, median: ratioMedian },
      clientCpuPerItemRatio: cpuRatio,
      sameWorkCpuDrift: drift,
      localCpuRatio: localRatio,
      targets: {
        ratioAtLeast: TARGET_RATIO,
        ddbSpreadPeakRssMBBelow: TARGET_RSS_MB,
        ratioMet: ratioMedian >= TARGET_RATIO,
        rssMet: ds.peakRssMB.worst < TARGET_RSS_MB,
      },
    },
    parseOnly: {
      ddbSpread: { ...pD, runs: parse['ddb-spread'] },
      csvParse: { ...pC, runs: parse['csv-parse'] },
      ratio: { best: pD.best / pC.best, median: pD.median / pC.median },
    },
    sweep: { rows: SWEEP_ROWS, runs: sweep },
    instantSink: sink,
    instantSinkHotKey: sinkHotKey,
    instantSinkMixed: sinkMixed,
    phasesSeconds: phases,
    noise: { otherProcessesCpuShare: otherShare, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadAtEnd },
    totalSeconds,
    report: text,
  };
  const jsonPath = await writeResults('latest.json', json);
  process.stdout.write(`written ${jsonPath}\n`);
}

if (!SKIP_MAIN) {
  try {
    await main();
  } catch (error) {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/** Runs another bench file under tsx, after this one's DynamoDB Local is gone (each starts its own). */
function runBench(file: string, forwarded: string[]): void {
  if (process.exitCode) return;
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(benchDir, file), ...forwarded], { cwd: repoRoot, stdio: 'inherit' });
  if (run.status !== 0) process.exitCode = run.status ?? 1;
}
/** `--<from> N` of this command, passed on as `--<to> N`. */
const forward = (from: keyof typeof flags, to: string): string[] => (flags[from] === undefined ? [] : [`--${to}`, String(flags[from])]);

// The hot-partition scenario through the partition model.
if (RATE_BENCH) runBench('rate.ts', forward('rate-rows', 'rows'));
// The same rows clean and with a noisy network's fault mix.
if (NOISE_BENCH) runBench('noise.ts', forward('noise-rows', 'rows'));
// Estimate accuracy against real loads through the partition model, and estimate speed.
if (ESTIMATE_BENCH) runBench('estimate.ts', [...forward('estimate-rows', 'speed-rows'), ...(flags['skip-accuracy'] ? ['--skip-accuracy'] : [])]);
// How soon the default order writes, its memory and temp disk against round-robin's.
if (FIRST_WRITE_BENCH)
  runBench('firstWrite.ts', [
    ...forward('first-write-rows', 'rows'),
    ...forward('first-write-mixed-rows', 'mixed-rows'),
    ...forward('first-write-flights', 'flights'),
    ...(flags['first-write-mixed-only'] ? ['--mixed-only'] : []),
  ]);
// Sets of key-sorted parts (a folder, an S3 prefix) read in stripes across the parts.
if (FIRST_WRITE_BENCH && !flags['first-write-mixed-only']) runBench('firstWriteSets.ts', forward('first-write-sets-rows', 'small-rows'));
// N workers of one load (--segment) against one: bytes read, CPU, and one shared --total-wcu.
if (SCALE_OUT_BENCH) runBench('scaleOut.ts', forward('scale-out-rows', 'rows'));
// CPU and wall from the process's start to --version, --help, a first write and an estimate.
if (STARTUP_BENCH) runBench('startup.ts', forward('startup-bin', 'bin'));
// verify against a hand-written BatchGetItem loop on DynamoDB Local (issue 34).
if (VERIFY_BENCH) runBench('verify.ts', forward('verify-rows', 'rows'));
// What an identity --transform costs the client (issue 33).
if (TRANSFORM_BENCH) runBench('transform.ts', forward('transform-rows', 'rows'));
// Conditional writes (--if-not-exists) against plain BatchWriteItem loads (issue 33).
if (CONDITIONAL_BENCH) runBench('conditional.ts', [...forward('conditional-rows', 'rows'), ...forward('conditional-local-rows', 'local-rows')]);
if (ORDER_BENCH)
  runBench('order.ts', [...forward('order-rows', 'rows'), ...forward('order-large-rows', 'large-rows'), ...forward('order-load-rows', 'load-rows')]);
