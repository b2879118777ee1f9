/**
 * Listing: folders, globs and S3 prefixes listed by one mechanism,
 * whatever the spelling of the path or key. Every data part is loaded, every part skipped is named with
 * why, and the load's own files (locks, checkpoints, their logs, reports, rejects) are never inputs.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { mulberry32 } from '../../tools/mulberry32.js';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { load, type LoadOptions, type LoadResult } from '../../src/index.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { killableCli } from '../support/checkpoint.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

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
const skippedNames = (result: LoadResult) => result.skipped.map((s) => s.name).sort();

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
      const cli = await runCli(['load', spelling, '--table', table, '--types', 'v:S', '--json', '--report', '../report.json'], {
        cwd: root,
        env: localEnv(endpoint),
      });
      expect(cli.code, cli.stderr).toBe(0);
      expect(await sortKeys(table)).toEqual(range(0, 30));
      const summary = JSON.parse(cli.stdout) as { skipped: { name: string; reason: string }[] };
      expect(summary.skipped.map((s) => s.name).sort()).toEqual(['d/.a.csv.crc', 'd/_SUCCESS']);
      const report = JSON.parse(await readFile(join(root, '..', 'report.json'), 'utf8')) as typeof summary;
      expect(report.skipped).toEqual(summary.skipped);
    }
    // The text summary names them too, with why.
    const text = await runCli(['load', './d', '--table', await newTable(KEYS), '--types', 'v:S'], { cwd: root, env: localEnv(endpoint) });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toMatch(/skipped +2 entries/);
    expect(text.stderr).toMatch(/d\/_SUCCESS {2}\(marker: /);
    expect(text.stderr).toMatch(/d\/\.a\.csv\.crc {2}\(hidden: /);
  });
});

describe("the load's own files in the folder read (item 16)", () => {
  it("named by options: the reject file and its lock, a checkpoint's lock and temporary file, a spill folder left by kill -9", async () => {
    const root = join(dir(), `own-files-${++runs}`);
    const d = join(root, 'd');
    await mkdir(join(d, 'ddb-spread-Xy12ab'), { recursive: true });
    await writeFile(join(d, 'data.csv'), csvRows(0, 8));
    // What a killed load leaves: its checkpoint's lock and temporary file, a spill folder (the reject file's
    // lock is this load's own, taken before the listing).
    await writeFile(join(d, 'ck.json.lock'), JSON.stringify({ pid: 999999, host: hostname(), since: 'then' }));
    await writeFile(join(d, 'ck.json.4242.0a1b2c3d.tmp'), '{}');
    await writeFile(join(d, 'bad.lock'), 'pk,sk,v\nq,1000,x\n');
    await writeFile(join(d, 'ddb-spread-Xy12ab', 'bucket-0'), 'junk');
    const table = await newTable(KEYS);
    const result = await run({ input: d, table, checkpointPath: join(d, 'ck.json'), rejectsPath: join(d, 'bad.lock'), tempDir: d });
    expect(result).toMatchObject({ rowsRead: 8, written: 8, complete: true });
    expect(await sortKeys(table)).toEqual(range(0, 8));
    expect(result.skipped.map((s) => [s.name, s.reason])).toEqual([
      [join(d, 'bad.lock'), 'own-file'],
      [join(d, 'bad.lock.lock'), 'own-file'],
      [join(d, 'ck.json.4242.0a1b2c3d.tmp'), 'own-file'],
      [join(d, 'ck.json.lock'), 'own-file'],
      [join(d, 'ddb-spread-Xy12ab'), 'own-file'],
    ]);
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
  }, 240_000);
});

describe('random layouts (item 3)', () => {
  // Names that break listings: dots and underscores inside, unicode, spaces; never first a "." or "_".
  const NAME_PIECES = ['a', 'x_y', 'é', '日本', ' ', '.', '-', 'b.c', '_', '..x'];
  const name = (random: () => number, prefix: string) =>
    `${prefix}${Array.from({ length: 1 + Math.floor(random() * 4) }, () => NAME_PIECES[Math.floor(random() * NAME_PIECES.length)]).join('')}`;
  const SPELLINGS = ['/d', '/./d', '/d/.', '/d//', '/d/', '/./d/./', '/e/../d'];

  for (let seed = 1; seed <= 4; seed++) {
    it(`seed ${seed}: every row of every data part lands once, every other entry is named as skipped`, async () => {
      const random = mulberry32(seed * 7919);
      const root = join(dir(), `random-${seed}-${++runs}`);
      const d = join(root, 'd');
      await mkdir(join(root, 'e'), { recursive: true });
      await mkdir(join(root, 'outside'));
      const rows = new Set<number>();
      const skipped = new Set<string>();
      let next = 0;
      const dataFile = async (path: string) => {
        const count = 1 + Math.floor(random() * 5);
        await writeFile(path, csvRows(next, count));
        for (let i = 0; i < count; i++) rows.add(next + i);
        next += count;
      };
      // Folders two deep, each with data files, markers, hidden and checksum files.
      const folders = ['', ...Array.from({ length: 3 }, (_, i) => name(random, `f${i}`))];
      folders.push(join(folders[1]!, name(random, 'g')));
      for (const [i, folder] of folders.entries()) {
        await mkdir(join(d, folder), { recursive: true });
        for (let j = 0; j < 1 + Math.floor(random() * 3); j++) await dataFile(join(d, folder, `${name(random, `p${i}-${j}`)}.csv`));
        const junk = [`_SUCCESS`, `_committed_${i}`, `.p${i}.csv.crc`, `p${i}.csv.crc`, `.hidden${i}.csv`];
        for (const j of junk.filter(() => random() < 0.6)) {
          await writeFile(join(d, folder, j), 'pk,sk\nnot,data\n');
          skipped.add(join(d, folder, j));
        }
      }
      // A hidden folder and Spark's temporary folder: named once each, not walked.
      for (const hidden of ['.cache', '_temporary']) {
        await mkdir(join(d, hidden, 'deep'), { recursive: true });
        await writeFile(join(d, hidden, 'deep', 'x.csv'), 'pk,sk\nnot,data\n');
        skipped.add(join(d, hidden));
      }
      // Links: to a file outside (read under the link's name), to a file inside (read once, the link named),
      // to a folder inside (its files named as the same files), to nothing, and back up to d.
      await dataFile(join(root, 'outside', 'real.csv'));
      await symlink(join(root, 'outside', 'real.csv'), join(d, folders[2]!, 'link-out.csv'));
      const inside = join(d, folders[1]!);
      await symlink(inside, join(d, 'link-folder'));
      const { readdir } = await import('node:fs/promises');
      for (const entry of await readdir(inside, { withFileTypes: true })) {
        const under = join(d, 'link-folder', entry.name);
        if (entry.isDirectory()) {
          // Walked through the link: its files are the same files as well.
          for (const deeper of await readdir(join(inside, entry.name))) skipped.add(join(under, deeper));
        } else skipped.add(under);
      }
      const dataInFirst = (await readdir(d)).find((n) => n.startsWith('p0-'))!;
      await symlink(join(d, dataInFirst), join(d, folders[3]!, 'again.csv'));
      skipped.add(join(d, folders[3]!, 'again.csv'));
      await symlink(join(root, 'nowhere.csv'), join(d, 'broken.csv'));
      skipped.add(join(d, 'broken.csv'));
      await symlink(d, join(d, folders[3]!, 'up'));
      skipped.add(join(d, folders[3]!, 'up'));

      const spelling = SPELLINGS[Math.floor(random() * SPELLINGS.length)]!;
      const table = await newTable(KEYS);
      const result = await run({ input: `${root}${spelling}`, table });
      const detail = `spelling ${spelling}, skipped ${JSON.stringify(result.skipped)}`;
      expect(result, detail).toMatchObject({ rowsRead: rows.size, written: rows.size, rejected: 0, complete: true });
      expect(await sortKeys(table), detail).toEqual([...rows].sort((a, b) => a - b));
      expect(skippedNames(result), detail).toEqual([...skipped].sort());
    });
  }

  it('a glob over the same kind of folder: matched links read, matched markers and broken links named', async () => {
    const root = join(dir(), `glob-${++runs}`);
    await mkdir(join(root, 'd', 'sub'), { recursive: true });
    await mkdir(join(root, 'outside'));
    await writeFile(join(root, 'd', 'a.csv'), csvRows(0, 5));
    await writeFile(join(root, 'd', 'sub', 'b.csv'), csvRows(5, 5));
    await writeFile(join(root, 'outside', 'c.csv'), csvRows(10, 5));
    await symlink(join(root, 'outside', 'c.csv'), join(root, 'd', 'sub', 'c-link.csv'));
    await symlink(join(root, 'd', 'a.csv'), join(root, 'd', 'sub', 'a-again.csv'));
    await symlink(join(root, 'gone.csv'), join(root, 'd', 'broken.csv'));
    await writeFile(join(root, 'd', '_x.csv'), 'junk');
    await writeFile(join(root, 'd', 'sub', 'not-matched.jsonl'), 'junk');
    const table = await newTable(KEYS);
    const result = await run({ input: `${root}/./d//**/*.csv`, table });
    expect(result).toMatchObject({ rowsRead: 15, written: 15, complete: true });
    expect(await sortKeys(table)).toEqual(range(0, 15));
    expect(result.skipped.map((s) => [s.name, s.reason])).toEqual([
      [join(root, 'd', '_x.csv'), 'marker'],
      [join(root, 'd', 'broken.csv'), 'broken-link'],
      [join(root, 'd', 'sub', 'a-again.csv'), 'same-file'],
    ]);
    // A pattern without ** reaches its own depth only.
    const shallow = await run({ input: join(root, 'd', '*.csv'), table: await newTable(KEYS) });
    expect(shallow).toMatchObject({ rowsRead: 5, written: 5 });
  });
});

describe('explicit files', () => {
  it("a file named by the user is read whatever its name; the load's own files are refused by name", async () => {
    const root = join(dir(), `explicit-${++runs}`);
    await mkdir(root);
    await writeFile(join(root, '_data.csv'), csvRows(0, 3));
    await writeFile(join(root, '.hidden.csv'), csvRows(3, 3));
    const table = await newTable(KEYS);
    const result = await run({ input: [join(root, '_data.csv'), join(root, '.hidden.csv')], table });
    expect(result).toMatchObject({ rowsRead: 6, written: 6, skipped: [] });
    const checkpointPath = join(root, 'ck.json');
    await writeFile(`${checkpointPath}.lock`, JSON.stringify({ pid: 999999, host: 'gone' }));
    const refused = await run({ input: [join(root, '_data.csv'), `${checkpointPath}.lock`], table, checkpointPath }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/ck\.json\.lock is the lock file of --checkpoint .*ck\.json: the load's own files are never input/);
    // Two names of one file given as two inputs: refused before any write, naming both.
    await symlink(join(root, '_data.csv'), join(root, 'alias.csv'));
    const twice = await run({ input: [join(root, '_data.csv'), join(root, 'alias.csv')], table: await newTable(KEYS) }).catch((e: unknown) => e);
    expect((twice as Error).message).toMatch(/alias\.csv is given twice .*same file as .*_data\.csv/);
  });
});

describe('S3 prefixes (item 3)', () => {
  // s3rver rewrites keys with ./ and ../ segments and refuses //; the pure decision takes those verbatim
  // (test/unit/reading/listing.test.ts, "S3 keys").
  it('keys with unicode, spaces, underscores inside and dots, a prefix without its slash: every data object read, the rest named', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const data: Record<string, string> = {
      'p/a.csv': csvRows(0, 4),
      'p/b..c.csv': csvRows(4, 4),
      'p/c_d.csv': csvRows(8, 4),
      'p/x_y/日本 é.csv': csvRows(12, 4),
      'p/sub/deeper/d.csv': csvRows(16, 4),
    };
    const junk: Record<string, string> = {
      'p/_SUCCESS': '',
      'p/_committed_1': 'x',
      'p/.hidden.csv': 'x',
      'p/a.csv.crc': 'x',
      'p/sub/': '',
      'p/_temporary/0/part.csv': 'x',
      'p/old.csv.rejects.jsonl': 'x',
    };
    await putObjects(s3, bucket, { ...data, ...junk, 'px/other.csv': csvRows(100, 4) });
    for (const url of [`s3://${bucket}/p`, `s3://${bucket}/p/`]) {
      const table = await newTable(KEYS);
      const result = await run({ input: url, table, s3Endpoint: s3Endpoint(), s3PathStyle: true });
      expect(result, url).toMatchObject({ rowsRead: 20, written: 20, complete: true });
      expect(await sortKeys(table)).toEqual(range(0, 20));
      expect(skippedNames(result)).toEqual(
        Object.keys(junk)
          .map((k) => `s3://${bucket}/${k}`)
          .sort(),
      );
    }
  });
});
