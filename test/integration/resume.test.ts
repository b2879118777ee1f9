/**
 * Resume after a crash: a 25k-row load killed with SIGKILL at random points, resumed each
 * time with the same command, ends with every row in the table, and rows written twice stay within the
 * stated bound; the same with spread order and random shard suffixes; SIGINT stops with 130 and resumes;
 * a checkpoint refuses other options and a finished one does nothing.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../tools/mulberry32.js';
import { load, type LoaderError } from '../../src/index.js';
import { batchesDone } from '../support/checkpoint.js';
import { runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy.js';
import { GENERATED_TYPES, GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const TYPES = ['--types', GENERATED_TYPES_FLAG];
const CONCURRENCY = 8;

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'resume', processCredentials: true });

/** Runs the CLI; sends `signal` once the checkpoint at `path` records at least `batches` done. */
const cli = (args: string[], env: NodeJS.ProcessEnv, kill?: { signal: NodeJS.Signals; path: string; batches: number }) =>
  runCli(args, {
    cwd: dir(),
    env,
    stdout: 'ignore',
    timeoutMs: 120_000,
    ...(kill ? { kill: { signal: kill.signal, when: () => batchesDone(kill.path) >= kill.batches } } : {}),
  });

/** Items the proxy saw sent in BatchWriteItem calls, over all runs. */
const sentItems = (proxy: FaultProxy) => proxy.calls.reduce((n, c) => n + c.requestCount, 0);

