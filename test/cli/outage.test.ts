/**
 * An outage is not bad data, and a stopped load is never complete. The
 * endpoint goes down through the fault proxy in front of DynamoDB Local (its port closed, its
 * connections reset, or every call left unanswered) at a fixed call of the load, and comes back, or not.
 * The old code retried each batch --max-attempts times, then rejected its rows RETRIES_EXHAUSTED, marked
 * the checkpoint complete and exited 2: a rerun said "nothing to do" over a table missing those rows.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesDone } from '../support/checkpoint.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { startFaultProxy, type FaultProxy, type OutageKind } from '../support/faultProxy.js';
import { GENERATED_TYPES_FLAG, generatedItem, generatedRow, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const ROWS = 4000;

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'outage' });

interface Summary {
  rowsRead: number;
  written: number;
  superseded: number;
  rejected: number;
  otherSegments: number;
  notWritten: number;
  complete: boolean;
  rejectedByReason: Record<string, number>;
  error?: { code: string; message: string };
}

/** A proxy that takes the endpoint down (`kind`) when BatchWriteItem call number `at` arrives, and up again `forMs` later (never: Infinity). */
async function outageProxy(at: number, kind: OutageKind, forMs: number): Promise<FaultProxy> {
  let armed = true;
  const proxy: FaultProxy = closeAfterAll(
    await startFaultProxy(endpoint, (index) => {
      if (armed && index >= at) {
        armed = false;
        void proxy.outage(kind);
        if (Number.isFinite(forMs)) setTimeout(() => void proxy.restore(), forMs);
        return { kind: 'drop' };
      }
      return { kind: 'forward' };
    }),
  );
  return proxy;
}

/** The table holds exactly the generated rows 0..ROWS-1, each as written. */
async function expectTableEqualsInput(table: string): Promise<void> {
  const items = await scanAll(client(), table);
  expect(items.length).toBe(ROWS);
  const byKey = new Map(items.map((item) => [`${item['pk']!.S}|${item['sk']!.N}`, item]));
  for (let i = 0; i < ROWS; i++) {
    const row = generatedRow(i);
    expect(byKey.get(`${row.pk}|${row.sk}`)).toEqual(generatedItem(row));
  }
}

const summaryOf = (run: ProcessRun): Summary => JSON.parse(run.stdout) as Summary;

function loadArgs(input: string, table: string, extra: string[]): string[] {
  return ['load', input, '--table', table, '--types', GENERATED_TYPES_FLAG, '--concurrency', '4', '--max-attempts', '4', '--json', ...extra];
}

