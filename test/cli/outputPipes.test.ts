/**
 * The load's outcome does not depend on who reads its output: a reader that closes
 * stdout or stderr early (`| head -1`, `| true`) must not stop the load, change its exit code or print an
 * EPIPE stack trace. And under --json an expired --stop-timeout still prints the summary.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, BIN, runCli } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { startFaultProxy } from '../support/faultProxy.js';
import { useLocalAws } from '../support/localAws.js';

beforeAll(assertCliBuilt);
const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'pipes', keys: { partitionKey: { name: 'pk', type: 'S' } } });

interface ClosedRun {
  code: number | null;
  /** What the child wrote on the streams we kept open. */
  stderr: string;
}

/**
 * Spawns the CLI with stdout (and stderr, when `closeStderr`) piped to a reader that is gone before the
 * child writes anything: the read ends are destroyed right after spawn, long before Node has started.
 */
function runWithClosedReaders(args: string[], closeStderr: boolean): Promise<ClosedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir(), env: localEnv(endpoint), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    if (closeStderr) child.stderr.destroy();
    else child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stderr });
    });
  });
}

async function csv(name: string, rows: number, badEvery = 0): Promise<string> {
  const lines = ['pk,qty'];
  for (let i = 0; i < rows; i++) lines.push(`k${i},${badEvery > 0 && i % badEvery === 0 ? 'x' : i}`);
  const path = join(dir(), name);
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

describe('closed output pipes', () => {
  it('--help into a closed pipe exits 0 without an EPIPE stack trace', async () => {
    const run = await runWithClosedReaders(['load', '--help'], false);
    expect(run.stderr).not.toMatch(/EPIPE|Unhandled 'error' event|^\s+at /m);
    expect(run.code).toBe(0);
  });

  it('a load with --json into a closed stdout finishes every row and exits with its own code', async () => {
    const table = await newTable();
    const input = await csv('closed-stdout.csv', 400, 50);
    const rejects = join(dir(), 'closed-stdout.rejects.jsonl');
    const run = await runWithClosedReaders(['load', input, '--table', table, '--types', 'qty:N', '--json', '--rejects', rejects, '--log-interval', '1'], false);
    expect(run.stderr).not.toMatch(/EPIPE|Unhandled 'error' event/);
    expect(run.code).toBe(2);
    expect(await scanAll(client(), table)).toHaveLength(392);
    expect(readFileSync(rejects, 'utf8').trim().split('\n')).toHaveLength(8);
  });

  it('a load with both stdout and stderr closed writes every row, the reject file and the checkpoint, and exits 2', async () => {
    const table = await newTable();
    const input = await csv('closed-both.csv', 600, 20);
    const rejects = join(dir(), 'closed-both.rejects.jsonl');
    const checkpoint = join(dir(), 'closed-both.checkpoint.json');
    const run = await runWithClosedReaders(
      ['load', input, '--table', table, '--types', 'qty:N', '--rejects', rejects, '--checkpoint', checkpoint, '--verbose', '--log-interval', '1'],
      true,
    );
    expect(run.code).toBe(2);
    expect(await scanAll(client(), table)).toHaveLength(570);
    expect(readFileSync(rejects, 'utf8').trim().split('\n')).toHaveLength(30);
    expect(existsSync(checkpoint)).toBe(true);
    expect((JSON.parse(readFileSync(checkpoint, 'utf8')) as { status: string }).status).toBe('complete');
  });
});

describe('--json and an expired --stop-timeout', () => {
  it('prints the JSON summary with the counters at the stop; rows in flight count as not written', async () => {
    const table = await newTable();
    const input = await csv('stop-timeout.csv', 200);
    // The first batch is written; every later one is held for a minute (longer than the whole test).
    const proxy = closeAfterAll(
      await startFaultProxy(endpoint, (index) =>
        index === 0 ? { kind: 'forward' } : { kind: 'error', status: 500, type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', delayMs: 60_000 },
      ),
    );
    const env = { ...localEnv(proxy.url) };
    // One batch at a time: the second call arrives only once the first batch is written and counted.
    const run = await runCli(
      ['load', input, '--table', table, '--json', '--order', 'input', '--concurrency', '1', '--stop-timeout', '1', '--request-timeout', '600000'],
      {
        cwd: dir(),
        env,
        kill: { signal: 'SIGINT', when: () => proxy.calls.length >= 2 },
      },
    );
    expect(run.code).toBe(130);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]!) as {
      rowsRead: number;
      written: number;
      superseded: number;
      rejected: number;
      complete: boolean;
      error?: { code: string };
    };
    expect(summary.error?.code).toBe('ABORTED');
    expect(summary.written).toBe(25);
    expect(summary.rowsRead).toBeGreaterThan(summary.written);
    expect(summary.complete).toBe(false);
    expect(await scanAll(client(), table)).toHaveLength(25);
  });
});
