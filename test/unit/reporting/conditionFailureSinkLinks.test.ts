/**
 * The --condition-failures file is never written through a symlink (a temp folder): a link found at the start
 * is removed, not followed (its target untouched); one planted after the start makes the first line fail with
 * CONDITION_FAILURES_UNWRITABLE; a resume whose path is a link to the right content is refused, the target
 * neither cut nor appended to.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConditionFailureSink } from '../../../src/reporting/conditionFailureSink.js';
import { keyIdsOf } from '../../../src/typing/key.js';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import { LoaderError } from '../../../src/shared/errors.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };

let dir = '';
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-condfail-links-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const path = (name: string) => join(dir, `${++seq}-${name}`);

/** The LoaderError a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<LoaderError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LoaderError);
  return error as LoaderError;
}

function write(line: number): PlannedWrite {
  const item = { pk: `k${line}`, v: 'secret' };
  return { origin: { file: 'in.csv', line, raw: `k${line},secret` }, item, ...keyIdsOf(item, SCHEMA), size: 10, wcu: 1 };
}

describe('the --condition-failures file and symlinks', () => {
  it('a link at the path when the load starts is removed, its target untouched; the lines go to a new private file', async () => {
    const target = path('precious.txt');
    writeFileSync(target, 'keep me\n');
    const file = path('failed.jsonl');
    symlinkSync(target, file);
    const sink = new ConditionFailureSink(file, '--if-not-exists');
    await sink.startFresh();
    await sink.handOn([write(2)], SCHEMA);
    await sink.close();
    expect(readFileSync(target, 'utf8')).toBe('keep me\n');
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('a link planted after the start: the first line fails (CONDITION_FAILURES_UNWRITABLE), nothing written through it', async () => {
    const target = path('precious.txt');
    writeFileSync(target, 'keep me\n');
    const file = path('failed.jsonl');
    const sink = new ConditionFailureSink(file, '--if-not-exists');
    await sink.startFresh();
    symlinkSync(target, file);
    const error = await rejection(sink.handOn([write(2)], SCHEMA));
    expect(error.code).toBe('CONDITION_FAILURES_UNWRITABLE');
    await expect(sink.close()).rejects.toThrow();
    expect(readFileSync(target, 'utf8')).toBe('keep me\n');
  });

  it('a resume whose path is a link to the recorded content is refused; the target is neither cut nor appended to', async () => {
    const line = `${JSON.stringify({ file: 'in.csv', line: 2 })}\n`;
    const target = path('real.jsonl');
    writeFileSync(target, `${line}stray past the save\n`);
    const file = path('failed.jsonl');
    symlinkSync(target, file);
    const sink = new ConditionFailureSink(file, '--if-not-exists');
    const recorded = { bytes: Buffer.byteLength(line), sha256: createHash('sha256').update(line).digest('hex') };
    const error = await rejection(sink.resume(recorded, 1, 'job.ckpt'));
    expect(error.code).toBe('CONDITION_FAILURES_UNWRITABLE');
    expect(readFileSync(target, 'utf8')).toBe(`${line}stray past the save\n`);
    expect(existsSync(file)).toBe(true);
  });
});
