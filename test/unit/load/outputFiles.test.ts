/** How output files are created (unit level, a temp folder, no DynamoDB). */
import { chmodSync, existsSync, lstatSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import { FileLock, LOCK_STALE_MS } from '../../../src/files/fileLock.js';
import { createNewPrivateFile, createPrivateFile, writePrivateFileAtomically } from '../../../src/files/privateFiles.js';
import { LineWriter } from '../../../src/ordering/lineFiles.js';
import { RejectSink } from '../../../src/reporting/rejectSink.js';
import { writeJsonAtomically } from '../../../src/files/privateFiles.js';

let dir = '';
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-outputfiles-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const path = (name: string) => join(dir, `${++seq}-${name}`);
const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

const REJECT = { origin: { file: 'in.csv', line: 2, raw: 'a,b' }, code: 'TYPE_ERROR', message: 'bad' } as const;

describe('private files (issue 11.14)', () => {
  it('createPrivateFile makes a new file 0600, and an existing 0644 file 0600 too', async () => {
    const fresh = path('fresh');
    await (await createPrivateFile(fresh)).close();
    expect(mode(fresh)).toBe('600');
    const existing = path('existing');
    writeFileSync(existing, 'old');
    chmodSync(existing, 0o644);
    await (await createPrivateFile(existing)).close();
    expect(mode(existing)).toBe('600');
  });

  it('createPrivateFile and createNewPrivateFile never write through a symlink', async () => {
    const target = path('target');
    writeFileSync(target, 'keep');
    const link = path('link');
    await symlink(target, link);
    await expect(createPrivateFile(link)).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(createNewPrivateFile(link)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(target, 'utf8')).toBe('keep');
  });

  it('an atomic write replaces a symlink at the path instead of writing its target, and is 0600', async () => {
    const target = path('target');
    writeFileSync(target, 'keep');
    const link = path('report.json');
    await symlink(target, link);
    await writePrivateFileAtomically(link, 'new\n', true);
    expect(lstatSync(link).isSymbolicLink()).toBe(false);
    expect(readFileSync(link, 'utf8')).toBe('new\n');
    expect(mode(link)).toBe('600');
    expect(readFileSync(target, 'utf8')).toBe('keep');
    const report = path('plain.json');
    await writeJsonAtomically(report, { a: 1 }, '--report');
    expect(mode(report)).toBe('600');
  });

  it("the write order's temporary files are 0600", async () => {
    const file = path('bucket-0.txt');
    const writer = await LineWriter.create(file, 4096);
    await writer.write('row');
    await writer.close();
    expect(mode(file)).toBe('600');
  });

  it('the reject file is 0600', async () => {
    const file = path('r.jsonl');
    const sink = new RejectSink(file);
    await sink.write(REJECT);
    await sink.close();
    expect(mode(file)).toBe('600');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ line: 2, raw: 'a,b' });
  });
});

describe('the reject file opened once', () => {
  it('rejects arriving together before the file is open all land in one file, in order', async () => {
    const file = path('together.jsonl');
    const sink = new RejectSink(file);
    await Promise.all([1, 2, 3].map((line) => sink.write({ ...REJECT, origin: { ...REJECT.origin, line } })));
    await sink.close();
    expect(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { line: number }).line),
    ).toEqual([1, 2, 3]);
  });
});

describe('a reject file that cannot be written (issue 11.15)', () => {
  it('fails with REJECTS_UNWRITABLE naming the path, on write and on close (not "Cannot call end")', async () => {
    const file = join(dir, 'missing-folder', 'r.jsonl');
    const sink = new RejectSink(file);
    const written = await sink.write(REJECT).catch((e: unknown) => e);
    expect(written).toBeInstanceOf(LoaderError);
    expect(written).toMatchObject({ code: 'REJECTS_UNWRITABLE', file });
    const closed = await sink.close().catch((e: unknown) => e);
    expect(closed).toMatchObject({ code: 'REJECTS_UNWRITABLE', file });
    expect((closed as Error).message).not.toMatch(/Cannot call end/);
  });
});

describe('the reject file lock (issue 11.7)', () => {
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
