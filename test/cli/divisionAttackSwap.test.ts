/**
 * Two indexes' checkpoints swapped (pods that took each other's volume, an index given the wrong path): a
 * worker given another worker's checkpoint, finished or not, must not take it for its own share's. Real
 * processes, DynamoDB Local.
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
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'divswap' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: localEnv(endpoint), timeoutMs: 60_000 });

describe("a worker given another worker's checkpoint", () => {
  it('worker 1 given the finished checkpoint of worker 0 is refused before any write (78), and status fails the load with 78 until it runs with its own', async () => {
    const folder = join(dir(), 'in');
    await mkdir(folder);
    let rows = 0;
    for (const name of ['a', 'b', 'c', 'd']) {
      const lines = ['pk,sk,v'];
      for (let i = 0; i < 150; i++) lines.push(`${name}-${i % 5},${i},v`);
      rows += 150;
      await writeFile(join(folder, `${name}.csv`), `${lines.join('\n')}\n`);
    }
    const table = await newTable(KEYS);
    const listing = join(dir(), 'l.json');
    const worker = (i: number, checkpoint: number) =>
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
        '--checkpoint',
        join(dir(), `ck${checkpoint}.json`),
        '--rejects',
        join(dir(), `r${i}.rejects.jsonl`),
      ]);
    const first = await worker(0, 0);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const written = (await scanAll(client(), table)).length;
    expect(written).toBeLessThan(rows);
    const swapped = await worker(1, 0);
    expect(swapped.code, swapped.stdout + swapped.stderr).toBe(EXIT.CONFIG);
    expect(swapped.stderr).toMatch(/checkpoint/);
    expect((await scanAll(client(), table)).length).toBe(written);
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stdout).toBe(EXIT.CONFIG);
    expect(JSON.parse(status.stdout)).toMatchObject({ complete: false });
    // With its own checkpoint: the whole input, and the load complete.
    const own = await worker(1, 1);
    expect(own.code, own.stderr).toBe(EXIT.OK);
    expect((await scanAll(client(), table)).length).toBe(rows);
    const after = await run(['status', listing, '--json']);
    expect(after.code, after.stdout).toBe(EXIT.OK);
  });
});
