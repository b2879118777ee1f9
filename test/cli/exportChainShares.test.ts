/**
 * An export chain (a full export, then incrementals) divided by part between `--segment` workers: each
 * worker reads its share of each export, and none starts an export before every worker has written the
 * one before it (load/exportBarrier.ts). The oracle is the simulated source table: an item whose full
 * record is in one worker's part and whose incremental record (an update, a delete) is in another's must
 * end as the last export says. Each worker is a real process, against DynamoDB Local.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { killableCli } from '../support/checkpoint.js';
import { assertCliBuilt, runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { chainExports, simulateChain, writeExport, type SimulatedChain } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';
import { exportSpans, shareOf } from '../../src/load/shares.js';
import type { ListedPart } from '../../src/reading/inputPart.js';
import type { ListingDoc } from '../../src/reading/listingDoc.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'chainshares' });

beforeAll(assertCliBuilt);

// A short beat: the barrier reads the other workers' documents at it. Restart points every 100 rows, so a
// killed worker resumes past what it had written (in a later export than the first, when it got there).
const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_HEARTBEAT_MS: '100', DDB_SPREAD_TEST_RESTART_ROWS: '100' });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;

type State = Map<string, string>;
const stateOf = (items: Iterable<Record<string, { S?: string; N?: string } | undefined>>): State => {
  const state: State = new Map();
  for (const item of items) state.set(`${item.pk!.S}/${item.sk!.N}`, `${item.v?.S}|${item.n?.N}`);
  return state;
};

/** The chain's three exports written under `<dir>/<name>/src/AWSDynamoDB/`; the folder given to the workers. */
async function writeChain(name: string, chain: SimulatedChain): Promise<string> {
  for (const fixture of chainExports(chain, 'src')) await writeExport(join(dir(), name), fixture);
  return join(dir(), name, 'src', 'AWSDynamoDB');
}

/**
 * Keys whose full-export record and first incremental's record are read by different workers, as the
 * listing deals them (shares.ts): updated there, or deleted. What the barrier is for: without it the full
 * record could land last.
 */
async function crossedKeys(listing: string, chain: SimulatedChain, workers: number): Promise<{ updated: number; deleted: number }> {
  const doc = JSON.parse(await readFile(listing, 'utf8')) as ListingDoc;
  const parts = doc.parts.map((p) => ({ part: { name: p.name, size: p.size } }) as unknown as ListedPart);
  const spans = exportSpans({ parts, exports: doc.exports })!;
  const owner = new Map<string, number>();
  for (let w = 0; w < workers; w++)
    for (const p of shareOf(parts, { index: w, count: workers }, { by: 'chain', why: '' }, spans).parts) owner.set(p.part.name, w);
  type Line = { Item?: Record<string, { S?: string; N?: string }>; Keys?: Record<string, { S?: string; N?: string }>; NewImage?: unknown };
  const workerOf = (e: number) => {
    const at = new Map<string, { worker: number; line: Line }>();
    const lines = (e === 0 ? chain.full : chain.incrementals[e - 1]!) as Line[][];
    const ofExport = parts.slice(spans[e]!.first, spans[e]!.first + spans[e]!.count);
    lines.forEach((partition, i) => {
      // The fixture names partition i's data file <random hex><i>.json.gz.
      const file = ofExport.find((p) => p.part.name.endsWith(`${i}.json.gz`))!.part.name;
      for (const line of partition) {
        const key = line.Item ?? line.Keys!;
        at.set(`${key['pk']!.S}/${key['sk']!.N}`, { worker: owner.get(file)!, line });
      }
    });
    return at;
  };
  const full = workerOf(0);
  let updated = 0;
  let deleted = 0;
  for (const [key, { worker, line }] of workerOf(1)) {
    if (full.get(key) === undefined || full.get(key)!.worker === worker) continue;
    if (line.NewImage) updated++;
    else deleted++;
  }
  return { updated, deleted };
}

