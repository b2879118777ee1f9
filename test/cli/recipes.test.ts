/**
 * The scale-out and cron recipes of docs/OPERATIONS.md, as far as one machine allows: the Kubernetes Indexed
 * Job's and the AWS Batch job definition's own command lines run as real processes (their index variables
 * reach --segment through sh -c), their retry rules are read off the recipes and checked against the exit
 * code table, --accept-rejects lets a job end 0 with its rejects in the reject files, and flock -n keeps two
 * cron runs from overlapping.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, PERMANENT_EXIT_CODES } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { BIN, runCli, runProcess } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { faults, startFaultProxy } from '../support/faultProxy.js';
import { localEnv } from '../support/env.js';
import { buildExport, type ExportLine } from '../support/exportFixture.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const TYPES = GENERATED_TYPES_FLAG;

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'recipes' });
const RECIPES = new URL('../../docs/OPERATIONS.md', import.meta.url);
const recipes = () => readFile(RECIPES, 'utf8');

/** The text of one `### title` section of OPERATIONS.md, up to the next heading. */
function section(doc: string, title: string): string {
  const start = doc.indexOf(`### ${title}\n`);
  expect(start, `section "${title}"`).toBeGreaterThanOrEqual(0);
  const end = /\n#{1,3} /.exec(doc.slice(start + 4));
  return doc.slice(start, end ? start + 4 + end.index : undefined);
}

/** The first fenced block of `lang` in `text`. */
function fenced(text: string, lang: string): string {
  const block = new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``).exec(text)?.[1];
  expect(block, `a ${lang} block`).toBeDefined();
  return block!;
}

/** The Kubernetes Job's YAML. */
const jobYaml = (doc: string) => fenced(section(doc, 'Kubernetes Indexed Job'), 'yaml');

/** The Kubernetes Job's podFailurePolicy rules: action and exit codes, read off the recipe's YAML. */
function podFailureRules(readme: string): Array<{ action: string; codes: number[] }> {
  const policy = /podFailurePolicy:[\s\S]*?\n {2}template:/.exec(jobYaml(readme))?.[0] ?? '';
  return [...policy.matchAll(/- action: (\w+)[^\n]*\n\s+onExitCodes: \{[^}]*values: \[([\d, ]+)\]/g)].map((m) => ({
    action: m[1]!,
    codes: m[2]!.split(',').map((c) => Number(c.trim())),
  }));
}

/** The container's command line: the folded (`>-`) scalar under `args:`, its lines joined by spaces as YAML folds them. */
function jobCommand(readme: string): string {
  const folded = /args:\n(\s+)- >-\n((?:\1 {2}.*\n)+)/.exec(jobYaml(readme));
  expect(folded, 'args: - >- in the Job').not.toBeNull();
  return folded![2]!
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
}

interface BatchRule {
  action: string;
  onExitCode?: string;
  onReason?: string;
  onStatusReason?: string;
}
interface BatchJobDefinition {
  type: string;
  containerProperties: {
    image: string;
    command: string[];
    resourceRequirements: Array<{ type: string; value: string }>;
    volumes: Array<{ name: string; efsVolumeConfiguration?: { fileSystemId: string } }>;
    mountPoints: Array<{ sourceVolume: string; containerPath: string; readOnly?: boolean }>;
  };
  retryStrategy: { attempts: number; evaluateOnExit: BatchRule[] };
}

/** The AWS Batch recipe's job definition: the JSON block given to register-job-definition. */
const batchDefinition = (readme: string) => JSON.parse(fenced(section(readme, 'AWS Batch array job'), 'json')) as BatchJobDefinition;

/** AWS Batch's glob: a pattern that may end with `*` (then only the start must match). */
const globMatches = (pattern: string | undefined, value: string | undefined) =>
  pattern === undefined || (value !== undefined && (pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : value === pattern));

/**
 * What AWS Batch does with a failed attempt: the action of the first evaluateOnExit entry whose every
 * condition matches; RETRY when none does (Batch's own default).
 */
function batchAction(rules: BatchRule[], exit: { code?: number; reason?: string; statusReason?: string }): string {
  const rule = rules.find(
    (r) =>
      globMatches(r.onExitCode, exit.code === undefined ? undefined : String(exit.code)) &&
      globMatches(r.onReason, exit.reason ?? 'Essential container in task exited') &&
      globMatches(r.onStatusReason, exit.statusReason),
  );
  return rule?.action.toUpperCase() ?? 'RETRY';
}
const batchOnExit = (readme: string, code: number) => batchAction(batchDefinition(readme).retryStrategy.evaluateOnExit, { code });

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

