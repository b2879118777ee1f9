/**
 * Resume of an input that moved: a checkpoint accepts the same content at a new
 * path, and skips the batches it records as done by their index. The batches must then be the same ones,
 * whatever the input's path: under window order with --memory binding, the window's byte count included
 * the file name each held write carries, so a longer path cut the window elsewhere.
 */
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load, type LoadResult } from '../../src/index.js';
import { scanAll } from '../support/ddb.js';
import { faults, startFaultProxy } from '../support/faultProxy.js';
import { useLocalAws } from '../support/localAws.js';

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'resume-moved', processCredentials: true });

describe('a resume after the input moved', () => {
  it('window order under --memory: every row is in the table', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } });
    const rows: string[] = [];
    // A hot key on every other row, 20 others between: the window interleaves them.
    for (let i = 0; i < 3000; i++) rows.push(JSON.stringify({ pk: i % 2 === 0 ? 'hot' : `k${i % 20}`, sk: i, v: 'x'.repeat(40) }));
    const first = join(dir(), 'a.jsonl');
    await writeFile(first, `${rows.join('\n')}\n`);
    const checkpointPath = join(dir(), 'moved.checkpoint.json');
    const rejectsPath = join(dir(), 'moved.rejects.jsonl');
    const common = { region: 'us-east-1', table, rejectsPath, checkpointPath, order: 'window' as const, memoryBytes: 64 * 1024, concurrency: 1 };
    const stop = new AbortController();
    const proxy = closeAfterAll(
      await startFaultProxy(endpoint, (index) => {
        if (index >= 30) stop.abort();
        return faults.forward();
      }),
    );
    const stopped = await load({ ...common, endpoint: proxy.url, input: first }, { random: () => 0, signal: stop.signal }).then(
      () => undefined,
      (error: { result?: LoadResult }) => error.result,
    );
    expect(stopped?.written ?? 0).toBeGreaterThan(0);
    expect(stopped!.written).toBeLessThan(3000);
    // The same file, downloaded again into a folder with a longer name.
    const moved = join(dir(), `${'a-much-longer-folder-name-for-the-same-download-'.repeat(3)}input.jsonl`);
    await rename(first, moved);
    const resumed = await load({ ...common, endpoint, input: moved }, { random: () => 0 });
    expect(resumed.resumedFromBatch).toBeGreaterThan(0);
    expect({ rowsRead: resumed.rowsRead, written: resumed.written, rejected: resumed.rejected }).toEqual({ rowsRead: 3000, written: 3000, rejected: 0 });
    expect((await scanAll(client(), table)).length).toBe(3000);
  });
});
