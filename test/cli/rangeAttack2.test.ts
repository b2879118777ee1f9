/**
 * Second attack on one file divided by byte range between --segment workers (--parts-disjoint): a
 * SIGTERM while a worker waits for the scan of the segment before its own (exit 143, nothing written,
 * the checkpoint resumable: run again with the other worker, every row once); `verify` after a ranged
 * load, each worker's share (--segment with the listing) and the whole file, must say the table matches;
 * `status` of a division with one worker not started must not say complete; the last worker alone, whose
 * predecessors never come, scans their segments itself and they agree with it later; a worker whose
 * range is empty, run again with its checkpoint, writes nothing more. Real processes against
 * DynamoDB Local; the table is read back.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli, type ProcessRun, type RunOptions } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack2' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '100', DDB_SPREAD_TEST_RANGE_WAIT_MS: '30000' });
const run = (args: string[], more: Partial<RunOptions> = {}): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 90_000, ...more });

/** A key-sorted CSV of `rows` rows, each primary key once, some notes quoted across lines. */
function csv(rows: number): string {
  const lines = ['pk,sk,note'];
  for (let i = 0; i < rows; i++) {
    const note = i % 9 === 0 ? `"q,${i}\nline two"` : `note ${i} ${'n'.repeat(i % 70)}`;
    lines.push(`p${String(Math.floor(i / 5)).padStart(6, '0')},${i},${note}`);
  }
  return `${lines.join('\n')}\n`;
}

async function bigCsv(name: string, rows: number): Promise<string> {
  const path = join(dir(), name);
  await writeFile(path, csv(rows));
  expect((await stat(path)).size).toBeGreaterThan(2 * 64 * 1024);
  return path;
}

function shareArgs(listing: string, i: number, n: number): string[] {
  return ['--segment', `${i}/${n}`, '--listing', join(dir(), listing), '--parts-disjoint'];
}

function loadArgs(path: string, table: string, listing: string, i: number, n: number): string[] {
  const base = join(dir(), `${listing}-${i}`);
  return [
    'load',
    path,
    '--table',
    table,
    '--types',
    'sk:N',
    ...shareArgs(listing, i, n),
    '--rejects',
    `${base}.rejects.jsonl`,
    '--checkpoint',
    `${base}.checkpoint.json`,
    '--json',
  ];
}

