/**
 * The planning thread (src/load/planningThread.ts) sends each row's partition key as a number in a table
 * both threads build, which starts over past a bound. Run on a real worker thread with the bound set low,
 * every row must come back with its own partition key, whatever chunk or table generation it falls in.
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_ROWS, planInThread } from '../../src/load/planningThread.js';
import { identityOf } from '../../src/reading/filePin.js';
import type { PlannedWrite } from '../../src/shared/types.js';
import type { SourceRecord } from '../../src/typing/planRow.js';
import { mulberry32 } from '../../tools/mulberry32.js';

let dir: string;
beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), 'ddb-spread-planning-partitions-'))));
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** Each row's partition key and keyId as the thread hands them over (undefined: rejected). */
async function planned(path: string, maxNamed: number | undefined): Promise<(string | undefined)[]> {
  const thread = planInThread(
    {
      parts: [{ path, name: 'rows.csv', identity: identityOf(await stat(path)), format: undefined, expected: undefined }],
      name: 'rows.csv',
      totalBytes: undefined,
      format: undefined,
      delimiter: undefined,
      columns: undefined,
      interleaveExports: false,
      planner: {
        keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } },
        types: { sk: 'N' },
        infer: false,
        empty: 'omit',
        jsonFlavor: 'json',
      },
      ...(maxNamed === undefined ? {} : { maxNamed }),
    },
    () => {},
  );
  const out: (string | undefined)[] = [];
  for await (const chunk of thread.records) {
    for (const record of chunk as SourceRecord[]) {
      if (record.kind !== 'planned') throw new Error(`a record of kind ${record.kind}`);
      out.push('partitionId' in record.planned ? `${(record.planned as PlannedWrite).partitionId} ${(record.planned as PlannedWrite).keyId}` : undefined);
    }
  }
  return out;
}

describe('partition keys across the planning thread', () => {
  it('every row keeps its own partition key and keyId when the table of keys starts over, chunk after chunk', async () => {
    const random = mulberry32(3);
    const rows: string[] = [];
    const expected: (string | undefined)[] = [];
    // Mixed keys, a new one now and then (so later chunks name keys), and rejects (no key) in between.
    for (let i = 0; i < CHUNK_ROWS * 5 + 123; i++) {
      if (i % 97 === 5) {
        rows.push(`,${i}`);
        expected.push(undefined);
        continue;
      }
      const key = random() < 0.1 ? `new-${i}` : `k${Math.floor(random() * 300)}`;
      rows.push(`${key},${i}`);
      // The partition key, and the keyId (length-prefixed partition part, then the sort key), as planRow makes them.
      expected.push(`S${key} ${`S${key}`.length}:S${key}N${i}`);
    }
    const path = join(dir, 'rows.csv');
    await writeFile(path, `pk,sk\n${rows.join('\n')}\n`);
    // 40 keys: the table starts over at almost every chunk; by default it never does here.
    expect(await planned(path, 40)).toEqual(expected);
    expect(await planned(path, undefined)).toEqual(expected);
  });
});
