/** The reject file: opened once however rejects arrive, and a clear error when it cannot be written (a temp folder). */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import { RejectSink } from '../../../src/reporting/rejectSink.js';

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
