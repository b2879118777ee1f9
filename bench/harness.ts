/**
 * Child-process and DynamoDB Local machinery for bench/bench.ts and bench/order.ts: child scripts
 * transpiled once to plain JS and run with plain `node`, so a child's peak RSS carries no tsx loader; CPU
 * of DynamoDB Local and of everything else read from /proc (Linux) around each child; one fresh table per
 * load, dropped afterwards. The children run a copy of dist/ taken at start-up. For the benches that call
 * load() in-process (rate, noise, estimate), withDynamoDBLocal.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { startDynamoDBLocal, type RunningDynamoDBLocal } from '../tools/dynamodbLocal.js';
import type { ChildStats } from './childStats.js';
import { adminClient, createBenchTable, dropBenchTable, itemCount } from './tables.js';

export const benchDir = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(benchDir, '..');

/** What runChild adds to a child's own figures, over the child's lifetime, from /proc (Linux). */
export interface Observed extends ChildStats {
  /** DynamoDB Local's CPU seconds. */
  serverCpuS?: number;
  /** CPU seconds the machine spent on anything else (other processes): high means noisy figures. */
  otherCpuS?: number;
  /** Wall time of the whole child process, start-up included. */
  childWallS: number;
}

export class Harness {
  readonly #log: (msg: string) => void;
  readonly #timeoutMs: number;
  readonly #children = new Set<ChildProcess>();
  readonly #tables = new Set<string>();
  readonly #tempDirs: string[] = [];
  #childDir: string | undefined;
  #local: RunningDynamoDBLocal | undefined;
  #admin: DynamoDBClient | undefined;
  #javaPid: number | undefined;
  #tableSeq = 0;
  #cleaning: Promise<void> | undefined;

  readonly #nodeFlags: string[];
  readonly #tablePrefix: string;

  /** nodeFlags: given to `node` before each child script (none by default); tablePrefix: names the bench's tables. */
  constructor(options: { log: (msg: string) => void; childTimeoutMs: number; nodeFlags?: string[]; tablePrefix: string }) {
    this.#log = options.log;
    this.#timeoutMs = options.childTimeoutMs;
    this.#nodeFlags = options.nodeFlags ?? [];
    this.#tablePrefix = options.tablePrefix;
  }

