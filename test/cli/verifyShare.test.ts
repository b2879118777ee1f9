/**
 * `verify --segment i/N --listing L` workers share ONE read rate (--rcu), as a load's workers share
 * --total-wcu: two real processes against DynamoDB Local with uneven shares (worker 0's keys four times
 * worker 1's), each through its own proxy that records the read units DynamoDB reports and when. Attacks:
 * the two together reading faster than --rcu (each pacing its own --rcu, or both taking the whole rate);
 * the bigger worker staying at half the rate after the smaller finished (a fixed 1/N part); the state
 * documents carrying row data or being readable by others.
 */
import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { segmentOfKey } from '../../src/load/segment.js';
import type { VerifyResult } from '../../src/verifying/verifyResult.js';
import { assertCliBuilt } from '../support/cli.js';
import type { TableKeys } from '../support/ddb.js';
import { createForwarder, reply, startProxyServer } from '../support/httpForward.js';
import { localEnv } from '../support/env.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'verify-share', keys: KEYS });
const { dir, newTable } = aws;
const cli = localCli(aws, { stdin: '' });

/** Read units DynamoDB reported, with when they came back (ms), through a proxy in front of DynamoDB Local. */
async function unitsProxy(): Promise<{ url: string; reads: Array<{ at: number; units: number }> }> {
  const reads: Array<{ at: number; units: number }> = [];
  const upstream = createForwarder(aws.endpoint);
  const server = await startProxyServer('verify-share', async (req, res, body) => {
    const answer = await upstream.forward(req, body);
    if (String(req.headers['x-amz-target'] ?? '').endsWith('BatchGetItem') && answer.status === 200) {
      const parsed = JSON.parse(answer.body.toString()) as { ConsumedCapacity?: Array<{ CapacityUnits?: number }> };
      reads.push({ at: Date.now(), units: (parsed.ConsumedCapacity ?? []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0) });
    }
    reply(res, answer.status, answer.headers, answer.body);
  });
  aws.closeAfterAll({ close: async () => (await server.close(), upstream.close()) });
  return { url: server.url, reads };
}

/** Partition keys `p-<n>` of segment `segment` of 2, `count` of them. */
function keysOf(segment: number, count: number): string[] {
  const keys: string[] = [];
  for (let n = 0; keys.length < count; n++) if (segmentOfKey(`Sp-${n}`, 2) === segment) keys.push(`p-${n}`);
  return keys;
}

