/**
 * Two processes given one --segment i/N of a load (two Jobs of one load, an index given twice): each
 * worker's state document beside the shared listing is written by both, so both see the other's and stop
 * with 78 before they write much of the share twice; `status` fails the load with that code. A worker
 * killed and started again (the usual restart) is not taken for a second one. Real processes, DynamoDB Local.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, dir, newTable } = useLocalAws({ name: 'dupworker' });

// Beats every 150 ms: a second writer is seen within a few tenths of a second.
const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_HEARTBEAT_MS: '150' });
const run = (args: string[], kill?: { when: () => boolean }): Promise<ProcessRun> =>
  runCli(args, { cwd: dir(), env: env(), timeoutMs: 90_000, ...(kill ? { kill: { signal: 'SIGKILL' as const, when: kill.when } } : {}) });

async function input(name: string, rows: number): Promise<string> {
  const lines = ['pk,sk,v'];
  for (let i = 0; i < rows; i++) lines.push(`k${i % 97},${i},v${i}`);
  const path = join(dir(), name);
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

describe('a second worker with the same --segment', () => {
  it('both stop with 78 and say why; status fails the load with 78', async () => {
    const table = await newTable(KEYS);
    const csv = await input('dup.csv', 4000);
    const listing = join(dir(), 'dup.listing.json');
    // Paced so that both are still writing when they meet; separate reject files, as on two machines.
    const worker = (n: number) =>
      run([
        'load',
        csv,
        '--table',
        table,
        '--segment',
        '0/2',
        '--listing',
        listing,
        '--wcu',
        '400',
        '--json',
        '--rejects',
        join(dir(), `dup${n}.rejects.jsonl`),
      ]);
    const [a, b] = await Promise.all([worker(1), worker(2)]);
    for (const r of [a!, b!]) {
      expect(r.code, r.stderr).toBe(EXIT.CONFIG);
      expect(r.stderr).toMatch(/another process \(host [^,]+, pid \d+, started [^)]+\) is also worker --segment 0\/2 of the load sharing --listing/);
      expect(r.stderr).toMatch(/load this share again from its start/);
    }
    // Stopped early (here before either had written much or anything): neither says its share is complete.
    for (const r of [a!, b!]) expect((JSON.parse(r.stdout) as { complete: boolean }).complete).toBe(false);
    const status = await runCli(['status', listing], { cwd: dir(), env: env() });
    expect(status.code, status.stdout + status.stderr).toBe(EXIT.CONFIG);
  });

  it('a worker killed and started again is the same worker come back, not a second one', async () => {
    const table = await newTable(KEYS);
    const csv = await input('restart.csv', 3000);
    const listing = join(dir(), 'restart.listing.json');
    const doc = `${listing}.worker-1-of-2.json`;
    const args = ['load', csv, '--table', table, '--segment', '1/2', '--listing', listing, '--wcu', '600', '--checkpoint', join(dir(), 'restart.ckpt')];
    const killed = await run(args, { when: () => existsSync(doc) });
    expect(killed.signal).toBe('SIGKILL');
    const before = JSON.parse(await readFile(doc, 'utf8')) as { runId: string };
    const again = await run(args);
    expect(again.code, again.stderr).toBe(EXIT.OK);
    const after = JSON.parse(await readFile(doc, 'utf8')) as { runId: string; state: string };
    expect(after.runId).not.toBe(before.runId);
    expect(after.state).toBe('finished');
  });
});