/**
 * A recipe's command line made to run here: the installed `ddb-spread` is the built one, the export and
 * the table are this test's, the shared volume (/state, /mnt/efs) and the scratch disk are folders of the
 * temp dir, and S3 is the test server (path-style addressing). Everything else runs as written.
 */
function runnable(command: string, here: { input: string; table: string; state: string; scratch: string }): string {
  const replaced = command
    .replace(/^ddb-spread /, `node ${BIN} `)
    .replace(/s3:\/\/\S+\/AWSDynamoDB\/\S+\//, here.input)
    .replace(/--table \S+/, `--table ${here.table}`)
    .replaceAll(/\/state\/|\/mnt\/efs\//g, `${here.state}/`)
    .replace(/--temp-dir \S+/, `--temp-dir ${here.scratch}`);
  return `${replaced} --s3-path-style`;
}

describe('docs/OPERATIONS.md recipes', () => {
  it("the Job's and the job definition's command lines, as 4 processes over one export on S3: every item loaded once, each worker reading its share; a rejected row ends 0 under --accept-rejects, and so does the Job started again", async () => {
    const readme = await recipes();
    const k8s = jobCommand(readme);
    const batch = batchDefinition(readme).containerProperties.command;
    expect(batch.slice(0, 2)).toEqual(['sh', '-c']);
    // One export of 8 data files; one item's sort key is a string where the table's is a number.
    const partitions: ExportLine[][] = Array.from({ length: 8 }, (_, p) =>
      Array.from({ length: 60 + p * 10 }, (_, i) => ({ Item: { pk: { S: `order-${p}-${i % 7}` }, sk: { N: String(i) }, v: { S: `p${p}` } } })),
    );
    partitions[5]![3] = { Item: { pk: { S: 'order-bad' }, sk: { S: 'not-a-number' } } };
    const items = partitions.reduce((n, p) => n + p.length, 0);
    const fixture = buildExport('orders', 'FULL_EXPORT', partitions);
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, fixture.files);
    const table = await newTable(KEYS);
    const state = join(dir(), 'state');
    const scratch = join(dir(), 'scratch');
    await mkdir(state);
    await mkdir(scratch);
    const here = { input: `s3://${bucket}/${fixture.folder}/`, table, state, scratch };
    const env = { ...localEnv(endpoint), AWS_ENDPOINT_URL_S3: s3Endpoint() };
    // Indexes 0 and 1 as Kubernetes starts them, 2 and 3 as AWS Batch does; they share one state folder.
    const workers = () =>
      Promise.all([
        sh(runnable(k8s, here), { ...env, JOB_COMPLETION_INDEX: '0' }),
        sh(runnable(k8s, here), { ...env, JOB_COMPLETION_INDEX: '1' }),
        sh(runnable(batch[2]!, here), { ...env, AWS_BATCH_JOB_ARRAY_INDEX: '2' }),
        sh(runnable(batch[2]!, here), { ...env, AWS_BATCH_JOB_ARRAY_INDEX: '3' }),
      ]);
    for (const run of await workers()) expect(run.code, run.stderr).toBe(EXIT.OK);
    const reports = await Promise.all([0, 1, 2, 3].map(async (i) => JSON.parse(await readFile(join(state, `orders-${i}.report.json`), 'utf8')) as LoadResult));
    expect(reports.map((r) => r.segment)).toEqual(['0/4', '1/4', '2/4', '3/4']);
    for (const r of reports) {
      expect(r.rate.targetWcu).toBe(2000);
      expect(r.division?.by).toBe('parts');
    }
    expect(reports.reduce((n, r) => n + r.rowsRead, 0)).toBe(items);
    expect(reports.reduce((n, r) => n + r.written, 0)).toBe(items - 1);
    expect(reports.reduce((n, r) => n + r.rejected, 0)).toBe(1);
    const rejecting = reports.findIndex((r) => r.rejected === 1);
    const rejects = (await readFile(join(state, `orders-${rejecting}.rejects.jsonl`), 'utf8')).trim().split('\n');
    expect(rejects).toHaveLength(1);
    expect(JSON.parse(rejects[0]!)).toMatchObject({ code: 'KEY_TYPE_MISMATCH' });
    expect((await scanAll(client(), table)).length).toBe(items - 1);
    // The Job deleted and created again (or every pod restarted): each finished checkpoint says so, 0 again.
    const again = await workers();
    for (const run of again) expect(run.code, run.stderr).toBe(EXIT.OK);
    expect(again[0]!.stderr).toContain('already completed');
    expect((await scanAll(client(), table)).length).toBe(items - 1);
  }, 60_000);

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

  // The recipes fail a worker on the codes no retry fixes and start it again on 75 and 1.
  it('the Kubernetes podFailurePolicy and the AWS Batch retry strategy follow the exit code table', async () => {
    const readme = await recipes();
    const rules = podFailureRules(readme);
    const failIndex = rules.filter((r) => r.action === 'FailIndex').flatMap((r) => r.codes);
    const counted = rules.filter((r) => r.action === 'Count').flatMap((r) => r.codes);
    // 2 stays final: under --accept-rejects it means a rejected row reported nowhere.
    expect([...failIndex].sort((a, b) => a - b)).toEqual([EXIT.REJECTED, ...PERMANENT_EXIT_CODES].sort((a, b) => a - b));
    expect([...counted].sort((a, b) => a - b)).toEqual([EXIT.FATAL, EXIT.TEMP_FAIL]);
    expect(rules.some((r) => r.action === 'FailJob')).toBe(false);

    const batch = batchDefinition(readme).retryStrategy;
    for (const code of [EXIT.FATAL, EXIT.TEMP_FAIL]) expect(batchOnExit(readme, code), `exit ${code}`).toBe('RETRY');
    for (const code of [EXIT.OK, EXIT.REJECTED, ...PERMANENT_EXIT_CODES, EXIT.SIGINT, EXIT.SIGTERM, 137])
      expect(batchOnExit(readme, code), `exit ${code}`).toBe('EXIT');
    // A spot instance reclaimed: its child resumes from its checkpoint on another instance.
    expect(batchAction(batch.evaluateOnExit, { code: EXIT.SIGTERM, statusReason: 'Host EC2 (instance i-0abc) terminated.' })).toBe('RETRY');
    expect(batchAction(batch.evaluateOnExit, { reason: 'CannotPullContainerError: pull access denied' })).toBe('EXIT');
    expect(batch.evaluateOnExit.length).toBeLessThanOrEqual(5);
    expect(batch.attempts).toBeGreaterThanOrEqual(1);
    expect(batch.attempts).toBeLessThanOrEqual(10);
  });

  it('the recipes as AWS takes them: per-index retries, a pinned image, a scratch volume, resources, the shared listing; a job definition with EFS', async () => {
    const readme = await recipes();
    const yaml = jobYaml(readme);
    const command = jobCommand(readme);
    expect(yaml).toMatch(/^ {2}completionMode: Indexed$/m);
    expect(yaml).toMatch(/^ {2}backoffLimitPerIndex: \d+/m);
    // Two pods of one index would both load its share: each would stop the other (WORKER_DUPLICATED).
    expect(yaml).toMatch(/^ {2}podReplacementPolicy: Failed\b/m);
    expect(yaml).toMatch(/^ {6}restartPolicy: Never/m);
    expect(yaml).toMatch(/- action: Ignore[^\n]*\n\s+onPodConditions: \[\{ type: DisruptionTarget \}\]/);
    expect(yaml).toMatch(/^ {10}image: \S+:\d+\.\d+\.\d+\s/m);
    expect(readme).not.toMatch(/npx -y ddb-spread (load|estimate)/);
    // Requests and limits of cpu, memory and ephemeral-storage; an emptyDir with a sizeLimit holds --temp-dir.
    for (const kind of ['requests', 'limits']) {
      const line = new RegExp(`^ {12}${kind}: \\{([^}]*)\\}`, 'm').exec(yaml)?.[1] ?? '';
      for (const resource of ['cpu', 'memory', 'ephemeral-storage']) expect(line, `${kind}.${resource}`).toMatch(new RegExp(`\\b${resource}: \\S`));
    }
    const scratch = /\{ name: (\w+), emptyDir: \{ sizeLimit: \d+Gi \} \}/.exec(yaml)?.[1];
    expect(scratch).toBeDefined();
    const scratchPath = new RegExp(`\\{ name: ${scratch}, mountPath: (\\S+) \\}`).exec(yaml)?.[1];
    expect(command).toContain(`--temp-dir ${scratchPath}`);
    for (const cmd of [command, batchDefinition(readme).containerProperties.command[2]!]) {
      expect(cmd).toMatch(/^ddb-spread load /);
      expect(cmd).toContain('--accept-rejects');
      expect(cmd).toMatch(/--listing \/(state|mnt\/efs)\//);
      expect(cmd).toMatch(/--checkpoint "\/(state|mnt\/efs)\/[^"]*\$(JOB_COMPLETION_INDEX|AWS_BATCH_JOB_ARRAY_INDEX)/);
    }

    const def = batchDefinition(readme);
    expect(def.type).toBe('container');
    expect(def.containerProperties.image).toMatch(/:\d+\.\d+\.\d+$/);
    expect(def.containerProperties.resourceRequirements.map((r) => r.type).sort()).toEqual(['MEMORY', 'VCPU']);
    const efs = def.containerProperties.volumes.find((v) => v.efsVolumeConfiguration?.fileSystemId);
    expect(efs).toBeDefined();
    const mount = def.containerProperties.mountPoints.find((m) => m.sourceVolume === efs!.name);
    expect(def.containerProperties.command[2]).toContain(`--checkpoint "${mount!.containerPath}/`);
    expect(section(readme, 'AWS Batch array job')).toContain(
      `--job-definition ${(JSON.parse(fenced(section(readme, 'AWS Batch array job'), 'json')) as { jobDefinitionName: string }).jobDefinitionName} --array-properties size=4`,
    );
  });

  it('real failures end with the codes the recipes act on: usage, a missing table and a missing input are final, an unreachable endpoint is retried', async () => {
    const readme = await recipes();
    const failIndex = podFailureRules(readme)
      .filter((r) => r.action === 'FailIndex')
      .flatMap((r) => r.codes);
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
      expect(failIndex).toContain(final.code);
      expect(batchOnExit(readme, final.code!)).toBe('EXIT');
    }
    expect(failIndex).not.toContain(unreachable.code);
    expect(batchOnExit(readme, unreachable.code!)).toBe('RETRY');
  }, 60_000);

  it('throttled past --max-attempts: exit 75, which the recipes retry, and the retried run writes every row (0)', async () => {
    const readme = await recipes();
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
        .filter((r) => r.action === 'Count')
        .flatMap((r) => r.codes),
    ).toContain(throttled.code);
    expect(batchOnExit(readme, throttled.code!)).toBe('RETRY');
    const retried = await runCli(args, { cwd: dir(), env });
    expect(retried.code, retried.stderr).toBe(EXIT.OK);
    expect((await scanAll(client(), table)).length).toBe(40);
  }, 60_000);

  it('--accept-rejects: a load with a rejected row exits 0 (2 without), its finished checkpoint run again the same; --max-rejects reached stays 65', async () => {
    const lines = ['pk,sk', ...Array.from({ length: 30 }, (_, i) => `k${i % 4},${i}`)];
    lines.splice(12, 0, 'k9,not-a-number');
    const input = join(dir(), 'accept.csv');
    await writeFile(input, `${lines.join('\n')}\n`);
    const env = localEnv(endpoint);
    const load = async (name: string, extra: string[]) => {
      const table = await newTable(KEYS);
      const args = ['load', input, '--table', table, '--types', 'sk:N', '--rejects', join(dir(), `${name}.rejects.jsonl`), ...extra];
      return { table, run: () => runCli(args, { cwd: dir(), env }) };
    };
    const plain = await load('plain', ['--checkpoint', join(dir(), 'plain.checkpoint.json')]);
    const accepted = await load('accepted', ['--checkpoint', join(dir(), 'accepted.checkpoint.json'), '--accept-rejects']);
    const [without, withFlag] = await Promise.all([plain.run(), accepted.run()]);
    expect(without.code, without.stderr).toBe(EXIT.REJECTED);
    expect(withFlag.code, withFlag.stderr).toBe(EXIT.OK);
    // The summary says what happened all the same, and where the row went.
    expect(withFlag.stderr).toContain('finished with rejected rows');
    expect(withFlag.stderr).toContain(join(dir(), 'accepted.rejects.jsonl'));
    expect((await readFile(join(dir(), 'accepted.rejects.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(1);
    expect(await scanAll(client(), accepted.table)).toHaveLength(30);
    const [withoutAgain, withFlagAgain] = await Promise.all([plain.run(), accepted.run()]);
    expect(withoutAgain.code, withoutAgain.stderr).toBe(EXIT.REJECTED);
    expect(withFlagAgain.code, withFlagAgain.stderr).toBe(EXIT.OK);
    expect(withFlagAgain.stderr).toContain('already completed');
    expect(withFlagAgain.stderr).toContain(join(dir(), 'accepted.rejects.jsonl'));
    // Its reject file gone, the row is reported nowhere: 2 again, flag or not.
    await rm(join(dir(), 'accepted.rejects.jsonl'));
    expect((await accepted.run()).code).toBe(EXIT.REJECTED);
    const capped = await load('capped', ['--max-rejects', '1', '--accept-rejects']);
    const stopped = await capped.run();
    expect(stopped.code, stopped.stderr).toBe(EXIT.DATA);
  }, 60_000);
});
