/**
 * Attack on one file divided by byte range between --segment workers (--parts-disjoint): shapes of the
 * division the first tests do not take. A file too small for a range a worker (two ranges, four workers:
 * two workers have nothing to read, and must say so, finish and let `status` say finished); a quoted field
 * longer than a whole segment (that segment has no record start: its worker reads nothing, the worker
 * before reads the record whole); a gzip file named .csv (refused by every worker before any write);
 * --dry-run and `estimate --workers N`, which must count every row once. Each worker is a real process
 * against DynamoDB Local; the table is read back.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '100', DDB_SPREAD_TEST_RANGE_WAIT_MS: '20000' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 90_000 });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;

/** A key-sorted CSV of `rows` rows, each key once; `long` (if given) is the note of row `longAt`. */
function csv(rows: number, long?: { at: number; note: string }): string {
  const lines = ['pk,sk,note'];
  for (let i = 0; i < rows; i++) {
    const note = long?.at === i ? long.note : `note ${i} ${'n'.repeat(i % 70)}`;
    lines.push(`p${String(Math.floor(i / 5)).padStart(6, '0')},${i},${note}`);
  }
  return `${lines.join('\n')}\n`;
}

function loadArgs(path: string, table: string, listing: string, i: number, n: number, extra: string[] = []): string[] {
  const base = join(dir(), `${listing}-${i}`);
  return [
    'load',
    path,
    '--table',
    table,
    '--types',
    'sk:N',
    '--segment',
    `${i}/${n}`,
    '--listing',
    join(dir(), listing),
    '--parts-disjoint',
    '--rejects',
    `${base}.rejects.jsonl`,
    '--checkpoint',
    `${base}.checkpoint.json`,
    '--json',
    ...extra,
  ];
}

