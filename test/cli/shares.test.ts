/**
 * Workers that divide the parts: with --segment i/N over one DynamoDB export, or a set given
 * --parts-disjoint, each worker reads only its share of the listing's parts, so the input is read once by
 * all of them together; every row is still loaded once, a killed worker resumes reading only its share, and
 * workers that would divide differently are refused before any write. Each worker is a real process.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { killableCli } from '../support/checkpoint.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { buildExport, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'shares' });

// Restart points every 200 rows (the load's own spacing is 16,384): a resume then skips what it had read.
const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '200' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env() });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;
const keysOf = (items: Array<Record<string, { S?: string; N?: string }>>) => items.map((i) => `${i['pk']!.S}|${i['sk']!.N}`);

/** A CSV part whose rows' keys are its own (`<name>-<k>`), with the same partition keys' neighbours mixed in. */
function partCsv(name: string, rows: number): string {
  const lines = ['pk,sk,v'];
  for (let i = 0; i < rows; i++) lines.push(`k${i % 40},${name.charCodeAt(0) * 100_000 + i},${name}:${i}`);
  return `${lines.join('\n')}\n`;
}

describe('--segment over parts that can be divided: each worker reads its share', () => {
  it('one DynamoDB export, 4 workers: the data files are read once in all, every item loaded once', async () => {
    const partitions = Array.from({ length: 8 }, (_, p) =>
      Array.from({ length: 150 + p * 40 }, (_, i) => ({ Item: { pk: { S: `item-${p}-${i % 23}` }, sk: { N: String(i) }, v: { S: `p${p}` } } })),
    );
    const items = partitions.reduce((n, p) => n + p.length, 0);
    const fixture = buildExport('exp', 'FULL_EXPORT', partitions);
    const folder = await writeExport(join(dir(), 'export-root'), fixture);
    const dataBytes = Object.entries(fixture.files)
      .filter(([key]) => key.includes('/data/'))
      .reduce((n, [, body]) => n + body.length, 0);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'export.listing.json');
    const runs = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        run(['load', folder, '--table', table, '--segment', `${i}/4`, '--listing', listing, '--json', '--rejects', join(dir(), `exp${i}.rejects.jsonl`)]),
      ),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    const results = runs.map(resultOf);
    for (const r of results) {
      expect(r.division).toMatchObject({ by: 'parts', otherParts: 8 - r.division!.parts });
      expect(r.division!.parts).toBeGreaterThan(0);
      expect(r.otherSegments).toBe(0);
      expect(r.complete).toBe(true);
      // This worker read its share, not the others'.
      expect(r.bytesRead).toBeLessThanOrEqual(r.division!.bytes);
    }
    expect(results.reduce((n, r) => n + r.division!.bytes, 0)).toBe(dataBytes);
    expect(results.reduce((n, r) => n + r.bytesRead, 0)).toBe(dataBytes);
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(items);
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(items);
    expect((await scanAll(client(), table)).length).toBe(items);
    const doc = JSON.parse(await readFile(listing, 'utf8')) as { division?: string };
    expect(doc.division).toBe('parts');
    // One answer for the whole load, from the state each worker left beside the listing (private: 0600).
    expect((await stat(`${listing}.worker-2-of-4.json`)).mode & 0o777).toBe(0o600);
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stderr).toBe(EXIT.OK);
    const answer = JSON.parse(status.stdout) as { complete: boolean; rows: number; written: number; workers: Array<{ state: string }> };
    expect(answer).toMatchObject({ complete: true, rows: items, written: items });
    expect(answer.workers.map((w) => w.state)).toEqual(['finished', 'finished', 'finished', 'finished']);
    const text = await run(['status', listing]);
    expect(text.stdout).toMatch(/4 workers\): COMPLETE/);
  });

  it('--parts-disjoint: a killed worker resumes reading only its share; rejects are reported once; every row loaded', async () => {
    const folder = join(dir(), 'disjoint');
    await mkdir(folder);
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    let rows = 0;
    for (const [n, name] of names.entries()) {
      let text = partCsv(name, 400 + n * 50);
      rows += 400 + n * 50;
      // One bad row (a sort key that is not a number) in one part.
      if (name === 'e') {
        text += 'k1,not-a-number,bad\n';
        rows++;
      }
      await writeFile(join(folder, `${name}.csv`), text);
    }
    const table = await newTable(KEYS);
    const listing = join(dir(), 'disjoint.listing.json');
    const args = (i: number) => [
      'load',
      folder,
      '--table',
      table,
      '--types',
      'sk:N',
      '--segment',
      `${i}/3`,
      '--listing',
      listing,
      '--parts-disjoint',
      '--rejects',
      join(dir(), `dis${i}.rejects.jsonl`),
      '--checkpoint',
      join(dir(), `dis${i}.checkpoint.json`),
    ];
    // Worker 1 is paced slowly so that it is killed mid-way; the others run at once.
    const slow = killableCli([...args(1), '--wcu', '150', '--json'], join(dir(), 'dis1.checkpoint.json'), { cwd: dir(), env: env() });
    const [killed, ...others] = await Promise.all([slow(20), run([...args(0), '--json']), run([...args(2), '--json'])]);
    expect(killed.signal).toBe('SIGKILL');
    for (const r of others) expect([EXIT.OK, EXIT.REJECTED], r.stderr).toContain(r.code);
    const resumed = await run([...args(1), '--json']);
    expect([EXIT.OK, EXIT.REJECTED], resumed.stderr).toContain(resumed.code);
    const results = [resultOf(others[0]!), resultOf(resumed), resultOf(others[1]!)];
    const again = results[1]!;
    expect(again.resumedFromBatch).toBeGreaterThan(0);
    // The resume read none of the other workers' parts (its input is its share), and not all of its own again.
    expect(again.bytesRead).toBeLessThanOrEqual(again.division!.bytes);
    expect(resumed.stderr).toMatch(/reading on from a restart point past the first [\d,]+ rows of the input, which are not read again/);
    for (const r of results) expect(r.division?.by).toBe('parts');
    const allBytes = (await Promise.all(names.map((n) => stat(join(folder, `${n}.csv`))))).reduce((s, f) => s + f.size, 0);
    expect(results.reduce((n, r) => n + r.division!.bytes, 0)).toBe(allBytes);
    // The bad row is rejected by the one worker that read its part, and in its reject file once.
    expect(results.reduce((n, r) => n + r.rejected, 0)).toBe(1);
    const rejectLines = (await Promise.all([0, 1, 2].map((i) => readFile(join(dir(), `dis${i}.rejects.jsonl`), 'utf8').catch(() => ''))))
      .join('')
      .split('\n')
      .filter(Boolean);
    expect(rejectLines).toHaveLength(1);
    expect(rejectLines[0]).toContain('e.csv');
    const loaded = keysOf(await scanAll(client(), table));
    expect(loaded.length).toBe(rows - 1);
    expect(new Set(loaded).size).toBe(rows - 1);
    // The whole load: finished with the one rejected row, in the one reject file named (exit 2).
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stderr).toBe(EXIT.REJECTED);
    const answer = JSON.parse(status.stdout) as { finished: boolean; complete: boolean; rows: number; rejected: number; rejectFiles: Array<{ path: string }> };
    expect(answer).toMatchObject({ finished: true, complete: false, rows, rejected: 1 });
    expect(answer.rejectFiles).toHaveLength(1);
    expect(answer.rejectFiles[0]!.path).toMatch(/dis\d\.rejects\.jsonl$/);
    // A worker started again on its finished checkpoint (a recreated Job) tells the same outcome.
    const again2 = await run([...args(2), '--json']);
    expect([EXIT.OK, EXIT.REJECTED], again2.stderr).toContain(again2.code);
    const after = await run(['status', listing, '--json']);
    expect(after.code, after.stdout).toBe(EXIT.REJECTED);
    expect(JSON.parse(after.stdout)).toMatchObject({ finished: true, rows, rejected: 1 });
  });

  it('a worker that would divide otherwise than the listing says is refused before any write, naming the flag', async () => {
    const folder = join(dir(), 'mismatch');
    await mkdir(folder);
    for (const name of ['a', 'b', 'c', 'd']) await writeFile(join(folder, `${name}.csv`), partCsv(name, 50));
    const table = await newTable(KEYS);
    const listing = join(dir(), 'mismatch.listing.json');
    const base = (i: number) => [
      'load',
      folder,
      '--table',
      table,
      '--types',
      'sk:N',
      '--segment',
      `${i}/2`,
      '--listing',
      listing,
      '--rejects',
      join(dir(), `mm${i}.jsonl`),
    ];
    const first = await run([...base(0), '--parts-disjoint', '--json']);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const before = (await scanAll(client(), table)).length;
    const second = await run(base(1));
    expect(second.code).toBe(EXIT.USAGE);
    expect(second.stderr).toContain('--parts-disjoint');
    expect((await scanAll(client(), table)).length).toBe(before);
    // Worker 1 never started its load: the load is not complete (75), and status names it.
    const status = await run(['status', listing]);
    expect(status.code).toBe(EXIT.TEMP_FAIL);
    expect(status.stdout).toMatch(/NOT COMPLETE/);
    expect(status.stdout).toMatch(/worker 1\/2 +not started/);
    // Without a listing to divide by, the flag is refused.
    const alone = await run(['load', folder, '--table', table, '--types', 'sk:N', '--segment', '0/2', '--parts-disjoint']);
    expect(alone.code).toBe(EXIT.USAGE);
    expect(alone.stderr).toContain('--listing');
  });
});

