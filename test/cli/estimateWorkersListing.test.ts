/**
 * `estimate --workers N` given the --listing its workers will share: the estimate is offline (the table
 * from flags), but the listing it leaves behind is the one the workers then read. Named after the hole.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import { assertCliBuilt, runCli, type ProcessRun } from '../support/cli.js';

let dir = '';
beforeAll(async () => {
  assertCliBuilt();
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-estlisting-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const offline = ['--partition-key', 'pk:S', '--sort-key', 'sk:N'];
const estimateOf = (r: ProcessRun) => {
  expect(r.code, r.stderr).toBe(EXIT.OK);
  return JSON.parse(r.stdout) as EstimateResult;
};

describe('estimate --workers N --listing L, then the workers at --listing L', () => {
  it('the listing the estimate writes divides the parts as the estimate said: a worker reads the share it named, not every part', async () => {
    const folder = join(dir, 'in');
    await mkdir(folder);
    for (let p = 0; p < 3; p++)
      await writeFile(join(folder, `p${p}.csv`), ['pk,sk,v', ...Array.from({ length: 20 }, (_, i) => `k${p}-${i},${i},x`)].join('\n') + '\n');
    const listing = join(dir, 'load.listing.json');
    const run = (args: string[]) => runCli(args, { cwd: dir, env: { ...process.env, AWS_REGION: 'us-east-1' } });
    // The planner's question before the Job: what will 3 workers take? Given the listing they will share.
    const whole = estimateOf(await run(['estimate', folder, ...offline, '--workers', '3', '--parts-disjoint', '--listing', listing, '--json']));
    expect(whole.workers).toMatchObject({ by: 'parts' });
    expect(whole.workers!.largestShareBytes).toBeLessThan(whole.workers!.inputBytes);
    // Worker 0 of the load (its own estimate, as --dry-run would be) at that listing.
    const worker = estimateOf(await run(['estimate', folder, ...offline, '--segment', '0/3', '--parts-disjoint', '--listing', listing, '--json']));
    // The listing was written without its segments and division: the worker takes it for an older
    // ddb-spread's and divides by key, reading every part, while the estimate promised a third each.
    expect(worker.input.bytes).toBe(whole.workers!.largestShareBytes);
  });
});
