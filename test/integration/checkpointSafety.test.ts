/**
 * Checkpoint and resume safety: write rejects survive any number
 * of resumes with their real reason; two runs on one checkpoint are refused and a lock left by kill -9
 * does not block the resume; one slow batch does not make a resume rewrite everything done after it; no
 * row contents in the checkpoint files; a malformed checkpoint is refused with a clear message.
 */
import { readFileSync, statSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesDone } from '../support/checkpoint.js';
import { runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { dynamoErrors } from '../support/httpForward.js';
import { faults, startFaultProxy, type FaultProxy } from '../support/faultProxy.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejects } from '../support/rejects.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const TYPES = ['--types', GENERATED_TYPES_FLAG];

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'ckpt-safety', processCredentials: true });

const cli = (args: string[], env: NodeJS.ProcessEnv, kill?: { signal: NodeJS.Signals; when: () => boolean }) =>
  runCli(args, { cwd: dir(), env, stdout: 'pipe', timeoutMs: 120_000, ...(kill ? { kill } : {}) });

/** Items forwarded to DynamoDB Local in BatchWriteItem calls (faults answered by the proxy not counted). */
const forwardedItems = (proxy: FaultProxy) => proxy.calls.filter((c) => c.action === 'forward').reduce((n, c) => n + c.requestCount, 0);

