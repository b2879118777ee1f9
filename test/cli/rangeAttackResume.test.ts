/**
 * Attack on a resume of a worker that holds two ranges of one file. Three files for four workers are cut
 * into five ranges (src/load/shares.ts rangeLayout), and the ranges dealt by size give one worker both
 * ranges of c.csv: two parts of its share with the same file name. It rejects a bad row early in the first
 * range, is killed past a restart point after it, and is run again: the resume keeps the rejects of the
 * rows before the point from its reject file. The bad row must still be in that file (and counted once),
 * and every other row in the table once. A real process against DynamoDB Local.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { rangeLayout } from '../../src/load/shares.js';
import { killableCli } from '../support/checkpoint.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack-resume' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '100' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 120_000 });

/** A CSV of exactly `size` bytes, each key once; the sort key of row `bad` (if any) is not a number. */
function csvOf(prefix: string, size: number, bad?: number): { text: string; rows: number; badLine?: number } {
  const lines = ['pk,sk,note'];
  let bytes = lines[0]!.length + 1;
  let i = 0;
  for (; bytes < size - 200; i++) {
    const line = `${prefix}${String(Math.floor(i / 4)).padStart(6, '0')},${i === bad ? 'NaN-sk' : i},note ${i} ${'n'.repeat(i % 30)}`;
    lines.push(line);
    bytes += line.length + 1;
  }
  const last = `${prefix}999999,${i},`;
  lines.push(last + 'p'.repeat(size - bytes - last.length - 1));
  const text = `${lines.join('\n')}\n`;
  expect(Buffer.byteLength(text)).toBe(size);
  return { text, rows: i + 1, ...(bad !== undefined ? { badLine: bad + 2 } : {}) };
}

describe('a worker with two ranges of one file, killed and resumed', () => {
  it('keeps the reject of a row in its first range before the restart point', async () => {
    const sizes = [67300, 141239, 131714];
    // The layout this test attacks: c.csv's two ranges both go to worker 3.
    expect(rangeLayout(sizes, 4)).toEqual({ segments: [[0], [0, 70619], [0, 65857]], owner: [2, 1, 0, 3, 3] });
    const a = csvOf('a', sizes[0]!);
    const b = csvOf('b', sizes[1]!);
    const c = csvOf('c', sizes[2]!, 40);
    const paths = ['a.csv', 'b.csv', 'c.csv'].map((f) => join(dir(), f));
    await Promise.all([a, b, c].map((f, k) => writeFile(paths[k]!, f.text)));
    for (const [k, p] of paths.entries()) expect((await stat(p)).size).toBe(sizes[k]);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'abc.listing.json');
    const args = (i: number) => [
      'load',
      ...paths,
      '--table',
      table,
      '--types',
      'sk:N',
      '--segment',
      `${i}/4`,
      '--listing',
      listing,
      '--parts-disjoint',
      '--rejects',
      join(dir(), `w${i}.rejects.jsonl`),
      '--checkpoint',
      join(dir(), `w${i}.checkpoint.json`),
      '--json',
    ];
    // Worker 3 is slow, and killed some 600 rows into c.csv's first range (its bad row is the 41st).
    const slow = killableCli([...args(3), '--wcu', '100'], join(dir(), 'w3.checkpoint.json'), { cwd: dir(), env: env() });
    const [killed, ...others] = await Promise.all([slow(24), run(args(0)), run(args(1)), run(args(2))]);
    expect(killed.signal).toBe('SIGKILL');
    for (const r of others) expect(r.code, r.stderr).toBe(EXIT.OK);
    const before = await readFile(join(dir(), 'w3.rejects.jsonl'), 'utf8');
    expect(before).toContain(`"line":${c.badLine}`);
    const resumed = await run(args(3));
    expect(resumed.stderr).toMatch(/reading on from a restart point/);
    expect(resumed.code, resumed.stderr).toBe(EXIT.REJECTED);
    const result = JSON.parse(resumed.stdout) as LoadResult;
    expect(result.division).toMatchObject({ by: 'ranges', parts: 2 });
    expect(result.rejected).toBe(1);
    // The rejected row is in the reject file, once, at its own line.
    const rejects = (await readFile(join(dir(), 'w3.rejects.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { file: string; line: number });
    expect(rejects).toEqual([expect.objectContaining({ file: paths[2], line: c.badLine })]);
    const items = await scanAll(client(), table);
    const rows = a.rows + b.rows + c.rows;
    expect(items.length).toBe(rows - 1);
    const status = await run(['status', listing, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ finished: true, rows, rejected: 1 });
  });
});
