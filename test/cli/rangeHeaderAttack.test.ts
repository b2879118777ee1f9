/**
 * The header row a range carries, attacked end to end: a headerless file read with --columns by 4 workers
 * that divide it by byte range (--segment i/4 --parts-disjoint), its first row with an empty cell (which
 * does not parse as a header row), one worker killed mid-way and started again (its resume opens its range
 * at a byte offset and must take --columns, not the first row). Every row must land once, each cell under
 * its own column. Each worker is a real process against DynamoDB Local.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { killableCli } from '../support/checkpoint.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-header-attack' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '200' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env() });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;

const pkOf = (i: number) => `user-${String(Math.floor(i / 10)).padStart(5, '0')}`;
/** Row i's note: empty for the first row (and every 7th), three lines with a row-shaped one every 3rd. */
const noteOf = (i: number) =>
  i % 7 === 0 ? '' : i % 3 === 0 ? `first of ${i}\r\nuser-99999,${i},looks like a row\r\nlast ""q""` : `plain ${i} ${'y'.repeat(i % 40)}`;
const cellOf = (note: string) => (note.includes('\r') ? `"${note}"` : note);

describe('--columns on a headerless file divided by byte range', () => {
  it('its first row with an empty cell, 4 workers, one killed and resumed: every row once, under --columns', async () => {
    const rows = 6000;
    const lines = Array.from({ length: rows }, (_, i) => `${pkOf(i)},${i},${cellOf(noteOf(i))}`);
    const path = join(dir(), 'headerless.csv');
    await writeFile(path, `${lines.join('\r\n')}\r\n`);
    expect((await stat(path)).size).toBeGreaterThan(4 * 64 * 1024);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'headerless.listing.json');
    const args = (i: number) => [
      'load',
      path,
      '--table',
      table,
      '--types',
      'sk:N',
      '--columns',
      'pk,sk,note',
      '--segment',
      `${i}/4`,
      '--listing',
      listing,
      '--parts-disjoint',
      '--rejects',
      join(dir(), `h${i}.rejects.jsonl`),
      '--checkpoint',
      join(dir(), `h${i}.checkpoint.json`),
      '--json',
    ];
    const slow = killableCli([...args(2), '--wcu', '150'], join(dir(), 'h2.checkpoint.json'), { cwd: dir(), env: env() });
    const [killed, ...others] = await Promise.all([slow(12), run(args(0)), run(args(1)), run(args(3))]);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    for (const r of others) expect(r.code, r.stderr).toBe(EXIT.OK);
    const resumed = await run(args(2));
    expect(resumed.code, resumed.stderr).toBe(EXIT.OK);
    expect(resumed.stderr).toMatch(/reading on from a restart point/);
    const results = [resultOf(others[0]!), resultOf(others[1]!), resultOf(resumed), resultOf(others[2]!)];
    for (const r of results) expect(r.division).toMatchObject({ by: 'ranges', parts: 1 });
    expect(results[2]!.resumedFromBatch).toBeGreaterThan(0);
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(rows);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    for (const item of items) {
      const i = Number(item['sk']!.N);
      expect(item['pk']!.S).toBe(pkOf(i));
      const note = noteOf(i).replace(/""/g, '"');
      if (note === '') expect(item['note']?.S ?? '').toBe('');
      else expect(item['note']!.S).toBe(note);
      // No attribute named after the first row's cells.
      expect(Object.keys(item).sort()).toEqual(note === '' && item['note'] === undefined ? ['pk', 'sk'] : ['note', 'pk', 'sk']);
    }
  });
});
