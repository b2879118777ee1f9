/**
 * DynamoDB exports read with their data files side by side (the auto order), through the CLI against
 * DynamoDB Local. An export chain killed with SIGKILL mid-load and resumed ends as the source table (rejects
 * in the reject file once; a full export in runs of one key, where the window goes over to round-robin); a
 * checkpoint of the earlier reading (data files one after another) is refused rather than resumed over other
 * rows; more data files than are read at once, empty ones among them, load exactly; a damaged data file is
 * named and leaves the load unfinished; a data file changed before the resume is refused.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchesDone } from '../support/checkpoint.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { chainExports, simulateChain, writeExport, type SimulatedChain } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'exportInterleaved', processCredentials: true, keys: KEYS });

beforeAll(assertCliBuilt);

let cases = 0;

/** The table as "pk/sk" -> "v|n". */
async function tableState(table: string): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  for (const item of await scanAll(client(), table)) state.set(`${item['pk']!.S}/${item['sk']!.N}`, `${item['v']?.S}|${item['n']?.N}`);
  return state;
}

function oracle(chain: SimulatedChain): Map<string, string> {
  const state = new Map<string, string>();
  for (const item of chain.final.values()) state.set(`${item['pk']!.S}/${item['sk']!.N}`, `${item['v']?.S}|${item['n']?.N}`);
  return state;
}

/** Writes the chain's exports under a fresh folder; returns their folders in chain order. */
async function writtenChain(chain: SimulatedChain): Promise<{ root: string; folders: string[] }> {
  const root = join(dir(), `case-${++cases}`);
  const folders: string[] = [];
  for (const fixture of chainExports(chain, 'src')) folders.push(await writeExport(root, fixture));
  return { root, folders };
}

const records = (chain: SimulatedChain) => [chain.full, ...chain.incrementals].flat(2).length;

