/**
 * What the benches share in reporting: the statistics and table layout of their printed figures, where
 * their own time went, and the results files under bench/results/ with the machine they were taken on.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { SIMULATOR_VERSION } from '../tools/dynamodbLocal.js';
import type { ChildStats } from './childStats.js';
import { benchDir, gitCommit } from './harness.js';

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
export const cpuOf = (m: ChildStats): number => m.cpuUserS + m.cpuSysS;
export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
export const pass = (ok: boolean): string => (ok ? 'ok' : 'MISSED');

/** A plain-text table: the first column left-aligned, the others right-aligned (numbers). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Seconds spent in each named phase (summed over repeats), for the bench's own time line. */
export function phaseTimer(): { phases: Record<string, number>; phase<T>(name: string, fn: () => Promise<T>): Promise<T> } {
  const phases: Record<string, number> = {};
  return {
    phases,
    async phase(name, fn) {
      const t0 = performance.now();
      try {
        return await fn();
      } finally {
        phases[name] = (phases[name] ?? 0) + (performance.now() - t0) / 1000;
      }
    },
  };
}

/** The machine and code the figures were taken on, first in every results file of the child-process benches. */
export function takenOn(cores: number) {
  return {
    date: new Date().toISOString(),
    node: process.version,
    cores,
    cpuModel: cpus()[0]?.model,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    dynamodbLocal: `amplify-dynamodb-simulator@${SIMULATOR_VERSION}`,
    gitCommit: gitCommit(),
  };
}

/** Writes bench/results/<name> (JSON); resolves with its path. */
export async function writeResults(name: string, json: unknown): Promise<string> {
  const dir = join(benchDir, 'results');
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await writeFile(path, `${JSON.stringify(json, null, 2)}\n`);
  return path;
}
