/**
 * Write-order benchmark: what each `--order` mode costs and what it buys. Prints figures; asserts
 * nothing; not a test. Needs a built dist/ (`npm run build`; `npm run bench -- --order-bench` builds,
 * runs the main bench, then this).
 *
 *   npx tsx bench/order.ts                          # the defaults below
 *   npx tsx bench/order.ts --large-rows 5000000     # also 5M rows, round-robin and spread (~12 min more)
 *
 * Options:
 *   --rows N         rows of the ordering-alone input (default 1,000,000)
 *   --large-rows N   a second, larger input ordered by the --large-modes only, to show whether peak RSS
 *                    grows with the input (default 0: skipped; docs/BENCHMARKS.md used 5,000,000)
 *   --load-rows N    rows loaded into DynamoDB Local per mode (default 100,000; 0 skips the loads and
 *                    DynamoDB Local altogether)
 *   --held-rows N    rows of the held-bytes check (default 100,000, the load's input; 0 skips it)
 *   --repeats N      measured loads per mode (default 2, in ABCD DCBA order)
 *   --rate N         items/s that make one slice of the load, for the worst-key share (default 4,000)
 *   --memory SIZE    the orderer's memory budget, as --memory of the CLI (default 128 MiB: 1M rows spill)
 *   --large-modes L  modes run on the --large-rows input (default round-robin,spread)
 *   --child-node-flags=F
 *                    node flags for the measured children, e.g. --child-node-flags=--max-old-space-size=160
 *                    (default none: what a user running the CLI gets); a diagnostic of how much of the
 *                    peak RSS is V8 letting garbage pile up rather than data the order holds
 *
 * Input: generateSkewedCsv (bench/data.ts): sorted by partition key, keys holding 10%, 5%, 3%, 2%, 1% of
 * the rows and a long tail of rows/50 keys. For each mode (input, window, round-robin, spread):
 * 1. Ordering alone (child process, runOrderOnly.ts): read + plan + order, no writes. rows/s (input mode
 *    is read + plan only: the baseline), peak RSS, bytes written to temporary files and the most on disk
 *    at once (sampled every 250 ms), then the slice figures of the order it produced (orderSlices.ts):
 *    the worst-key share of any 1-second slice at --rate, and for spread the 2× fairness check.
 * 2. Held bytes (child process, runOrderHeld.ts): every write of a --held-rows input pushed, none drained,
 *    then the orderer's own `heldBytes` against what V8's heap and ArrayBuffers grew by, after forced GCs.
 * 3. Loads into fresh tables on DynamoDB Local (child process, runOrderLoad.ts), after an unmeasured
 *    100k-row warm-up: items/s of the whole load() call, compared with input order.
 * Results also go to bench/results/order-latest.json.
 */
import { mkdir, rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SIMULATOR_VERSION } from '../tools/dynamodbLocal.js';
import { DEFAULT_CONCURRENCY, DEFAULT_MEMORY_BYTES, parseByteSize } from '../dist/load/options.js';
import { DEFAULT_WINDOW_ROWS, ORDER_MODES, type OrderMode } from '../dist/ordering/order.js';
import { generateSkewedCsv, SKEWED_HEAVY_SHARES, SKEWED_ROWS_PER_TAIL_KEY, type SkewedDataFile } from './data.js';
import { Harness, watchDiskUse, type Observed } from './harness.js';
import { cpuOf, fmtInt, median, pass, phaseTimer, table, takenOn, writeResults } from './report.js';
import { sliceStatsOfFile, type SliceStats } from './orderSlices.js';

const benchStarted = performance.now();

/* ==== options ==== */

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string' },
    'large-rows': { type: 'string' },
    'load-rows': { type: 'string' },
    'held-rows': { type: 'string' },
    repeats: { type: 'string' },
    rate: { type: 'string' },
    memory: { type: 'string' },
    'large-modes': { type: 'string' },
    'child-node-flags': { type: 'string' },
  },
  strict: true,
});

