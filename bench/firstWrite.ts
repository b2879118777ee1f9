/**
 * First-write bench: how soon writing starts (target: within 3 s) and what a load holds, by write order.
 * Prints figures; asserts nothing; not a test.
 *
 *   npx tsx bench/firstWrite.ts                 # 3,000,000 rows, and 1,000,000
 *   npx tsx bench/firstWrite.ts --rows 500000   # smaller
 *
 * Each run is a child process (runFirstWrite.ts) doing a dry-run load() with the table described offline,
 * so nothing but reading, planning, ordering and batching is measured: the time to the first batch (the
 * first write of a real load), the whole run, peak RSS, and the most the order's temporary folder held at
 * once (sampled every 250 ms) against the input's size.
 *
 * Key-mixed inputs first (mixedData.ts), with the default order (target: first write within 3 s of the
 * load's start, no temporary files, peak RSS under 256 MB; also printed: from the process's start): a time-ordered CSV, the same rows as 16
 * CSV parts in a folder, as one gzip file, a full DynamoDB export folder (16 data files, keys
 * grouped within each as a scan writes them), and an export chain: that full export then two incremental
 * exports (15% and 12% of its items changed: updates, new items, deletes), the folder that holds the three. --mixed-rows N sets their size (default --rows);
 * --flights FILE takes a real file for the CSV instead (columns id,date,delay,distance,origin,destination,
 * key origin + id, e.g. /work/scratch/flights-3m.csv); --mixed-only runs only these, --skip-mixed leaves
 * them out. (An S3 prefix of 16 parts is not measured: the bench has no S3 server.)
 *
 * Then a key-sorted export-like CSV: the default order (stripes there) and round-robin (the default
 * before it) on the large file; the default on 1M rows as well, to show that its RSS does not grow with
 * the file. Then the orders that spill (target: temp disk <= 1.2x the input, RSS < 256 MB and flat):
 * round-robin and spread on both files, temp disk peak / input, peak RSS and CPU.
 *   npx tsx bench/firstWrite.ts --spill-only   # only those (round-robin and spread, both sizes)
 * Results also go to bench/results/first-write-latest.json (first-write-mixed-latest.json with --mixed-only).
 */
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateSkewedCsv } from './data.js';
import { chainChanges, generateExport, generateExportChain, generateTimeOrderedCsv, generateTimeOrderedGzip, generateTimeOrderedParts } from './mixedData.js';
import { Harness, watchDiskUse, type Observed } from './harness.js';
import { fmtInt, pass, table, takenOn, writeResults } from './report.js';

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string' },
    'small-rows': { type: 'string' },
    'spill-only': { type: 'boolean' },
    'mixed-only': { type: 'boolean' },
    'skip-mixed': { type: 'boolean' },
    'mixed-rows': { type: 'string' },
    flights: { type: 'string' },
  },
});
const SPILL_ONLY = flags['spill-only'] ?? false;
const MIXED_ONLY = flags['mixed-only'] ?? false;
const MIXED = !SPILL_ONLY && !(flags['skip-mixed'] ?? false);
const ROWS = Number(flags.rows ?? 3_000_000);
const SMALL_ROWS = Number(flags['small-rows'] ?? 1_000_000);
const MIXED_ROWS = Number(flags['mixed-rows'] ?? ROWS);
const PARTS = 16;
const FIRST_WRITE_TARGET_S = 3;
const RSS_TARGET_MB = 256;
if (flags.flights !== undefined && !existsSync(flags.flights)) throw new Error(`--flights ${flags.flights}: no such file`);
const log = (msg: string) => process.stdout.write(`${msg}\n`);

const harness = new Harness({ log, childTimeoutMs: 30 * 60_000, tablePrefix: 'firstwrite' });
let dir = '';

interface Run {
  /** The --order given, or 'default'. */
  order: string;
  /** What was read, for the mixed inputs. */
  input?: string;
  rows: number;
  inputBytes: number;
  stats: Observed;
  tempPeakBytes: number;
}

/** What runFirstWrite.ts reports besides the common figures. */
interface FirstWriteExtra {
  firstWriteS: number;
  firstWriteSinceStartS: number;
  readingOrder: string;
  order: string;
  orderTempBytes: number;
  warnings: string[];
}
const extraOf = (r: Run) => r.stats.extra as unknown as FirstWriteExtra;

/** An input to measure: a file or a folder, its rows and bytes, and its key and types when not the bench's (pk:S,sk:S; amount:N,qty:N). */
interface Input {
  label: string;
  path: string;
  rows: number;
  bytes: number;
  key?: string;
  types?: string;
}

