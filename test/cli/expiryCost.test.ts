/**
 * issue 33 items 3 and 4, through the built CLI against DynamoDB Local: --skip-expired leaves out rows whose
 * TTL is past (a DynamoDB export's items expired but not yet deleted, a CSV's rows), counts them in every
 * sum, pins its load time in the checkpoint; --max-cost refuses before the first write (exit 3) and stops a
 * load before its units pass the limit (exit 4, checkpoint saved), which a higher limit then resumes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import type { LoadResult } from '../../src/index.js';
import { assertCliBuilt } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { buildExport, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';
import { localCli } from '../support/localCli.js';
import { localEnv } from '../support/env.js';
import { writeParquet } from '../support/formatFixtures.js';

const aws = useLocalAws({ name: 'expirycost' });
const { dir, newTable, client } = aws;
const cli = localCli(aws);
const KEYS = { partitionKey: { name: 'pk', type: 'S' as const } };
let seq = 0;

async function file(name: string, text: string): Promise<string> {
  const path = join(dir(), `${++seq}-${name}`);
  await writeFile(path, text);
  return path;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const FIVE_YEARS = 5 * 365.25 * 24 * 3600;
const keysOf = async (table: string) => (await scanAll(client(), table)).map((item) => item['pk']!.S!).sort();

/** The sum every summary, report and checkpoint must agree on. */
function expectAccounted(r: LoadResult): void {
  expect(r.written + r.superseded + r.rejected + r.otherSegments + (r.skippedExpired ?? 0) + r.notWritten).toBe(r.rowsRead);
}

