/**
 * Resume at a restart point: a streaming load (window and input orders) with a checkpoint empties its order
 * and its batcher every few rows and at every part, and a resume opens the input at the latest such point
 * whose batches before it are all done. Killed with SIGKILL at several points and resumed, the table ends
 * as a load in one go leaves it (keys whose rows straddle points, later rows superseding earlier ones), the
 * counts add up, rejects are in the reject file once each, and a file changed between runs is refused. An
 * export chain's data files, read side by side, resume each at its own line in the same rotation.
 */
import { readFile, writeFile, mkdir, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesDone, killableCli } from '../support/checkpoint.js';
import { runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { chainExports, simulateChain, writeExport, type ExportLine } from '../support/exportFixture.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
// Restart points every 250 rows (10 batches), windows of 100-150: each load is a few hundred batches, its
// kills several points in and 45-80 batches before its end (each asserted to land: SIGKILL, not exit 0).
const RESTART_ROWS = 250;

const { endpoint, client, dir, newTable } = useLocalAws({ name: 'restartPoints', processCredentials: true });

/** Rows of 37 keys in turn; sort keys repeat, so later rows supersede earlier ones of their key, across restart points too. */
function csvRows(from: number, to: number, bad: (i: number) => boolean = () => false): string {
  let text = '';
  for (let i = from; i < to; i++) text += `k${i % 37},${bad(i) ? 'x' : (i * 7) % 3001},${i}\n`;
  return text;
}

interface Saved {
  status: string;
  batchesDone: number;
  restarts: { batch: number; part: number; row: number; line: number; offset?: number; rejected: number }[];
}

/** Whether a resume from `at` starts at a restart point with rejects before it (kept from the reject file). */
const resumesAfterRejects = (at: Saved) => at.restarts.some((p) => p.rejected > 0 && p.batch <= at.batchesDone);

/** A checkpoint whose restart points may lie inside files read side by side. */
interface SavedSide extends Saved {
  restarts: (Saved['restarts'][number] & { sideBySide?: { files: { row: number }[] } })[];
}

async function saved(path: string): Promise<Saved> {
  return JSON.parse(await readFile(path, 'utf8')) as Saved;
}

/** Items of a table as comparable text, sorted. */
async function contents(table: string): Promise<string[]> {
  return (await scanAll(client(), table)).map((i) => `${i['pk']!.S}/${i['sk']!.N}/${i['v']!.N}`).sort();
}

/** Rejects of a reject file as file:line:code, sorted. */
async function rejects(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { file: string; line: number; code: string })
    .map((r) => `${r.file}:${r.line}:${r.code}`)
    .sort();
}

/**
 * Loads `inputs` killed at each of `kills` (batches done), then to the end; and in one go into another
 * table. Returns both tables' contents, the final JSON result, the rejects of both, and the checkpoints seen at each kill.
 */
async function killedAndResumed(
  name: string,
  inputs: string[],
  extra: string[],
  kills: number[],
  /** Runs after kill `i`, before the next run (to tamper with what the runs left behind). */
  between?: (i: number, paths: { rejectsPath: string; checkpoint: string }) => Promise<void>,
  moreEnv: Record<string, string> = {},
) {
  const env = { ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: String(RESTART_ROWS), ...moreEnv };
  const table = await newTable(KEYS);
  const checkpoint = join(dir(), `${name}.checkpoint.json`);
  const rejectsPath = join(dir(), `${name}.rejects.jsonl`);
  const args = [
    'load',
    ...inputs,
    '--table',
    table,
    '--types',
    'sk:N,v:N',
    '--checkpoint',
    checkpoint,
    '--rejects',
    rejectsPath,
    '--json',
    '--concurrency',
    '4',
    '--wcu',
    '3000',
    ...extra,
  ];
  const atKills: Saved[] = [];
  const warnings: string[] = [];
  for (const [i, batches] of kills.entries()) {
    const run = await runCli(args, {
      cwd: dir(),
      env,
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= batches },
    });
    expect(run.signal ?? run.code, run.stderr).toBe('SIGKILL');
    warnings.push(run.stderr);
    atKills.push(await saved(checkpoint));
    await between?.(i, { rejectsPath, checkpoint });
  }
  const last = await runCli(args, { cwd: dir(), env, timeoutMs: 120_000 });
  warnings.push(last.stderr);
  expect([0, 2], last.stderr).toContain(last.code);
  const result = JSON.parse(last.stdout) as Record<string, number>;
  const oneGo = await newTable(KEYS);
  const oneGoRejects = join(dir(), `${name}.oneGo.rejects.jsonl`);
  // With a checkpoint of its own, so that it makes the same restart points, and so the same batches, as the runs killed.
  const oneGoCheckpoint = join(dir(), `${name}.oneGo.checkpoint.json`);
  const once = await runCli(
    ['load', ...inputs, '--table', oneGo, '--types', 'sk:N,v:N', '--rejects', oneGoRejects, '--checkpoint', oneGoCheckpoint, '--json', ...extra],
    {
      cwd: dir(),
      env,
      timeoutMs: 120_000,
    },
  );
  expect([0, 2], once.stderr).toContain(once.code);
  const oneGoResult = JSON.parse(once.stdout) as Record<string, number>;
  return {
    table: await contents(table),
    oneGo: await contents(oneGo),
    result,
    oneGoResult,
    rejects: await rejects(rejectsPath),
    oneGoRejects: await rejects(oneGoRejects),
    atKills,
    warnings,
    final: await saved(checkpoint),
  };
}