let runs = 0;
async function measure(input: Input, order: string): Promise<Run> {
  const temp = join(dir, `temp-${++runs}-${order}-${input.rows}`);
  await mkdir(temp, { recursive: true });
  const watch = watchDiskUse(temp);
  const stats = await harness.runChild('runFirstWrite.ts', [
    '--input',
    input.path,
    ...(order === 'default' ? [] : ['--order', order]),
    ...(input.key === undefined ? [] : ['--key', input.key]),
    ...(input.types === undefined ? [] : ['--types', input.types]),
    '--temp-dir',
    temp,
    '--rejects',
    join(dir, `${runs}.rejects.jsonl`),
  ]);
  const tempPeakBytes = await watch.stop();
  const run: Run = { order, input: input.label, rows: input.rows, inputBytes: input.bytes, stats, tempPeakBytes };
  const x = extraOf(run);
  log(
    `  ${input.label.padEnd(14)} ${order.padEnd(11)} ${fmtInt(input.rows).padStart(9)} rows: first write ${x.firstWriteS.toFixed(2)} s (${x.firstWriteSinceStartS.toFixed(2)} s from start), all ${stats.seconds.toFixed(1)} s, peak RSS ${stats.maxRssMB.toFixed(0)} MB, temp peak ${(tempPeakBytes / 1e6).toFixed(0)} MB (order: ${x.readingOrder} at the start, ${x.order} at the end${x.warnings.length ? `; ${x.warnings.length} warning(s)` : ''})`,
  );
  if (stats.items !== input.rows) log(`  WARNING: ${fmtInt(input.rows)} rows in the input, ${fmtInt(stats.items)} read`);
  return run;
}

const fileInput = async (label: string, path: string, rows: number): Promise<Input> => ({ label, path, rows, bytes: (await stat(path)).size });

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
async function spillRuns(big: Input, small: Input): Promise<void> {
  const spilling: Run[] = [];
  for (const order of ['round-robin', 'spread']) spilling.push(await measure(small, order), await measure(big, order));
  reportSpills(spilling);
  const path = await writeResults('first-write-spill-latest.json', { ...takenOn(cpus().length), rows: ROWS, smallRows: SMALL_ROWS, runs: spilling });
  log(`written ${path}`);
}

/**
 * The key-mixed inputs with the default order: each must start writing within 3 s of the load's start,
 * with no temporary files and peak RSS under 256 MB. Generated one at a time and deleted after its run.
 */
async function mixedRuns(): Promise<Run[]> {
  const seed = 31;
  const inputs: { make: () => Promise<Input> }[] = [
    {
      make: async () =>
        flags.flights !== undefined
          ? { ...(await fileInput('flights CSV', flags.flights, await countLines(flags.flights))), key: 'origin:S,id:N', types: '' }
          : { label: 'time-ordered', ...(await generateTimeOrderedCsv(join(dir, 'mixed.csv'), MIXED_ROWS, seed)) },
    },
    { make: async () => ({ label: `${PARTS} parts`, ...(await generateTimeOrderedParts(join(dir, 'mixed-parts'), MIXED_ROWS, PARTS, seed)) }) },
    { make: async () => ({ label: 'gzip', ...(await generateTimeOrderedGzip(join(dir, 'mixed.csv.gz'), MIXED_ROWS, seed)) }) },
    { make: async () => ({ label: 'ddb export', ...(await generateExport(join(dir, 'export'), MIXED_ROWS, PARTS, seed)), types: '' }) },
    {
      // The folder that holds a full export and two incrementals, read in chain order.
      make: async () => ({
        label: 'export chain',
        ...(await generateExportChain(join(dir, 'chain'), MIXED_ROWS, PARTS, chainChanges(MIXED_ROWS), seed)),
        types: '',
      }),
    },
  ];
  const runs: Run[] = [];
  for (const { make } of inputs) {
    const input = await make();
    runs.push(await measure(input, 'default'));
    if (input.path.startsWith(dir)) await rm(input.path, { recursive: true, force: true });
  }
  const verdict = (r: Run) => {
    const x = extraOf(r);
    const noTemp = r.tempPeakBytes === 0 && x.orderTempBytes === 0;
    // From the load's call, as the key-sorted runs: node's own start-up and imports took 2-6 s on the loaded 2-core machine.
    return [x.firstWriteS <= FIRST_WRITE_TARGET_S, noTemp, r.stats.maxRssMB < RSS_TARGET_MB] as const;
  };
  log('');
  log(
    `key-mixed inputs, default order (target: first write within ${FIRST_WRITE_TARGET_S} s of the load's start (in brackets: of the process's), no temporary files, peak RSS < ${RSS_TARGET_MB} MB; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}):`,
  );
  log(
    table(
      ['input', 'rows', 'MB', 'order (start > end)', 'first write s (process)', 'all s', 'rows/s', 'peak RSS MB', 'temp peak MB', 'target'],
      runs.map((r) => {
        const x = extraOf(r);
        const [first, noTemp, rss] = verdict(r);
        return [
          r.input!,
          fmtInt(r.rows),
          (r.inputBytes / 1e6).toFixed(0),
          x.readingOrder === x.order ? x.order : `${x.readingOrder} > ${x.order}`,
          `${x.firstWriteS.toFixed(2)} (${x.firstWriteSinceStartS.toFixed(2)})`,
          r.stats.seconds.toFixed(1),
          fmtInt(r.rows / r.stats.seconds),
          r.stats.maxRssMB.toFixed(0),
          (Math.max(r.tempPeakBytes, x.orderTempBytes) / 1e6).toFixed(0),
          `first write ${pass(first)}, no temp ${pass(noTemp)}, RSS ${pass(rss)}`,
        ];
      }),
    ),
  );
  for (const r of runs) for (const w of extraOf(r).warnings) log(`  ${r.input}: warning: ${w.length > 300 ? `${w.slice(0, 300)}...` : w}`);
  const met = runs.every((r) => verdict(r).every(Boolean));
  log(`key-mixed inputs, all targets: ${pass(met)}`);
  return runs;
}

