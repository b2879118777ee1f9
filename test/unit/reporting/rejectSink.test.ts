/** The reject file: opened once however rejects arrive, and a clear error when it cannot be written (a temp folder). */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import { RejectSink } from '../../../src/reporting/rejectSink.js';
import { EMPTY_REJECT_FILE } from '../../../src/checkpointing/rejectsBeforePoint.js';

let dir = '';
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-rejectsink-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const path = (name: string) => join(dir, `${++seq}-${name}`);

const REJECT = { origin: { file: 'in.csv', line: 2, raw: 'a,b' }, code: 'TYPE_ERROR', message: 'bad' } as const;

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

describe('what a checkpoint records of the reject file', () => {
  it('the bytes handed to it and their SHA-256 are what is on disk once settled, whatever the writes in flight', async () => {
    const file = path('state.jsonl');
    const sink = new RejectSink(file);
    expect(sink.state()).toEqual(EMPTY_REJECT_FILE);
    // Not awaited one by one: the state counts what was handed over, settle() waits for it to be written.
    const writes = Array.from({ length: 200 }, (_, i) => sink.write({ ...REJECT, origin: { ...REJECT.origin, line: i + 2, raw: 'x'.repeat(i * 37) } }));
    await Promise.all(writes);
    const state = sink.state();
    await sink.settle();
    const text = readFileSync(file);
    expect(text.length).toBe(state.bytes);
    expect(createHash('sha256').update(text).digest('hex')).toBe(state.sha256);
    await sink.close();
  });

  it('a resume restores the lines kept, then appends; with none kept, an earlier file is removed', async () => {
    const file = path('restore.jsonl');
    writeFileSync(file, 'old\n');
    const sink = new RejectSink(file);
    await sink.restore(['{"kept":1}', '{"kept":2}']);
    await sink.write(REJECT);
    await sink.close();
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['{"kept":1}', '{"kept":2}']);
    expect(lines).toHaveLength(3);
    expect(sink.count).toBe(3);
    expect(sink.state().bytes).toBe(readFileSync(file).length);
    const again = new RejectSink(file);
    await again.restore([]);
    expect(existsSync(file)).toBe(false);
  });
});

describe('a reject file that cannot be written', () => {
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
