/**
 * Two workers of one load given the same --rejects path (one command line for every index of a Job, without
 * the index in it): the second worker's reject file would replace the first's, and the rows the first
 * rejected would be in no reject file while status counts them. Real processes, DynamoDB Local.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejectsIfAny } from '../support/rejects.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'divrejpath' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: localEnv(endpoint), timeoutMs: 60_000 });

describe('workers of one load given one --rejects path', () => {
  it("the second is refused before any write (64), naming the first's file; each worker with its own then reports every rejected row once", async () => {
    const folder = join(dir(), 'in');
    await mkdir(folder);
    for (const name of ['a', 'b', 'c', 'd']) {
      const lines = ['pk,sk,v'];
      for (let i = 0; i < 100; i++) lines.push(i === 5 ? `${name},bad,x` : `${name}-${i % 5},${i},v`);
      await writeFile(join(folder, `${name}.csv`), `${lines.join('\n')}\n`);
    }
    const table = await newTable(KEYS);
    const listing = join(dir(), 'l.json');
    const shared = join(dir(), 'all.rejects.jsonl');
    const worker = (i: number, rejects: string) =>
      run(['load', folder, '--table', table, '--types', 'sk:N', '--segment', `${i}/2`, '--listing', listing, '--parts-disjoint', '--rejects', rejects]);
    const first = await worker(0, shared);
    expect(first.code, first.stderr).toBe(EXIT.REJECTED);
    const firstRejects = await readRejectsIfAny(shared);
    expect(firstRejects).toHaveLength(2);
    const written = (await scanAll(client(), table)).length;
    const second = await worker(1, shared);
    expect(second.code, second.stderr).toBe(EXIT.USAGE);
    expect(second.stderr).toMatch(/--rejects .*all\.rejects\.jsonl is worker 0\/2's reject file too/);
    // Nothing written, and worker 0's rejects are still in its file.
    expect((await scanAll(client(), table)).length).toBe(written);
    expect(await readRejectsIfAny(shared)).toEqual(firstRejects);
    const own = await worker(1, join(dir(), 'one.rejects.jsonl'));
    expect(own.code, own.stderr).toBe(EXIT.REJECTED);
    const all = [...(await readRejectsIfAny(shared)), ...(await readRejectsIfAny(join(dir(), 'one.rejects.jsonl')))];
    expect(all.map((r) => `${r.file.slice(r.file.lastIndexOf('/') + 1)}:${r.line}`).sort()).toEqual(['a.csv:7', 'b.csv:7', 'c.csv:7', 'd.csv:7']);
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stdout).toBe(EXIT.REJECTED);
    expect(JSON.parse(status.stdout)).toMatchObject({ rows: 400, written: 396, rejected: 4 });
  });
});
