/**
 * Attack: a worker's checkpoint of its byte range resumed after the file's bytes were rewritten with the
 * same size. Rewritten outside its range, the file's modification time still changed: the listing refuses
 * every worker (the others' cuts were scanned from the old bytes). Rewritten inside its range with the
 * modification time put back (the listing and the scans then take the file as listed): the checkpoint,
 * which hashed the range, refuses the resume. Neither writes a row more. Real processes against DynamoDB Local.
 */
import { open, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli, type ProcessRun, type RunOptions } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack2-resume' });

const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '50', DDB_SPREAD_TEST_RANGE_WAIT_MS: '20000' });
const run = (args: string[], more: Partial<RunOptions> = {}): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 90_000, ...more });

const ROWS = 6000;
const MTIME = 1_790_000_000;

async function bigCsv(name: string): Promise<string> {
  const lines = ['pk,sk,note'];
  for (let i = 0; i < ROWS; i++) lines.push(`p${String(Math.floor(i / 5)).padStart(6, '0')},${i},note ${i} ${'n'.repeat(i % 70)}`);
  const path = join(dir(), name);
  await writeFile(path, `${lines.join('\n')}\n`);
  // A whole second: a modification time put back later is then the very one listed.
  await utimes(path, MTIME, MTIME);
  expect((await stat(path)).size).toBeGreaterThan(2 * 64 * 1024);
  return path;
}

function loadArgs(path: string, table: string, listing: string, i: number): string[] {
  const base = join(dir(), `${listing}-${i}`);
  return [
    'load',
    path,
    '--table',
    table,
    '--types',
    'sk:N',
    '--segment',
    `${i}/2`,
    '--listing',
    join(dir(), listing),
    '--parts-disjoint',
    '--rejects',
    `${base}.rejects.jsonl`,
    '--checkpoint',
    `${base}.checkpoint.json`,
    '--wcu',
    '300',
    '--json',
  ];
}

/** Overwrites `bytes.length` bytes at `at` in place (the size stays). */
async function overwrite(path: string, at: number, bytes: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.write(Buffer.from(bytes), 0, bytes.length, at);
  } finally {
    await handle.close();
  }
}

/** Worker 0 stopped part way through its range (SIGTERM); the rows it wrote. */
async function stoppedWorker0(path: string, table: string, listing: string): Promise<number> {
  const stopped = await run(loadArgs(path, table, listing, 0), { kill: { signal: 'SIGTERM', afterMs: 4000 } });
  expect(stopped.code, stopped.stderr).toBe(EXIT.SIGTERM);
  const written = (await scanAll(client(), table)).length;
  expect(written).toBeGreaterThan(0);
  expect(written).toBeLessThan(ROWS / 2);
  return written;
}

describe('a ranged checkpoint resumed after the file was rewritten, same size', () => {
  it('outside its range: refused by the listing, nothing more written', async () => {
    const path = await bigCsv('outside.csv');
    const table = await newTable(KEYS);
    const written = await stoppedWorker0(path, table, 'outside');
    const size = (await stat(path)).size;
    // In the last rows (worker 1's range): a note's letters, the same length.
    await overwrite(path, size - 20, 'ZZZZZ');
    const again = await run(loadArgs(path, table, 'outside', 0));
    expect(again.code, again.stderr).toBe(EXIT.NO_INPUT);
    expect(again.stderr).toMatch(/modified/);
    expect((await scanAll(client(), table)).length).toBe(written);
  });

  it('inside its range with the modification time put back: the checkpoint refuses it, nothing more written', async () => {
    const path = await bigCsv('inside.csv');
    const table = await newTable(KEYS);
    const written = await stoppedWorker0(path, table, 'inside');
    // A note of an early row (worker 0's range, already written): p000000,0,note 0 -> note X.
    const at = Buffer.from('pk,sk,note\np000000,0,note ').length;
    await overwrite(path, at, 'X');
    await utimes(path, MTIME, MTIME);
    expect((await stat(path)).mtimeMs).toBe(MTIME * 1000);
    const again = await run(loadArgs(path, table, 'inside', 0));
    expect(again.code, again.stderr).toBe(EXIT.CONFIG);
    expect(again.stderr).toMatch(/checkpoint/i);
    expect((await scanAll(client(), table)).length).toBe(written);
  });
});
