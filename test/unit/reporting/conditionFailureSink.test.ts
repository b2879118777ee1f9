/**
 * The --condition-failures file (a temp folder): a line per row in the reject file's format, 0600, counted and
 * hashed as it is handed on (what a checkpoint records), and a resume that cuts what followed the recorded
 * length and refuses a file changed, cut short or gone; the checkpoint's save records only done batches' lines.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import { ConditionFailureSink, conditionLabel } from '../../../src/reporting/conditionFailureSink.js';
import { conditionFailuresPathOf } from '../../../src/load/outputPaths.js';
import { normalizeOptions } from '../../../src/load/options.js';
import { writeAffectingOptions } from '../../../src/load/writeAffectingOptions.js';
import { CHECKPOINT_VERSION, resumeRefusal } from '../../../src/checkpointing/checkpointState.js';
import { keyIdsOf } from '../../../src/typing/key.js';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import { loaderErrorOf } from '../../support/thrown.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };

let dir = '';
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-condfail-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const path = (name: string) => join(dir, `${++seq}-${name}`);

function write(line: number): PlannedWrite {
  const item = { pk: `k${line}`, sk: `s${line}`, v: 'secret' };
  return { origin: { file: 'in.csv', line, raw: `k${line},s${line},secret` }, item, ...keyIdsOf(item, SCHEMA), size: 10, wcu: 1 };
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('the --condition-failures file', () => {
  it("a line per row in the reject file's format, with the condition; 0600; counted and hashed as handed on", async () => {
    const file = path('failed.jsonl');
    const sink = new ConditionFailureSink(file, '--if-newer updatedAt');
    const handed = sink.handOn([write(2), write(3)], SCHEMA);
    // Counted before any byte is written: a checkpoint saved now records them.
    expect(sink.count).toBe(2);
    const state = sink.state();
    await handed;
    await sink.close();
    const text = readFileSync(file, 'utf8');
    expect(state).toEqual({ bytes: Buffer.byteLength(text), sha256: sha(text) });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(lines(file).map((l) => JSON.parse(l) as unknown)).toEqual([
      {
        file: 'in.csv',
        line: 2,
        code: 'CONDITION_FAILED',
        message: 'the condition of --if-newer updatedAt was false: the table kept its item, this row was not written',
        condition: '--if-newer updatedAt',
        key: { pk: 'k2', sk: 's2' },
        raw: 'k2,s2,secret',
      },
      expect.objectContaining({ line: 3, code: 'CONDITION_FAILED', key: { pk: 'k3', sk: 's3' } }),
    ]);
  });

  it('startFresh removes an earlier run’s file; a clean run then leaves none', async () => {
    const file = path('stale.jsonl');
    writeFileSync(file, '{"line":1}\n');
    const sink = new ConditionFailureSink(file, '--if-not-exists');
    await sink.startFresh();
    await sink.close();
    expect(existsSync(file)).toBe(false);
  });

  it('a resume keeps the recorded lines, cuts what followed, and appends after them', async () => {
    const file = path('resumed.jsonl');
    const first = new ConditionFailureSink(file, '--if-not-exists');
    await first.handOn([write(1), write(2)], SCHEMA);
    const recorded = first.state();
    // Written after the last save: its batch is not counted done, and is sent again by the resume.
    await first.handOn([write(3)], SCHEMA);
    await first.close();
    const again = new ConditionFailureSink(file, '--if-not-exists');
    await again.resume(recorded, 2, 'cp.json');
    expect(again.count).toBe(2);
    expect(again.state()).toEqual(recorded);
    await again.handOn([write(3)], SCHEMA);
    await again.close();
    expect(lines(file).map((l) => (JSON.parse(l) as { line: number }).line)).toEqual([1, 2, 3]);
    expect(again.state()).toEqual({ bytes: statSync(file).size, sha256: sha(readFileSync(file, 'utf8')) });
  });

  it('a resume refuses a file changed, cut short or gone since the checkpoint, and one whose lines are not the count', async () => {
    const file = path('changed.jsonl');
    const first = new ConditionFailureSink(file, '--if-not-exists');
    await first.handOn([write(1), write(2)], SCHEMA);
    await first.close();
    const recorded = first.state();
    const text = readFileSync(file, 'utf8');
    const refused = async (mutate: () => void, count = 2) => {
      writeFileSync(file, text);
      mutate();
      const error = await new ConditionFailureSink(file, '--if-not-exists').resume(recorded, count, 'cp.json').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LoaderError);
      expect((error as LoaderError).code).toBe('CHECKPOINT_MISMATCH');
      return (error as Error).message;
    };
    expect(await refused(() => writeFileSync(file, text.replace('k1', 'k9')))).toMatch(/has changed.*delete cp\.json to start over/);
    expect(await refused(() => writeFileSync(file, text.slice(0, 10)))).toMatch(/fewer than the/);
    expect(await refused(() => rmSync(file))).toMatch(/is gone/);
    expect(await refused(() => undefined, 3)).toMatch(/holds 2 lines where 3 were recorded/);
    // Recorded empty, but the checkpoint counts failed conditions: the file was never recorded.
    expect(await new ConditionFailureSink(file, '--if-not-exists').resume(undefined, 1, 'cp.json').catch((e: Error) => e.message)).toMatch(/not recorded/);
    // Appended to (lines after the save) is not a change: those lines are cut.
    writeFileSync(file, text);
    appendFileSync(file, '{"partial":');
    const ok = new ConditionFailureSink(file, '--if-not-exists');
    await ok.resume(recorded, 2, 'cp.json');
    await ok.close();
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('a write that fails is the load’s error, naming the file and the option', async () => {
    const file = join(dir, 'no-such-folder', 'failed.jsonl');
    const sink = new ConditionFailureSink(file, '--if-not-exists');
    const error = await sink.handOn([write(1)], SCHEMA).catch((e: unknown) => e);
    expect((error as LoaderError).code).toBe('CONDITION_FAILURES_UNWRITABLE');
    expect((error as Error).message).toContain(file);
    await expect(sink.close()).rejects.toThrow(/--condition-failures/);
  });
});

describe('--condition-failures as an option', () => {
  const base = { input: 'data/x.csv', table: 'Items' };
  it('is refused without a condition, saying which to add', () => {
    const error = loaderErrorOf(() => normalizeOptions({ ...base, conditionFailuresPath: 'f.jsonl' }));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toMatch(/no condition is given: add --if-not-exists, --if-newer <attribute>, --condition <expression> or --item-conditions/);
    expect(normalizeOptions({ ...base, itemConditions: true, conditionFailuresPath: 'f.jsonl' }).conditionFailuresPath).toBe('f.jsonl');
    expect(normalizeOptions({ ...base, ifNotExists: true, conditionFailuresPath: 'f.jsonl' }).conditionFailuresPath).toBe('f.jsonl');
  });

  it('each segment writes its own file', () => {
    expect(conditionFailuresPathOf('out/failed.jsonl', { index: 1, count: 4 })).toBe('out/failed.seg-1-of-4.jsonl');
    expect(conditionFailuresPathOf('out/failed', { index: 0, count: 2 })).toBe('out/failed.seg-0-of-2');
    expect(conditionFailuresPathOf('out/failed.jsonl', undefined)).toBe('out/failed.jsonl');
    expect(normalizeOptions({ ...base, ifNewer: 'v', segment: '2/3', conditionFailuresPath: 'f.jsonl' }).conditionFailuresPath).toBe('f.seg-2-of-3.jsonl');
  });

  it('a checkpoint pins whether it is written, not its path; a resume with or without it where the other was is refused', () => {
    const pinned = (extra: Record<string, unknown>) => writeAffectingOptions(normalizeOptions({ ...base, ifNotExists: true, ...extra }));
    expect(pinned({ conditionFailuresPath: 'a.jsonl' })).toEqual(pinned({ conditionFailuresPath: 'moved/b.jsonl' }));
    expect(pinned({})).not.toHaveProperty('conditionFailures');
    const input = { path: 'x.csv', size: 1, mtimeMs: 1, edgesSha256: 'e' };
    const saved = { version: 0, input, options: pinned({ conditionFailuresPath: 'a.jsonl' }) };
    const refusal = (options: Record<string, unknown>, version: number) => resumeRefusal({ ...saved, version }, input, options, 'cp.json');
    const version = CHECKPOINT_VERSION;
    expect(refusal(pinned({}), version)).toMatch(/taken with --condition-failures, and this load runs without it/);
    expect(refusal(pinned({ conditionFailuresPath: 'c.jsonl' }), version)).toBeUndefined();
  });

  it('--item-conditions is pinned by a checkpoint: a resume with another condition, or none, is refused', () => {
    const pinned = (extra: Record<string, unknown>) => writeAffectingOptions(normalizeOptions({ ...base, ...extra }));
    const input = { path: 'x.csv', size: 1, mtimeMs: 1, edgesSha256: 'e' };
    const saved = { version: CHECKPOINT_VERSION, input, options: pinned({ itemConditions: true }) };
    const refusal = (options: Record<string, unknown>) => resumeRefusal(saved, input, options, 'cp.json');
    expect(refusal(pinned({ itemConditions: true }))).toBeUndefined();
    for (const other of [{}, { ifNotExists: true }, { conditionExpression: 'attribute_not_exists(pk)' }]) expect(refusal(pinned(other))).toBeDefined();
  });

  it("a failed row's line names the row's own expression under --item-conditions", async () => {
    const path = join(dir, `${++seq}.jsonl`);
    const sink = new ConditionFailureSink(path, conditionLabel({ kind: 'item' }));
    const item = { pk: 'a', sk: 'b' };
    const own: PlannedWrite = {
      origin: { file: 'in.jsonl', line: 4, raw: 'x' },
      item,
      ...keyIdsOf(item, SCHEMA),
      size: 1,
      wcu: 1,
      condition: { expression: 'attribute_not_exists(pk)' },
    };
    await sink.handOn([own], SCHEMA);
    await sink.close();
    const line = JSON.parse(readFileSync(path, 'utf8').trim()) as { condition: string; message: string; line: number };
    expect(line).toMatchObject({ condition: 'attribute_not_exists(pk)', line: 4 });
    expect(line.message).toMatch(/attribute_not_exists\(pk\) \(the line's own\) was false/);
    expect(conditionLabel({ kind: 'item' })).toBe('--item-conditions');
  });

  it('labels the condition as it was given', () => {
    expect(conditionLabel({ kind: 'ifNotExists' })).toBe('--if-not-exists');
    expect(conditionLabel({ kind: 'ifNewer', attribute: 'updatedAt' })).toBe('--if-newer updatedAt');
    expect(conditionLabel({ kind: 'expression', expression: '#s <> :l' })).toBe('--condition #s <> :l');
  });
});

describe('the rows of a batch a checkpoint does not count done', () => {
  it('are written after every counted line and outside the recorded state, so a resume cuts them', async () => {
    const file = path('tail.jsonl');
    const sink = new ConditionFailureSink(file, '--if-not-exists');
    void sink.handOn([write(1)], SCHEMA);
    // A batch cut short by a fatal error, while a counted one is still to come.
    sink.uncounted([write(7)], SCHEMA);
    void sink.handOn([write(2)], SCHEMA);
    const recorded = sink.state();
    await sink.close();
    expect(sink.count).toBe(3);
    expect(lines(file).map((l) => (JSON.parse(l) as { line: number }).line)).toEqual([1, 2, 7]);
    const again = new ConditionFailureSink(file, '--if-not-exists');
    await again.resume(recorded, 2, 'cp.json');
    await again.close();
    expect(lines(file).map((l) => (JSON.parse(l) as { line: number }).line)).toEqual([1, 2]);
  });
});
