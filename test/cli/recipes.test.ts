/**
 * The README's scale-out and cron recipes, as far as one machine allows: the index variables of a
 * Kubernetes Indexed Job and an AWS Batch array job reach --segment through sh -c, each worker keeps its
 * own checkpoint and report, and flock -n keeps two cron runs from overlapping.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runProcess } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { GENERATED_TYPES, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const TYPES = Object.entries(GENERATED_TYPES).map(([n, t]) => `${n}:${t}`).join(',');

const { endpoint, client, dir, newTable } = useLocalAws({ name: 'recipes' });

/** Runs `sh -c script` in the temp dir, without a time limit (the test's own timeout applies). */
const sh = (script: string, env: NodeJS.ProcessEnv) => runProcess('sh', ['-c', script], { cwd: dir(), env, stdout: 'ignore', timeoutMs: null });

describe('README recipes', () => {
  it('Kubernetes Indexed Job and AWS Batch array indexes drive --segment; the workers together load every row once', async () => {
    const input = join(dir(), 'rows.csv');
    await writeGeneratedCsv(input, 4000);
    const table = await newTable(KEYS);
    const base = `node ${BIN} load ${input} --table ${table} --types ${TYPES} --total-wcu 8000 --log-format json`;
    const runs = await Promise.all([
      sh(`${base} --segment "$JOB_COMPLETION_INDEX/4" --checkpoint "state-k$JOB_COMPLETION_INDEX.json" --report "report-k$JOB_COMPLETION_INDEX.json"`, { ...localEnv(endpoint), JOB_COMPLETION_INDEX: '0' }),
      sh(`${base} --segment "$JOB_COMPLETION_INDEX/4" --checkpoint "state-k$JOB_COMPLETION_INDEX.json" --report "report-k$JOB_COMPLETION_INDEX.json"`, { ...localEnv(endpoint), JOB_COMPLETION_INDEX: '1' }),
      sh(`${base} --segment "$AWS_BATCH_JOB_ARRAY_INDEX/4" --checkpoint "state-b$AWS_BATCH_JOB_ARRAY_INDEX.json" --report "report-b$AWS_BATCH_JOB_ARRAY_INDEX.json"`, { ...localEnv(endpoint), AWS_BATCH_JOB_ARRAY_INDEX: '2' }),
      sh(`${base} --segment "$AWS_BATCH_JOB_ARRAY_INDEX/4" --checkpoint "state-b$AWS_BATCH_JOB_ARRAY_INDEX.json" --report "report-b$AWS_BATCH_JOB_ARRAY_INDEX.json"`, { ...localEnv(endpoint), AWS_BATCH_JOB_ARRAY_INDEX: '3' }),
    ]);
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const reports = await Promise.all(['k0', 'k1', 'b2', 'b3'].map(async (name) => JSON.parse(await readFile(join(dir(), `report-${name}.json`), 'utf8')) as { segment: string; written: number; rate: { targetWcu: number } }));
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
    await new Promise((r) => setTimeout(r, 2500));
    const second = await sh(cron('second.json'), localEnv(endpoint));
    expect(second.code).toBe(1);
    await expect(readFile(join(dir(), 'second.json'), 'utf8')).rejects.toThrow();
    // Only the node process (sh and flock have the same words on their command lines).
    await sh(`pkill -INT -f "^node .*--report first.json" || true`, localEnv(endpoint));
    const done = await first;
    expect([0, 130]).toContain(done.code);
  }, 60_000);
});
