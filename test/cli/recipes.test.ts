/**
 * The scale-out and cron recipes of docs/OPERATIONS.md, as far as one machine allows: the index variables of a
 * Kubernetes Indexed Job and an AWS Batch array job reach --segment through sh -c, each worker keeps its
 * own checkpoint and report, and flock -n keeps two cron runs from overlapping.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, PERMANENT_EXIT_CODES } from '../../src/cli/exitCodes.js';
import { BIN, runCli, runProcess } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { faults, startFaultProxy } from '../support/faultProxy.js';
import { localEnv } from '../support/env.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const TYPES = GENERATED_TYPES_FLAG;

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'recipes' });
const RECIPES = new URL('../../docs/OPERATIONS.md', import.meta.url);

/** The Kubernetes Job's podFailurePolicy rules: action and exit codes, read off the recipe's YAML. */
function podFailureRules(readme: string): Array<{ action: string; codes: number[] }> {
  const policy = /podFailurePolicy:[\s\S]*?\n {2}template:/.exec(readme)?.[0] ?? '';
  return [...policy.matchAll(/- action: (\w+)[^\n]*\n\s+onExitCodes: \{[^}]*values: \[([\d, ]+)\]/g)].map((m) => ({
    action: m[1]!,
    codes: m[2]!.split(',').map((c) => Number(c.trim())),
  }));
}

/** The AWS Batch recipe's evaluateOnExit: exit code (or *) -> action, in order. */
function batchRules(readme: string): Array<{ code: string; action: string }> {
  const strategy = /--retry-strategy '([^']+)'/.exec(readme)?.[1] ?? '';
  return [...strategy.matchAll(/\{onExitCode=([^,]+),action=(\w+)\}/g)].map((m) => ({ code: m[1]!, action: m[2]! }));
}