describe('--skip-expired', () => {
  it('a DynamoDB export: items expired but not yet deleted are left out and counted; live, too old, string TTLs and no TTL are written', async () => {
    await assertCliBuilt();
    const now = nowSeconds();
    const item = (pk: string, ttl?: Record<string, string>) => ({ Item: { pk: { S: pk }, v: { S: 'x' }, ...(ttl ? { expiresAt: ttl } : {}) } });
    const partitions = [
      [item('expired-1', { N: String(now - 3600) }), item('live-1', { N: String(now + 86_400) }), item('none-1')],
      [item('expired-2', { N: String(now - 86_400 * 30) }), item('tooold-1', { N: String(Math.floor(now - FIVE_YEARS - 86_400)) })],
      [item('string-1', { S: String(now - 3600) }), item('expired-3', { N: `${now - 10}.25` }), item('live-2', { N: String(now + 60) })],
    ];
    const folder = await writeExport(join(dir(), 'export-root'), buildExport('exp', 'FULL_EXPORT', partitions));
    const table = await newTable(KEYS);

    const estimate = await cli(['estimate', folder, '--table', table, '--skip-expired', 'expiresAt', '--json']);
    expect(estimate.code, estimate.stderr).toBe(EXIT.OK);
    const est = JSON.parse(estimate.stdout) as EstimateResult;
    expect(est.input).toMatchObject({ rows: 8, expired: 3, validRows: 5 });
    expect(est.writeUnits.total).toBe(5);

    const run = await cli(['load', folder, '--table', table, '--skip-expired', 'expiresAt', '--json']);
    expect(run.code, run.stderr).toBe(EXIT.OK);
    const result = JSON.parse(run.stdout) as LoadResult;
    expect(result).toMatchObject({ rowsRead: 8, written: 5, skippedExpired: 3, notWritten: 0, complete: true });
    expectAccounted(result);
    expect(await keysOf(table)).toEqual(['live-1', 'live-2', 'none-1', 'string-1', 'tooold-1']);
    // The person's summary says it too.
    const text = await cli(['load', folder, '--table', await newTable(KEYS), '--skip-expired', 'expiresAt']);
    expect(text.code, text.stderr).toBe(EXIT.OK);
    expect(text.stderr + text.stdout).toMatch(/expired\s+3\s+\(--skip-expired/);
  });

  it('a CSV with the TTL typed N: expired rows left out, every worker of --segment counting only its own', async () => {
    const now = nowSeconds();
    const rows = Array.from({ length: 200 }, (_, i) => `k${i},${i % 4 === 0 ? now - 100 - i : now + 3600 + i},v${i}`);
    const input = await file('ttl.csv', `pk,ttl,v\n${rows.join('\n')}\n`);
    const expired = rows.filter((_, i) => i % 4 === 0).length;

    const whole = await newTable(KEYS);
    const run = await cli(['load', input, '--table', whole, '--types', 'ttl:N', '--skip-expired', 'ttl', '--json']);
    expect(run.code, run.stderr).toBe(EXIT.OK);
    const result = JSON.parse(run.stdout) as LoadResult;
    expect(result).toMatchObject({ rowsRead: 200, written: 200 - expired, skippedExpired: expired, complete: true });
    expect((await keysOf(whole)).some((k) => Number(k.slice(1)) % 4 === 0)).toBe(false);

    const split = await newTable(KEYS);
    const workers = await Promise.all(
      [0, 1].map((i) =>
        cli([
          'load',
          input,
          '--table',
          split,
          '--types',
          'ttl:N',
          '--skip-expired',
          'ttl',
          '--segment',
          `${i}/2`,
          '--json',
          '--rejects',
          join(dir(), `seg${i}.rejects.jsonl`),
        ]),
      ),
    );
    const results = workers.map((w) => {
      expect(w.code, w.stderr).toBe(EXIT.OK);
      return JSON.parse(w.stdout) as LoadResult;
    });
    for (const r of results) expectAccounted(r);
    expect(results.reduce((n, r) => n + (r.skippedExpired ?? 0), 0)).toBe(expired);
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(200 - expired);
    expect(await keysOf(split)).toEqual(await keysOf(whole));
  });

  it('Parquet (an INT64 TTL) and JSON Lines: expired rows left out and counted, the others written', async () => {
    const now = nowSeconds();
    const ttls = [now - 60, now + 3600, now - 86_400, now + 60, 0];
    const parquet = join(dir(), 'ttl.parquet');
    writeParquet(
      parquet,
      [
        { name: 'pk', data: ttls.map((_, i) => `p${i}`) },
        { name: 'ttl', data: ttls.map((t) => BigInt(t)) },
      ],
      [
        { name: 'schema', num_children: 2 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'ttl', type: 'INT64', repetition_type: 'OPTIONAL' },
      ],
    );
    const jsonl = await file('ttl.jsonl', ttls.map((t, i) => JSON.stringify({ pk: `j${i}`, ttl: t })).join('\n') + '\n');
    for (const [input, prefix] of [
      [parquet, 'p'],
      [jsonl, 'j'],
    ] as const) {
      const table = await newTable(KEYS);
      const run = await cli(['load', input, '--table', table, '--skip-expired', 'ttl', '--json']);
      expect(run.code, run.stderr).toBe(EXIT.OK);
      expect(JSON.parse(run.stdout)).toMatchObject({ rowsRead: 5, written: 3, skippedExpired: 2, complete: true });
      // 0 is more than five years past: DynamoDB's TTL ignores it, and so does --skip-expired.
      expect(await keysOf(table)).toEqual([1, 3, 4].map((i) => `${prefix}${i}`));
    }
  });

  it('a CSV whose TTL column is left a string writes every row, and says why', async () => {
    const input = await file('untyped.csv', `pk,ttl\na,${nowSeconds() - 100}\nb,${nowSeconds() - 100}\n`);
    const table = await newTable(KEYS);
    const run = await cli(['load', input, '--table', table, '--skip-expired', 'ttl', '--json']);
    expect(run.code, run.stderr).toBe(EXIT.OK);
    expect(JSON.parse(run.stdout)).toMatchObject({ written: 2, skippedExpired: 0 });
    expect(run.stderr).toMatch(/ttl is a string, which DynamoDB's TTL ignores.*--types ttl:N/);
  });

  it('a resume judges expiry at the load time its checkpoint pinned: a row that expired between the runs is written, as the first run planned it', async () => {
    const start = nowSeconds();
    // Late enough that the first run has pinned its time before it (asserted below: ~0.3 s after its start
    // here, 8 s of margin for a busy machine), and no later, since the resume must wait for it to pass.
    const soon = start + 8;
    const future = start + 86_400;
    // Rows the cost guard's first look prices low (a unit per 900 bytes), then rows of 2 units in a few bytes
    // (stopCsv), so the first run stops part way; the last row expires a few seconds after that run starts.
    const input = await file('pinned.csv', stopCsv(300, 300, `,${future}`, `zz-soon,${soon},,,,,\n`, 'pk,ttl'));
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'pinned.checkpoint.json');
    const args = ['load', input, '--table', table, '--types', 'ttl:N', '--skip-expired', 'ttl', '--checkpoint', checkpoint, '--order', 'input', '--json'];
    // 300 + 2 x 300 + 1 units; the limit is 500 units at $0.625 per million.
    const first = await cli([...args, '--max-cost', '0.0003125']);
    expect(first.code, first.stderr).toBe(EXIT.COST_STOPPED);
    const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { options: { skipExpired: { attribute: string; at: number } } };
    expect(saved.options.skipExpired.attribute).toBe('ttl');
    expect(saved.options.skipExpired.at).toBeGreaterThanOrEqual(start);
    expect(saved.options.skipExpired.at).toBeLessThan(soon);
    // The row's TTL passes before the resume: judged now, it would be left out.
    while (nowSeconds() <= soon) await new Promise((r) => setTimeout(r, 250));
    const second = await cli([...args, '--max-cost', '1']);
    expect(second.code, second.stderr).toBe(EXIT.OK);
    const result = JSON.parse(second.stdout) as LoadResult;
    expect(result).toMatchObject({ rowsRead: 601, written: 601, skippedExpired: 0, complete: true });
    expect(await keysOf(table)).toContain('zz-soon');
  }, 90_000);
});

describe('--skip-expired with --max-cost and restart points', () => {
  it('a resume at a restart point keeps the expired rows counted before it: the counts of the whole load add up', { timeout: 90_000 }, async () => {
    const now = nowSeconds();
    // Every fifth row of each kind expired; the first run stops part way into the two-unit rows.
    const ttl = (i: number) => (i % 5 === 0 ? now - 3600 : now + 86_400);
    const long = (c: string) => c.repeat(255);
    const header = ['pk', 'ttl', 'v', long('a'), long('b'), long('c'), long('d')].join(',');
    const small = Array.from({ length: 1000 }, (_, i) => `s${String(i).padStart(4, '0')},${ttl(i)},${'x'.repeat(900)},,,,`);
    const large = Array.from({ length: 1000 }, (_, i) => `l${String(i).padStart(4, '0')},${ttl(i)},,1,1,1,1`);
    const input = await file('points.csv', `${header}\n${[...small, ...large].join('\n')}\n`);
    const expired = 400;
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'points.checkpoint.json');
    const args = ['load', input, '--table', table, '--types', 'ttl:N', '--skip-expired', 'ttl', '--checkpoint', checkpoint, '--order', 'input', '--json'];
    const env = { env: { ...localEnv(aws.endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '100' } };
    // 800 + 2 x 800 = 2,400 units written in all; the limit, $0.001, is 1,600.
    const first = await cli([...args, '--max-cost', '0.001'], env);
    expect(first.code, first.stderr).toBe(EXIT.COST_STOPPED);
    const stopped = JSON.parse(first.stdout) as LoadResult;
    expectAccounted(stopped);
    expect(stopped.skippedExpired).toBeGreaterThan(200);
    const saved = JSON.parse(await readFile(checkpoint, 'utf8')) as { batchesDone: number; restarts: { batch: number; skippedExpired?: number }[] };
    // The resume starts at a point with expired rows before it.
    expect(saved.restarts.some((p) => (p.skippedExpired ?? 0) > 0 && p.batch <= saved.batchesDone)).toBe(true);

    const resumed = await cli([...args, '--max-cost', '1'], env);
    expect(resumed.code, resumed.stderr).toBe(EXIT.OK);
    const done = JSON.parse(resumed.stdout) as LoadResult;
    expect(done).toMatchObject({ rowsRead: 2000, written: 2000 - expired, skippedExpired: expired, notWritten: 0, complete: true });
    expect(await keysOf(table)).toHaveLength(2000 - expired);
  });
});

/**
 * A CSV whose first `small` rows are items of one unit in about 900 bytes and whose next `large` rows are
 * items of two units in a few bytes (four attribute names of 255 characters, which a CSV writes once, in its
 * header): the cost guard's look at the first rows prices the input at about a third of what it costs.
 */
function stopCsv(small: number, large: number, extra = '', tail = '', keys = 'pk'): string {
  const long = (c: string) => c.repeat(255);
  const header = [keys, 'v', long('a'), long('b'), long('c'), long('d')].join(',');
  const smallRows = Array.from({ length: small }, (_, i) => `s${String(i).padStart(4, '0')}${extra},${'x'.repeat(900)},,,,`);
  const largeRows = Array.from({ length: large }, (_, i) => `l${String(i).padStart(4, '0')}${extra},,1,1,1,1`);
  return `${header}\n${[...smallRows, ...largeRows].join('\n')}\n${tail}`;
}

describe('--max-cost', () => {
  it("prices the input by every row read: rows left out as expired, or another worker's, cost nothing and do not get a load refused", async () => {
    // 3,000 rows, nine in ten expired: 300 units ($0.000375 on demand) are written, under the $0.001 limit;
    // priced by the written rows' bytes alone the input would look ten times as dear and be refused.
    const now = nowSeconds();
    const rows = Array.from({ length: 3000 }, (_, i) => `k${i},${i % 10 === 0 ? now + 86_400 : now - 3600},${'v'.repeat(40)}`);
    const input = await file('mostly-expired.csv', `pk,ttl,v\n${rows.join('\n')}\n`);
    const table = await newTable(KEYS);
    const run = await cli(['load', input, '--table', table, '--types', 'ttl:N', '--skip-expired', 'ttl', '--max-cost', '0.001', '--json']);
    expect(run.code, run.stderr).toBe(EXIT.OK);
    const result = JSON.parse(run.stdout) as LoadResult;
    expect(result).toMatchObject({ written: 300, skippedExpired: 2700, complete: true });
    expectAccounted(result);
    // Two workers dividing it by key: each reads every row and writes half of them, $0.0009375 each, under $0.001.
    const all = Array.from({ length: 3000 }, (_, i) => `k${i},${'v'.repeat(40)}`);
    const whole = await file('two-workers.csv', `pk,v\n${all.join('\n')}\n`);
    const shared = await newTable(KEYS);
    const workers = await Promise.all(
      [0, 1].map((i) =>
        cli(['load', whole, '--table', shared, '--segment', `${i}/2`, '--max-cost', '0.001', '--json', '--rejects', join(dir(), `cost-seg${i}.rejects.jsonl`)]),
      ),
    );
    for (const worker of workers) expect(worker.code, worker.stderr).toBe(EXIT.OK);
    expect((await keysOf(shared)).length).toBe(3000);
  });

  it('refuses before the first write when the first rows price the whole input above it (exit 3), and the estimate says so too', async () => {
    // 3,000 rows of one unit each: $0.001875 on demand; the limit is $0.001.
    const rows = Array.from({ length: 3000 }, (_, i) => `k${i},${'v'.repeat(40)}`);
    const input = await file('refused.csv', `pk,v\n${rows.join('\n')}\n`);
    const table = await newTable(KEYS);
    const run = await cli(['load', input, '--table', table, '--max-cost', '0.001', '--json']);
    expect(run.code, run.stderr).toBe(EXIT.COST_REFUSED);
    expect(run.stderr).toMatch(/refused by the cost guard before the first write.*above --max-cost \$0\.001/);
    const result = JSON.parse(run.stdout) as LoadResult & { error: { code: string } };
    expect(result.error.code).toBe('COST_LIMIT_EXCEEDED');
    expect(result.written).toBe(0);
    expect(result.complete).toBe(false);
    expect(await keysOf(table)).toEqual([]);

    const estimate = await cli(['estimate', input, '--table', table, '--max-cost', '0.001', '--json']);
    expect(estimate.code, estimate.stderr).toBe(EXIT.COST_REFUSED);
    const est = JSON.parse(estimate.stdout) as EstimateResult;
    expect(est.costGuard).toMatchObject({ maxUsd: 0.001, over: true });
    expect(est.costGuard!.usd).toBeCloseTo(0.001875, 9);
    // With the estimate beside it, the load is refused by the estimate's count of every row, before it reads one.
    const estimateFile = join(dir(), 'refused.estimate.json');
    await writeFile(estimateFile, estimate.stdout);
    const byEstimate = await cli(['load', input, '--table', table, '--max-cost', '0.001', '--compare-estimate', estimateFile, '--json']);
    expect(byEstimate.code, byEstimate.stderr).toBe(EXIT.COST_REFUSED);
    expect(byEstimate.stderr).toMatch(/the estimate .*refused\.estimate\.json counts 3,000 write units/);
    expect(JSON.parse(byEstimate.stdout)).toMatchObject({ rowsRead: 0, written: 0 });
    // A price the user gives is the guard's too: at $0.25 per million the same load is within the limit.
    const cheaper = await cli(['load', input, '--table', table, '--max-cost', '0.001', '--price-write-request', '0.25', '--json']);
    expect(cheaper.code, cheaper.stderr).toBe(EXIT.OK);
    expect(JSON.parse(cheaper.stdout)).toMatchObject({ written: 3000, complete: true });
  });

  it(
    'stops a load before its units pass the limit (exit 4, checkpoint saved), and a higher limit resumes it to a complete table',
    { timeout: 90_000 },
    async () => {
      // 1,000 + 2 x 1,000 = 3,000 units; the first rows price the input at about 1,000, under the limit of
      // $0.00125 (2,000 units), which the load then reaches.
      const input = await file('stop.csv', stopCsv(1000, 1000));
      const table = await newTable(KEYS);
      const checkpoint = join(dir(), 'stop.checkpoint.json');
      const args = ['load', input, '--table', table, '--checkpoint', checkpoint, '--order', 'input', '--json'];

      const first = await cli([...args, '--max-cost', '0.00125']);
      expect(first.code, first.stderr).toBe(EXIT.COST_STOPPED);
      expect(first.stderr).toMatch(/stopped by the cost guard.*would pass --max-cost \$0\.00125/);
      const stopped = JSON.parse(first.stdout) as LoadResult & { error: { code: string } };
      expect(stopped.error.code).toBe('COST_LIMIT_REACHED');
      expect(stopped.complete).toBe(false);
      expect(stopped.notWritten).toBeGreaterThan(0);
      expectAccounted(stopped);
      // Never past the limit: 2,000 units.
      expect(stopped.consumedWcu).toBeLessThanOrEqual(2000);
      expect(stopped.consumedWcu).toBeGreaterThan(1000);
      expect((await keysOf(table)).length).toBe(stopped.written);

      // The same limit goes no further: the cost is the whole load's, the first run's units included (refused
      // at once when the rows read again price the input above it, else stopped before its first batch).
      const again = await cli([...args, '--max-cost', '0.00125']);
      expect([EXIT.COST_REFUSED, EXIT.COST_STOPPED], again.stderr).toContain(again.code);
      expect((JSON.parse(again.stdout) as LoadResult).written).toBe(stopped.written);
      expect((await keysOf(table)).length).toBe(stopped.written);

      const resumed = await cli([...args, '--max-cost', '0.002']);
      expect(resumed.code, resumed.stderr).toBe(EXIT.OK);
      const done = JSON.parse(resumed.stdout) as LoadResult;
      expect(done).toMatchObject({ rowsRead: 2000, written: 2000, notWritten: 0, complete: true });
      expect(done.consumedWcu).toBeGreaterThanOrEqual(2999);
      expect(await keysOf(table)).toHaveLength(2000);
    },
  );
});