describe('--total-wcu shared by the workers running', () => {
  it('a worker that finishes hands its part on; the targets published never add up to more than the budget', async () => {
    const folder = join(dir(), 'budget');
    await mkdir(folder);
    // Worker shares by size: one small part (done early), two large ones.
    const sizes: Record<string, number> = { a: 1200, b: 1200, c: 150 };
    for (const [name, n] of Object.entries(sizes)) await writeFile(join(folder, `${name}.csv`), partCsv(name, n));
    const table = await newTable(KEYS);
    const listing = join(dir(), 'budget.listing.json');
    const budget = 600;
    const beat = { ...env(), DDB_SPREAD_TEST_HEARTBEAT_MS: '250' };
    const worker = (i: number) =>
      runCli(
        [
          'load',
          folder,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/3`,
          '--listing',
          listing,
          '--parts-disjoint',
          '--total-wcu',
          String(budget),
          '--json',
          '--rejects',
          join(dir(), `b${i}.jsonl`),
        ],
        { cwd: dir(), env: beat },
      );
    // Sample every worker's published target while they run.
    const sums: number[] = [];
    let highest = 0;
    let sampling = true;
    const sampler = (async () => {
      const read = () => Promise.all([0, 1, 2].map((i) => readFile(`${listing}.worker-${i}-of-3.json`, 'utf8').catch(() => '')));
      while (sampling) {
        // A snapshot of the three documents only when none changed while they were read: the workers write
        // at different moments, and a document read before its worker lowered its part and another read
        // after its worker took that room would add up to parts never published together.
        const texts = await read();
        const again = await read();
        if (texts.some((t, i) => t !== again[i])) continue;
        const docs = texts.map((t) => (t ? (JSON.parse(t) as { state: string; targetWcu?: number }) : undefined));
        const running = docs.filter((d) => d?.state === 'running' && d.targetWcu !== undefined);
        sums.push(running.reduce((n, d) => n + d!.targetWcu!, 0));
        for (const d of running) highest = Math.max(highest, d!.targetWcu!);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // The small share's worker starts late, once the other two have taken its part between them: it must
    // get its part back within a few beats, not write at the least part (2% of a third: minutes for its rows).
    const late = async () => {
      for (let i = 0; i < 200; i++) {
        const docs = await Promise.all([0, 1].map((w) => readFile(`${listing}.worker-${w}-of-3.json`, 'utf8').catch(() => '')));
        if (docs.every((t) => t.includes('"targetWcu": 300'))) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const started = Date.now();
      const run = await worker(2);
      return { ...run, took: Date.now() - started };
    };
    const [first, second, third] = await Promise.all([worker(0), worker(1), late()]);
    const runs = [first, second, third];
    expect(third.took, 'the late worker waited out waits reserved at its least part').toBeLessThan(15_000);
    sampling = false;
    await sampler;
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect((await scanAll(client(), table)).length).toBe(1200 + 1200 + 150);
    expect(sums.length).toBeGreaterThan(5);
    // Within the budget (each worker keeps at least 2% of it, the only way over).
    for (const s of sums) expect(s).toBeLessThanOrEqual(budget * 1.06 + 1e-6);
    // The small share's worker finished first and its part went to the other two: more than a third each.
    expect(highest).toBeGreaterThan(budget / 3 + 50);
  });
});
