/** The lock beside an output file: who keeps it, and when a leftover is taken over (a temp folder, no DynamoDB). */
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileLock, LOCK_STALE_MS } from '../../../src/files/fileLock.js';

let dir = '';
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-filelock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const path = (name: string) => join(dir, `${++seq}-${name}`);
const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

describe('the reject file lock', () => {
  const holder = (lockPath: string, fields: Record<string, unknown>, ageMs = 0) => {
    writeFileSync(lockPath, JSON.stringify({ since: 'then', ...fields }));
    const at = new Date(Date.now() - ageMs);
    utimesSync(lockPath, at, at);
  };
  const acquire = (file: string) => FileLock.acquire({ option: '--rejects', path: file }).catch((e: unknown) => e);

  it('a second acquire is refused while the first holds it, and succeeds once released; the lock is 0600', async () => {
    const file = path('r.jsonl');
    const first = (await acquire(file)) as FileLock;
    expect(first).toBeInstanceOf(FileLock);
    expect(mode(`${file}.lock`)).toBe('600');
    expect(await acquire(file)).toMatchObject({ code: 'OUTPUT_LOCKED', file });
    await first.release();
    expect(existsSync(`${file}.lock`)).toBe(false);
    await ((await acquire(file)) as FileLock).release();
  });

  it('a live process on this host keeps it (the parent of this test runner)', async () => {
    const file = path('r.jsonl');
    holder(`${file}.lock`, { pid: process.ppid, host: hostname() }, 60 * 60_000);
    expect(await acquire(file)).toMatchObject({ code: 'OUTPUT_LOCKED' });
  });

  it('another host keeps it while it is touched; untouched for 5 minutes it is taken over', async () => {
    const fresh = path('r.jsonl');
    holder(`${fresh}.lock`, { pid: 1, host: 'elsewhere' }, 1000);
    const refused = await acquire(fresh);
    expect(refused).toMatchObject({ code: 'OUTPUT_LOCKED' });
    expect((refused as Error).message).toMatch(/in use by process 1 on elsewhere .*delete .*\.lock/);
    const stale = path('r.jsonl');
    holder(`${stale}.lock`, { pid: 1, host: 'elsewhere' }, LOCK_STALE_MS + 60_000);
    const taken = (await acquire(stale)) as FileLock;
    expect(JSON.parse(readFileSync(`${stale}.lock`, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await taken.release();
  });

  it("a leftover with this process's own pid (a restarted container) is taken over", async () => {
    const file = path('r.jsonl');
    holder(`${file}.lock`, { pid: process.pid, host: hostname() });
    await ((await acquire(file)) as FileLock).release();
  });
});
