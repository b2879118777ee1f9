/**
 * `estimate --workers N`: the whole load as N `--segment` workers would run it. The division, the bytes
 * the workers read and the largest share are the ones the real workers then take (each a real process
 * against DynamoDB Local); the time and the warnings are the rate of all of them, not one worker's share.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import type { LoadResult } from '../../src/index.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { localEnv } from '../support/env.js';
import { buildExport, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, dir, newTable } = useLocalAws({ name: 'estworkers' });

const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: localEnv(endpoint) });
const offline = ['--partition-key', 'pk:S', '--sort-key', 'sk:N'];
const estimateOf = (r: ProcessRun) => {
  expect(r.code, r.stderr).toBe(EXIT.OK);
  return JSON.parse(r.stdout) as EstimateResult;
};

describe('estimate --workers N: the whole load of N workers', () => {
  it('one export: divided by data file as the workers then divide it, the bytes they read and the largest share exactly', async () => {
    // Data files of different sizes, so the deal's largest share is not a quarter of the input.
    const partitions = Array.from({ length: 7 }, (_, p) =>
      Array.from({ length: 60 + p * p * 30 }, (_, i) => ({ Item: { pk: { S: `item-${p}-${i % 17}` }, sk: { N: String(i) }, v: { S: 'x'.repeat(p * 20) } } })),
    );
    const folder = await writeExport(join(dir(), 'export-root'), buildExport('exp', 'FULL_EXPORT', partitions));
    const estimate = estimateOf(await run(['estimate', folder, ...offline, '--workers', '3', '--total-wcu', '900', '--json']));
    expect(estimate.workers).toMatchObject({ count: 3, by: 'parts' });
    expect(estimate.workers!.why).toMatch(/one DynamoDB export/);
    // The whole load's rate, not one worker's third.
    expect(estimate.rate.targetWcu).toBe(900);
    expect(estimate.time.idealSeconds).toBeCloseTo(estimate.writeUnits.total / 900, 1);

    const table = await newTable(KEYS);
    const listing = join(dir(), 'export.listing.json');
    const runs = await Promise.all(
      [0, 1, 2].map((i) =>
        run(['load', folder, '--table', table, '--segment', `${i}/3`, '--listing', listing, '--json', '--rejects', join(dir(), `w${i}.rejects.jsonl`)]),
      ),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    const results = runs.map((r) => JSON.parse(r.stdout) as LoadResult);
    expect(results.reduce((n, r) => n + r.bytesRead, 0)).toBe(estimate.workers!.bytesReadByAll);
    expect(Math.max(...results.map((r) => r.division!.bytes))).toBe(estimate.workers!.largestShareBytes);
    expect(estimate.workers!.inputBytes).toBe(estimate.workers!.bytesReadByAll);
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(estimate.input.validRows - estimate.input.superseded);
  });

  it('parts of unknown content: every worker reads every part (N times the input), unless --parts-disjoint says otherwise', async () => {
    const folder = join(dir(), 'parts');
    await import('node:fs/promises').then((fs) => fs.mkdir(folder, { recursive: true }));
    for (let p = 0; p < 4; p++) {
      const lines = ['pk,sk,v'];
      for (let i = 0; i < 300; i++) lines.push(`k${(i * 7 + p) % 50},${p * 1000 + i},${p}`);
      await writeFile(join(folder, `p${p}.csv`), `${lines.join('\n')}\n`);
    }
    const byKey = estimateOf(await run(['estimate', folder, ...offline, '--workers', '4', '--json']));
    expect(byKey.workers).toMatchObject({ by: 'keys', largestShareBytes: byKey.input.bytes, bytesReadByAll: 4 * byKey.input.bytes! });
    expect(byKey.workers!.why).toMatch(/--parts-disjoint/);
    const byPart = estimateOf(await run(['estimate', folder, ...offline, '--workers', '4', '--parts-disjoint', '--json']));
    expect(byPart.workers).toMatchObject({ by: 'parts', bytesReadByAll: byPart.input.bytes });
    expect(byPart.workers!.largestShareBytes).toBeLessThan(byPart.input.bytes! / 2);
    // The text names the division and how to run the workers.
    const text = await run(['estimate', folder, ...offline, '--workers', '4', '--parts-disjoint']);
    expect(text.code, text.stderr).toBe(EXIT.OK);
    expect(text.stdout).toMatch(/Workers \(4, --segment 0\/4 … 3\/4\)/);
    expect(text.stdout).toMatch(/division\s+by part: --parts-disjoint/);
    expect(text.stdout).toMatch(/1\.00x the input/);
  });

  it('the warnings count all the workers: 4 at --wcu 1,500 are 6,000 on a 4,000 WCU table; 16 sharing 40,000 on a new on-demand table', async () => {
    const input = join(dir(), 'small.csv');
    await writeFile(input, 'pk,sk\na,1\nb,2\n');
    const four = estimateOf(
      await run(['estimate', input, ...offline, '--billing', 'provisioned', '--table-wcu', '4000', '--workers', '4', '--wcu', '1500', '--json']),
    );
    expect(four.rate.targetWcu).toBe(6000);
    expect(four.rate.warning).toMatch(/4 workers at --wcu 1,500 each: 6,000 is above the table's provisioned 4,000 WCU/);
    const sixteen = estimateOf(await run(['estimate', input, ...offline, '--workers', '16', '--total-wcu', '40000', '--json']));
    expect(sixteen.rate.warning).toMatch(/--total-wcu 40,000 is above what the on-demand table takes at once \(4,000 WCU\/s, a new table\)/);
    // --wcu auto given to several workers is the table once, for all of them.
    const auto = estimateOf(
      await run(['estimate', input, ...offline, '--billing', 'provisioned', '--table-wcu', '4000', '--workers', '4', '--wcu', 'auto', '--json']),
    );
    expect(auto.rate.targetWcu).toBe(3200);
  });

  it('--workers with --segment is refused (64): the whole load or one share, not both', async () => {
    const input = join(dir(), 'one.csv');
    await writeFile(input, 'pk,sk\na,1\n');
    const r = await run(['estimate', input, ...offline, '--workers', '4', '--segment', '1/4']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toMatch(/--workers estimates the whole load of N workers, --segment i\/N the share of one of them/);
  });
});