/** What AWS Batch does with an exit code: the first rule whose code matches (a glob on the code). */
function batchAction(rules: Array<{ code: string; action: string }>, exit: number): string | undefined {
  return rules.find((r) => new RegExp(`^${r.code.replace('*', '.*')}$`).test(String(exit)))?.action;
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Runs `sh -c script` in the temp dir, without a time limit (the test's own timeout applies). */
const sh = (script: string, env: NodeJS.ProcessEnv) => runProcess('sh', ['-c', script], { cwd: dir(), env, stdout: 'ignore', timeoutMs: null });

describe('docs/OPERATIONS.md recipes', () => {
  it('Kubernetes Indexed Job and AWS Batch array indexes drive --segment; the workers together load every row once', async () => {
    const input = join(dir(), 'rows.csv');
    await writeGeneratedCsv(input, 4000);
    const table = await newTable(KEYS);
    const base = `node ${BIN} load ${input} --table ${table} --types ${TYPES} --total-wcu 8000 --log-format json`;
    const runs = await Promise.all([
      sh(`${base} --segment "$JOB_COMPLETION_INDEX/4" --checkpoint "state-k$JOB_COMPLETION_INDEX.json" --report "report-k$JOB_COMPLETION_INDEX.json"`, {
        ...localEnv(endpoint),
        JOB_COMPLETION_INDEX: '0',
      }),
      sh(`${base} --segment "$JOB_COMPLETION_INDEX/4" --checkpoint "state-k$JOB_COMPLETION_INDEX.json" --report "report-k$JOB_COMPLETION_INDEX.json"`, {
        ...localEnv(endpoint),
        JOB_COMPLETION_INDEX: '1',
      }),
      sh(
        `${base} --segment "$AWS_BATCH_JOB_ARRAY_INDEX/4" --checkpoint "state-b$AWS_BATCH_JOB_ARRAY_INDEX.json" --report "report-b$AWS_BATCH_JOB_ARRAY_INDEX.json"`,
        { ...localEnv(endpoint), AWS_BATCH_JOB_ARRAY_INDEX: '2' },
      ),
      sh(
        `${base} --segment "$AWS_BATCH_JOB_ARRAY_INDEX/4" --checkpoint "state-b$AWS_BATCH_JOB_ARRAY_INDEX.json" --report "report-b$AWS_BATCH_JOB_ARRAY_INDEX.json"`,
        { ...localEnv(endpoint), AWS_BATCH_JOB_ARRAY_INDEX: '3' },
      ),
    ]);
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const reports = await Promise.all(
      ['k0', 'k1', 'b2', 'b3'].map(
        async (name) =>
          JSON.parse(await readFile(join(dir(), `report-${name}.json`), 'utf8')) as { segment: string; written: number; rate: { targetWcu: number } },
      ),
    );
    expect(reports.map((r) => r.segment)).toEqual(['0/4', '1/4', '2/4', '3/4']);
    for (const r of reports) expect(r.rate.targetWcu).toBe(2000);
    expect(reports.reduce((n, r) => n + r.written, 0)).toBe(4000);
    expect((await scanAll(client(), table)).length).toBe(4000);
  });

  it('cron with flock -n: a second run while the first holds the lock gives up at once and writes nothing', async () => {
    const input = join(dir(), 'cron.csv');
    await writeGeneratedCsv(input, 3000);
    const table = await newTable(KEYS);
    const lock = join(dir(), 'ddb-spread.lock');
    // The first run is slow on purpose (100 WCU/s: 30 s); it is stopped once the second has given up.
    const cron = (report: string) => `flock -n ${lock} node ${BIN} load ${input} --table ${table} --types ${TYPES} --wcu 100 --report ${report}`;
    const first = sh(`${cron('first.json')} & echo $! > first.pid; wait`, localEnv(endpoint));
    // The second starts once the first holds the lock: its node process runs (flock starts it only with the
    // lock held) and has locked its reject file. A fixed wait raced a slow start of sh, flock and node.
    const firstRejectsLock = `${input}.rejects.jsonl.lock`;
    for (let i = 0; i < 800 && !existsSync(firstRejectsLock); i++) await new Promise((r) => setTimeout(r, 25));
    expect(existsSync(firstRejectsLock), 'the first run never started').toBe(true);
    const second = await sh(cron('second.json'), localEnv(endpoint));
    expect(second.code).toBe(1);
    await expect(readFile(join(dir(), 'second.json'), 'utf8')).rejects.toThrow();
    // Only the node process (sh and flock have the same words on their command lines).
    await sh(`pkill -INT -f "^node .*--report first.json" || true`, localEnv(endpoint));
    const done = await first;
    expect([0, 130]).toContain(done.code);
  }, 60_000);

  // The recipes fail the job on the codes no retry fixes and start it again on 75.
  it('the Kubernetes podFailurePolicy and the AWS Batch retry strategy follow the exit code table', async () => {
    const readme = await readFile(RECIPES, 'utf8');
    const rules = podFailureRules(readme);
    const failJob = rules.filter((r) => r.action === 'FailJob').flatMap((r) => r.codes);
    const counted = rules.filter((r) => r.action === 'Count').flatMap((r) => r.codes);
    expect([...failJob].sort((a, b) => a - b)).toEqual([EXIT.REJECTED, ...PERMANENT_EXIT_CODES].sort((a, b) => a - b));
    expect(counted).toContain(EXIT.TEMP_FAIL);
    expect(failJob).not.toContain(EXIT.TEMP_FAIL);
    expect(readme).toMatch(/restartPolicy: Never/);

    const batch = batchRules(readme);
    expect(batchAction(batch, EXIT.TEMP_FAIL)).toBe('RETRY');
    for (const code of [EXIT.OK, EXIT.REJECTED, ...PERMANENT_EXIT_CODES]) expect(batchAction(batch, code), `exit ${code}`).toBe('EXIT');
  });

  it('real failures end with the codes the recipes act on: usage, a missing table and a missing input are final, an unreachable endpoint is retried', async () => {
    const readme = await readFile(RECIPES, 'utf8');
    const failJob = podFailureRules(readme)
      .filter((r) => r.action === 'FailJob')
      .flatMap((r) => r.codes);
    const batch = batchRules(readme);
    const input = join(dir(), 'codes.csv');
    await writeGeneratedCsv(input, 10);
    const table = await newTable(KEYS);
    const env = localEnv(endpoint);
    const run = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => runCli(['load', input, ...args], { cwd: dir(), env: { ...env, ...extraEnv } });
    const usage = await run(['--table', table, '--concurrency', 'lots']);
    const missing = await run(['--table', `missing_${process.pid}`]);
    const noInput = await runCli(['load', join(dir(), 'absent.csv'), '--table', table], { cwd: dir(), env });
    const unreachable = await run(['--table', table, '--endpoint-url', `http://127.0.0.1:${await closedPort()}`]);
    expect([usage.code, missing.code, noInput.code, unreachable.code]).toEqual([64, 78, 66, 75]);
    for (const final of [usage, missing, noInput]) {
      expect(failJob).toContain(final.code);
      expect(batchAction(batch, final.code!)).toBe('EXIT');
    }
    expect(failJob).not.toContain(unreachable.code);
    expect(batchAction(batch, unreachable.code!)).toBe('RETRY');
  }, 60_000);

  it('throttled past --max-attempts: exit 75, which the recipes retry, and the retried run writes every row (0)', async () => {
    const readme = await readFile(RECIPES, 'utf8');
    const input = join(dir(), 'throttled.csv');
    await writeGeneratedCsv(input, 40);
    const table = await newTable(KEYS);
    const proxy = closeAfterAll(await startFaultProxy(endpoint, () => faults.throttled()));
    const env = localEnv(endpoint);
    const args = ['load', input, '--table', table, '--types', TYPES, '--rejects', join(dir(), 'throttled.rejects.jsonl')];
    const throttled = await runCli([...args, '--endpoint-url', proxy.url, '--max-attempts', '2'], { cwd: dir(), env });
    expect(throttled.code, throttled.stderr).toBe(EXIT.TEMP_FAIL);
    const rejects = (await readFile(join(dir(), 'throttled.rejects.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { code: string });
    expect(rejects.length).toBe(40);
    expect(new Set(rejects.map((r) => r.code))).toEqual(new Set(['RETRIES_EXHAUSTED']));
    expect(
      podFailureRules(readme)
        .filter((r) => r.action === 'FailJob')
        .flatMap((r) => r.codes),
    ).not.toContain(throttled.code);
    expect(batchAction(batchRules(readme), throttled.code!)).toBe('RETRY');
    const retried = await runCli(args, { cwd: dir(), env });
    expect(retried.code, retried.stderr).toBe(EXIT.OK);
    expect((await scanAll(client(), table)).length).toBe(40);
  }, 60_000);
});
