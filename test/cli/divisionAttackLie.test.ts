/**
 * --parts-disjoint when a primary key IS in two parts (the user's promise broken): what is said. Nothing in
 * the load can see it (each worker reads only its parts); the table keeps whichever worker's write landed
 * last. `verify` over the whole input, as docs/OPERATIONS.md says, names the item that is not the input's
 * last row for its key. Real processes, DynamoDB Local.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'divlie' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: localEnv(endpoint), timeoutMs: 60_000 });

describe('--parts-disjoint over parts that share a primary key', () => {
  it('the load cannot tell; verify over the whole input names the key whose item is not the last row of the input', async () => {
    const folder = join(dir(), 'lie');
    await mkdir(folder);
    // a.csv, the largest part, goes to one worker alone and holds the shared key at its end; b.csv, read by
    // the other worker, holds it first: in input order (a, then b) b's row is the last, but a's lands last.
    const rows = (name: string, n: number) => Array.from({ length: n }, (_, i) => `${name}-${i % 11},${i},${name}${i}`);
    await writeFile(join(folder, 'a.csv'), ['pk,sk,v', ...rows('a', 1500), 'shared,1,from-a'].join('\n') + '\n');
    await writeFile(join(folder, 'b.csv'), ['pk,sk,v', 'shared,1,from-b', ...rows('b', 300)].join('\n') + '\n');
    await writeFile(join(folder, 'c.csv'), ['pk,sk,v', ...rows('c', 300)].join('\n') + '\n');
    const table = await newTable(KEYS);
    const listing = join(dir(), 'lie.listing.json');
    const worker = (i: number) =>
      run([
        'load',
        folder,
        '--table',
        table,
        '--types',
        'sk:N',
        '--segment',
        `${i}/2`,
        '--listing',
        listing,
        '--parts-disjoint',
        '--json',
        '--rejects',
        join(dir(), `lie${i}.rejects.jsonl`),
      ]);
    // Worker 1 (b.csv and c.csv) first, then worker 0 (a.csv): a's row of the shared key lands last.
    const second = await worker(1);
    expect(second.code, second.stderr).toBe(EXIT.OK);
    const first = await worker(0);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    // Nothing in the load sees it: each worker wrote its row, and the load says complete.
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stdout).toBe(EXIT.OK);
    expect(JSON.parse(status.stdout)).toMatchObject({ complete: true, rows: 2102, written: 2102 });
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(2101);
    expect(items.find((i) => i['pk']!.S === 'shared')!['v']).toEqual({ S: 'from-a' });
    // verify over the whole input (no --segment) reads each key back and names the one that is not the input's last row.
    const verify = await run(['verify', folder, '--table', table, '--types', 'sk:N']);
    expect(verify.code, verify.stderr).toBe(EXIT.DIFFERENT);
    expect(verify.stdout).toMatch(/b\.csv:2 \{"pk":"shared","sk":"1"\}: the stored item differs/);
  });
});
