import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DifferencesFile, type DifferenceRecord } from '../../../src/verifying/differencesFile.js';
import { parseVerifyCheckpoint, refusalOf, VerifyCheckpoint, type VerifyCheckpointFile } from '../../../src/verifying/verifyCheckpoint.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'verify-checkpoint-'));
  dirs.push(d);
  return d;
}

const record = (line: number): DifferenceRecord => ({ file: 'in.csv', line, code: 'MISSING', message: 'gone', raw: `row ${line}` });

describe('the differences file of a resumed verify', () => {
  it('is cut back to the bytes the checkpoint recorded and appended to, so no line is listed twice', async () => {
    const path = join(await tempDir(), 'd.jsonl');
    const first = new DifferencesFile(path);
    await first.write([record(1), record(2)]);
    const recorded = { bytes: first.bytes, count: first.count, sha256: first.sha256 };
    // Written after the save, before a kill -9: must not survive the resume.
    await first.write([record(3)]);
    await first.close();
    const resumed = new DifferencesFile(path);
    await resumed.resume(recorded.bytes, recorded.count, 'cp', recorded.sha256);
    await resumed.write([record(3), record(4)]);
    await resumed.close();
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as DifferenceRecord).line)).toEqual([1, 2, 3, 4]);
    expect(resumed.count).toBe(4);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    // Its hash goes on from the bytes kept: the same as one file written in one run.
    const whole = new DifferencesFile(join(await tempDir(), 'w.jsonl'));
    await whole.write([record(1), record(2), record(3), record(4)]);
    await whole.close();
    expect(resumed.sha256).toBe(whole.sha256);
  });

  it('a file whose recorded bytes were changed since is refused, not appended to', async () => {
    const path = join(await tempDir(), 'd.jsonl');
    const first = new DifferencesFile(path);
    await first.write([record(1), record(2)]);
    await first.close();
    const sha256 = first.sha256;
    await writeFile(path, (await readFile(path, 'utf8')).replace('row 1', 'row 7'));
    await expect(new DifferencesFile(path).resume(first.bytes, 2, 'cp', sha256)).rejects.toMatchObject({ code: 'CHECKPOINT_INVALID' });
  });

  it('a checkpoint of no differences removes what a killed run left; a file shorter than recorded is refused', async () => {
    const dir = await tempDir();
    const left = join(dir, 'left.jsonl');
    await writeFile(left, `${JSON.stringify(record(9))}\n`);
    await new DifferencesFile(left).resume(0, 0, 'cp');
    await expect(stat(left)).rejects.toThrow();
    const short = join(dir, 'short.jsonl');
    await writeFile(short, 'x\n');
    await expect(new DifferencesFile(short).resume(100, 3, 'cp')).rejects.toMatchObject({ code: 'CHECKPOINT_INVALID' });
  });
});

describe('the verify checkpoint', () => {
  const base = (): VerifyCheckpointFile => ({
    kind: 'ddb-spread verify',
    version: 1,
    status: 'stopped',
    createdAt: '',
    updatedAt: '',
    input: [{ name: '/in.csv', size: 10, mtimeMs: 1, edges: 'e', hash: 'h' }],
    options: { table: 'T', sample: 1 },
    planned: 10,
    done: 4,
    writes: { checked: 3, superseded: 1, notSampled: 0 },
    outcomes: { matched: 3, absent: 0, missing: 0, different: 0, deletedButPresent: 0, rejectedButPresent: 0, extra: 0, expired: 0, conditionKept: 0 },
    differences: { bytes: 0, count: 0 },
    examples: [],
    reads: { calls: 1, keys: 3, consumedRcu: 3 },
  });

  it('refuses another input, a file changed in place (by its hash when its time changed), and other options; resumes the same', () => {
    const saved = base();
    const same = [{ name: '/in.csv', size: 10, mtimeMs: 2, edges: 'e', hash: 'h' }];
    expect(refusalOf(saved, same, { table: 'T', sample: 1 }, 'cp')).toBeUndefined();
    expect(refusalOf(saved, [{ ...same[0]!, hash: 'other' }], { table: 'T', sample: 1 }, 'cp')).toContain('SHA-256 differs');
    expect(refusalOf(saved, [{ ...same[0]!, size: 11 }], { table: 'T', sample: 1 }, 'cp')).toContain('10 -> 11 bytes');
    expect(refusalOf(saved, [{ ...same[0]!, name: '/other.csv' }], { table: 'T', sample: 1 }, 'cp')).toContain('/other.csv');
    expect(refusalOf(saved, same, { table: 'T', sample: 0.5 }, 'cp')).toContain('option sample differs');
  });

  it('refuses a file that is not a verify checkpoint (a load checkpoint) or whose counts do not add up', () => {
    expect(() => parseVerifyCheckpoint(JSON.stringify({ version: 6, batchesDone: 3 }), 'cp')).toThrow(/not a verify checkpoint/);
    expect(() => parseVerifyCheckpoint(JSON.stringify({ ...base(), done: 5 }), 'cp')).toThrow(/do not add up/);
    expect(parseVerifyCheckpoint(JSON.stringify(base()), 'cp').done).toBe(4);
  });

  it('is private, locked while open, and a second open of the same checkpoint is refused', async () => {
    const dir = await tempDir();
    const input = join(dir, 'in.csv');
    await writeFile(input, 'pk\na\n');
    const path = join(dir, 'cp.verify');
    const opened = await VerifyCheckpoint.open(path, [input], { table: 'T' });
    expect(opened.resumed).toBeUndefined();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await expect(VerifyCheckpoint.open(path, [input], { table: 'T' })).rejects.toMatchObject({ code: 'OUTPUT_LOCKED' });
    await opened.save('stopped', { ...base(), planned: 10 });
    await opened.release();
    const again = await VerifyCheckpoint.open(path, [input], { table: 'T' });
    expect(again.resumed?.done).toBe(4);
    await again.release();
    await expect(VerifyCheckpoint.open(path, [input], { table: 'U' })).rejects.toMatchObject({ code: 'CHECKPOINT_MISMATCH' });
  });
});
