/**
 * The start-up bench: CPU and wall time from a process's start to the point a user waits for, for
 *   (a) `ddb-spread --version`, (b) `ddb-spread load --help`, (c) the first BatchWriteItem of a small CSV
 *   load (into bench/instantSink.ts, which answers at once, so nothing but the client is measured) and
 *   (c4) the same load 4 times at once (as 4 --segment workers start): the last one's first write, and
 *   their CPU's median, (d) `ddb-spread estimate` of the same CSV, offline (--partition-key),
 * each against two baselines run in the same rounds: bare `node -e 0`, and `node -e "import('@aws-sdk/client-dynamodb')"`,
 * the floor no loader can go below. Start-up counts several times over when --segment workers start at
 * once on few cores: each pays it, and they share the cores. Prints figures; asserts nothing.
 *
 *   npx tsx bench/startup.ts [--repeats 7] [--bin ../other/bin/ddb-spread.js]
 *   npm run bench -- --startup-only
 *
 * --bin adds another build to compare (its dist/ built), e.g. the main branch's, run in the same rounds.
 * Each figure is the median of the repeats, after one unmeasured round that warms the file cache (and,
 * on Node >= 22.1, the compile cache bin/ddb-spread.js enables). Times come from the child itself
 * (`--import` of a small module): CPU is process.cpuUsage() (every thread, start-up included), wall is
 * performance.now(), both from the process's start to the first write's request or to its exit. Results
 * also go to bench/results/startup-latest.json.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from './harness.js';
import { startInstantSink } from './instantSink.js';
import { median, table, takenOn, writeResults } from './report.js';

const { values: flags } = parseArgs({
  options: {
    repeats: { type: 'string', default: '7' },
    bin: { type: 'string', multiple: true, default: [] },
    rows: { type: 'string', default: '200' },
  },
  strict: true,
});
const REPEATS = Number(flags.repeats);
const ROWS = Number(flags.rows);
if (!Number.isInteger(REPEATS) || REPEATS < 1) throw new Error(`--repeats must be an integer >= 1, got ${flags.repeats}`);
if (!Number.isInteger(ROWS) || ROWS < 1) throw new Error(`--rows must be an integer >= 1, got ${flags.rows}`);
const BINS = [join(repoRoot, 'bin/ddb-spread.js'), ...flags.bin.map((b) => resolve(b))];

/**
 * Preloaded into every child (`node --import`): the CPU and wall time since the process's start at its
 * first BatchWriteItem request (seen on node:http's diagnostics channel, as the request starts) and at its
 * exit, written to $STARTUP_STATS. The CLI runs unchanged.
 */
const STATS = `data:text/javascript,${encodeURIComponent(
  [
    "import { writeFileSync } from 'node:fs';",
    "import { subscribe } from 'node:diagnostics_channel';",
    'const at = () => { const u = process.cpuUsage(); return { cpuS: (u.user + u.system) / 1e6, wallS: performance.now() / 1000 }; };',
    'let firstWrite;',
    "subscribe('http.client.request.start', ({ request }) => {",
    "  if (!firstWrite && String(request.getHeader('x-amz-target') ?? '').endsWith('.BatchWriteItem')) firstWrite = at();",
    '});',
    "process.on('exit', () => writeFileSync(process.env.STARTUP_STATS, JSON.stringify({ exit: at(), firstWrite })));",
  ].join('\n'),
)}`;

interface Point {
  cpuS: number;
  wallS: number;
}

interface Case {
  name: string;
  /** The arguments after `node --import <stats>`; BIN stands for the build's bin/ddb-spread.js. */
  args: string[];
  /** The point measured: the process's exit, or its first write. */
  until: 'exit' | 'firstWrite';
  /** A baseline: run once a round, not once a build. */
  baseline?: boolean;
  /**
   * Processes started at once (as --segment workers are), each with its own files (NTH in the arguments
   * is its number): the point is the last one's wall time and their CPU's median.
   */
  parallel?: number;
}

const BIN = '<bin>';
const NTH = '<nth>';