  get endpoint(): string {
    if (!this.#local) throw new Error('DynamoDB Local is not running');
    return this.#local.endpoint;
  }

  /**
   * Transpiles the child scripts (named relative to bench/) into bench/.children-<pid>/, next to a copy of
   * dist/ taken now: a bench of half an hour must not pick up a rebuild made meanwhile (npm test builds).
   */
  async compileChildren(sources: string[]): Promise<void> {
    // Folders left by a bench that was killed outright (SIGKILL gives no chance to clean up).
    for (const name of readdirSync(benchDir)) {
      const pid = /^\.children-(\d+)$/.exec(name)?.[1];
      if (pid && !processAlive(Number(pid))) await rm(join(benchDir, name), { recursive: true, force: true });
    }
    this.#childDir = join(benchDir, `.children-${process.pid}`);
    await mkdir(this.#childDir, { recursive: true });
    await cp(join(repoRoot, 'dist'), join(this.#childDir, 'dist'), { recursive: true });
    for (const file of sources) {
      const source = readFileSync(join(benchDir, file), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
        fileName: file,
      });
      // Point the imports of the built library at the copy; bare imports still resolve from the repo's node_modules.
      await writeFile(join(this.#childDir, file.replace(/\.ts$/, '.js')), outputText.replaceAll("'../dist/", "'./dist/"));
    }
  }

  /** Runs a child script; resolves with its JSON line plus what /proc saw while it ran. */
  async runChild(script: string, args: string[]): Promise<Observed> {
    const server0 = processCpuSeconds(this.#javaPid);
    const busy0 = machineBusySeconds();
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const stats: Observed = { ...(await this.#spawn(script, args)), childWallS: 0 };
    stats.childWallS = (performance.now() - t0) / 1000;
    const self = process.cpuUsage(self0);
    const server1 = processCpuSeconds(this.#javaPid);
    const busy1 = machineBusySeconds();
    if (server0 !== undefined && server1 !== undefined) stats.serverCpuS = server1 - server0;
    if (busy0 !== undefined && busy1 !== undefined) {
      stats.otherCpuS = Math.max(0, busy1 - busy0 - stats.processCpuS - (stats.serverCpuS ?? 0) - (self.user + self.system) / 1e6);
    }
    return stats;
  }

  #spawn(script: string, args: string[]): Promise<ChildStats> {
    if (!this.#childDir) throw new Error('compileChildren first');
    return new Promise((resolveRun, reject) => {
      const child = spawn(process.execPath, [...this.#nodeFlags, join(this.#childDir!, script.replace(/\.ts$/, '.js')), ...args], {
        cwd: repoRoot,
        env: { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), this.#timeoutMs);
      this.#children.add(child);
      child.once('error', reject);
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        this.#children.delete(child);
        const last = stdout.trim().split('\n').pop() ?? '';
        if (code !== 0) {
          reject(new Error(`${script} ${args.join(' ')} exited with ${signal ?? code}:\n${stderr.slice(-4000)}${stdout.slice(-2000)}`));
          return;
        }
        try {
          resolveRun(JSON.parse(last) as ChildStats);
        } catch {
          reject(new Error(`${script} printed no JSON result line; stdout:\n${stdout.slice(-2000)}\nstderr:\n${stderr.slice(-2000)}`));
        }
      });
    });
  }

  async startLocal(): Promise<void> {
    this.#local = await startDynamoDBLocal({ log: this.#log });
    this.#javaPid = findJavaPid(this.#local.port);
    this.#admin = adminClient(this.#local.endpoint);
  }

  /** A fresh on-demand table of the bench's shape (tables.ts), ACTIVE; dropped by cleanup() if still there. */
  async createTable(): Promise<string> {
    const name = `${this.#tablePrefix}-${process.pid}-${++this.#tableSeq}`;
    this.#tables.add(name);
    await createBenchTable(this.#admin!, name);
    return name;
  }

  async itemCount(table: string): Promise<number | undefined> {
    return itemCount(this.#admin!, table);
  }

  async dropTable(name: string): Promise<void> {
    this.#tables.delete(name);
    if (this.#admin) await dropBenchTable(this.#admin, name);
  }

  /** A fresh folder under the system's temp dir for the bench's inputs and files, removed by cleanup(). */
  async makeTempDir(prefix: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    this.#tempDirs.push(dir);
    return dir;
  }

  /** Cleans up on SIGINT and SIGTERM, then exits 130: a bench interrupted leaves no JVM, tables or files behind. */
  cleanupOnSignals(): void {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        this.#log(`${sig}: cleaning up`);
        void this.cleanup().finally(() => process.exit(130));
      });
    }
  }

  /** Kills running children, drops tables, stops DynamoDB Local, removes the transpiled children and the temp folders. */
  cleanup(): Promise<void> {
    this.#cleaning ??= (async () => {
      for (const child of this.#children) child.kill('SIGKILL');
      for (const name of [...this.#tables]) await this.dropTable(name);
      this.#admin?.destroy();
      if (this.#local) await this.#local.stop().catch(() => undefined);
      if (this.#childDir) await rm(this.#childDir, { recursive: true, force: true }).catch(() => undefined);
      for (const dir of this.#tempDirs) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    })();
    return this.#cleaning;
  }
}

/**
 * For the benches that call load() in-process: DynamoDB Local started, an admin client for tables.ts, and
 * the dummy credentials load() reads from the environment; Local stopped afterwards, whatever happens.
 */
export async function withDynamoDBLocal<T>(fn: (local: { endpoint: string; admin: DynamoDBClient }) => Promise<T>): Promise<T> {
  const local = await startDynamoDBLocal({ log: () => undefined });
  const admin = adminClient(local.endpoint);
  process.env['AWS_ACCESS_KEY_ID'] = 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'local';
  try {
    return await fn({ endpoint: local.endpoint, admin });
  } finally {
    admin.destroy();
    await local.stop();
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The java process listening on our port (read-only look at /proc; Linux only, else undefined). */
export function findJavaPid(port: number): number | undefined {
  try {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
        if (cmd.some((a) => a.endsWith('DynamoDBLocal.jar')) && cmd[cmd.indexOf('-port') + 1] === String(port)) return Number(name);
      } catch {
        /* process gone */
      }
    }
  } catch {
    /* no /proc */
  }
  return undefined;
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime, stime
  } catch {
    return undefined;
  }
}

/** Busy CPU seconds of the whole machine, all cores (first line of /proc/stat). */
export function machineBusySeconds(): number | undefined {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
    const n = ticks.map(Number);
    const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
    return (total - n[3]! - n[4]!) / CLK_TCK; // minus idle and iowait
  } catch {
    return undefined;
  }
}

/**
 * Samples the bytes of the files under `dir` every `everyMs` while a child runs (the orderer makes and
 * removes its temporary files itself); stop() returns the largest total seen. A sample, not a bound:
 * a peak shorter than the interval can be missed.
 */
export function watchDiskUse(dir: string, everyMs = 250): { stop(): Promise<number> } {
  let peak = 0;
  let sampling: Promise<void> | undefined;
  const sample = async () => {
    peak = Math.max(peak, await bytesUnder(dir));
  };
  const timer = setInterval(() => {
    sampling ??= sample().finally(() => (sampling = undefined));
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      return peak;
    },
  };
}

async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0; // removed meanwhile
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(path);
    else
      total += await stat(path).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}

export function gitCommit(): string | undefined {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha}+dirty-src` : sha;
  } catch {
    return undefined;
  }
}