function expectSameLoad(run: Awaited<ReturnType<typeof killedAndResumed>>, rows: number): void {
  expect(run.final.status).toBe('complete');
  expect(run.table).toEqual(run.oneGo);
  const r = run.result;
  expect(r['rowsRead']).toBe(rows);
  expect(r['written']! + r['superseded']! + r['rejected']! + r['otherSegments']!).toBe(rows);
  expect(r['rejected']).toBe(run.oneGoResult['rejected']);
  expect(r['superseded']).toBe(run.oneGoResult['superseded']);
  // Each reject once, the same as in one go.
  expect(run.rejects).toEqual(run.oneGoRejects);
}

describe('resume at a restart point', () => {
  it('window order, one file, killed three times: the same table as in one go, rows read once past each point', async () => {
    const rows = 6_000;
    const input = join(dir(), 'window.csv');
    const text = `pk,sk,v\n${csvRows(0, rows)}`;
    await writeFile(input, text);
    const run = await killedAndResumed('window', [input], ['--order', 'window', '--window', '150'], [30, 90, 160]);
    // Each kill found restart points inside the file, past the start, that a resume starts at, each with
    // the byte its line starts at: the resume opens the file there.
    const lineStarts = [0];
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lineStarts.push(at + 1);
    for (const at of run.atKills) {
      const inside = at.restarts.filter((p) => p.row > 0);
      expect(inside.some((p) => p.batch <= at.batchesDone)).toBe(true);
      for (const p of inside) expect(p.offset, `line ${p.line}`).toBe(lineStarts[p.line - 1]);
    }
    expectSameLoad(run, rows);
  }, 180_000);

  it('input order over a set (plain and gzip parts), with rejects before the points and a --segment: the same as in one go', async () => {
    const folder = join(dir(), 'set');
    await mkdir(folder, { recursive: true });
    const parts = 4;
    const each = 1_300;
    // Bad sort keys throughout: a resume starts after rejects, keeping those of the rows before its point from the reject file.
    const bad = (i: number) => i % 997 === 3;
    for (let p = 0; p < parts; p++) {
      const text = `pk,sk,v\n${csvRows(p * each, (p + 1) * each, bad)}`;
      if (p === 2) await writeFile(join(folder, `part-${p}.csv.gz`), gzipSync(text));
      else await writeFile(join(folder, `part-${p}.csv`), text);
    }
    const run = await killedAndResumed('set', [folder], ['--order', 'input'], [25, 75, 135]);
    expectSameLoad(run, parts * each);
    expect(run.rejects.length).toBeGreaterThan(0);
    expect(run.atKills.some(resumesAfterRejects)).toBe(true);
  }, 180_000);

  it('rejects throughout one file: resumes start after them, and a reject file changed between runs sends the resume back to the start', async () => {
    const rows = 4_800;
    const input = join(dir(), 'rejects.csv');
    await writeFile(input, `pk,sk,v\n${csvRows(0, rows, (i) => i % 211 === 5)}`);
    const run = await killedAndResumed('rejects', [input], ['--order', 'window', '--window', '100'], [30, 70, 120], async (i, { rejectsPath }) => {
      if (i !== 1) return;
      // A byte of the reject file changed: its rejects cannot be trusted to be the earlier run's.
      const text = await readFile(rejectsPath);
      const at = text.indexOf('"line":') + 7;
      text[at] = text[at] === 0x39 ? 0x38 : 0x39;
      await writeFile(rejectsPath, text);
    });
    expectSameLoad(run, rows);
    expect(run.rejects.length).toBe(Math.ceil((rows - 5) / 211));
    // The first resume started after rejects; the one after the change read from the start, and said why.
    expect(resumesAfterRejects(run.atKills[0]!)).toBe(true);
    expect(run.warnings[2]).toMatch(/reject file .* cannot be resumed \(its first bytes differ/);
    expect(run.warnings[1]).not.toMatch(/cannot be resumed/);
  }, 180_000);

  it('no rejects: a set resumed at a part boundary and inside a gzip part reads on from there', async () => {
    const folder = join(dir(), 'clean');
    await mkdir(folder, { recursive: true });
    const each = 1_300;
    for (let p = 0; p < 3; p++) await writeFile(join(folder, `part-${p}.csv.gz`), gzipSync(`pk,sk,v\n${csvRows(p * each, (p + 1) * each)}`));
    const run = await killedAndResumed('clean', [folder], ['--order', 'window', '--window', '100'], [35, 85]);
    expect(run.atKills.at(-1)!.restarts.some((p) => p.part > 0)).toBe(true);
    expectSameLoad(run, 3 * each);
  }, 180_000);

  it('stripes: a key-sorted file and a folder of sorted parts, with rejects, killed three times: each stripe resumes where it stood', async () => {
    // Keys in order, 12 rows each, a bad sort key now and then; a row that repeats its key's previous sort key supersedes it.
    const sorted = (from: number, to: number) => {
      let text = '';
      for (let i = from; i < to; i++)
        text += `k${String(Math.floor(i / 12)).padStart(5, '0')},${i % 211 === 7 ? 'x' : i % 97 === 3 ? (i - 1) % 12 : i % 12},${i}\n`;
      return text;
    };
    const rows = 3_600;
    const file = join(dir(), 'sorted.csv');
    await writeFile(file, `pk,sk,v\n${sorted(0, rows)}`);
    const folder = join(dir(), 'sortedParts');
    await mkdir(folder, { recursive: true });
    for (let p = 0; p < 3; p++) await writeFile(join(folder, `part-${p}.csv`), `pk,sk,v\n${sorted(p * 1_200, (p + 1) * 1_200)}`);
    for (const input of [file, folder]) {
      const run = await killedAndResumed(
        `stripes-${input === file ? 'file' : 'set'}`,
        [input],
        ['--order', 'auto'],
        input === file ? [20, 50, 75] : [30, 70],
        undefined,
        {
          DDB_SPREAD_TEST_STRIPE_BYTES: '4096',
        },
      );
      // Each kill found points of the striped read that a resume starts at, past rejects.
      for (const at of run.atKills)
        expect(
          (at.restarts as { stripes?: unknown[]; batch: number }[]).some((p) => p.stripes && p.batch <= at.batchesDone),
          input,
        ).toBe(true);
      expect(run.atKills.some(resumesAfterRejects), input).toBe(true);
      // Every resume read on from a point: the rows before it were not read again.
      for (const said of run.warnings.slice(1)) expect(said, input).toMatch(/reading on from a restart point past the first [\d,]+ rows/);
      expect(run.result['order'], input).toBe('stripes');
      expectSameLoad(run, rows);
      expect(run.rejects.length, input).toBe(Math.ceil((rows - 7) / 211));
    }
  }, 240_000);

  it('a sharded load killed twice resumes at restart points: its manifest lists every sharded key, those of the rows before the points too', async () => {
    const rows = 3_600;
    // Keys in runs of 50 rows: the keys of the first runs appear only before the points a resume starts at.
    let text = 'pk,sk,v\n';
    for (let i = 0; i < rows; i++) text += `k${Math.floor(i / 50)},${i % 50},${i}\n`;
    const input = join(dir(), 'sharded.csv');
    await writeFile(input, text);
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'sharded.checkpoint.json');
    const manifest = join(dir(), 'sharded.shards.json');
    const args = ['load', input, '--table', table, '--types', 'sk:N,v:N', '--checkpoint', checkpoint, '--json', '--concurrency', '4', '--wcu', '3000'];
    args.push('--order', 'window', '--window', '150', '--shard', 'random:4', '--shard-seed', '7', '--shard-manifest', manifest);
    const env = { ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: String(RESTART_ROWS) };
    const killed = killableCli(args, checkpoint, { cwd: dir(), env });
    const said: string[] = [];
    for (const batches of [30, 75]) {
      const run = await killed(batches);
      expect(run.signal ?? run.code, run.stderr).toBe('SIGKILL');
      said.push(run.stderr);
    }
    // The first resume read on from a point past rows whose keys only the saved manifest held.
    expect(said[1]).toMatch(/reading on from a restart point past the first [\d,]+ rows/);
    // A manifest removed since cannot give those keys: the next resume says so and reads from the start.
    await rm(manifest);
    const last = await runCli(args, { cwd: dir(), env, timeoutMs: 120_000 });
    expect(last.code, last.stderr).toBe(0);
    expect(last.stderr).toMatch(/shard manifest .* cannot be resumed \(it is gone\): reading the input from its start again/);
    expect(last.stderr).toMatch(/reading the input again from its start/);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    // The manifest lists, for every key, exactly the sharded keys its items are under.
    const written = new Map<string, Set<string>>();
    for (const item of items) {
      const pk = item['pk']!.S!;
      const original = pk.slice(0, pk.lastIndexOf('#'));
      written.set(original, (written.get(original) ?? new Set()).add(pk));
    }
    const listed = JSON.parse(await readFile(manifest, 'utf8')) as { keys: Record<string, string[]>; complete: boolean };
    expect(listed.complete).toBe(true);
    expect(Object.keys(listed.keys).sort()).toEqual([...written.keys()].sort());
    for (const [original, values] of written)
      expect(listed.keys[original], original).toEqual([...values].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })));
  }, 180_000);

  it('--segment 1/2 killed and resumed: the same half as in one go', async () => {
    const input = join(dir(), 'segment.csv');
    await writeFile(input, `pk,sk,v\n${csvRows(0, 5_000)}`);
    const run = await killedAndResumed('segment', [input], ['--order', 'window', '--window', '100', '--segment', '1/2'], [25, 55]);
    expect(run.final.status).toBe('complete');
    expect(run.table).toEqual(run.oneGo);
    expect(run.result['otherSegments']).toBe(run.oneGoResult['otherSegments']);
    expect(run.result['rowsRead']).toBe(5_000);
  }, 180_000);

  it("an export chain read side by side (files of uneven length, one empty), killed three times: each file resumes at its line, the table is the chain's", async () => {
    const chain = simulateChain(29, { items: 3_000, windows: 2, changesPerWindow: 900, partitions: 4 });
    // The full export's items in files of uneven length, one of them empty: files end at different turns of the rotation.
    const items = chain.full.flat();
    const sizes = [1_300, 0, 40, 700];
    const full: ExportLine[][] = [];
    let at = 0;
    for (const size of sizes) full.push(items.slice(at, (at += size)));
    full.push(items.slice(at));
    const root = join(dir(), 'exportChain');
    const folders: string[] = [];
    for (const fixture of chainExports({ ...chain, full }, 'exports')) folders.push(await writeExport(root, fixture));
    const rows = items.length + chain.incrementals.flat(2).length;
    const env = { ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: String(RESTART_ROWS) };
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'exportChain.checkpoint.json');
    const args = ['load', ...folders, '--table', table, '--checkpoint', checkpoint, '--json', '--concurrency', '4', '--wcu', '3000'];
    const killed = killableCli(args, checkpoint, { cwd: dir(), env });
    const atKills: SavedSide[] = [];
    for (const batches of [30, 75, 140]) {
      const run = await killed(batches);
      expect(run.signal ?? run.code, run.stderr).toBe('SIGKILL');
      atKills.push((await saved(checkpoint)) as SavedSide);
    }
    // The kills found points inside the files side by side, with files part read.
    expect(atKills.some((k) => k.restarts.some((p) => p.row > 0 && p.batch <= k.batchesDone && p.sideBySide?.files.some((f) => f.row > 0)))).toBe(true);
    const last = await runCli(args, { cwd: dir(), env, timeoutMs: 120_000 });
    expect(last.code, last.stderr).toBe(0);
    const result = JSON.parse(last.stdout) as Record<string, number>;
    expect(result['rowsRead']).toBe(rows);
    expect(result['written']! + result['superseded']! + result['rejected']!).toBe(rows);
    expect(result['rejected']).toBe(0);
    expect((await saved(checkpoint)).status).toBe('complete');
    const found = (await scanAll(client(), table)).map((i) => `${i['pk']!.S}/${i['sk']!.N}/${i['v']!.S}/${i['n']!.N}`).sort();
    const expected = [...chain.final.values()].map((i) => `${i['pk']!.S}/${i['sk']!.N}/${i['v']!.S}/${i['n']!.N}`).sort();
    expect(found).toEqual(expected);
  }, 180_000);

  it('an export of one data file, then an incremental of one: a resume starts inside the data file, not at its start', async () => {
    const chain = simulateChain(31, { items: 2_500, windows: 1, changesPerWindow: 700, partitions: 4 });
    const root = join(dir(), 'exportOneFile');
    const folders: string[] = [];
    const oneFile = { ...chain, full: [chain.full.flat()], incrementals: chain.incrementals.map((parts) => [parts.flat()]) };
    for (const fixture of chainExports(oneFile, 'exports')) folders.push(await writeExport(root, fixture));
    const rows = chain.full.flat().length + chain.incrementals.flat(2).length;
    const env = { ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: String(RESTART_ROWS) };
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'exportOneFile.checkpoint.json');
    const args = ['load', ...folders, '--table', table, '--checkpoint', checkpoint, '--json', '--concurrency', '4', '--wcu', '3000'];
    const killed = killableCli(args, checkpoint, { cwd: dir(), env });
    const run = await killed(60);
    expect(run.signal ?? run.code, run.stderr).toBe('SIGKILL');
    const at = (await saved(checkpoint)) as SavedSide;
    // A point inside the only data file of the full export, its batches before all done: the resume starts there.
    expect(at.restarts.some((p) => p.part === 0 && p.row > 0 && p.batch <= at.batchesDone && p.sideBySide?.files[0]?.row === p.row)).toBe(true);
    const last = await runCli(args, { cwd: dir(), env, timeoutMs: 120_000 });
    expect(last.code, last.stderr).toBe(0);
    const result = JSON.parse(last.stdout) as Record<string, number>;
    expect(result['rowsRead']).toBe(rows);
    expect(result['written']! + result['superseded']! + result['rejected']!).toBe(rows);
    const found = (await scanAll(client(), table)).map((i) => `${i['pk']!.S}/${i['sk']!.N}/${i['v']!.S}/${i['n']!.N}`).sort();
    const expected = [...chain.final.values()].map((i) => `${i['pk']!.S}/${i['sk']!.N}/${i['v']!.S}/${i['n']!.N}`).sort();
    expect(found).toEqual(expected);
  }, 120_000);

  it('a file changed between runs is refused, whatever the restart points', async () => {
    const input = join(dir(), 'changed.csv');
    await writeFile(input, `pk,sk,v\n${csvRows(0, 6_000)}`);
    const env = { ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: String(RESTART_ROWS) };
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'changed.checkpoint.json');
    const args = ['load', input, '--table', table, '--types', 'sk:N,v:N', '--checkpoint', checkpoint, '--order', 'window', '--wcu', '2000', '--json'];
    const run = await runCli(args, {
      cwd: dir(),
      env,
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 60 },
    });
    expect(run.signal).toBe('SIGKILL');
    expect((await saved(checkpoint)).restarts.length).toBeGreaterThan(0);
    // Same size, one value changed in the middle.
    const text = await readFile(input, 'utf8');
    const at = text.indexOf('\n', text.length / 2) + 1;
    await writeFile(input, text.slice(0, at) + (text[at] === 'k' ? 'j' : 'k') + text.slice(at + 1));
    const refused = await runCli(args, { cwd: dir(), env, timeoutMs: 120_000 });
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/SHA-256 differs|modified since checkpoint|64 KB, or its ETag, differ|64 KB differ/);
  }, 120_000);
});