const dir = await mkdtemp(join(tmpdir(), 'ddb-spread-startup-'));
const csv = join(dir, 'small.csv');
await writeFile(
  csv,
  ['pk,sk,amount,qty', ...Array.from({ length: ROWS }, (_, i) => `cust-${i % 17},order-${i},${(i * 7) % 1000}.25,${i % 9}`)].join('\n') + '\n',
);
const sink = await startInstantSink();
const ENV = {
  ...process.env,
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

const CASES: Case[] = [
  { name: 'node -e 0', args: ['-e', '0'], until: 'exit', baseline: true },
  { name: 'node: import client-dynamodb', args: ['-e', "import('@aws-sdk/client-dynamodb')"], until: 'exit', baseline: true },
  { name: '(a) --version', args: [BIN, '--version'], until: 'exit' },
  { name: '(b) load --help', args: [BIN, 'load', '--help'], until: 'exit' },
  {
    name: `(c) load, first write (${ROWS} rows)`,
    args: [BIN, 'load', csv, '--table', 'bench', '--endpoint-url', sink.endpoint, '--types', 'amount:N,qty:N', '--json', '--rejects', join(dir, 'r.jsonl')],
    until: 'firstWrite',
  },
  {
    name: `(c4) 4 such loads at once, the last first write`,
    args: [
      BIN,
      'load',
      csv,
      '--table',
      'bench',
      '--endpoint-url',
      sink.endpoint,
      '--types',
      'amount:N,qty:N',
      '--json',
      '--rejects',
      join(dir, `r-${NTH}.jsonl`),
    ],
    until: 'firstWrite',
    parallel: 4,
  },
  {
    name: `(d) estimate, offline (${ROWS} rows)`,
    args: [BIN, 'estimate', csv, '--partition-key', 'pk:S', '--sort-key', 'sk:S', '--types', 'amount:N,qty:N', '--json'],
    until: 'exit',
  },
];

let runs = 0;

/** One case: its child, or its children started at once; undefined when one did not get to the point. */
async function runCase(c: Case, bin: string): Promise<Point | undefined> {
  if (c.parallel === undefined) return runOnce(c, bin, 0);
  const points = await Promise.all(Array.from({ length: c.parallel }, (_, nth) => runOnce(c, bin, nth)));
  if (points.some((p) => p === undefined)) return undefined;
  const all = points as Point[];
  return { cpuS: median(all.map((p) => p.cpuS)), wallS: Math.max(...all.map((p) => p.wallS)) };
}

/** One child; resolves with its point, or undefined (and the reason printed) when it did not get there. */
function runOnce(c: Case, bin: string, nth: number): Promise<Point | undefined> {
  const statsPath = join(dir, `stats-${runs++}.json`);
  const args = ['--import', STATS, ...c.args.map((a) => (a === BIN ? bin : a.replace(NTH, String(nth))))];
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...ENV, STARTUP_STATS: statsPath }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      void readFile(statsPath, 'utf8')
        .then((text) => JSON.parse(text) as { exit: Point; firstWrite?: Point })
        .then((stats) => {
          const point = c.until === 'exit' ? stats.exit : stats.firstWrite;
          if (code !== 0 || point === undefined) process.stderr.write(`${c.name} (${bin}): exit ${code}, no ${c.until}\n${stderr}`);
          resolveRun(code === 0 ? point : undefined);
        })
        .catch((error: Error) => {
          process.stderr.write(`${c.name} (${bin}): ${error.message}\n${stderr}`);
          resolveRun(undefined);
        });
    });
  });
}

/** Every point of every case and build, by `case|bin`. */
const points = new Map<string, Point[]>();
const keyOf = (c: Case, bin: string) => `${c.name}|${c.baseline ? '' : bin}`;
const started = performance.now();
for (let round = 0; round <= REPEATS; round++) {
  for (const c of CASES) {
    for (const bin of c.baseline ? [BINS[0]!] : BINS) {
      const point = await runCase(c, bin);
      // Round 0 warms the file cache and the compile cache: not counted.
      if (round === 0 || point === undefined) continue;
      const list = points.get(keyOf(c, bin)) ?? [];
      list.push(point);
      points.set(keyOf(c, bin), list);
    }
  }
}
await sink.close();
await rm(dir, { recursive: true, force: true });

const medianOf = (c: Case, bin: string, field: keyof Point): number => {
  const list = points.get(keyOf(c, bin)) ?? [];
  return list.length === 0 ? Number.NaN : median(list.map((p) => p[field]));
};
const [bare, floor] = CASES;
const ms = (s: number) => (Number.isNaN(s) ? '-' : Math.round(s * 1000).toLocaleString('en-US'));
const ratio = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) ? '-' : `${(a / b).toFixed(2)}x`);

const results: Record<string, unknown>[] = [];
const out: string[] = [];
out.push(
  `Start-up, ${REPEATS} rounds (medians), Node ${process.version}, load average ${loadavg()[0]!.toFixed(1)} at the end, ${Math.round((performance.now() - started) / 1000)} s`,
);
for (const bin of BINS) {
  const rows = CASES.filter((c) => !c.baseline || bin === BINS[0]).map((c) => {
    const cpu = medianOf(c, bin, 'cpuS');
    const wall = medianOf(c, bin, 'wallS');
    const bareCpu = medianOf(bare!, BINS[0]!, 'cpuS');
    const floorCpu = medianOf(floor!, BINS[0]!, 'cpuS');
    const bareWall = medianOf(bare!, BINS[0]!, 'wallS');
    const floorWall = medianOf(floor!, BINS[0]!, 'wallS');
    results.push({ bin, case: c.name, until: c.until, cpuS: cpu, wallS: wall, runs: points.get(keyOf(c, bin))?.length ?? 0 });
    return [c.name, ms(cpu), ms(wall), ratio(cpu, bareCpu), ratio(cpu, floorCpu), ratio(wall, bareWall), ratio(wall, floorWall)];
  });
  out.push('', `${bin}:`, table(['case', 'CPU ms', 'wall ms', 'CPU / node', 'CPU / floor', 'wall / node', 'wall / floor'], rows));
}
if (BINS.length > 1) {
  const rows = CASES.filter((c) => !c.baseline).map((c) => [
    c.name,
    ...BINS.slice(1).flatMap((other) => [
      ratio(medianOf(c, BINS[0]!, 'cpuS'), medianOf(c, other, 'cpuS')),
      ratio(medianOf(c, BINS[0]!, 'wallS'), medianOf(c, other, 'wallS')),
    ]),
  ]);
  out.push('', 'this build against the others:', table(['case', ...BINS.slice(1).flatMap((b) => [`CPU vs ${b}`, 'wall'])], rows));
}
process.stdout.write(`${out.join('\n')}\n`);
const path = await writeResults('startup-latest.json', { ...takenOn(cpus().length), repeats: REPEATS, rows: ROWS, results });
process.stdout.write(`written ${path}\n`);
