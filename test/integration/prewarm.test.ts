/**
 * --prewarm from the library (load() and estimate() in process) and from a config file, against the
 * warm-throughput proxy in front of DynamoDB Local (DynamoDB Local itself has no warm throughput).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimate } from '../../src/estimating/estimate.js';
import type { LoadEvent } from '../../src/index.js';
import { runCli } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { startWarmProxy } from '../support/warmProxy.js';

const aws = useLocalAws({
  name: 'prewarm-lib',
  processCredentials: true,
  keys: { partitionKey: { name: 'pk', type: 'S' }, gsis: [{ name: 'byKind', partitionKey: { name: 'kind', type: 'S' } }] },
});
const { run, inputFile } = localLoad(aws);

const rows = (n: number) => `pk,kind\n${Array.from({ length: n }, (_, i) => `k${i},${i % 3 === 0 ? 'a' : 'b'}`).join('\n')}\n`;

describe('--prewarm from the library and the config file', () => {
  it('load({ prewarm: true, wcu }) raises table and GSI, says so in its events, and writes every row', async () => {
    const table = await aws.newTable();
    const warm = aws.closeAfterAll(await startWarmProxy(aws.endpoint, { updatingDescribes: 1 }));
    const events: LoadEvent[] = [];
    const result = await run(
      { input: await inputFile('rows.csv', rows(120)), table, endpoint: warm.url, wcu: 12_000, prewarm: true },
      { onEvent: (e) => events.push(e), testSeams: { prewarmPollMs: 20 } },
    );
    expect(result).toMatchObject({ written: 120, complete: true });
    expect(warm.updates).toEqual([{ table, tableWrite: 12_000, indexes: [{ name: 'byKind', write: 12_000 }] }]);
    expect(events.filter((e) => e.type === 'prewarm').map((e) => (e as { stage: string }).stage)).toEqual(['plan', 'waiting', 'done']);
    // Rate chosen after the raise: the fixed target stands, and no warning of a target above what the table takes at once.
    expect(events.some((e) => e.type === 'warning' && /takes at once/.test(e.message))).toBe(false);
    expect((await scanAll(aws.client(), table)).length).toBe(120);
  });

  it('estimate({ prewarm: true }) assumes the raise and never sends it', async () => {
    const table = await aws.newTable();
    const warm = aws.closeAfterAll(await startWarmProxy(aws.endpoint));
    const result = await estimate({ input: await inputFile('rows.csv', rows(60)), table, endpoint: warm.url, region: 'us-east-1', wcu: 12_000, prewarm: true });
    expect(result.prewarm).toMatchObject({ given: true, targetWcu: 12_000 });
    expect(result.rate.assumedWcu).toBe(12_000);
    expect(warm.updates).toEqual([]);
  });

  it('a config file\'s "prewarm": true does what --prewarm does', async () => {
    const table = await aws.newTable();
    const warm = aws.closeAfterAll(await startWarmProxy(aws.endpoint, { updatingDescribes: 0 }));
    const config = join(aws.dir(), 'job.json');
    await writeFile(config, JSON.stringify({ table, wcu: 8000, prewarm: true }));
    const result = await runCli(['load', await inputFile('rows.csv', rows(30)), '--config', config, '--json'], {
      cwd: aws.dir(),
      env: { ...localEnv(warm.url), DDB_SPREAD_TEST_PREWARM_POLL_MS: '20' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(warm.updates).toEqual([{ table, tableWrite: 8000, indexes: [{ name: 'byKind', write: 8000 }] }]);
  });
});
