/**
 * --condition-failures through the built CLI against DynamoDB Local, into a table pre-filled so that some rows'
 * conditions fail: the file holds every conditionFailed row exactly once (read = written + superseded + rejected +
 * condition failed + other segments + not written, and its line count equals conditionFailed) after a clean run
 * and after SIGKILLs and resumes (lines written after the last save are cut, the rows they belonged to tried
 * again, a row whose own put landed before the kill listed nowhere); a file changed or gone since the checkpoint
 * is refused, as is a resume without the option; one file per --segment; the config file, --dry-run and the
 * refusal without a condition; the summary, --json and --report name it.
 */
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { batchesDone } from '../support/checkpoint.js';
import { putItems, scanAll } from '../support/ddb.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import { localEnv } from '../support/env.js';

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'condfailcli', keys: { partitionKey: { name: 'pk', type: 'S' } } });
const { dir, newTable, client } = aws;
const cli = localCli(aws);
let seq = 0;

async function file(name: string, text: string): Promise<string> {
  const path = join(dir(), `${++seq}-${name}`);
  await writeFile(path, text);
  return path;
}

interface Result {
  rowsRead: number;
  written: number;
  superseded: number;
  rejected: number;
  otherSegments: number;
  conditionFailed: number;
  notWritten: number;
  complete: boolean;
  conditionFailuresPath?: string;
}

interface Line {
  file: string;
  line: number;
  code: string;
  condition: string;
  key: { pk: string };
  raw: string;
}