describe('verify --segment with --listing: one read rate shared by the workers running', () => {
  it('two workers with uneven shares read within --rcu together, and the bigger speeds up once the smaller finished', async () => {
    const table = await newTable();
    const folder = join(dir(), 'share');
    await mkdir(folder);
    // 20 items a partition key: worker 0 has 20 keys (400 items), worker 1 has 5 (100 items).
    const rows = ['pk,sk,v'];
    for (const pk of [...keysOf(0, 20), ...keysOf(1, 5)]) for (let sk = 0; sk < 20; sk++) rows.push(`${pk},${sk},v${sk}`);
    await writeFile(join(folder, 'rows.csv'), `${rows.join('\n')}\n`);
    const load = await cli(['load', folder, '--table', table, '--types', 'sk:N']);
    expect(load.code, load.stderr).toBe(0);

    // Small items: a unit or half of one each, whatever DynamoDB Local charges, counted from its reports.
    const rcu = 40;
    const listing = join(dir(), 'share.listing.json');
    const proxies = [await unitsProxy(), await unitsProxy()];
    const started = Date.now();
    const worker = (i: number) =>
      cli(
        [
          'verify',
          folder,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/2`,
          '--listing',
          listing,
          '--rcu',
          String(rcu),
          '--json',
          '--endpoint-url',
          proxies[i]!.url,
          '--differences',
          join(dir(), `d${i}.jsonl`),
        ],
        { env: { ...localEnv(aws.endpoint), DDB_SPREAD_TEST_HEARTBEAT_MS: '250' } },
      ).then((run) => ({ ...run, ended: Date.now() }));
    const [big, small] = await Promise.all([worker(0), worker(1)]);
    for (const run of [big, small]) expect(run.code, run.stderr).toBe(0);
    const results = [big, small].map((r) => JSON.parse(r.stdout) as VerifyResult);
    expect(results[0]!.outcomes.matched).toBe(400);
    expect(results[1]!.outcomes.matched).toBe(100);
    expect(results[0]!.reads.rcuReason).toContain('shared by the 2 workers');

    // Within --rcu together: over the whole run, and over every 3 s window (a second of burst each at most).
    const all = [...proxies[0]!.reads, ...proxies[1]!.reads].sort((a, b) => a.at - b.at);
    const units = all.reduce((sum, r) => sum + r.units, 0);
    expect(units).toBe(results[0]!.reads.consumedRcu + results[1]!.reads.consumedRcu);
    expect(results[0]!.reads.consumedRcu).toBe(4 * results[1]!.reads.consumedRcu);
    const first = all[0]!.at;
    const span = (all.at(-1)!.at - first) / 1000;
    expect(units / span).toBeLessThanOrEqual(rcu * 1.1);
    for (const r of all) {
      const window = all.filter((o) => o.at >= r.at && o.at < r.at + 3000).reduce((sum, o) => sum + o.units, 0);
      expect(window).toBeLessThanOrEqual(rcu * (3 + 1) * 1.06);
    }
    // Each at about half while both read: the small worker's units took about twice what the whole rate would.
    const smallReads = proxies[1]!.reads;
    const smallSpan = (smallReads.at(-1)!.at - smallReads[0]!.at) / 1000;
    expect(smallSpan).toBeGreaterThan((results[1]!.reads.consumedRcu / rcu) * 1.4);

    // The big worker after the small one finished: faster than before it, toward the whole --rcu.
    const smallDone = small.ended;
    expect(smallDone).toBeLessThan(big.ended);
    const bigReads = proxies[0]!.reads;
    const rateIn = (from: number, to: number) => bigReads.filter((r) => r.at >= from && r.at < to).reduce((sum, r) => sum + r.units, 0) / ((to - from) / 1000);
    // Before: from a second after both read (on a busy machine the small worker's process started seconds
    // after the big one, which read at the whole rate until then, as it should: a CI run counted that as
    // before) up to the small worker's last read, not its exit (its results and exit come after, while the
    // big worker may already have taken the whole rate).
    const before = rateIn(Math.max(bigReads[0]!.at, smallReads[0]!.at) + 1000, smallReads.at(-1)!.at);
    const after = rateIn(smallDone + 1500, bigReads.at(-1)!.at);
    expect(before).toBeLessThan(rcu * 0.7);
    expect(after).toBeGreaterThan(before * 1.4);
    console.log(
      `verify share: ${units} units in ${span.toFixed(1)} s (${(units / span).toFixed(1)}/s of --rcu ${rcu}); big worker ${before.toFixed(1)}/s before the small finished, ${after.toFixed(1)}/s after; small took ${smallSpan.toFixed(1)} s`,
    );
    expect(Date.now() - started).toBeLessThan(40_000);

    // The state documents: private, counts only, each worker's last word "finished".
    for (const i of [0, 1]) {
      const path = `${listing}.verify-worker-${i}-of-2.json`;
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      const text = await readFile(path, 'utf8');
      const doc = JSON.parse(text) as { state: string; totalRcu: number; consumedRcu: number };
      expect(doc).toMatchObject({ state: 'finished', totalRcu: rcu, consumedRcu: results[i]!.reads.consumedRcu });
      expect(text).not.toContain('p-');
    }
  }, 90_000);

  it('without --listing each worker paces its own --rcu, as before', async () => {
    const table = await newTable();
    const input = join(dir(), 'alone.csv');
    await writeFile(
      input,
      `pk,sk,v\n${keysOf(0, 3)
        .map((pk) => `${pk},1,x`)
        .join('\n')}\n`,
    );
    expect((await cli(['load', input, '--table', table, '--types', 'sk:N'])).code).toBe(0);
    const run = await cli(['verify', input, '--table', table, '--types', 'sk:N', '--segment', '0/2', '--rcu', '10', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as VerifyResult;
    expect(result.outcomes.matched).toBe(3);
    expect(result.reads.rcu).toBe(10);
    expect(result.reads.rcuReason).not.toContain('shared');
  });
});