describe('one file divided by byte range: shapes of the division', () => {
  it('a file with fewer ranges than workers: the workers without one finish at once, every row once, status finished', async () => {
    const rows = 2500;
    const path = join(dir(), 'few.csv');
    await writeFile(path, csv(rows));
    const size = (await stat(path)).size;
    // Two ranges of 64 KiB or more, four workers.
    expect(size).toBeGreaterThan(2 * 64 * 1024);
    expect(size).toBeLessThan(3 * 64 * 1024);
    const table = await newTable(KEYS);
    const runs = await Promise.all([0, 1, 2, 3].map((i) => run(loadArgs(path, table, 'few.listing.json', i, 4))));
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    const results = runs.map(resultOf);
    for (const r of results) expect(r.division?.by).toBe('ranges');
    expect(results.map((r) => r.division!.parts)).toEqual([1, 1, 0, 0]);
    expect(results.reduce((n, r) => n + r.division!.bytes, 0)).toBe(size);
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(rows);
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(rows);
    expect((await scanAll(client(), table)).length).toBe(rows);
    const status = await run(['status', join(dir(), 'few.listing.json'), '--json']);
    expect(status.code, status.stderr).toBe(EXIT.OK);
    expect(JSON.parse(status.stdout)).toMatchObject({ finished: true, complete: true, rows });
    // Run again (a worker's second run over its checkpoint): nothing written twice, nothing lost.
    const again = await Promise.all([0, 3].map((i) => run(loadArgs(path, table, 'few.listing.json', i, 4))));
    for (const r of again) expect(r.code, r.stderr).toBe(EXIT.OK);
    expect((await scanAll(client(), table)).length).toBe(rows);
  });

  it('a quoted field longer than a segment: its segment has no range, the range before reads the record whole', async () => {
    const rows = 3000;
    const big = `"${'long ""text"", with\nline breaks\r\n'.repeat(9000)}"`;
    const path = join(dir(), 'long.csv');
    await writeFile(path, csv(rows, { at: 1200, note: big }));
    const size = (await stat(path)).size;
    expect(Buffer.byteLength(big)).toBeGreaterThan(size / 3);
    const table = await newTable(KEYS);
    const runs = await Promise.all([0, 1, 2, 3].map((i) => run(loadArgs(path, table, 'long.listing.json', i, 4))));
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    const results = runs.map(resultOf);
    expect(results.reduce((n, r) => n + r.division!.bytes, 0)).toBe(size);
    expect(results.some((r) => r.division!.parts === 0)).toBe(true);
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(rows);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    expect(items.find((i) => i['sk']!.N === '1200')!['note']!.S).toBe(big.slice(1, -1).replaceAll('""', '"'));
  });

  it('a gzip file named .csv: every worker refuses it before any write', async () => {
    const path = join(dir(), 'packed.csv');
    // Incompressible enough to stay over two ranges once gzipped.
    let noise = '';
    for (let i = 0; i < 9000; i++) noise += `${(i * 2654435761) % 1000003}`;
    await writeFile(path, gzipSync(csv(4000, { at: 5, note: noise }), { level: 0 }));
    expect((await stat(path)).size).toBeGreaterThan(3 * 64 * 1024);
    const table = await newTable(KEYS);
    const runs = await Promise.all([0, 1, 2].map((i) => run(loadArgs(path, table, 'packed.listing.json', i, 3))));
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(EXIT.USAGE);
      expect(r.stderr).toMatch(/packed\.csv is compressed/);
    }
    expect((await scanAll(client(), table)).length).toBe(0);
  });

  it('--dry-run and estimate --workers: every row counted once', async () => {
    const rows = 6000;
    const path = join(dir(), 'dry.csv');
    await writeFile(path, csv(rows, { at: 10, note: '"a\nb"' }));
    const size = (await stat(path)).size;
    expect(size).toBeGreaterThan(4 * 64 * 1024);
    const table = await newTable(KEYS);
    const runs = await Promise.all([0, 1, 2, 3].map((i) => run(loadArgs(path, table, 'dry.listing.json', i, 4, ['--dry-run']))));
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.OK);
    // A dry run says what this worker would load: its range's rows and bytes.
    const inputs = runs.map((r) => (JSON.parse(r.stdout) as { input: { rows: number; bytes: number } }).input);
    expect(inputs.reduce((n, i) => n + i.rows, 0)).toBe(rows);
    expect(inputs.reduce((n, i) => n + i.bytes, 0)).toBe(size);
    expect((await scanAll(client(), table)).length).toBe(0);
    const estimate = await run(['estimate', path, '--table', table, '--types', 'sk:N', '--workers', '4', '--parts-disjoint', '--json']);
    expect(estimate.code, estimate.stderr).toBe(EXIT.OK);
    const plan = JSON.parse(estimate.stdout) as { input: { rows: number }; workers: { by: string; inputBytes: number; bytesReadByAll: number } };
    expect(plan.input.rows).toBe(rows);
    expect(plan.workers).toMatchObject({ by: 'ranges', inputBytes: size });
    // The file once, and the segments scanned for the cuts: far below each of the 4 workers reading it whole.
    expect(plan.workers.bytesReadByAll).toBeLessThan(2 * size);
  });

  it('estimate --workers divides as the load does: a forced --input-format is cut, a delete list is not', async () => {
    const rows = 6000;
    const jsonl = Array.from({ length: rows }, (_, i) => JSON.stringify({ pk: `p${i}`, sk: i, note: `note ${i} ${'j'.repeat(i % 40)}` })).join('\n');
    const path = join(dir(), 'rows.txt');
    await writeFile(path, `${jsonl}\n`);
    expect((await stat(path)).size).toBeGreaterThan(4 * 64 * 1024);
    const table = await newTable(KEYS);
    const plan = async (extra: string[]) => {
      const r = await run(['estimate', path, '--table', table, '--input-format', 'jsonl', '--workers', '4', '--parts-disjoint', '--json', ...extra]);
      expect(r.code, r.stderr).toBe(EXIT.OK);
      return (JSON.parse(r.stdout) as { workers: { by: string } }).workers.by;
    };
    // The load divides so (shares.ts divisionOf given the load's options): a JSON Lines file by any name is cut, a delete list's keys may be anywhere.
    expect(await plan([])).toBe('ranges');
    expect(await plan(['--delete'])).toBe('keys');
  });
});