const linesOf = (path: string): Line[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

/** Every row accounted for, and the file holding each condition-failed row exactly once. */
function expectAccounted(result: Result, path: string, expectedKeys: readonly string[]): void {
  expect(result.rowsRead).toBe(result.written + result.superseded + result.rejected + result.conditionFailed + result.otherSegments + result.notWritten);
  const lines = linesOf(path);
  expect(lines).toHaveLength(result.conditionFailed);
  const keys = lines.map((l) => l.key.pk);
  expect(new Set(keys).size, 'no row listed twice').toBe(keys.length);
  expect([...keys].sort()).toEqual([...expectedKeys].sort());
  for (const l of lines) expect(l).toMatchObject({ code: 'CONDITION_FAILED', raw: expect.stringMatching(new RegExp(`^${l.key.pk},`)) });
}

/** A table holding every `every`th key of `rows` already (another writer's value): those rows' --if-not-exists fails. */
async function prefilled(rows: number, every: number): Promise<{ table: string; input: string; taken: string[] }> {
  const table = await newTable();
  const taken: string[] = [];
  for (let i = 0; i < rows; i += every) taken.push(`k${i}`);
  await putItems(
    client(),
    table,
    taken.map((pk) => ({ pk: { S: pk }, v: { S: 'there before' } })),
  );
  const lines = ['pk,v,n'];
  for (let i = 0; i < rows; i++) lines.push(`k${i},row ${i},${i}`);
  return { table, input: await file('rows.csv', lines.join('\n') + '\n'), taken };
}

describe('--condition-failures (CLI)', () => {
  it('a clean run: every conditionFailed row once, 0600; the summary, --json and --report name the file', async () => {
    const { table, input, taken } = await prefilled(1000, 7);
    const failures = join(dir(), `${++seq}-failed.jsonl`);
    const report = join(dir(), `${++seq}-report.json`);
    const run = await cli(['load', input, '--table', table, '--if-not-exists', '--condition-failures', failures, '--json', '--report', report]);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as Result;
    expect(result).toMatchObject({
      rowsRead: 1000,
      conditionFailed: taken.length,
      written: 1000 - taken.length,
      complete: true,
      conditionFailuresPath: failures,
    });
    expectAccounted(result, failures, taken);
    expect(linesOf(failures)[0]).toMatchObject({ file: input, condition: '--if-not-exists' });
    expect(statSync(failures).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ conditionFailed: taken.length, conditionFailuresPath: failures });

    // Run again: every row's key is there now, so every row fails, and the file is this run's alone.
    const text = await cli(['load', input, '--table', table, '--if-not-exists', '--condition-failures', failures]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr.replace(/\s+/g, ' ')).toContain(`condition failures ${failures}`);
    expect(linesOf(failures)).toHaveLength(1000);
  }, 120_000);

  it('SIGKILLed twice and resumed: the file ends with every conditionFailed row once; lines after the last save are cut', async () => {
    // 120 batches of conditional puts at --wcu 1500 (60 batches/s): the second kill lands 50 batches (0.8 s) before the end.
    const rows = 3000;
    const { table, input, taken } = await prefilled(rows, 10);
    const failures = join(dir(), `${++seq}-failed.jsonl`);
    const checkpoint = join(dir(), `${++seq}.checkpoint.json`);
    const args = ['load', input, '--table', table, '--if-not-exists', '--condition-failures', failures, '--checkpoint', checkpoint];
    const kills = [30, 70];
    for (const at of kills) {
      const killed = await cli([...args, '--wcu', '1500', '--concurrency', '8'], {
        kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= at },
        timeoutMs: 120_000,
      });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { conditionFailed?: number; conditionFailuresFile?: { bytes: number } };
      // The checkpoint counts exactly the lines of the bytes it recorded; the file may hold more (batches not yet counted).
      expect(saved.conditionFailed ?? 0).toBeGreaterThan(0);
      const recorded = readFileSync(failures).subarray(0, saved.conditionFailuresFile!.bytes).toString('utf8');
      expect(recorded.split('\n').filter(Boolean)).toHaveLength(saved.conditionFailed!);
    }
    // A line the killed run wrote after its last save, whose batch the checkpoint does not count done: cut on resume.
    const stray = linesOf(failures).find((l) => l.key.pk === taken.at(-1)) ?? { file: input, line: rows, code: 'CONDITION_FAILED', key: { pk: taken.at(-1)! } };
    appendFileSync(failures, `${JSON.stringify(stray)}\n`);
    const resumed = await cli([...args, '--json'], { timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    const result = JSON.parse(resumed.stdout) as Result;
    expect(result).toMatchObject({ rowsRead: rows, written: rows - taken.length, conditionFailed: taken.length, notWritten: 0, complete: true });
    expectAccounted(result, failures, taken);
    // The table is the one a single load leaves: the rows of taken keys were not written, every other one was.
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(rows);
    for (const item of items) expect(item.v!.S, item.pk!.S).toBe(Number(item.pk!.S!.slice(1)) % 10 === 0 ? 'there before' : `row ${item.pk!.S!.slice(1)}`);
  }, 300_000);

  it('killed and resumed at a restart point (rows before it not read again): their lines kept, every conditionFailed row once', async () => {
    // Restart points every 250 rows (10 batches): the kill at 60 of 120 batches is five points in.
    const rows = 3000;
    const { table, input, taken } = await prefilled(rows, 10);
    const failures = join(dir(), `${++seq}-failed.jsonl`);
    const checkpoint = join(dir(), `${++seq}.checkpoint.json`);
    const args = ['load', input, '--table', table, '--if-not-exists', '--order', 'input', '--condition-failures', failures, '--checkpoint', checkpoint];
    const env = { ...localEnv(aws.endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '250' };
    const killed = await cli([...args, '--wcu', '1500', '--concurrency', '8'], {
      env,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 60 },
      timeoutMs: 120_000,
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const resumed = await cli([...args, '--json'], { env, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/reading on from a restart point past the first [\d,]+ rows/);
    const result = JSON.parse(resumed.stdout) as Result;
    expect(result).toMatchObject({ rowsRead: rows, conditionFailed: taken.length, notWritten: 0, complete: true });
    expectAccounted(result, failures, taken);
  }, 300_000);

  it('a resume refuses the file changed or gone, and a resume without the option; the checkpoint names the way out', async () => {
    const { table, input } = await prefilled(3000, 5);
    const failures = join(dir(), `${++seq}-failed.jsonl`);
    const checkpoint = join(dir(), `${++seq}.checkpoint.json`);
    const args = ['load', input, '--table', table, '--if-not-exists', '--checkpoint', checkpoint];
    const killed = await cli([...args, '--condition-failures', failures, '--wcu', '1000', '--concurrency', '4'], {
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 30 },
      timeoutMs: 120_000,
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const text = readFileSync(failures, 'utf8');

    const without = await cli(args);
    expect(without.code).toBe(78);
    expect(without.stderr).toMatch(/taken with --condition-failures, and this load runs without it/);

    writeFileSync(failures, text.replace('CONDITION_FAILED', 'CONDITION_FAILEX'));
    const changed = await cli([...args, '--condition-failures', failures]);
    expect(changed.code).toBe(78);
    expect(changed.stderr).toMatch(/--condition-failures file .* has changed .*restore the file, or delete/);

    await rm(failures);
    const gone = await cli([...args, '--condition-failures', failures]);
    expect(gone.code).toBe(78);
    expect(gone.stderr).toMatch(/is gone/);

    // Restored (moved elsewhere: its content decides, not its path), the resume goes on.
    const moved = join(dir(), `${++seq}-moved.jsonl`);
    writeFileSync(moved, text);
    const resumed = await cli([...args, '--condition-failures', moved, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout) as Result;
    expect(result).toMatchObject({ rowsRead: 3000, conditionFailed: 600, complete: true });
    expectAccounted(
      result,
      moved,
      Array.from({ length: 600 }, (_, i) => `k${i * 5}`),
    );
  }, 300_000);

  it('each --segment its own file; the config file; --dry-run says where it would go and writes nothing; refused without a condition (64)', async () => {
    const { table, input, taken } = await prefilled(800, 4);
    const failures = join(dir(), `${++seq}-failed.jsonl`);
    const config = await file('job.json', JSON.stringify({ table, ifNotExists: true, conditionFailures: failures }));
    const results: Result[] = [];
    for (const segment of ['0/2', '1/2']) {
      const run = await cli(['load', input, '--config', config, '--segment', segment, '--json']);
      expect(run.code, run.stderr).toBe(0);
      results.push(JSON.parse(run.stdout) as Result);
    }
    const paths = [0, 1].map((i) => failures.replace(/\.jsonl$/, `.seg-${i}-of-2.jsonl`));
    expect(existsSync(failures)).toBe(false);
    const listed: string[] = [];
    for (const [i, result] of results.entries()) {
      expect(result.conditionFailuresPath).toBe(paths[i]);
      expect(result.rowsRead).toBe(result.written + result.conditionFailed + result.otherSegments + result.superseded + result.rejected + result.notWritten);
      const lines = linesOf(paths[i]!);
      expect(lines).toHaveLength(result.conditionFailed);
      listed.push(...lines.map((l) => l.key.pk));
    }
    expect(listed.sort()).toEqual([...taken].sort());

    const dryPath = join(dir(), `${++seq}-dry.jsonl`);
    const dry = await cli(['load', input, '--table', table, '--if-newer', 'n', '--types', 'n:N', '--condition-failures', dryPath, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(`${dry.stdout}${dry.stderr}`.replace(/\s+/g, ' ')).toContain(`would list in ${dryPath}`);
    expect(existsSync(dryPath)).toBe(false);

    const refused = await cli(['load', input, '--table', table, '--condition-failures', dryPath]);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toMatch(/no condition is given: add --if-not-exists, --if-newer <attribute>, --condition <expression> or --item-conditions/);
  }, 240_000);
});
