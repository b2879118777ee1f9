/**
 * Attack: workers of one byte-range division given different options. A worker run with another
 * --delimiter than the one whose cut it reads would cut the file elsewhere (a row split, or two joined):
 * it must be refused before any write, naming the option, and the same worker run again with the load's
 * options must then finish it, every row once. A worker without --parts-disjoint on a listing divided by
 * range would read every row and write its key segment's, over the rows of the others' ranges: refused.
 * Real processes against DynamoDB Local.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack-options' });

const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: localEnv(endpoint), timeoutMs: 90_000 });

describe('workers of a byte-range division with different options', () => {
  it('another --delimiter is refused before any write; run again with the load options, every row once', async () => {
    const rows = 5000;
    const lines = ['pk;sk;note'];
    for (let i = 0; i < rows; i++)
      lines.push(`k${String(Math.floor(i / 3)).padStart(6, '0')};${i};${i % 4 === 0 ? `"a,b\nc;${i}"` : `n,${i},${'x'.repeat(i % 50)}`}`);
    const path = join(dir(), 'semi.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    expect((await stat(path)).size).toBeGreaterThan(2 * 64 * 1024);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'semi.listing.json');
    const args = (i: number, delimiter: string) => [
      'load',
      path,
      '--table',
      table,
      '--types',
      'sk:N',
      '--delimiter',
      delimiter,
      '--segment',
      `${i}/2`,
      '--listing',
      listing,
      '--parts-disjoint',
      '--checkpoint',
      join(dir(), `semi${i}.checkpoint.json`),
      '--rejects',
      join(dir(), `semi${i}.rejects.jsonl`),
    ];
    const first = await run(args(0, ';'));
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const written = (await scanAll(client(), table)).length;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(rows);
    const wrong = await run(args(1, ','));
    expect(wrong.code, wrong.stderr).toBe(EXIT.USAGE);
    expect(wrong.stderr).toMatch(/--delimiter/);
    expect((await scanAll(client(), table)).length).toBe(written);
    const right = await run(args(1, ';'));
    expect(right.code, right.stderr).toBe(EXIT.OK);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    expect(items.find((i) => i['sk']!.N === '4000')!['note']!.S).toBe('a,b\nc;4000');
  });

  it('a worker without --parts-disjoint on a listing divided by range is refused before any write', async () => {
    const lines = ['pk,sk'];
    for (let i = 0; i < 20000; i++) lines.push(`k${String(i).padStart(7, '0')},${i}`);
    const path = join(dir(), 'plain.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    expect((await stat(path)).size).toBeGreaterThan(2 * 64 * 1024);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'plain.listing.json');
    const base = (i: number) => ['load', path, '--table', table, '--types', 'sk:N', '--segment', `${i}/2`, '--listing', listing];
    const first = await run([...base(0), '--parts-disjoint', '--rejects', join(dir(), 'plain0.rejects.jsonl')]);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const written = (await scanAll(client(), table)).length;
    const other = await run([...base(1), '--rejects', join(dir(), 'plain1.rejects.jsonl')]);
    expect(other.code, other.stderr).toBe(EXIT.USAGE);
    expect(other.stderr).toMatch(/byte range/);
    expect(other.stderr).toMatch(/--parts-disjoint/);
    expect((await scanAll(client(), table)).length).toBe(written);
  });
});
