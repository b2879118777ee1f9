import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import { ConditionKeptRows } from '../../../src/verifying/conditionKept.js';
import { readLoadRejects, rowId } from '../../../src/verifying/loadRejects.js';

const SCHEMA = { partitionKey: { name: 'id', type: 'S' } } as KeySchema;
const write = (id: string, line: number) => ({ item: { id }, origin: { file: 'in.csv', line, raw: '' } }) as unknown as PlannedWrite;

let dir = '';
beforeAll(async () => void (dir = await mkdtemp(join(tmpdir(), 'ddb-spread-kept-'))));
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function keptRows(lines: object[]): Promise<ConditionKeptRows> {
  const path = join(dir, `${Math.random()}.jsonl`);
  await writeFile(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  return new ConditionKeptRows(await readLoadRejects(path, '--condition-failures', true), path);
}
const kept = (rows: ConditionKeptRows, w: PlannedWrite) => rows.kept(w, rowId(w.origin.file, w.origin.line), SCHEMA);

describe("the load's --condition-failures file against the input", () => {
  it('a row a transform split into two keys: only the listed key is kept', async () => {
    const rows = await keptRows([{ file: 'in.csv', line: 2, key: { id: 'b' } }]);
    expect([kept(rows, write('a', 2)), kept(rows, write('b', 2)), kept(rows, write('b', 3))]).toEqual([false, true, false]);
    await expect(rows.check(false)).resolves.toBeUndefined();
  });

  it('a line without a key keeps its row; a line no write matches is refused with its line, unless the row may have expired since the load', async () => {
    const rows = await keptRows([
      { file: 'in.csv', line: 2 },
      { file: 'in.csv', line: 5, key: { id: 'e' } },
    ]);
    expect(kept(rows, write('a', 2))).toBe(true);
    await expect(rows.check(false)).rejects.toThrow(/line 2 names line 5 of in\.csv, which is not a row of the input/);
    await expect(rows.check(true)).resolves.toBeUndefined();
    const other = await keptRows([{ file: 'in.csv', line: 3, key: { id: 'q' } }]);
    expect(kept(other, write('c', 3))).toBe(false);
    // Planned with another key: refused even where rows may have expired.
    await expect(other.check(true)).rejects.toThrow(/line 1 names line 3 of in\.csv, which has another key in this input/);
  });
});