describe('exports read side by side', () => {
  it('a chain killed twice with SIGKILL and resumed ends as the source table, every record counted once', async () => {
    const source = simulateChain(7, { items: 1200, windows: 2, changesPerWindow: 400, partitions: 6 });
    // Items whose partition key is a number in a table keyed by a string: rejected, before and after each kill.
    const bad = (i: number) => ({ Item: { pk: { N: String(i) }, sk: { N: String(i) }, v: { S: 'bad' } } });
    const chain = { ...source, full: source.full.map((lines, f) => lines.flatMap((line, i) => (i % 61 === f ? [line, bad(f * 1000 + i)] : [line]))) };
    const { root } = await writtenChain(chain);
    const table = await newTable();
    const checkpoint = join(root, 'ck.json');
    const rejects = join(root, 'rejects.jsonl');
    const args = [
      'load',
      join(root, 'src', 'AWSDynamoDB'),
      '--table',
      table,
      '--checkpoint',
      checkpoint,
      '--rejects',
      rejects,
      '--json',
      '--concurrency',
      '4',
      '--wcu',
      '2000',
    ];
    const env = localEnv(endpoint);
    for (const batches of [12, 36]) {
      const run = await runCli(args, {
        cwd: root,
        env,
        stdout: 'ignore',
        timeoutMs: 120_000,
        kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= batches },
      });
      expect(run.signal ?? run.code, run.stderr).toBe('SIGKILL');
    }
    const last = await runCli(args, { cwd: root, env, timeoutMs: 120_000 });
    expect(last.code, last.stderr).toBe(2);
    const result = JSON.parse(last.stdout) as Record<string, number | boolean>;
    const badRows = chain.full.flat().filter((l) => JSON.stringify(l).includes('"bad"')).length;
    expect(result['rejected']).toBe(badRows);
    // Each rejected row in the reject file once, with its file and line.
    const rejected = (await readFile(rejects, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; line: number });
    expect(new Set(rejected.map((r) => `${r.file}:${r.line}`)).size).toBe(badRows);
    expect(rejected).toHaveLength(badRows);
    expect(result['rowsRead']).toBe(records(chain));
    expect((result['written'] as number) + (result['superseded'] as number) + (result['rejected'] as number)).toBe(records(chain));
    expect(await tableState(table)).toEqual(oracle(chain));
  });

  it('a full export in long runs of one key (the window goes over to round-robin), killed and resumed, ends as the source table', async () => {
    const source = simulateChain(23, { items: 1600, windows: 2, changesPerWindow: 500, partitions: 1 });
    // Eight partition keys, the full export's one data file sorted by them: runs of hundreds of items per key.
    const line = (l: unknown) => JSON.parse(JSON.stringify(l).replace(/"S":"p(\d+)"/g, (_, n: string) => `"S":"p${Number(n) % 8}"`)) as Record<string, unknown>;
    const pkOf = (l: Record<string, unknown>) => JSON.stringify(l).match(/"pk":\{"S":"(p\d+)"/)![1]!;
    const full = source.full.map((lines) => lines.map(line).sort((a, b) => pkOf(a).localeCompare(pkOf(b))));
    const incrementals = source.incrementals.map((parts) => parts.map((lines) => lines.map(line)));
    const final = new Map(
      [...source.final.values()].map((item) => line(item) as Record<string, Record<string, string>>).map((i) => [`${i['pk']!.S}/${i['sk']!.N}`, i]),
    );
    const chain: SimulatedChain = { ...source, full, incrementals, final };
    const { root } = await writtenChain(chain);
    const table = await newTable();
    const checkpoint = join(root, 'ck.json');
    const args = ['load', join(root, 'src'), '--table', table, '--checkpoint', checkpoint, '--json', '--window', '200', '--concurrency', '4', '--wcu', '2000'];
    const env = localEnv(endpoint);
    const killed = await runCli(args, {
      cwd: root,
      env,
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 25 },
    });
    expect(killed.signal ?? killed.code, killed.stderr).toBe('SIGKILL');
    const last = await runCli(args, { cwd: root, env, timeoutMs: 120_000 });
    expect(last.code, last.stderr).toBe(0);
    expect(last.stderr).toMatch(/round-robin/);
    expect(JSON.parse(last.stdout)).toMatchObject({ rowsRead: records(chain), complete: true });
    expect(await tableState(table)).toEqual(oracle(chain));
  });

  it("a checkpoint of an earlier ddb-spread, which read an export's data files one after another, is refused, not resumed over other rows", async () => {
    const chain = simulateChain(31, { items: 1500, windows: 1, changesPerWindow: 200, partitions: 6 });
    const { root } = await writtenChain(chain);
    const table = await newTable();
    const checkpoint = join(root, 'ck.json');
    const args = ['load', join(root, 'src'), '--table', table, '--checkpoint', checkpoint, '--json', '--concurrency', '2', '--wcu', '1000'];
    const env = localEnv(endpoint);
    const killed = await runCli(args, {
      cwd: root,
      env,
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 12 },
    });
    expect(killed.signal ?? killed.code, killed.stderr).toBe('SIGKILL');
    // The checkpoint as the earlier ddb-spread wrote it: the same format, no record of how the auto order read.
    // Resumed over side-by-side reading, its done batches would be other rows (on a 3,000-item chain, 232 items went missing with exit 0).
    const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { options: Record<string, unknown> };
    delete saved.options['autoReading'];
    await writeFile(checkpoint, JSON.stringify(saved));
    // Counted once the killed load's calls in flight have landed (DynamoDB Local still applies a
    // BatchWriteItem whose caller was killed mid-call), so the refused resume is not blamed for them.
    let written = (await tableState(table)).size;
    for (let i = 0; i < 40; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = (await tableState(table)).size;
      if (now === written) break;
      written = now;
    }
    const resumed = await runCli(args, { cwd: root, env, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(78);
    expect(resumed.stderr).toMatch(/taken by an earlier ddb-spread, whose auto order read this input in other batches/);
    expect((await tableState(table)).size).toBe(written);
  });

  it('more data files than are read at once, empty ones among them, load exactly', async () => {
    const chain = simulateChain(11, { items: 600, windows: 1, changesPerWindow: 200, partitions: 70 });
    // Every seventh data file of the full export empty (an empty partition): its items go to the next file.
    const full = chain.full.map((lines, i) => (i % 7 === 3 ? [] : [...lines, ...(i % 7 === 2 ? chain.full[i + 1]! : [])]));
    const { root } = await writtenChain({ ...chain, full });
    const table = await newTable();
    const run = await runCli(['load', join(root, 'src'), '--table', table, '--json'], { cwd: root, env: localEnv(endpoint), timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(await tableState(table)).toEqual(oracle(chain));
  });

  it('a damaged data file among others is named, and the load neither completes nor exits 0', async () => {
    const chain = simulateChain(13, { items: 1500, windows: 1, changesPerWindow: 200, partitions: 5 });
    const fixtures = chainExports(chain, 'src');
    // The full export's third data file cut short: its gzip ends mid-stream.
    const damaged = Object.keys(fixtures[0]!.files).filter((f) => f.includes('/data/'))[2]!;
    fixtures[0]!.files[damaged] = fixtures[0]!.files[damaged]!.subarray(0, Math.floor(fixtures[0]!.files[damaged]!.length / 2));
    const root = join(dir(), `case-${++cases}`);
    for (const fixture of fixtures) await writeExport(root, fixture);
    const table = await newTable();
    const checkpoint = join(root, 'ck.json');
    const run = await runCli(['load', join(root, 'src'), '--table', table, '--checkpoint', checkpoint, '--json'], {
      cwd: root,
      env: localEnv(endpoint),
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).not.toBe(0);
    expect(run.stderr).toContain(damaged.slice(damaged.lastIndexOf('/') + 1));
    const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { status: string };
    expect(saved.status).not.toBe('complete');
  });

  it('a data file changed before the resume is refused, not loaded from its new bytes', async () => {
    const chain = simulateChain(17, { items: 1200, windows: 1, changesPerWindow: 200, partitions: 4 });
    const { root, folders } = await writtenChain(chain);
    const table = await newTable();
    const checkpoint = join(root, 'ck.json');
    const args = ['load', ...folders, '--table', table, '--checkpoint', checkpoint, '--json', '--concurrency', '2', '--wcu', '1500'];
    const env = localEnv(endpoint);
    const killed = await runCli(args, {
      cwd: root,
      env,
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 20 },
    });
    expect(killed.signal ?? killed.code, killed.stderr).toBe('SIGKILL');
    // The full export's first data file rewritten with other items, its manifest left alone.
    const manifest = await readFile(join(folders[0]!, 'manifest-files.json'), 'utf8');
    const key = (JSON.parse(manifest.split('\n')[0]!) as { dataFileS3Key: string }).dataFileS3Key;
    const file = join(folders[0]!, 'data', key.slice(key.lastIndexOf('/') + 1));
    const lines = chain.full[0]!.map((l) => JSON.stringify(l).replace(/"v0-/g, '"changed-'));
    await writeFile(file, gzipSync(`${lines.join('\n')}\n`));
    const resumed = await runCli(args, { cwd: root, env, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).not.toBe(0);
    const state = await tableState(table);
    expect([...state.values()].some((v) => v.startsWith('changed-'))).toBe(false);
  });
});
