/**
 * Attacks on an export chain divided by part (load/shares.ts, load/exportBarrier.ts) once its workers have
 * finished: a worker run again later must not write an earlier export's records over the later ones the
 * other workers wrote. Each worker is a real process, against DynamoDB Local; the oracle is the simulated
 * source table.
 */
import { rm } from 'node:fs/promises';
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
});