describe('a byte-range division attacked again', () => {
  it('SIGTERM while a worker waits for the scan before its own: exit 143, nothing written; then every row once', async () => {
    const rows = 6000;
    const path = await bigCsv('term.csv', rows);
    const table = await newTable(KEYS);
    // Worker 1 alone: it waits for worker 0's pass of segment 0 (30 s here) and is stopped while it waits.
    const stopped = await run(loadArgs(path, table, 'term', 1, 2), { kill: { signal: 'SIGTERM', afterMs: 3000 } });
    expect(stopped.code, stopped.stderr).toBe(EXIT.SIGTERM);
    expect(stopped.stderr).not.toMatch(/bug|internal error/i);
    expect(await scanAll(client(), table)).toHaveLength(0);
    const status = await run(['status', join(dir(), 'term'), '--json']);
    expect(JSON.parse(status.stdout)).not.toMatchObject({ complete: true });
    const first = await run(loadArgs(path, table, 'term', 0, 2));
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const second = await run(loadArgs(path, table, 'term', 1, 2));
    expect(second.code, second.stderr).toBe(EXIT.OK);
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(rows);
    expect(items.find((i) => i['sk']!.N === '4500')!['note']!.S).toBe('q,4500\nline two');
    const done = await run(['status', join(dir(), 'term'), '--json']);
    expect(done.code, done.stdout + done.stderr).toBe(EXIT.OK);
    expect(JSON.parse(done.stdout)).toMatchObject({ complete: true, rows, written: rows });
  });

  it('the last worker alone, its predecessors never come: it scans their segments itself; they come later and agree, every row once', async () => {
    const rows = 9000;
    const path = await bigCsv('alone.csv', rows);
    expect((await stat(path)).size).toBeGreaterThan(3 * 64 * 1024);
    const table = await newTable(KEYS);
    const alone = await run(loadArgs(path, table, 'alone', 2, 3), { env: { ...env(), DDB_SPREAD_TEST_RANGE_WAIT_MS: '300' } });
    expect(alone.code, alone.stderr).toBe(EXIT.OK);
    expect(alone.stderr).toMatch(/no worker has written where the records of segment 1 of 3/);
    expect(alone.stderr).toMatch(/no worker has written where the records of segment 2 of 3/);
    const lastRange = (await scanAll(client(), table)).length;
    expect(lastRange).toBeGreaterThan(0);
    expect(lastRange).toBeLessThan(rows);
    // The others, later and at once: they find the passes written for them and cut where the last worker did.
    const others = await Promise.all([0, 1].map((i) => run(loadArgs(path, table, 'alone', i, 3))));
    for (const r of others) {
      expect(r.code, r.stderr).toBe(EXIT.OK);
      expect(r.stderr).not.toMatch(/no worker has written/);
    }
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(rows);
    const results = [alone, ...others].map((r) => JSON.parse(r.stdout) as { rowsRead: number; written: number });
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(rows);
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(rows);
    const done = await run(['status', join(dir(), 'alone'), '--json']);
    expect(JSON.parse(done.stdout)).toMatchObject({ complete: true, rows, written: rows });
  });

  it('a worker whose range is empty (a record longer than its segment), run again with its checkpoint: finishes at once, nothing more', async () => {
    const rows = 3000;
    const lines = ['pk,sk,note'];
    for (let i = 0; i < rows; i++)
      lines.push(`p${String(Math.floor(i / 5)).padStart(6, '0')},${i},${i === 1200 ? `"${'long, with\nline breaks\n'.repeat(12000)}"` : `note ${i}`}`);
    const path = join(dir(), 'empty.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    const table = await newTable(KEYS);
    const firstRuns = await Promise.all([0, 1, 2, 3].map((i) => run(loadArgs(path, table, 'empty', i, 4))));
    for (const r of firstRuns) expect(r.code, r.stderr).toBe(EXIT.OK);
    const parts = firstRuns.map((r) => (JSON.parse(r.stdout) as { division: { parts: number } }).division.parts);
    expect(parts).toContain(0);
    expect(await scanAll(client(), table)).toHaveLength(rows);
    const again = await Promise.all([0, 1, 2, 3].map((i) => run(loadArgs(path, table, 'empty', i, 4))));
    for (const r of again) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect(await scanAll(client(), table)).toHaveLength(rows);
    const status = await run(['status', join(dir(), 'empty'), '--json']);
    expect(status.code, status.stdout + status.stderr).toBe(EXIT.OK);
    expect(JSON.parse(status.stdout)).toMatchObject({ complete: true, rows, written: rows });
  });

  it('status with one worker not started is not complete; verify after the load matches, per worker and whole', async () => {
    const rows = 6000;
    const path = await bigCsv('verify.csv', rows);
    const table = await newTable(KEYS);
    const first = await run(loadArgs(path, table, 'ver', 0, 2));
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const partial = await run(['status', join(dir(), 'ver'), '--json']);
    expect(JSON.parse(partial.stdout)).not.toMatchObject({ complete: true });
    const second = await run(loadArgs(path, table, 'ver', 1, 2));
    expect(second.code, second.stderr).toBe(EXIT.OK);
    expect(await scanAll(client(), table)).toHaveLength(rows);
    for (const i of [0, 1]) {
      const share = await run([
        'verify',
        path,
        '--table',
        table,
        '--types',
        'sk:N',
        ...shareArgs('ver', i, 2),
        '--rejects',
        join(dir(), `ver-${i}.rejects.jsonl`),
        '--json',
      ]);
      expect(share.code, `worker ${i}: ${share.stdout}${share.stderr}`).toBe(EXIT.OK);
    }
    const whole = await run(['verify', path, '--table', table, '--types', 'sk:N', '--json']);
    expect(whole.code, whole.stdout + whole.stderr).toBe(EXIT.OK);
  });
});
