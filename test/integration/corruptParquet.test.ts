/**
 * One flipped bit in a Parquet data page header sent hyparquet into an endless loop on
 * the load's thread: 100% CPU forever, SIGTERM ignored. Decoded in a worker now, the file ends the load
 * with an error naming it (the rows before it are written and counted), and a signal always stops it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runProcess } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { hangingParquet } from '../support/formatFixtures.js';
import { useLocalAws } from '../support/localAws.js';

const aws = useLocalAws({ name: 'corruptparquet', processCredentials: true });
const { endpoint, client, dir, newTable } = aws;
const { good, corrupt, rows } = hangingParquet();
const cli = (args: string[], env: NodeJS.ProcessEnv = {}, kill?: Parameters<typeof runProcess>[2]['kill']) =>
  runProcess(process.execPath, [BIN, ...args], { cwd: dir(), env: { ...localEnv(endpoint), ...env }, timeoutMs: 60_000, ...(kill ? { kill } : {}) });

describe('a corrupt Parquet page', () => {
  it('the intact file loads every row (the fixture is the corrupt one, not a bad writer)', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = join(dir(), 'good.parquet');
    await writeFile(input, good);
    const run = await cli(['load', input, '--table', table, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect((await scanAll(client(), table)).length).toBe(rows);
  });

  it('ends the load with an error naming the file, after the rows before it are counted (full batches written)', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const before = join(dir(), 'a-before.csv');
    await writeFile(before, `pk,v\n${Array.from({ length: 110 }, (_, i) => `csv${i},${i}`).join('\n')}\n`);
    const input = join(dir(), 'b-corrupt.parquet');
    await writeFile(input, corrupt);
    const started = Date.now();
    const run = await cli(['load', before, input, '--table', table, '--json', '--order', 'input'], { DDB_SPREAD_TEST_PARQUET_STALL_MS: '2000' });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(run.code, run.stderr).toBe(66);
    expect(run.stderr).toContain(`${input} is not a readable Parquet file`);
    const summary = JSON.parse(run.stdout) as { rowsRead: number; written: number; complete: boolean; error?: { code: string } };
    // Counted: read, and in input order the full batches written (a failed load sends no partial batch); never complete.
    expect(summary).toMatchObject({ rowsRead: 110, complete: false, error: { code: 'INPUT_UNREADABLE' } });
    expect(summary.written).toBeGreaterThanOrEqual(100);
    expect((await scanAll(client(), table)).length).toBe(summary.written);
  });

  it('with the default bound too, the load ends with the error instead of spinning', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = join(dir(), 'corrupt-default.parquet');
    await writeFile(input, corrupt);
    const started = Date.now();
    const run = await cli(['load', input, '--table', table]);
    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(66);
    expect(run.stderr).toMatch(/corrupt-default\.parquet is not a readable Parquet file: decoding row group 0 made no progress/);
    expect(Date.now() - started).toBeLessThan(45_000);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('%s while the decoder spins stops the load at once', async (signal) => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = join(dir(), `spin-${signal}.parquet`);
    await writeFile(input, corrupt);
    // Long past the signal: only the signal can end this run. Sent once the load says it started (its
    // handlers are in place then), and a moment later, while the decoder spins.
    const child = spawn(process.execPath, [BIN, 'load', input, '--table', table, '--stop-timeout', '5'], {
      cwd: dir(),
      env: { ...localEnv(endpoint), DDB_SPREAD_TEST_PARQUET_STALL_MS: '600000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let sentAt = 0;
    child.stdout.resume();
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
      if (!sentAt && /ddb-spread: rate:/.test(stderr)) {
        sentAt = -1;
        setTimeout(() => {
          sentAt = Date.now();
          child.kill(signal);
        }, 1_500);
      }
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    const [code, killedBy] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    clearTimeout(killer);
    expect(sentAt, stderr).toBeGreaterThan(0);
    expect(killedBy, stderr).toBeNull();
    expect(code, stderr).toBe(signal === 'SIGTERM' ? 143 : 130);
    expect(Date.now() - sentAt).toBeLessThan(5_000 + 3_000);
  });
});