/** Rows of a CSV with a header line. */
async function countLines(path: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>)
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
  return lines - 1;
}

async function allRuns(big: Input, small: Input, mixed: Run[]): Promise<void> {
  const spilling: Run[] = [];
  const stripesBig = await measure(big, 'default');
  const roundRobinBig = await measure(big, 'round-robin');
  const stripesSmall = await measure(small, 'default');
  spilling.push(await measure(small, 'round-robin'), roundRobinBig, await measure(small, 'spread'), await measure(big, 'spread'));
  const first = (r: Run) => (r.stats.extra as { firstWriteS: number }).firstWriteS;
  const rows = [stripesBig, roundRobinBig, stripesSmall].map((r) => [
    r.order === 'default' ? `default (${extraOf(r).order})` : r.order,
    fmtInt(r.rows),
    first(r).toFixed(2),
    r.stats.seconds.toFixed(1),
    fmtInt(r.rows / r.stats.seconds),
    r.stats.maxRssMB.toFixed(0),
    (r.tempPeakBytes / r.inputBytes).toFixed(2),
  ]);
  log('');
  log('key-sorted CSV:');
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
  const path = await writeResults('first-write-latest.json', {
    ...takenOn(cpus().length),
    rows: ROWS,
    smallRows: SMALL_ROWS,
    mixedRows: MIXED_ROWS,
    runs: [...mixed, stripesBig, roundRobinBig, stripesSmall, ...spilling],
  });
  log(`written ${path}`);
}

try {
  dir = await harness.makeTempDir('ddb-spread-first-write-');
  harness.cleanupOnSignals();
  await harness.compileChildren(['childStats.ts', 'runFirstWrite.ts']);
  log(
    `first-write bench: ${MIXED ? `${fmtInt(MIXED_ROWS)} key-mixed rows${MIXED_ONLY ? '' : ', '}` : ''}${MIXED_ONLY ? '' : `${fmtInt(ROWS)} and ${fmtInt(SMALL_ROWS)} key-sorted rows`}, ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const mixed = MIXED ? await mixedRuns() : [];
  if (MIXED_ONLY) {
    const path = await writeResults('first-write-mixed-latest.json', { ...takenOn(cpus().length), mixedRows: MIXED_ROWS, runs: mixed });
    log(`written ${path}`);
  } else {
    const big = join(dir, 'big.csv');
    const small = join(dir, 'small.csv');
    await generateSkewedCsv(big, ROWS, 14);
    await generateSkewedCsv(small, SMALL_ROWS, 14);
    const inputs = [await fileInput('key-sorted', big, ROWS), await fileInput('key-sorted', small, SMALL_ROWS)] as const;
    if (SPILL_ONLY) await spillRuns(...inputs);
    else await allRuns(...inputs, mixed);
  }
} catch (error) {
  process.stderr.write(`first-write bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await harness.cleanup();
}