describe('an outage is not bad data', () => {
  it('an outage shorter than --outage-timeout: the load says so, waits, goes on, and the table equals the input (exit 0)', async () => {
    const input = join(dir(), 'short.csv');
    await writeGeneratedCsv(input, ROWS);
    const table = await newTable(KEYS);
    const proxy = await outageProxy(30, 'reset', 2500);
    const run = await runCli(loadArgs(input, table, ['--outage-timeout', '60s', '--log-format', 'json']), {
      cwd: dir(),
      env: localEnv(proxy.url),
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const events = run.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; endpoint?: string; reason?: string; waitMs?: number });
    const down = events.find((e) => e.type === 'endpointDown');
    expect(down, run.stderr).toMatchObject({ endpoint: proxy.url, waitMs: 60_000 });
    expect(down!.reason).toMatch(/ECONNRESET|socket/i);
    expect(events.findIndex((e) => e.type === 'endpointBack')).toBeGreaterThan(events.indexOf(down!));
    const summary = summaryOf(run);
    expect(summary).toMatchObject({ rowsRead: ROWS, written: ROWS, rejected: 0, complete: true });
    await expectTableEqualsInput(table);
  }, 120_000);

  it('calls left unanswered (timeouts) for a while: a plain line says the endpoint cannot be reached, then that it is back', async () => {
    const input = join(dir(), 'stall.csv');
    await writeGeneratedCsv(input, ROWS);
    const table = await newTable(KEYS);
    const proxy = await outageProxy(30, 'stall', 3000);
    const run = await runCli(loadArgs(input, table, ['--outage-timeout', '60', '--request-timeout', '400']), {
      cwd: dir(),
      env: localEnv(proxy.url),
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`the endpoint ${proxy.url} cannot be reached \\(\\w+\\) since \\S+; waiting up to 1 min 00 s for it`));
    expect(run.stderr).toMatch(/the endpoint .* answers again after/);
    expect(summaryOf(run)).toMatchObject({ rowsRead: ROWS, written: ROWS, rejected: 0, complete: true });
    await expectTableEqualsInput(table);
  }, 120_000);

  it('an outage longer than --outage-timeout: exit 75, no rejects, the checkpoint not complete; the same command later finishes the load', async () => {
    const input = join(dir(), 'long.csv');
    await writeGeneratedCsv(input, ROWS);
    const table = await newTable(KEYS);
    const proxy = await outageProxy(30, 'refuse', Infinity);
    const checkpoint = join(dir(), 'long.checkpoint.json');
    const rejects = join(dir(), 'long.rejects.jsonl');
    const args = loadArgs(input, table, ['--checkpoint', checkpoint, '--rejects', rejects, '--outage-timeout', '2s']);
    const env = localEnv(proxy.url);
    const down = await runCli(args, { cwd: dir(), env, timeoutMs: 90_000 });
    expect(down.code, down.stderr).toBe(75);
    const summary = summaryOf(down);
    expect(summary).toMatchObject({ rejected: 0, complete: false, error: { code: 'ENDPOINT_UNREACHABLE' } });
    expect(summary.written).toBeLessThan(ROWS);
    expect(down.stderr).toMatch(/cannot be reached \(ECONNREFUSED\)/);
    expect(down.stderr).toMatch(/not written/);
    // No row went to the reject file, and the checkpoint is not a finished one.
    expect(existsSync(rejects) ? (await readFile(rejects, 'utf8')).trim() : '').toBe('');
    const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { status: string };
    expect(saved.status).not.toBe('complete');
    expect(batchesDone(checkpoint)).toBeLessThan(ROWS / 25);

    await proxy.restore();
    const again = await runCli(args, { cwd: dir(), env, timeoutMs: 90_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again)).toMatchObject({ rowsRead: ROWS, written: ROWS, rejected: 0, complete: true });
    await expectTableEqualsInput(table);
  }, 120_000);

  it('without --checkpoint: exit 75, and every row read is written or counted as not written (none rejected)', async () => {
    const input = join(dir(), 'nock.csv');
    await writeGeneratedCsv(input, ROWS);
    const table = await newTable(KEYS);
    const proxy = await outageProxy(30, 'refuse', Infinity);
    const run = await runCli(loadArgs(input, table, ['--outage-timeout', '1', '--rejects', join(dir(), 'nock.rejects.jsonl')]), {
      cwd: dir(),
      env: localEnv(proxy.url),
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(75);
    const summary = summaryOf(run);
    expect(summary).toMatchObject({ rejected: 0, complete: false, error: { code: 'ENDPOINT_UNREACHABLE' } });
    const notWritten = summary.rowsRead - summary.written - summary.superseded - summary.rejected - summary.otherSegments;
    expect(notWritten).toBeGreaterThan(0);
    expect(summary.notWritten).toBe(notWritten);
    // What the summary counts as written is in the table; beyond it, only rows of calls cut off by the outage
    // (forwarded, their answer lost), which count as not written: never more.
    const stored = (await scanAll(client(), table)).length;
    expect(stored).toBeGreaterThanOrEqual(summary.written);
    expect(stored).toBeLessThanOrEqual(summary.written + notWritten);
    expect(run.stderr).toMatch(/no row was rejected for it/);
  }, 120_000);
});

describe('refused credentials mid-load are not outages and not rejects either', () => {
  it.each([
    ['AccessDeniedException', 'com.amazon.coral.service#AccessDeniedException'],
    ['ExpiredTokenException', 'com.amazon.coral.service#ExpiredTokenException'],
  ])(
    '%s from call 30 on: exit 77 at once, no row rejected, the checkpoint not complete',
    async (name, type) => {
      const input = join(dir(), `${name}.csv`);
      await writeGeneratedCsv(input, ROWS);
      const table = await newTable(KEYS);
      const proxy = closeAfterAll(
        await startFaultProxy(endpoint, (index) => (index >= 30 ? { kind: 'error', status: 400, type, message: `${name}: refused` } : { kind: 'forward' })),
      );
      const checkpoint = join(dir(), `${name}.checkpoint.json`);
      const rejects = join(dir(), `${name}.rejects.jsonl`);
      const run = await runCli(loadArgs(input, table, ['--checkpoint', checkpoint, '--rejects', rejects]), {
        cwd: dir(),
        env: localEnv(proxy.url),
        timeoutMs: 60_000,
      });
      expect(run.code, run.stderr).toBe(77);
      expect(summaryOf(run)).toMatchObject({ rejected: 0, complete: false, error: { code: 'ACCESS_DENIED' } });
      expect(existsSync(rejects) ? (await readFile(rejects, 'utf8')).trim() : '').toBe('');
      expect((JSON.parse(await readFile(checkpoint, 'utf8')) as { status: string }).status).not.toBe('complete');
    },
    90_000,
  );
});

describe('a stopped load is never complete', () => {
  it('SIGINT part way through a checkpointed load: --json and --report say complete false', async () => {
    const input = join(dir(), 'sigint.csv');
    await writeGeneratedCsv(input, ROWS);
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'sigint.checkpoint.json');
    const report = join(dir(), 'sigint.report.json');
    const run = await runCli(
      ['load', input, '--table', table, '--types', GENERATED_TYPES_FLAG, '--checkpoint', checkpoint, '--report', report, '--json', '--wcu', '600'],
      { cwd: dir(), env: localEnv(endpoint), timeoutMs: 90_000, kill: { signal: 'SIGINT', when: () => batchesDone(checkpoint) >= 8 } },
    );
    expect(run.code, run.stderr).toBe(130);
    const summary = summaryOf(run);
    expect(summary.error?.code).toBe('ABORTED');
    expect(summary.rowsRead).toBeLessThan(ROWS);
    expect(summary.complete).toBe(false);
    const saved = JSON.parse(await readFile(report, 'utf8')) as Summary;
    expect(saved.complete).toBe(false);
  }, 120_000);
});
