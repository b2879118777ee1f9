/**
 * Listing (issue 29, items 1, 2, 3 and 16): folders, globs and S3 prefixes listed by one mechanism,
 * whatever the spelling of the path or key. Every data part is loaded, every part skipped is named with
 * why, and the load's own files (locks, checkpoints, their logs, reports, rejects) are never inputs.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { load, type LoadOptions, type LoadResult } from '../../src/index.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { killableCli } from '../support/checkpoint.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

const { endpoint, client, dir, newTable } = useLocalAws({ name: 'listing', processCredentials: true });

beforeAll(assertCliBuilt);

/** `count` CSV rows with sort keys from `from`, with a header. */
const csvRows = (from: number, count: number) =>
  `pk,sk,v\n${Array.from({ length: count }, (_, i) => `p${(from + i) % 7},${from + i},v${from + i}`).join('\n')}\n`;

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({ endpoint, region: 'us-east-1', types: { v: 'S' }, rejectsPath: join(dir(), `l${++runs}.rejects.jsonl`), ...options });

/** The sort keys in the table, sorted. */
const sortKeys = async (table: string) => (await scanAll(client(), table)).map((i) => Number(i.sk!.N)).sort((a, b) => a - b);
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
const skippedNames = (result: LoadResult) => (result as LoadResult & { skipped?: { name: string }[] }).skipped?.map((s) => s.name).sort() ?? [];

/** d/ with a.csv, x_y.csv, b.csv (30 rows) and Spark's _SUCCESS, a .crc and a hidden file. */
async function sparkFolder(): Promise<string> {
  const root = join(dir(), `spark-${++runs}`);
  await mkdir(join(root, 'd'), { recursive: true });
  await writeFile(join(root, 'd', 'a.csv'), csvRows(0, 10));
  await writeFile(join(root, 'd', 'x_y.csv'), csvRows(10, 10));
  await writeFile(join(root, 'd', 'b.csv'), csvRows(20, 10));
  await writeFile(join(root, 'd', '_SUCCESS'), '');
  await writeFile(join(root, 'd', '.a.csv.crc'), 'junk');
  return root;
}

describe('folder names (item 1)', () => {
  for (const spelling of ['/./d', '/d/.', '/d//', '/d/', '/./d/./']) {
    it(`${spelling}: every data file loaded, the marker and checksum named as skipped`, async () => {
      const root = await sparkFolder();
      const table = await newTable(KEYS);
      const result = await run({ input: `${root}${spelling}`, table });
      expect(result).toMatchObject({ rowsRead: 30, written: 30, complete: true });
      expect(await sortKeys(table)).toEqual(range(0, 30));
      expect(skippedNames(result)).toEqual([join(root, 'd', '.a.csv.crc'), join(root, 'd', '_SUCCESS')]);
    });
  }

  it('the CLI with ./d and d/. from the folder above: every file, the skipped ones named in the summary', async () => {
    const root = await sparkFolder();
    for (const spelling of ['./d', 'd/.', './/d']) {
      const table = await newTable(KEYS);
      const cli = await runCli(['load', spelling, '--table', table, '--types', 'v:S', '--json'], { cwd: root, env: localEnv(endpoint) });
      expect(cli.code, cli.stderr).toBe(0);
      expect(await sortKeys(table)).toEqual(range(0, 30));
      const summary = JSON.parse(cli.stdout) as { skipped: { name: string; reason: string }[] };
      expect(summary.skipped.map((s) => s.name).sort()).toEqual(['d/.a.csv.crc', 'd/_SUCCESS']);
    }
    // The text summary names them too, with why.
    const text = await runCli(['load', './d', '--table', await newTable(KEYS), '--types', 'v:S'], { cwd: root, env: localEnv(endpoint) });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toMatch(/skipped +2 entries/);
    expect(text.stderr).toMatch(/d\/_SUCCESS {2}\(marker: /);
    expect(text.stderr).toMatch(/d\/\.a\.csv\.crc {2}\(hidden: /);
  });
});

describe('symlinks (item 2)', () => {
  it('a link to a data file in a folder, and one matched by a glob, is loaded under the link name', async () => {
    const root = join(dir(), `links-${++runs}`);
    await mkdir(join(root, 'elsewhere'), { recursive: true });
    await mkdir(join(root, 'd'));
    await writeFile(join(root, 'elsewhere', 'real.csv'), csvRows(100, 10));
    await writeFile(join(root, 'd', 'own.csv'), csvRows(0, 10));
    await symlink(join(root, 'elsewhere', 'real.csv'), join(root, 'd', 'link.csv'));
    const folder = await run({ input: join(root, 'd'), table: await newTable(KEYS) });
    expect(folder).toMatchObject({ rowsRead: 20, written: 20, complete: true });
    const table = await newTable(KEYS);
    const glob = await run({ input: join(root, 'd', '*.csv'), table });
    expect(glob).toMatchObject({ rowsRead: 20, written: 20, complete: true });
    expect(await sortKeys(table)).toEqual([...range(0, 10), ...range(100, 10)]);
  });
});

describe("the load's own files (item 16)", () => {
  it('load d --checkpoint d/ck.json, kill -9, the same command: resumes (the stale lock is no input) and loads every row', async () => {
    const root = join(dir(), `own-${++runs}`);
    await mkdir(join(root, 'd'), { recursive: true });
    const rows = 12_000;
    await writeGeneratedCsv(join(root, 'd', 'data.csv'), rows);
    const table = await newTable(KEYS);
    const checkpoint = join(root, 'd', 'ck.json');
    const args = ['load', 'd', '--table', table, '--types', GENERATED_TYPES_FLAG, '--checkpoint', 'd/ck.json', '--wcu', '3000', '--json'];
    const cli = killableCli(args, checkpoint, { cwd: root, env: localEnv(endpoint) });
    const killed = await cli(40);
    expect(killed.signal ?? killed.code).toBe('SIGKILL');
    const resumed = await runCli(args, { cwd: root, env: localEnv(endpoint), timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout) as {
      rowsRead: number;
      complete: boolean;
      resumedFromBatch: number;
      skipped: { name: string; reason: string }[];
    };
    expect(summary).toMatchObject({ rowsRead: rows, complete: true });
    expect(summary.resumedFromBatch).toBeGreaterThan(0);
    // The stale lock, the checkpoint and its log are named as the load's own files, not read.
    expect(summary.skipped.filter((s) => s.reason === 'own-file').map((s) => s.name)).toEqual(['d/ck.json', 'd/ck.json.lock', 'd/ck.json.write-rejects']);
    expect((await scanAll(client(), table)).length).toBe(rows);
  });
});
