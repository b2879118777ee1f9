import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, type ProcessRun } from './cli.js';
import { localEnv } from './env.js';
import type { LocalAws } from './localAws.js';
import { startPartitionProxy, type PartitionProxy } from './partitionProxy.js';

/**
 * Support for the attacks on one --total-wcu shared by --segment workers (test/cli/rateShareAttack*): real
 * CLI processes that a test can pause (SIGSTOP/SIGCONT) or kill, a clock put ahead or behind in one of them,
 * and the table's own rate as the partition proxy accepted it, second by second.
 */

/** A model that never throttles, in one partition: the proxy only counts what the table accepted each second. */
export const COUNTING_MODEL = { tableWcu: 100_000, partitions: 1, partitionMaxWcu: 100_000 };

/** A CSV part of `rows` one-unit rows whose keys are its own. */
export function partCsv(name: string, rows: number): string {
  const lines = ['pk,sk,v'];
  for (let i = 0; i < rows; i++) lines.push(`${name}${i % 50},${i},${name}:${i}`);
  return `${lines.join('\n')}\n`;
}

export interface Worker {
  child: ChildProcess;
  done: Promise<ProcessRun>;
}

/** `ddb-spread ...args` as a child process the test can signal; killed with SIGKILL after `timeoutMs`. */
export function startWorker(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Worker {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const guard = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
  const done = new Promise<ProcessRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

/**
 * A module for `node --import` that puts the process's wall clock `skewMs` ahead (or behind, negative):
 * Date.now() and new Date() only; the monotonic clock (performance.now) is untouched, as on a machine whose
 * clock is wrong.
 */
export async function clockSkewModule(dir: string, skewMs: number): Promise<string> {
  const path = join(dir, `clock${skewMs}.mjs`);
  await writeFile(
    path,
    `const Real = Date;
const skew = ${skewMs};
class Skewed extends Real {
  constructor(...args) { if (args.length === 0) super(Real.now() + skew); else super(...args); }
  static now() { return Real.now() + skew; }
}
globalThis.Date = Skewed;
`,
  );
  return pathToFileURL(path).href;
}

/** The write units the table accepted in each second since the proxy started. */
export function tableSeconds(proxy: PartitionProxy, table: string): number[] {
  const stats = proxy.model(table)?.stats();
  return (stats?.perSecond ?? []).map((s) => s.acceptedWcu.reduce((n, w) => n + w, 0));
}

/** The highest average rate over any `span` whole seconds in a row (the whole run when shorter), and where it starts. */
export function peakWindow(seconds: readonly number[], span = 10): { wcu: number; from: number } {
  const width = Math.min(span, seconds.length);
  let peak = { wcu: 0, from: 0 };
  for (let from = 0; from + width <= seconds.length; from++) {
    const sum = seconds.slice(from, from + width).reduce((n, w) => n + w, 0);
    if (sum / width > peak.wcu) peak = { wcu: sum / width, from };
  }
  return peak;
}

/**
 * A load of `rows` (part name: row count) divided by part between `workers` workers sharing --total-wcu
 * `budget`, through a counting proxy: `worker(i, skewMs)` starts worker i (its clock `skewMs` off).
 * `silentMs`: how long a peer may be unheard before its part is taken (30 s otherwise, as status waits): a
 * test of what happens past it shortens it, so as not to wait 30 s (DDB_SPREAD_TEST_SILENT_MS).
 */
export async function budgetLoad(
  aws: LocalAws,
  name: string,
  rows: Record<string, number>,
  budget: number,
  workers = Object.keys(rows).length,
  silentMs?: number,
) {
  const folder = join(aws.dir(), name);
  await mkdir(folder);
  for (const [part, n] of Object.entries(rows)) await writeFile(join(folder, `${part}.csv`), partCsv(part, n));
  const table = await aws.newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
  const proxy = aws.closeAfterAll(await startPartitionProxy(aws.endpoint, { model: COUNTING_MODEL, partitionKeyName: 'pk' }));
  const listing = join(aws.dir(), `${name}.listing.json`);
  const args = (i: number) =>
    ['load', folder, '--table', table, '--types', 'sk:N', '--segment', `${i}/${workers}`, '--listing', listing, '--parts-disjoint'].concat([
      '--total-wcu',
      String(budget),
      '--json',
    ]);
  const worker = async (i: number, skewMs = 0) =>
    startWorker(args(i), {
      cwd: aws.dir(),
      env: {
        ...localEnv(proxy.url),
        ...(skewMs !== 0 ? { NODE_OPTIONS: `--import=${await clockSkewModule(aws.dir(), skewMs)}` } : {}),
        ...(silentMs !== undefined ? { DDB_SPREAD_TEST_SILENT_MS: String(silentMs) } : {}),
      },
    });
  /** Worker i's published target, undefined before it has one. */
  const targetOf = async (i: number) => {
    const text = await readFile(`${listing}.worker-${i}-of-${workers}.json`, 'utf8').catch(() => '{}');
    return (JSON.parse(text) as { targetWcu?: number }).targetWcu;
  };
  return { table, proxy, listing, worker, targetOf };
}

/** Waits until `what` holds, checked every 100 ms; false when `ms` passed first. */
export async function until(what: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