describe('--segment over an export chain: divided by part, export by export, with a barrier between exports', () => {
  it('a chain of 3 exports, 4 workers (one with no part of each export): the table ends as the source table', async () => {
    const chain = simulateChain(41, { items: 500, windows: 2, changesPerWindow: 260, partitions: 3 });
    const folder = await writeChain('four', chain);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'four.listing.json');
    const worker = (i: number) =>
      runCli(
        [
          'load',
          folder,
          '--table',
          table,
          '--segment',
          `${i}/4`,
          '--listing',
          listing,
          '--checkpoint',
          join(dir(), `four${i}.checkpoint.json`),
          '--rejects',
          join(dir(), `four${i}.rejects.jsonl`),
          '--json',
        ],
        { cwd: dir(), env: env() },
      );
    const runs = await Promise.all([0, 1, 2, 3].map(worker));
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    const results = runs.map(resultOf);
    for (const r of results) {
      expect(r.division).toMatchObject({ by: 'chain' });
      expect(r.division!.why).toMatch(/an export chain of 3 exports, each divided by data file/);
      expect(r.otherSegments).toBe(0);
    }
    // 9 data files dealt export by export: 2 or 3 each, and each worker reads only its own.
    expect(results.map((r) => r.division!.parts).sort()).toEqual([2, 2, 2, 3]);
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(chain.full.flat().length + chain.incrementals.flat(2).length);
    // Items the full export holds in one worker's part and the incremental updates or deletes in another's.
    const crossed = await crossedKeys(listing, chain, 4);
    expect(crossed.updated).toBeGreaterThan(20);
    expect(crossed.deleted).toBeGreaterThan(5);
    expect(stateOf(await scanAll(client(), table))).toEqual(stateOf(chain.final.values()));
    const doc = JSON.parse(await readFile(listing, 'utf8')) as { division?: string };
    expect(doc.division).toBe('chain');
    const status = await runCli(['status', listing, '--json'], { cwd: dir(), env: env() });
    expect(status.code, status.stderr).toBe(EXIT.OK);
    expect(JSON.parse(status.stdout)).toMatchObject({ complete: true });
  });

  it('a worker killed (SIGKILL) mid-chain and started again: the others wait for it, none writes an export early; the table ends as the source table', async () => {
    const chain = simulateChain(43, { items: 600, windows: 2, changesPerWindow: 300, partitions: 2 });
    const folder = await writeChain('killed', chain);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'killed.listing.json');
    const args = (i: number) => [
      'load',
      folder,
      '--table',
      table,
      '--segment',
      `${i}/2`,
      '--listing',
      listing,
      '--checkpoint',
      join(dir(), `killed${i}.checkpoint.json`),
      '--rejects',
      join(dir(), `killed${i}.rejects.jsonl`),
      '--json',
    ];
    // Worker 1 is paced slowly and killed past the first barrier, inside export 2 (its share of the full
    // export is one of its 2 data files, 300 rows: 12 batches); worker 0 runs at full speed and waits for it.
    const slow = killableCli([...args(1), '--wcu', '100'], join(dir(), 'killed1.checkpoint.json'), { cwd: dir(), env: env() });
    const other = runCli(args(0), { cwd: dir(), env: env(), timeoutMs: 120_000 });
    const killed = await slow(14);
    expect(killed.signal).toBe('SIGKILL');
    // Silent now: worker 0 waits for it rather than go on to the next export.
    const silent = JSON.parse(await readFile(`${listing}.worker-1-of-2.json`, 'utf8')) as { state: string; settledExports: number };
    expect(silent).toMatchObject({ state: 'running', settledExports: 1 });
    // Worker 0 comes to the next barrier and waits there, running: status says so, naming whom it waits for.
    const docOf0 = async () => JSON.parse(await readFile(`${listing}.worker-0-of-2.json`, 'utf8')) as { barrier?: { next: number; waitingFor: string[] } };
    for (let i = 0; i < 300 && (await docOf0()).barrier === undefined; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await docOf0()).barrier).toEqual({ next: 2, waitingFor: ['1/2'] });
    const status = await runCli(['status', listing], { cwd: dir(), env: env() });
    expect(status.stdout).toMatch(/worker 0\/2 +running .*exports written: the first 2; waiting for worker 1\/2 to write them before export 3/);
    const resumed = await runCli(args(1), { cwd: dir(), env: env(), timeoutMs: 120_000 });
    const first = await other;
    for (const r of [first, resumed]) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect(resultOf(resumed).resumedFromBatch).toBeGreaterThan(0);
    const crossed = await crossedKeys(listing, chain, 2);
    expect(crossed.updated).toBeGreaterThan(20);
    expect(crossed.deleted).toBeGreaterThan(5);
    // It resumed inside export 2, from a restart point past the barrier: it did not wait for export 1 again.
    const skipped = /reading on from a restart point past the first ([\d,]+) rows/.exec(resumed.stderr);
    expect(Number(skipped?.[1]?.replace(/,/g, ''))).toBeGreaterThanOrEqual(300);
    expect(resumed.stderr).not.toMatch(/before reading export 2 of 3/);
    expect(first.stderr).toMatch(/waiting for worker 1\/2 to write exports 1 to 2 of the chain before reading export 3 of 3/);
    expect(stateOf(await scanAll(client(), table))).toEqual(stateOf(chain.final.values()));
    // Run again on its finished checkpoint (a recreated Job's worker): it says it has settled every export.
    const again = await runCli(args(0), { cwd: dir(), env: env() });
    expect(again.code, again.stderr).toBe(EXIT.OK);
    const doc = JSON.parse(await readFile(`${listing}.worker-0-of-2.json`, 'utf8')) as { state: string };
    expect(doc.state).toBe('finished');
    expect(stateOf(await scanAll(client(), table))).toEqual(stateOf(chain.final.values()));
  });

  it('a worker stopped on what no retry fixes: the one waiting for it stops with 75, having written only the export before; both run again end as the source table', async () => {
    const chain = simulateChain(47, { items: 200, windows: 1, changesPerWindow: 120, partitions: 2 });
    const folder = await writeChain('stopped', chain);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'stopped.listing.json');
    const args = (i: number, onTable = table) => [
      'load',
      folder,
      '--table',
      onTable,
      '--segment',
      `${i}/2`,
      '--listing',
      listing,
      '--checkpoint',
      join(dir(), `stopped${i}.checkpoint.json`),
      '--rejects',
      join(dir(), `stopped${i}.rejects.jsonl`),
      '--json',
    ];
    const run = (a: string[]) => runCli(a, { cwd: dir(), env: env() });
    // Worker 1 is given a table that does not exist: it lists, says it started, and stops (78) before any write.
    const wrong = await run(args(1, `${table}-missing`));
    expect(wrong.code, wrong.stderr).toBe(EXIT.CONFIG);
    const waiting = await run(args(0));
    expect(waiting.code, waiting.stderr).toBe(EXIT.TEMP_FAIL);
    expect(waiting.stderr).toMatch(
      /worker 1\/2 stopped \(TABLE_NOT_FOUND\) before it had written export 1 of 2 \(.+\), and this worker must not read export 2 of 2 \(.+\) until it has\. .*run it again, then run worker 0\/2 again/,
    );
    // It wrote its share of the full export and nothing of the incremental.
    const full = stateOf(chain.full.flat().map((l) => (l as { Item: Record<string, { S?: string; N?: string }> }).Item));
    const written = stateOf(await scanAll(client(), table));
    expect(written.size).toBe(resultOf(waiting).written);
    for (const [key, value] of written) expect(full.get(key)).toBe(value);
    // Started again, worker 1 first (a stop found at once is believed only after a grace of a few beats, which
    // a loaded machine's start-up could outlast: the unit tests cover the grace): worker 1 waits for worker 0.
    const fixed = run(args(1));
    const docOf1 = async () => JSON.parse(await readFile(`${listing}.worker-1-of-2.json`, 'utf8')) as { state: string };
    for (let i = 0; i < 300 && (await docOf1()).state !== 'running'; i++) await new Promise((r) => setTimeout(r, 100));
    const again = await Promise.all([fixed, run(args(0))]);
    for (const r of again) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect(stateOf(await scanAll(client(), table))).toEqual(stateOf(chain.final.values()));
  });
});