describe('checkpoint safety', () => {
  it('more than 10,000 write rejects, kill -9 twice and resumed: every row is in the reject file once, with its real reason', async () => {
    const rows = 15_000;
    const input = join(dir(), 'rej.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    // Every write is throttled; with --max-attempts 1 every row ends RETRIES_EXHAUSTED, 25 ms after its call.
    // A killed run must not be able to finish before its kill lands: its calls from the `answered`-th of
    // that run on are held for a minute, so it stops at a fixed point whatever the speed of the machine
    // (a time-based margin was 80 batches, about 0.3 s, after the second kill's threshold).
    let holdFrom = Infinity;
    const proxy = await startFaultProxy(endpoint, (i) => ({ ...faults.throttled(), delayMs: i >= holdFrom ? 60_000 : 25 }));
    closeAfterAll(proxy);
    const checkpoint = join(dir(), 'rej.checkpoint.json');
    const rejects = join(dir(), 'rej.rejects.jsonl');
    const args = [
      'load',
      input,
      '--table',
      table,
      ...TYPES,
      '--checkpoint',
      checkpoint,
      '--rejects',
      rejects,
      '--max-attempts',
      '1',
      '--no-pacing',
      '--concurrency',
      '8',
      // Streamed, with restart points every 1,000 rows: resumes start after rejects, keeping theirs from the reject file.
      '--order',
      'input',
    ];
    const env = { ...localEnv(proxy.url), DDB_SPREAD_TEST_RESTART_ROWS: '1000' };
    // The first run answers 460 calls, so its checkpoint reaches 440 batches and it cannot finish the 600;
    // the second resumes from at most 460, answers 80 more calls (batches after the resume point, in order)
    // and is killed once its checkpoint has 60 more batches than the resume point.
    for (const [answered, more] of [
      [460, 440],
      [80, 60],
    ] as const) {
      const at = batchesDone(checkpoint) + more;
      holdFrom = proxy.calls.length + answered;
      const run = await cli(args, env, { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= at });
      expect(run.signal, run.stderr).toBe('SIGKILL');
      expect(batchesDone(checkpoint)).toBeLessThan(rows / 25);
      const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { batchesDone: number; restarts: { batch: number; row: number }[] };
      expect(saved.restarts.some((p) => p.row > 0 && p.batch <= saved.batchesDone)).toBe(true);
    }
    holdFrom = Infinity;
    const last = await cli(args, env);
    expect(last.code, last.stderr).toBe(2);
    expect(last.stderr).toContain('resuming from checkpoint');
    const lines = await readRejects(rejects);
    expect(new Set(lines.map((l) => l.line)).size).toBe(rows);
    expect(lines.length).toBe(rows);
    expect(lines.every((l) => l.code === 'RETRIES_EXHAUSTED')).toBe(true);
    expect(lines.every((l) => l.raw.startsWith('cust-'))).toBe(true);
    expect(last.stderr).toMatch(/rejected[^\n]*15,000/);
  }, 240_000);

  it('a second run on a checkpoint in use is refused before it writes; a lock left by kill -9 does not block the resume', async () => {
    const rows = 6000;
    const input = join(dir(), 'lock.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'lock.checkpoint.json');
    const base = ['load', input, '--table', table, ...TYPES, '--checkpoint', checkpoint, '--rejects', join(dir(), 'lock.rejects.jsonl')];
    const env = localEnv(endpoint);
    // Read by the first run's kill condition before the second run exists.
    const refused: { run?: Awaited<ReturnType<typeof cli>> } = {};
    // The first run is slow (--wcu 300); the second starts once the first has saved progress.
    const first = cli([...base, '--wcu', '300'], env, {
      signal: 'SIGKILL',
      when: () => refused.run !== undefined,
    });
    while (batchesDone(checkpoint) < 2) await new Promise((r) => setTimeout(r, 50));
    const before = readFileSync(checkpoint, 'utf8');
    // Its own reject file, so the checkpoint's lock is what refuses it (the reject file has one too).
    const second = await cli([...base.slice(0, -1), join(dir(), 'lock.second.rejects.jsonl'), '--json'], env);
    refused.run = second;
    expect(second.code, second.stderr).toBe(75);
    expect(second.stderr).toMatch(/--checkpoint .*lock\.checkpoint\.json is in use by process \d+ on /);
    expect(second.stderr).not.toContain('probably a bug');
    // Refused before anything was written: the checkpoint is the first run's (its progress only grows).
    expect(batchesDone(checkpoint)).toBeGreaterThanOrEqual((JSON.parse(before) as { batchesDone: number }).batchesDone);
    expect(JSON.parse(second.stdout)).toMatchObject({ error: { code: 'OUTPUT_LOCKED' } });
    const killed = await first;
    expect(killed.signal).toBe('SIGKILL');
    const third = await cli(base, env);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toContain('resuming from checkpoint');
    expect((await scanAll(client(), table)).length).toBe(rows);
    // The lock is gone once the run ends.
    expect((await readdir(dir())).filter((f) => f.startsWith('lock.checkpoint.json.lock'))).toEqual([]);
  }, 180_000);

  it('one slow early batch does not hold back what the checkpoint records: rewrites after kill -9 stay within concurrency x 25 + one save interval', async () => {
    const rows = 20_000;
    const input = join(dir(), 'slow.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    // The first call hangs for a minute and is then throttled; every other call goes through.
    const proxy = await startFaultProxy(endpoint, (i) =>
      i === 0 ? { kind: 'error', ...dynamoErrors.provisionedThroughputExceeded, delayMs: 60_000 } : { kind: 'forward' },
    );
    closeAfterAll(proxy);
    const checkpoint = join(dir(), 'slow.checkpoint.json');
    const concurrency = 8;
    const args = [
      'load',
      input,
      '--table',
      table,
      ...TYPES,
      '--checkpoint',
      checkpoint,
      '--rejects',
      join(dir(), 'slow.rejects.jsonl'),
      '--concurrency',
      String(concurrency),
      '--no-pacing',
    ];
    const env = localEnv(proxy.url);
    const killed = await cli(args, env, { signal: 'SIGKILL', when: () => proxy.calls.length >= 400 });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const beforeResume = forwardedItems(proxy);
    expect(beforeResume).toBeGreaterThan(5000);
    const resumed = await cli(args, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await scanAll(client(), table)).length).toBe(rows);
    const rewrites = forwardedItems(proxy) - rows;
    // In flight (concurrency x 25) plus what DynamoDB Local takes between two saves (200 ms; well under 2,000 items).
    expect(rewrites, `${rewrites} rows written twice`).toBeLessThanOrEqual(concurrency * 25 + 2000);
  }, 180_000);

  it('--no-excerpts: no row contents in the checkpoint or its side files, which are 0600', async () => {
    // Enough rows, and slow enough throttles, that the load is still running when 60 batches are recorded
    // (3,000 rows once finished before the kill on a busy CI machine).
    const rows = 20_000;
    const input = join(dir(), 'secret.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    const proxy = await startFaultProxy(endpoint, (i) => (i % 3 === 0 ? { ...faults.throttled(), delayMs: 25 } : faults.forward()));
    closeAfterAll(proxy);
    const folder = join(dir(), 'secret');
    await import('node:fs/promises').then((fs) => fs.mkdir(folder));
    const checkpoint = join(folder, 'c.json');
    const rejects = join(dir(), 'secret.rejects.jsonl');
    const args = [
      'load',
      input,
      '--table',
      table,
      ...TYPES,
      '--checkpoint',
      checkpoint,
      '--rejects',
      rejects,
      '--max-attempts',
      '1',
      '--no-pacing',
      '--no-excerpts',
    ];
    const run = await cli(args, localEnv(proxy.url), { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 60 });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const rejected = await readRejects(rejects);
    expect(rejected.length).toBeGreaterThan(0);
    for (const name of await readdir(folder)) {
      const text = await readFile(join(folder, name), 'utf8');
      expect(text, name).not.toMatch(/cust-\d{6}|name-\d+/);
      expect(statSync(join(folder, name)).mode & 0o777, name).toBe(0o600);
    }
  }, 120_000);

  it('a malformed checkpoint is refused with a clear message naming the file; ./c.csv and c.csv are one input', async () => {
    const input = join(dir(), 'c.csv');
    await writeGeneratedCsv(input, 200);
    const table = await newTable(KEYS);
    const env = localEnv(endpoint);
    const checkpoint = join(dir(), 'bad.checkpoint.json');
    const args = (file: string) => ['load', file, '--table', table, ...TYPES, '--checkpoint', checkpoint, '--rejects', join(dir(), 'bad.rejects.jsonl')];
    for (const text of ['null', '{"version":1}', '{"version":2,"status":"running"}', '{"version":2,"status":', '[]', '"x"']) {
      await writeFile(checkpoint, text);
      const run = await cli(args('c.csv'), env);
      // EX_CONFIG: not a checkpoint ddb-spread wrote; no retry changes it.
      expect(run.code, text).toBe(78);
      expect(run.stderr, text).not.toContain('probably a bug');
      expect(run.stderr, text).toContain(`checkpoint ${checkpoint}`);
      expect(run.stderr, text).toMatch(/delete it|another --checkpoint/);
    }
    await import('node:fs/promises').then((fs) => fs.rm(checkpoint));
    const done = await cli(args('c.csv'), env);
    expect(done.code, done.stderr).toBe(0);
    const again = await cli(args('./c.csv'), env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/already complete|nothing to do/);
  }, 120_000);

  it('a table deleted and created again under its name is not the table the checkpoint loaded: refused (78), finished or not, never "nothing to do"', async () => {
    const input = join(dir(), 'recreated.csv');
    await writeGeneratedCsv(input, 300);
    const table = await newTable(KEYS);
    const env = localEnv(endpoint);
    const checkpoint = join(dir(), 'recreated.checkpoint.json');
    const args = ['load', input, '--table', table, ...TYPES, '--checkpoint', checkpoint, '--rejects', join(dir(), 'recreated.rejects.jsonl')];
    const first = await cli(args, env);
    expect(first.code, first.stderr).toBe(0);
    // The same name, the same keys, empty: as a platform team's teardown and re-creation leaves it.
    await client().send(new DeleteTableCommand({ TableName: table }));
    await client().send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [
          { AttributeName: KEYS.partitionKey.name, AttributeType: KEYS.partitionKey.type },
          { AttributeName: KEYS.sortKey!.name, AttributeType: KEYS.sortKey!.type },
        ],
        KeySchema: [
          { AttributeName: KEYS.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: KEYS.sortKey!.name, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const again = await cli(args, env);
    expect(again.code, again.stderr).toBe(78);
    expect(again.stderr).toContain(`checkpoint ${checkpoint} loaded another table named ${table}`);
    expect(again.stderr).not.toMatch(/nothing to do/);
    expect(await scanAll(client(), table)).toHaveLength(0);
    // As told: without the checkpoint, the input loads into the new table.
    await rm(checkpoint);
    const fresh = await cli(args, env);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(await scanAll(client(), table)).toHaveLength(300);
  }, 120_000);

  it('a finished checkpoint reports its outcome again: exit 2 when the load had rejects, with the same counters', async () => {
    const input = join(dir(), 'done.csv');
    await writeGeneratedCsv(input, 500);
    // Two rows whose qty is not a number: rejected while reading.
    const text = (await readFile(input, 'utf8'))
      .replace('\ncust-000010,0,name-80,', '\ncust-000010,0,name-80,abc')
      .replace('\ncust-000020,0,name-160,', '\ncust-000020,0,name-160,x');
    await writeFile(input, text);
    const table = await newTable(KEYS);
    const env = localEnv(endpoint);
    const args = [
      'load',
      input,
      '--table',
      table,
      ...TYPES,
      '--checkpoint',
      join(dir(), 'done.checkpoint.json'),
      '--rejects',
      join(dir(), 'done.rejects.jsonl'),
      '--json',
    ];
    const first = await cli(args, env);
    expect(first.code, first.stderr).toBe(2);
    const firstSummary = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(firstSummary['rejected']).toBe(2);
    for (let run = 0; run < 2; run++) {
      const again = await cli(args, env);
      expect(again.code, again.stderr).toBe(2);
      expect(again.stderr).toContain('already completed');
      const summary = JSON.parse(again.stdout) as Record<string, unknown>;
      expect(summary).toMatchObject({
        alreadyComplete: true,
        rowsRead: 500,
        written: 498,
        rejected: 2,
        rejectedByReason: firstSummary['rejectedByReason'] as object,
        complete: false,
      });
    }
    // With JSON logs the summary is one log line, as after a load.
    const logged = await cli([...args.filter((a) => a !== '--json'), '--log-format', 'json'], env);
    expect(logged.code).toBe(2);
    const summaryLine = logged.stderr.split('\n').find((l) => l.includes('"type":"summary"'));
    expect(JSON.parse(summaryLine ?? '{}')).toMatchObject({ alreadyComplete: true, rejected: 2 });
  }, 120_000);

  it('a fresh copy of the same bytes (new modification time) resumes; a same-size change in the middle is refused', async () => {
    // 8,000 rows (~300 KB): the change in the middle is well past the first 64 KB, so only the SHA-256 sees it.
    const rows = 8_000;
    const input = join(dir(), 'copy.csv');
    await writeGeneratedCsv(input, rows);
    const original = await readFile(input);
    const table = await newTable(KEYS);
    const env = localEnv(endpoint);
    const checkpoint = join(dir(), 'copy.checkpoint.json');
    const args = ['load', input, '--table', table, ...TYPES, '--checkpoint', checkpoint, '--rejects', join(dir(), 'copy.rejects.jsonl'), '--wcu', '3000'];
    const stopped = await cli(args, env, { signal: 'SIGINT', when: () => batchesDone(checkpoint) >= 40 });
    expect(stopped.code, stopped.stderr).toBe(130);
    // The same bytes in the middle changed (one digit of a qty), same size, new modification time: refused.
    const changed = Buffer.from(original);
    const middle = changed.indexOf('cust-000500,0,', 0, 'utf8');
    expect(middle).toBeGreaterThan(128 * 1024);
    const digit = changed.indexOf('.', middle) - 1;
    changed[digit] = changed[digit] === 0x31 ? 0x32 : 0x31;
    await new Promise((r) => setTimeout(r, 20));
    await writeFile(input, changed);
    const refused = await cli(args, env);
    expect(refused.code, refused.stderr).toBe(78);
    expect(refused.stderr).toContain('SHA-256 differs');
    // The original bytes downloaded again: a new modification time, the same content; it resumes.
    await writeFile(input, original);
    const resumed = await cli(
      args.filter((a, i) => a !== '--wcu' && args[i - 1] !== '--wcu'),
      env,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    expect((await scanAll(client(), table)).length).toBe(rows);
  }, 120_000);
});

describe("the checkpoint's write-reject log is an output too", () => {
  // <checkpoint>.write-rejects is created (truncated) when a checkpoint starts; it was checked
  // against nothing, so an input of that name was emptied before its first row was read, and the load
  // "completed" with 0 rows; a reject file of that name was shared with the log.
  it('an input or a reject file at <checkpoint>.write-rejects is refused before anything is written', async () => {
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'guard.ckpt');
    const input = `${checkpoint}.write-rejects`;
    const text = 'pk,sk\na,1\nb,2\n';
    await writeFile(input, text);
    const asInput = await cli(
      ['load', input, '--input-format', 'csv', '--table', table, '--checkpoint', checkpoint, '--rejects', join(dir(), 'guard.rejects')],
      localEnv(endpoint),
    );
    expect(asInput.code, asInput.stderr).toBe(64);
    expect(asInput.stderr).toContain('--checkpoint');
    expect(await readFile(input, 'utf8')).toBe(text);
    expect(await scanAll(client(), table)).toEqual([]);

    const csv = join(dir(), 'guard.csv');
    await writeFile(csv, text);
    const asRejects = await cli(['load', csv, '--table', table, '--checkpoint', checkpoint, '--rejects', input], localEnv(endpoint));
    expect(asRejects.code, asRejects.stderr).toBe(64);
    expect(await scanAll(client(), table)).toEqual([]);
  });
});
