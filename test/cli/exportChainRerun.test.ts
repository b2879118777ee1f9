/**
 * Attacks on an export chain divided by part (load/shares.ts, load/exportBarrier.ts) once its workers have
 * finished: a worker run again later must not write an earlier export's records over the later ones the
 * other workers wrote. Each worker is a real process, against DynamoDB Local; the oracle is the simulated
 * source table.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { chainExports, simulateChain, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'chainrerun' });

beforeAll(assertCliBuilt);

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_HEARTBEAT_MS: '100' });
const stateOf = (items: Iterable<Record<string, { S?: string; N?: string } | undefined>>) => {
  const state = new Map<string, string>();
  for (const item of items) state.set(`${item.pk!.S}/${item.sk!.N}`, `${item.v?.S}|${item.n?.N}`);
  return state;
};

describe('an export chain divided by part, a worker run again after the load finished', () => {
  it('a worker whose checkpoint is gone (a pod on a new node, an emptyDir volume) run again does not leave the full export over the incremental', async () => {
    // Parts hold lines i % 2: an item's full record and its update are in different data files, so a worker
    // reads the full record of items whose update the other worker writes.
    const chain = simulateChain(53, { items: 200, windows: 1, changesPerWindow: 120, partitions: 2 });
    for (const fixture of chainExports(chain, 'src')) await writeExport(join(dir(), 'rerun'), fixture);
    const folder = join(dir(), 'rerun', 'src', 'AWSDynamoDB');
    const table = await newTable(KEYS);
    const listing = join(dir(), 'rerun.listing.json');
    const checkpoint = (i: number) => join(dir(), `rerun${i}.checkpoint.json`);
    const worker = (i: number) =>
      runCli(
        [
          'load',
          folder,
          '--table',
          table,
          '--segment',
          `${i}/2`,
          '--listing',
          listing,
          '--checkpoint',
          checkpoint(i),
          '--rejects',
          join(dir(), `rerun${i}.rejects.jsonl`),
          '--json',
        ],
        { cwd: dir(), env: env() },
      );
    const runs = await Promise.all([worker(0), worker(1)]);
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    const source = stateOf(chain.final.values());
    expect(stateOf(await scanAll(client(), table))).toEqual(source);
    // Worker 0's checkpoint is lost; its document beside the listing still says it finished every export.
    await rm(checkpoint(0));
    const again = await worker(0);
    // Refused (it cannot know what it wrote), or run so that the table still ends as the source table;
    // never the full export's values written again over the incremental's the other worker wrote.
    if (again.code === EXIT.OK) expect(stateOf(await scanAll(client(), table))).toEqual(source);
    else expect(again.stderr).toMatch(/checkpoint/);
  });

  it("the chain loaded again with the same --listing (the same Job run again, into a new table): a worker does not take the earlier load's 'finished' documents for this load's and write a later export early", async () => {
    const chain = simulateChain(59, { items: 200, windows: 1, changesPerWindow: 120, partitions: 2 });
    for (const fixture of chainExports(chain, 'src')) await writeExport(join(dir(), 'again'), fixture);
    const folder = join(dir(), 'again', 'src', 'AWSDynamoDB');
    const listing = join(dir(), 'again.listing.json');
    const worker = (i: number, table: string, run: string) =>
      runCli(
        [
          'load',
          folder,
          '--table',
          table,
          '--segment',
          `${i}/2`,
          '--listing',
          listing,
          '--checkpoint',
          join(dir(), `again-${run}-${i}.checkpoint.json`),
          '--rejects',
          join(dir(), `again-${run}-${i}.rejects.jsonl`),
          '--json',
        ],
        { cwd: dir(), env: env(), timeoutMs: 60_000 },
      );
    const first = await newTable(KEYS);
    for (const r of await Promise.all([worker(0, first, 'a'), worker(1, first, 'a')])) expect(r.code, r.stderr).toBe(EXIT.OK);
    // The same Job again, into a new table (new checkpoints): its worker 1 starts first, its worker 0 a moment later.
    const second = await newTable(KEYS);
    const early = worker(1, second, 'b');
    let settled = false;
    void early.then(() => (settled = true));
    const doc1 = async () => JSON.parse(await readFile(`${listing}.worker-1-of-2.json`, 'utf8')) as { barrier?: unknown; table?: string };
    // Until worker 1 waits at the barrier for worker 0 (as it must: worker 0 has written nothing of this
    // load), or has ended without waiting.
    for (let i = 0; i < 200 && !settled && (await doc1()).barrier === undefined; i++) await new Promise((r) => setTimeout(r, 50));
    const late = await worker(0, second, 'b');
    const runs = [await early, late];
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect(stateOf(await scanAll(client(), second))).toEqual(stateOf(chain.final.values()));
  });
});