function intOption(name: 'rows' | 'large-rows' | 'load-rows' | 'held-rows' | 'repeats' | 'rate', fallback: number, min: number): number {
  const text = flags[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got ${text}`);
  return n;
}

const ROWS = intOption('rows', 1_000_000, 1);
const LARGE_ROWS = intOption('large-rows', 0, 0);
const LOAD_ROWS = intOption('load-rows', 100_000, 0);
const HELD_ROWS = intOption('held-rows', 100_000, 0);
const REPEATS = intOption('repeats', 2, 1);
const RATE = intOption('rate', 4_000, 1);
const MEMORY_BYTES = flags.memory ? parseByteSize(flags.memory) : DEFAULT_MEMORY_BYTES;
const CHILD_NODE_FLAGS = (flags['child-node-flags'] ?? '').split(/\s+/).filter(Boolean);
const MODES: readonly OrderMode[] = ['input', 'window', 'round-robin', 'spread'];
const LARGE_MODES = (flags['large-modes'] ?? 'round-robin,spread')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean)
  .map((s) => {
    if (!ORDER_MODES.includes(s as OrderMode)) throw new Error(`--large-modes: ${s} is not one of ${ORDER_MODES.join(', ')}`);
    return s as OrderMode;
  });
const WARM_UP_ROWS = 100_000;
const CONCURRENCY = DEFAULT_CONCURRENCY;
const SEEDS = { order: 20240611, load: 20240612, warm: 20240613, large: 20240614 };
const TARGET = { loadRatio: 0.9, rssMB: 256, rssGrowth: 1.1, spreadRatio: 2 };
if (MODES.some((m) => !ORDER_MODES.includes(m))) throw new Error(`the library's order modes changed: ${ORDER_MODES.join(', ')}`);

/* ==== plumbing ==== */

const { phases, phase } = phaseTimer();
const log = (msg: string) => process.stderr.write(`[order-bench ${((performance.now() - benchStarted) / 1000).toFixed(0).padStart(4)}s] ${msg}\n`);
const harness = new Harness({ log, childTimeoutMs: 60 * 60 * 1000, nodeFlags: CHILD_NODE_FLAGS, tablePrefix: 'order-bench' });

let tmp: string | undefined;
harness.cleanupOnSignals();
const cleanup = () => harness.cleanup();

const mb = (bytes: number) => (bytes / 1e6).toFixed(0);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const fmtRows = (n: number) => (n >= 1e6 ? `${+(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${+(n / 1e3).toFixed(1)}k` : String(n));
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/* ==== ordering alone ==== */

interface OrderExtra {
  readSeconds: number;
  spilled: boolean;
  tempBytes: number;
  buckets: number;
  runs: number;
}

interface OrderRun {
  mode: OrderMode;
  rows: number;
  stats: Observed;
  rowsPerSecond: number;
  /** Seconds after the last row was read, handing out the held writes (global orders). */
  drainSeconds: number;
  order: OrderExtra;
  /** Most bytes of temporary files on disk at once (sampled). */
  tempPeakBytes: number;
  slices: SliceStats;
}

async function orderAlone(file: SkewedDataFile, mode: OrderMode): Promise<OrderRun> {
  const tempDir = join(tmp!, `order-temp-${mode}-${file.rows}`);
  const sequence = join(tmp!, `sequence-${mode}-${file.rows}.txt`);
  await mkdir(tempDir, { recursive: true });
  const disk = watchDiskUse(tempDir);
  let stats: Observed;
  let tempPeakBytes: number;
  try {
    stats = await harness.runChild('runOrderOnly.ts', [
      mode,
      '--input',
      file.path,
      '--memory',
      String(MEMORY_BYTES),
      '--window',
      String(DEFAULT_WINDOW_ROWS),
      '--temp-dir',
      tempDir,
      '--sequence',
      sequence,
    ]);
  } finally {
    tempPeakBytes = await disk.stop();
    await rm(tempDir, { recursive: true, force: true });
  }
  const order = stats.extra as unknown as OrderExtra;
  const slices = await sliceStatsOfFile(sequence, RATE);
  await rm(sequence, { force: true });
  const run: OrderRun = {
    mode,
    rows: file.rows,
    stats,
    rowsPerSecond: stats.items / stats.seconds,
    drainSeconds: stats.seconds - order.readSeconds,
    order,
    tempPeakBytes,
    slices,
  };
  log(
    `order ${mode} ${fmtInt(file.rows)} rows: ${fmtInt(run.rowsPerSecond)} rows/s (${stats.seconds.toFixed(1)} s, ${run.drainSeconds.toFixed(1)} s after the last row), ` +
      `peak RSS ${stats.maxRssMB.toFixed(0)} MB, temp written ${mb(order.tempBytes)} MB, on disk at most ${mb(tempPeakBytes)} MB; ` +
      `worst-key share ${pct(slices.worstKeyShare)}, max slice/file ratio ${slices.maxRatio?.ratio.toFixed(2) ?? '-'}; other processes ${stats.otherCpuS?.toFixed(1) ?? '?'} CPU s`,
  );
  return run;
}

/* ==== held bytes ==== */

interface HeldRun {
  mode: OrderMode;
  held: number;
  spilled: boolean;
  heldBytes: number;
  measuredBytes: number;
  rssGrowth: number;
}

async function heldCheck(file: SkewedDataFile, mode: OrderMode): Promise<HeldRun> {
  const tempDir = join(tmp!, `held-temp-${mode}`);
  await mkdir(tempDir, { recursive: true });
  try {
    const stats = await harness.runChild('runOrderHeld.ts', [
      mode,
      '--input',
      file.path,
      '--memory',
      String(MEMORY_BYTES),
      '--window',
      String(DEFAULT_WINDOW_ROWS),
      '--temp-dir',
      tempDir,
    ]);
    const extra = stats.extra as unknown as HeldRun;
    const run: HeldRun = {
      mode,
      held: extra.held,
      spilled: extra.spilled,
      heldBytes: extra.heldBytes,
      measuredBytes: extra.measuredBytes,
      rssGrowth: extra.rssGrowth,
    };
    log(
      `held ${mode}: ${fmtInt(run.held)} writes held${run.spilled ? ' (spilled)' : ''}, heldBytes ${mb(run.heldBytes)} MB, measured ${mb(run.measuredBytes)} MB, RSS grew ${mb(run.rssGrowth)} MB`,
    );
    return run;
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}

/* ==== loads ==== */

interface Measured extends Observed {
  itemsPerSecond: number;
  tableItemCount?: number;
}

async function measuredLoad(file: SkewedDataFile, mode: OrderMode, label: string): Promise<Measured> {
  const table = await harness.createTable();
  const tempDir = join(tmp!, `load-temp-${table}`);
  await mkdir(tempDir, { recursive: true });
  try {
    const stats = await harness.runChild('runOrderLoad.ts', [
      '--input',
      file.path,
      '--table',
      table,
      '--endpoint',
      harness.endpoint,
      '--order',
      mode,
      '--concurrency',
      String(CONCURRENCY),
      '--memory',
      String(MEMORY_BYTES),
      '--temp-dir',
      tempDir,
      '--rejects',
      join(tmp!, `${table}.rejects.jsonl`),
    ]);
    const m: Measured = { ...stats, itemsPerSecond: stats.items / stats.seconds };
    const count = await harness.itemCount(table);
    if (count !== undefined) m.tableItemCount = count;
    if (m.items !== file.rows || (count !== undefined && count !== file.rows)) {
      log(`WARNING ${label}: ${file.rows} rows in the file, ${m.items} reported written, ${count ?? '?'} in the table`);
    }
    const extra = (m.extra ?? {}) as { readSeconds?: number; orderTempBytes?: number };
    log(
      `${label}: ${fmtInt(m.itemsPerSecond)} items/s, ${m.seconds.toFixed(1)} s${extra.readSeconds === undefined ? '' : ` (first write after ${extra.readSeconds.toFixed(1)} s)`}, ` +
        `client CPU ${cpuOf(m).toFixed(1)} s, peak RSS ${m.maxRssMB.toFixed(0)} MB, temp ${mb(extra.orderTempBytes ?? 0)} MB, ` +
        `DynamoDB Local CPU ${m.serverCpuS?.toFixed(1) ?? '?'} s, other processes ${m.otherCpuS?.toFixed(1) ?? '?'} s`,
    );
    return m;
  } finally {
    await harness.dropTable(table);
    await rm(tempDir, { recursive: true, force: true });
  }
}

/* ==== main ==== */

async function main(): Promise<void> {
  tmp = await harness.makeTempDir('ddb-spread-order-bench-');
  await harness.compileChildren(['childStats.ts', 'pipeline.ts', 'orderChildArgs.ts', 'runOrderOnly.ts', 'runOrderLoad.ts', 'runOrderHeld.ts']);
  const cores = cpus().length;
  const loadAtStart = loadavg();
  if (loadAtStart[0]! > cores * 0.5)
    log(
      `WARNING: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} on ${cores} cores before starting: other work is running, figures will be noisy`,
    );
  log(
    `ordering ${fmtInt(ROWS)} rows${LARGE_ROWS ? ` and ${fmtInt(LARGE_ROWS)} (${LARGE_MODES.join(', ')})` : ''}, --memory ${mib(MEMORY_BYTES)}, slices of ${fmtInt(RATE)} writes; ` +
      `${LOAD_ROWS ? `loads of ${fmtInt(LOAD_ROWS)} rows x ${REPEATS} per mode` : 'no loads'}; ${cores} cores; temp ${tmp}`,
  );

  const orderFile = await phase('generate data', () => generateSkewedCsv(join(tmp!, `skewed-${ROWS}.csv`), ROWS, SEEDS.order));
  log(`generated ${mb(orderFile.bytes)} MB, ${fmtInt(orderFile.keys)} partition keys, heaviest ${orderFile.heavyRows.map((n) => fmtInt(n)).join(', ')} rows`);

  const alone: OrderRun[] = [];
  await phase('ordering alone', async () => {
    for (const mode of MODES) alone.push(await orderAlone(orderFile, mode));
  });

  const large: OrderRun[] = [];
  let largeFile: SkewedDataFile | undefined;
  if (LARGE_ROWS > 0) {
    largeFile = await phase('generate data', () => generateSkewedCsv(join(tmp!, `skewed-${LARGE_ROWS}.csv`), LARGE_ROWS, SEEDS.large));
    log(`generated ${mb(largeFile.bytes)} MB, ${fmtInt(largeFile.keys)} partition keys`);
    await phase('ordering alone, large input', async () => {
      for (const mode of LARGE_MODES) large.push(await orderAlone(largeFile!, mode));
    });
    await rm(largeFile.path, { force: true });
  }
  await rm(orderFile.path, { force: true });

  const held: HeldRun[] = [];
  if (HELD_ROWS > 0) {
    const heldFile = await phase('generate data', () => generateSkewedCsv(join(tmp!, `held-${HELD_ROWS}.csv`), HELD_ROWS, SEEDS.load));
    await phase('held bytes', async () => {
      for (const mode of MODES) held.push(await heldCheck(heldFile, mode));
    });
    await rm(heldFile.path, { force: true });
  }

  const loads = new Map<OrderMode, Measured[]>(MODES.map((m) => [m, []]));
  let loadFile: SkewedDataFile | undefined;
  if (LOAD_ROWS > 0) {
    const files = await phase('generate data', async () => ({
      load: await generateSkewedCsv(join(tmp!, `load-${LOAD_ROWS}.csv`), LOAD_ROWS, SEEDS.load),
      warm: await generateSkewedCsv(join(tmp!, `warm-up-${WARM_UP_ROWS}.csv`), WARM_UP_ROWS, SEEDS.warm),
    }));
    loadFile = files.load;
    await phase('start DynamoDB Local', () => harness.startLocal());
    // A JVM: its first ~150k items are JIT warm-up (see bench.ts). One unmeasured load warms it up.
    await phase('warm-up (unmeasured)', () => measuredLoad(files.warm, 'input', 'warm-up (input order, not reported)'));
    await phase('loads', async () => {
      // ABCD DCBA ...: DynamoDB Local keeps speeding up for a while (JIT); a fixed order would hand that
      // drift to the last mode every time.
      for (let i = 0; i < REPEATS; i++) {
        for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
          loads.get(mode)!.push(await measuredLoad(loadFile!, mode, `load ${mode} #${i + 1}`));
        }
      }
    });
  }

  await phase('stop DynamoDB Local + clean up', cleanup);
  const totalSeconds = (performance.now() - benchStarted) / 1000;

  /* ---- report ---- */
  const measured: Observed[] = [...alone.map((r) => r.stats), ...large.map((r) => r.stats), ...[...loads.values()].flat()];
  const otherCpu = measured.reduce((a, r) => a + (r.otherCpuS ?? 0), 0);
  const measuredWall = measured.reduce((a, r) => a + r.childWallS, 0);
  const otherShare = measuredWall > 0 ? otherCpu / (cores * measuredWall) : 0;
  const loadAtEnd = loadavg();
  const inputRate = alone.find((r) => r.mode === 'input')?.rowsPerSecond;

  const out: string[] = [];
  out.push('');
  out.push(`ddb-spread write-order bench — ${new Date().toISOString()} — node ${process.version}, ${cores} cores`);
  out.push(
    `data: ${fmtInt(orderFile.rows)} rows, ${mb(orderFile.bytes)} MB CSV sorted by pk,sk; ${fmtInt(orderFile.keys)} partition keys: ` +
      `${SKEWED_HEAVY_SHARES.map((s) => pct(s)).join(', ')} of the rows on 5 keys, the rest on a tail of rows/${SKEWED_ROWS_PER_TAIL_KEY} keys`,
  );
  if (CHILD_NODE_FLAGS.length) out.push(`children ran with node ${CHILD_NODE_FLAGS.join(' ')}`);
  out.push(
    `NOTE: other processes took ${(100 * otherShare).toFixed(0)}% of the machine's CPU while children ran (load average ${loadAtStart[0]?.toFixed(1)} at start, ${loadAtEnd[0]?.toFixed(1)} at end)` +
      `${otherShare > 0.1 ? ': figures are NOT reliable, rerun on a quiet machine' : ''}. One run per mode: expect ±15%.`,
  );
  out.push('');
  const perfRows = (runs: OrderRun[]) =>
    runs.map((r) => [
      large.length ? `${r.mode} (${fmtRows(r.rows)})` : r.mode,
      fmtInt(r.rowsPerSecond),
      inputRate && runs === alone ? (r.mode === 'input' ? '1.00' : (r.rowsPerSecond / inputRate).toFixed(2)) : '',
      r.stats.seconds.toFixed(1),
      r.drainSeconds.toFixed(1),
      cpuOf(r.stats).toFixed(1),
      r.stats.maxRssMB.toFixed(0),
      mb(r.order.tempBytes),
      mb(r.tempPeakBytes),
      r.order.spilled ? `${r.order.buckets}/${r.order.runs}` : '-',
      `< ${TARGET.rssMB}: ${pass(r.stats.maxRssMB < TARGET.rssMB)}`,
    ]);
  out.push(
    `Ordering alone: read + plan + order, no writes (${fmtInt(orderFile.rows)} rows, --memory ${mib(MEMORY_BYTES)}, window ${fmtInt(DEFAULT_WINDOW_ROWS)} rows; one child process per mode; input = read + plan only)`,
  );
  out.push(
    table(
      ['mode', 'rows/s', 'vs input', 'total s', 'after read s', 'CPU s', 'peak RSS MB', 'temp written MB', 'temp peak MB', 'buckets/runs', 'RSS target'],
      [...perfRows(alone), ...perfRows(large)],
    ),
  );
  out.push('(after read s: time between the last row read and the last write handed out; temp peak: most bytes on disk at once, sampled every 250 ms)');
  const growth = large.map((l) => {
    const small = alone.find((a) => a.mode === l.mode)!;
    return { mode: l.mode, smallMB: small.stats.maxRssMB, largeMB: l.stats.maxRssMB, ratio: l.stats.maxRssMB / small.stats.maxRssMB };
  });
  if (large.length) {
    out.push(
      `peak RSS ${fmtInt(LARGE_ROWS)} vs ${fmtInt(ROWS)} rows: ${growth.map((g) => `${g.mode} ${g.largeMB.toFixed(0)} vs ${g.smallMB.toFixed(0)} MB (×${g.ratio.toFixed(2)}, target <= ×${TARGET.rssGrowth}: ${pass(g.ratio <= TARGET.rssGrowth)})`).join('; ')}`,
    );
  }
  out.push('');
  out.push(
    `Slices: the order cut into consecutive slices of ${fmtInt(RATE)} writes (1 s at ${fmtInt(RATE)} items/s); share = a key's writes in a slice / ${fmtInt(RATE)}; ratio = share in a slice / share of the whole file`,
  );
  const sliceRows = (runs: OrderRun[]) =>
    runs.map((r) => {
      const s = r.slices;
      return [
        large.length ? `${r.mode} (${fmtRows(r.rows)})` : r.mode,
        pct(s.worstKeyShare),
        pct(s.medianSliceWorstShare),
        String(s.slicesOverHalf),
        s.maxRatio ? `${s.maxRatio.ratio.toFixed(2)} (${s.maxRatio.count}/${s.maxRatio.expectedPerSlice.toFixed(1)})` : '-',
        String(s.ratedKeysOver2),
        s.minRatio ? s.minRatio.ratio.toFixed(2) : '-',
        `${s.sparseMaxPerSlice} (${s.sparseKeysRepeated} keys${s.sparseRepeatedMinExpected === undefined ? '' : `, e >= ${s.sparseRepeatedMinExpected.toFixed(2)}`})`,
        r.mode === 'spread' && s.maxRatio ? `<= ${TARGET.spreadRatio}: ${pass(s.maxRatio.ratio <= TARGET.spreadRatio)}` : '',
      ];
    });
  const s0 = alone[0]!.slices;
  out.push(
    table(
      [
        'mode',
        'worst-key share',
        'median slice worst',
        'slices > 50%',
        'max ratio (writes/expected)',
        'keys > 2x',
        'min ratio (e >= 2)',
        'sparse: most in a slice',
        'spread target',
      ],
      [...sliceRows(alone), ...sliceRows(large)],
    ),
  );
  out.push(
    `(${fmtRows(s0.rows)} input: ${fmtInt(s0.slices)} full slices${s0.tailRows ? `, last ${fmtInt(s0.tailRows)} writes left out` : ''}; hottest key ${pct(s0.hottestFileShare)} of the file. ` +
      `Max ratio over the ${fmtInt(s0.ratedKeys)} keys expected >= 1 write per slice (e >= 1); min ratio over those with e >= 2, 0 = such a key is missing from some slice. ` +
      `Sparse: the ${fmtInt(s0.sparseKeys)} keys expected < 1 write per slice, where one write already exceeds 2x their share: most writes of one in one slice, how many keys had 2+, and the smallest expected writes per slice e among those.)`,
  );

  if (held.length) {
    out.push('');
    out.push(
      `Held bytes: ${fmtInt(HELD_ROWS)} rows pushed, none drained (--memory ${mib(MEMORY_BYTES)}, window ${fmtInt(DEFAULT_WINDOW_ROWS)} rows); the orderer's heldBytes against the growth of V8's used heap + ArrayBuffers and of the RSS, after forced GCs`,
    );
    out.push(
      table(
        ['mode', 'writes held', 'spilled', 'heldBytes MB', 'heap+ArrayBuffers MB', 'ratio', 'RSS growth MB', 'ratio'],
        held.map((h) => {
          const ratio = (x: number) => (h.heldBytes > 0 ? (x / h.heldBytes).toFixed(2) : '-');
          return [
            h.mode,
            fmtInt(h.held),
            h.spilled ? 'yes' : 'no',
            mb(h.heldBytes),
            mb(h.measuredBytes),
            ratio(h.measuredBytes),
            mb(h.rssGrowth),
            ratio(h.rssGrowth),
          ];
        }),
      ),
    );
    out.push('(ArrayBuffer memory counts a Buffer whole; a large slab costs memory only for the pages written to, which the RSS shows)');
  }

  const loadSummary: Record<
    string,
    {
      best: number;
      median: number;
      ratioMedian: number;
      ratioBest: number;
      cpuS: number;
      maxRssMB: number;
      tempMB: number;
      serverCpuS: number | undefined;
      firstWriteS: number | undefined;
    }
  > = {};
  if (loadFile) {
    const inputRuns = loads.get('input')!;
    const inBest = Math.max(...inputRuns.map((r) => r.itemsPerSecond));
    const inMedian = median(inputRuns.map((r) => r.itemsPerSecond));
    const rows: string[][] = [];
    for (const mode of MODES) {
      const runs = loads.get(mode)!;
      const ips = runs.map((r) => r.itemsPerSecond);
      const extras = runs.map((r) => (r.extra ?? {}) as { readSeconds?: number; orderTempBytes?: number });
      const server = runs.map((r) => r.serverCpuS).filter((x): x is number => x !== undefined);
      const first = extras.map((e) => e.readSeconds).filter((x): x is number => x !== undefined);
      const summary = {
        best: Math.max(...ips),
        median: median(ips),
        ratioMedian: median(ips) / inMedian,
        ratioBest: Math.max(...ips) / inBest,
        cpuS: median(runs.map(cpuOf)),
        maxRssMB: Math.max(...runs.map((r) => r.maxRssMB)),
        tempMB: Math.max(...extras.map((e) => (e.orderTempBytes ?? 0) / 1e6)),
        serverCpuS: server.length ? median(server) : undefined,
        firstWriteS: first.length ? median(first) : undefined,
      };
      loadSummary[mode] = summary;
      rows.push([
        mode,
        fmtInt(summary.best),
        fmtInt(summary.median),
        summary.ratioMedian.toFixed(2),
        summary.firstWriteS?.toFixed(1) ?? '0',
        summary.cpuS.toFixed(1),
        summary.maxRssMB.toFixed(0),
        summary.tempMB.toFixed(0),
        summary.serverCpuS?.toFixed(1) ?? '?',
        mode === 'round-robin' || mode === 'spread' ? `>= ${TARGET.loadRatio}: ${pass(summary.ratioMedian >= TARGET.loadRatio)}` : '',
      ]);
    }
    out.push('');
    out.push(
      `Load into DynamoDB Local (amplify-dynamodb-simulator@${SIMULATOR_VERSION}, in-memory; ${fmtInt(loadFile.rows)} rows, ${fmtInt(loadFile.keys)} keys, concurrency ${CONCURRENCY}, --memory ${mib(MEMORY_BYTES)}; ` +
        `${REPEATS} runs per mode after ${fmtInt(WARM_UP_ROWS)} rows of warm-up; items/s of the whole load() call)`,
    );
    out.push(
      table(['mode', 'items/s best', 'items/s median', 'vs input', 'first write s', 'client CPU s', 'peak RSS MB', 'temp MB', 'Local CPU s', 'target'], rows),
    );
    out.push(
      '(first write s: reading the whole input before the first write, round-robin and spread only; DynamoDB Local has no partitions and never throttles: order costs show, benefits do not)',
    );
  }
  out.push('');
  out.push(
    `order bench time ${totalSeconds.toFixed(0)} s: ${Object.entries(phases)
      .map(([k, v]) => `${k} ${v.toFixed(0)} s`)
      .join(', ')}`,
  );
  const text = out.join('\n');
  process.stdout.write(`${text}\n`);

  const json = {
    ...takenOn(cores),
    options: {
      childNodeFlags: CHILD_NODE_FLAGS,
      largeModes: LARGE_MODES,
      rows: ROWS,
      largeRows: LARGE_ROWS,
      loadRows: LOAD_ROWS,
      heldRows: HELD_ROWS,
      repeats: REPEATS,
      rate: RATE,
      memoryBytes: MEMORY_BYTES,
      windowRows: DEFAULT_WINDOW_ROWS,
      concurrency: CONCURRENCY,
    },
    data: {
      rows: orderFile.rows,
      bytes: orderFile.bytes,
      keys: orderFile.keys,
      heavyRows: orderFile.heavyRows,
      largeRows: largeFile?.rows,
      largeBytes: largeFile?.bytes,
      largeKeys: largeFile?.keys,
    },
    orderingAlone: alone,
    orderingAloneLarge: large,
    rssGrowth: growth,
    heldCheck: held,
    loads: { rows: loadFile?.rows, summary: loadSummary, runs: Object.fromEntries(loads) },
    targets: TARGET,
    phasesSeconds: phases,
    noise: { otherProcessesCpuShare: otherShare, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadAtEnd },
    totalSeconds,
    report: text,
  };
  const jsonPath = await writeResults('order-latest.json', json);
  process.stdout.write(`written ${jsonPath}\n`);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`order bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