describe('--checkpoint', () => {
  it('kill -9 at random points of a 25k-row load, resumed each time: every row lands; rewrites stay within the bound', async () => {
    // 25,000 rows (1,000 batches): four kills well into the writing (each asserted to land past the one before,
    // over a tenth of the batches in), in a quarter of the time 100,000 took (CI runs near its limit).
    const rows = 25_000;
    const input = join(dir(), 'big.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    const proxy = await startFaultProxy(endpoint);
    closeAfterAll(proxy);
    const env = localEnv(proxy.url);
    const checkpoint = join(dir(), 'big.checkpoint.json');
    const args = [
      'load',
      input,
      '--table',
      table,
      ...TYPES,
      '--checkpoint',
      checkpoint,
      '--concurrency',
      String(CONCURRENCY),
      '--rejects',
      join(dir(), 'big.rejects.jsonl'),
      '--json',
    ];
    const random = mulberry32(2026);
    let kills = 0;
    let resumes = 0;
    const progressAtKills: number[] = [];
    for (let attempt = 0; attempt < 12; attempt++) {
      // Killed at random points of the writing: each a random 5-20% of the 1,000 batches past the last.
      const killAt = (progressAtKills.at(-1) ?? 0) + 50 + Math.floor(random() * 150);
      const run = await cli(args, env, kills < 4 ? { signal: 'SIGKILL', path: checkpoint, batches: killAt } : undefined);
      if (run.stderr.includes('resuming from checkpoint')) resumes++;
      if (run.signal === 'SIGKILL') {
        kills++;
        // Each kill must land while writing, after more batches than the one before (a kill during the
        // read of a round-robin load proves nothing).
        const state = JSON.parse(await readFile(checkpoint, 'utf8')) as { batchesDone: number };
        expect(state.batchesDone, `kill ${kills}`).toBeGreaterThan(progressAtKills.at(-1) ?? 0);
        progressAtKills.push(state.batchesDone);
        continue;
      }
      expect(run.code, run.stderr).toBe(0);
      break;
    }
    expect(kills).toBe(4);
    // Killed well into the writing: over a tenth of the batches done before the last kill.
    expect(progressAtKills.at(-1)!).toBeGreaterThan(rows / 25 / 10);
    expect(resumes).toBeGreaterThanOrEqual(4);
    expect((await scanAll(client(), table)).length).toBe(rows);
    const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { status: string; written: number };
    expect(saved).toMatchObject({ status: 'complete', written: rows });
    // The bound: per kill, the batches in flight or done out of order (--concurrency x 25 items) plus
    // those done in the 200 ms since the last save (at most what DynamoDB Local takes in 200 ms, well under 2,000 items here).
    const rewrites = sentItems(proxy) - rows;
    const bound = kills * (CONCURRENCY * 25 + 2000);
    expect(rewrites).toBeGreaterThanOrEqual(0);
    expect(rewrites, `${rewrites} rows written twice over ${kills} kills`).toBeLessThanOrEqual(bound);
    // A finished checkpoint does nothing, and says so.
    const again = await cli(args, env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('nothing to do');
    // ...and stays finished, so a scheduler running it again and again never reads the input anew.
    expect((JSON.parse(await readFile(checkpoint, 'utf8')) as { status: string }).status).toBe('complete');
    const third = await cli(args, env);
    expect(third.stderr).toContain('nothing to do');
    expect(sentItems(proxy) - rows).toBe(rewrites);
  }, 300_000);

  it('spread order with random shard suffixes: kill -9 twice, resume; the suffixes come out the same (no row under two keys)', async () => {
    const rows = 16_000;
    const input = join(dir(), 'shard.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'shard.checkpoint.json');
    const args = [
      'load',
      input,
      '--table',
      table,
      ...TYPES,
      '--order',
      'spread',
      '--shard',
      'random:4',
      '--checkpoint',
      checkpoint,
      '--rejects',
      join(dir(), 'shard.rejects.jsonl'),
      '--shard-manifest',
      join(dir(), 'shard.shards.json'),
    ];
    const env = localEnv(endpoint);
    for (const batches of [130, 370]) {
      const run = await cli(args, env, { signal: 'SIGKILL', path: checkpoint, batches });
      expect(run.signal ?? run.code).toBe('SIGKILL');
    }
    const last = await cli(args, env);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stderr).toContain('resuming from checkpoint');
    const items = await scanAll(client(), table);
    // A different suffix on resume would store a row under a second partition key: more items than rows.
    expect(items.length).toBe(rows);
    expect(items.every((i) => /#[0-3]$/.test(i['pk']!.S!))).toBe(true);
    const manifest = JSON.parse(await readFile(join(dir(), 'shard.shards.json'), 'utf8')) as { keys: Record<string, string[]> };
    expect(Object.keys(manifest.keys).length).toBe(rows / 8);
  }, 120_000);

  it('SIGINT stops with 130 and a saved checkpoint; the same command resumes; other options are refused', async () => {
    const rows = 10_000;
    const input = join(dir(), 'int.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'int.checkpoint.json');
    const base = ['load', input, '--table', table, ...TYPES, '--checkpoint', checkpoint, '--rejects', join(dir(), 'int.rejects.jsonl')];
    const env = localEnv(endpoint);
    const stopped = await cli([...base, '--wcu', '4000'], env, { signal: 'SIGINT', path: checkpoint, batches: 100 });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain(`checkpoint ${checkpoint} saved: run the same command to resume`);
    const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { status: string; batchesDone: number };
    expect(saved.status).toBe('stopped');
    expect(saved.batchesDone).toBeGreaterThan(0);
    expect(saved.batchesDone).toBeLessThan(rows / 25);

    const refused = await cli([...base, '--order', 'input'], env);
    expect(refused.code).toBe(78); // EX_CONFIG, a restart cannot fix it
    expect(refused.stderr).toMatch(/option order differs from checkpoint .* \("auto" then, "input" now\); resume with the same options, or delete/);

    // The rate is not part of what is written: a different --wcu resumes.
    const resumed = await cli([...base, '--wcu', '8000'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    expect((await scanAll(client(), table)).length).toBe(rows);
  }, 120_000);

  it('batches cut short by a fatal error are not recorded as done, whichever fails first: the resume stores every row (regression)', async () => {
    const rows = 1000;
    const input = join(dir(), 'fatal.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    // From the 11th call on, credentials "expire": every batch in flight fails fatally, the lowest last,
    // so later batches fail after the first fatal error is known (where the bug recorded them as done).
    const proxy = await startFaultProxy(endpoint, (i) =>
      i >= 10
        ? {
            kind: 'error',
            status: 400,
            type: 'com.amazon.coral.service#ExpiredTokenException',
            message: 'The security token included in the request is expired',
            delayMs: i === 10 ? 80 : 5,
          }
        : { kind: 'forward' },
    );
    closeAfterAll(proxy);
    const checkpointPath = join(dir(), 'fatal.checkpoint.json');
    const options = {
      input,
      table,
      endpoint: proxy.url,
      region: 'us-east-1',
      types: GENERATED_TYPES,
      concurrency: 4,
      checkpointPath,
      rejectsPath: join(dir(), 'fatal.rejects.jsonl'),
    };
    const failed = await load(options).then(
      () => undefined,
      (e: unknown) => e as LoaderError,
    );
    expect(failed?.code).toBe('ACCESS_DENIED');
    const saved = JSON.parse(await readFile(checkpointPath, 'utf8')) as { status: string; batchesDone: number; written: number };
    expect(saved.status).toBe('stopped');
    // What the checkpoint says is done was stored: its batches hold exactly the rows it counts as written.
    expect(saved.written).toBe(saved.batchesDone * 25);
    expect((await scanAll(client(), table)).length).toBeGreaterThanOrEqual(saved.written);
    proxy.setPolicy(() => ({ kind: 'forward' }));
    const resumed = await load(options);
    expect(resumed).toMatchObject({ rowsRead: rows, written: rows, complete: true });
    expect((await scanAll(client(), table)).length).toBe(rows);
  });

  it('a stop asked for after the checkpoint recorded the load complete changes nothing: the load reports complete, as its checkpoint does (regression)', async () => {
    const rows = 300;
    const input = join(dir(), 'late-stop.csv');
    await writeGeneratedCsv(input, rows);
    const table = await newTable(KEYS);
    const checkpointPath = join(dir(), 'late-stop.checkpoint.json');
    const status = () => {
      try {
        return (JSON.parse(readFileSync(checkpointPath, 'utf8')) as { status: string }).status;
      } catch {
        return undefined;
      }
    };
    const controller = new AbortController();
    let stoppedLate = false;
    const options = {
      input,
      table,
      endpoint,
      region: 'us-east-1',
      types: GENERATED_TYPES,
      checkpointPath,
      rejectsPath: join(dir(), 'late-stop.rejects.jsonl'),
    };
    // The last progress event comes after the checkpoint is closed: a signal there (Ctrl-C a moment after
    // the last write) used to make load() reject with ABORTED while the checkpoint said complete.
    const result = await load(options, {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'progress' && status() === 'complete' && !stoppedLate) {
          stoppedLate = true;
          controller.abort();
        }
      },
    });
    expect(stoppedLate).toBe(true);
    expect(result).toMatchObject({ rowsRead: rows, written: rows, complete: true });
    expect(status()).toBe('complete');
  });
});
