/**
 * Adversarial: DynamoDB export chains read with their data files side by side (the auto order), killed with
 * SIGKILL at random batches and resumed by the same command, through the CLI against DynamoDB Local. The
 * chain, the number of data files (one: nothing read side by side), the window, the concurrency, how often
 * restart points fall and the kill points are drawn. Invariant: the resumed load exits 0, says complete, counts every record once (read =
 * written + superseded), and the table is exactly the source table after the last window.
 */
import { fc, it } from '@fast-check/vitest';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { fcParams, REPLAY } from '../support/adversarialPipeline.js';
import { batchesDone } from '../support/checkpoint.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { chainExports, simulateChain, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';

const FILE = 'test/adversarial/exportResume.test.ts';
const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-export-resume', processCredentials: true, keys: KEYS });
let seq = 0;

beforeAll(assertCliBuilt);

const caseArb = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  windows: fc.integer({ min: 1, max: 2 }),
  partitions: fc.integer({ min: 1, max: 9 }),
  folder: fc.boolean(),
  // Windows smaller than the chain: a window that held every record would hand them out in an order of
  // their keys alone, whatever order the data files were read in, and hide a rotation that is not replayed.
  window: fc.constantFrom(64, 300),
  concurrency: fc.integer({ min: 1, max: 6 }),
  // Restart points inside the data files every few records (0: only at each export's start, as with the
  // default 16,384 on chains this small): a resume then opens each file at its own line.
  restartRows: fc.constantFrom(0, 97, 250),
  kills: fc.uniqueArray(fc.integer({ min: 2, max: 18 }), { minLength: 1, maxLength: 2 }).map((k) => k.sort((a, b) => a - b)),
});

describe('export chains read side by side, killed and resumed, adversarial', () => {
  it.prop([caseArb], fcParams(3))(
    `the table ends as the source table, every record counted once (${REPLAY(FILE)})`,
    async (c) => {
      const chain = simulateChain(c.seed, { items: 500, windows: c.windows, changesPerWindow: 200, partitions: c.partitions });
      const root = join(dir(), `case-${++seq}`);
      const folders: string[] = [];
      for (const fixture of chainExports(chain, 'src')) folders.push(await writeExport(root, fixture));
      const table = await newTable();
      const checkpoint = join(root, 'ck.json');
      const args = [
        'load',
        ...(c.folder ? [join(root, 'src')] : folders),
        '--table',
        table,
        '--checkpoint',
        checkpoint,
        '--json',
        '--concurrency',
        String(c.concurrency),
        '--window',
        String(c.window),
      ];
      const env = { ...localEnv(endpoint), ...(c.restartRows > 0 ? { DDB_SPREAD_TEST_RESTART_ROWS: String(c.restartRows) } : {}) };
      try {
        for (const kill of c.kills) {
          const run = await runCli(args, {
            cwd: root,
            env,
            stdout: 'ignore',
            timeoutMs: 120_000,
            kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= kill },
          });
          // A run may finish before its kill point (a short chain): the resume then reports the finished load.
          expect([0, 'SIGKILL'], run.stderr).toContain(run.signal ?? run.code);
        }
        const last = await runCli(args, { cwd: root, env, timeoutMs: 120_000 });
        expect(last.code, last.stderr).toBe(0);
        const records = [chain.full, ...chain.incrementals].flat(2).length;
        const result = JSON.parse(last.stdout) as { rowsRead: number; written: number; superseded: number; rejected: number; complete: boolean };
        expect(result).toMatchObject({ rowsRead: records, rejected: 0, complete: true });
        expect(result.written + result.superseded).toBe(records);
        const got = new Map((await scanAll(client(), table)).map((i) => [`${i['pk']!.S}/${i['sk']!.N}`, `${i['v']!.S}|${i['n']!.N}`]));
        const want = new Map([...chain.final].map(([k, i]) => [k, `${i['v']!.S}|${i['n']!.N}`]));
        expect(got).toEqual(want);
      } finally {
        await dropTable(table);
      }
    },
    150_000,
  );
});
