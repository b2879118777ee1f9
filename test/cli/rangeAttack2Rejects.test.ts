/**
 * Attack: counted outcomes of a byte-range division. --skip-expired with expired rows in both ranges: each
 * worker counts its own, and the workers' written and skippedExpired add up to the file. --max-rejects
 * counts a worker's own rejects: bad rows in the second range stop its worker (65) with the reject file at
 * the file's own lines, the first worker finishes, and status does not say complete. Real processes
 * against DynamoDB Local; the table read back.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack2-rejects' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RANGE_WAIT_MS: '30000' });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 120_000 });

const ROWS = 6000;

function worker(path: string, table: string, name: string, i: number, extra: string[]): Promise<ProcessRun> {
  return run([
    'load',
    path,
    '--table',
    table,
    '--types',
    'sk:N,ttl:N',
    '--segment',
    `${i}/2`,
    '--listing',
    join(dir(), name),
    '--parts-disjoint',
    '--rejects',
    join(dir(), `${name}-${i}.rejects.jsonl`),
    '--json',
    ...extra,
  ]);
}

async function file(name: string, row: (i: number) => string): Promise<string> {
  const lines = ['pk,sk,ttl,note'];
  for (let i = 0; i < ROWS; i++) lines.push(row(i));
  const path = join(dir(), name);
  await writeFile(path, `${lines.join('\n')}\n`);
  expect((await stat(path)).size).toBeGreaterThan(2 * 64 * 1024);
  return path;
}

const key = (i: number) => `p${String(Math.floor(i / 5)).padStart(6, '0')},${i}`;
const note = (i: number) => `note ${i} ${'n'.repeat(i % 70)}`;

describe('counted outcomes of a byte-range division', () => {
  it('--skip-expired: each worker counts its own expired rows; written and expired add up to the file', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = (i: number) => i % 7 === 0;
    const path = await file('ttl.csv', (i) => `${key(i)},${expired(i) ? now - 3600 : now + 86_400},${note(i)}`);
    const table = await newTable(KEYS);
    const runs = await Promise.all([0, 1].map((i) => worker(path, table, 'ttl', i, ['--skip-expired', 'ttl'])));
    const results = runs.map((r) => {
      expect(r.code, r.stderr).toBe(EXIT.OK);
      return JSON.parse(r.stdout) as LoadResult;
    });
    const gone = Array.from({ length: ROWS }, (_, i) => i).filter(expired).length;
    for (const r of results) expect(r.skippedExpired).toBeGreaterThan(0);
    expect(results.reduce((n, r) => n + r.rowsRead, 0)).toBe(ROWS);
    expect(results.reduce((n, r) => n + (r.skippedExpired ?? 0), 0)).toBe(gone);
    expect(results.reduce((n, r) => n + r.written, 0)).toBe(ROWS - gone);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(ROWS - gone);
    expect(items.some((it) => expired(Number(it['sk']!.N)))).toBe(false);
    const status = await run(['status', join(dir(), 'ttl'), '--json']);
    expect(status.code, status.stdout + status.stderr).toBe(EXIT.OK);
    expect(JSON.parse(status.stdout)).toMatchObject({ complete: true, rows: ROWS });
  });

  it('--max-rejects counts a worker own rejects: the second range stops its worker at the file lines, status not complete', async () => {
    const bad = [4000, 4100, 4200];
    const path = await file('bad.csv', (i) => (bad.includes(i) ? `p${i},x${i},1,${note(i)}` : `${key(i)},1,${note(i)}`));
    const table = await newTable(KEYS);
    const first = await worker(path, table, 'bad', 0, ['--max-rejects', '2']);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const second = await worker(path, table, 'bad', 1, ['--max-rejects', '2']);
    expect(second.code, second.stderr).toBe(EXIT.DATA);
    const rejects = (await readFile(join(dir(), 'bad-1.rejects.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number });
    // Row i is on line i + 2 of the file (the header is line 1).
    expect(rejects.map((r) => r.line)).toEqual([4002, 4102]);
    const items = await scanAll(client(), table);
    expect(items.some((it) => it['pk']!.S === 'p4000')).toBe(false);
    const status = await run(['status', join(dir(), 'bad'), '--json']);
    expect(JSON.parse(status.stdout)).not.toMatchObject({ complete: true });
  });
});
