/**
 * A key-sorted file whose big key (over whole ranges of the striped read) holds a run of rows without a
 * key, loaded with `--order stripes` against DynamoDB Local at the default range size (64 KB, where the
 * cut of the big key searches 16 parts of a range): the run used to send the search past the key's first
 * rows, the cut split the key over two stripes, and the load stopped with ORDER_NOT_GROUPED on a sorted
 * file. Every row must land as writing them one by one would leave it, and every row without a key be in
 * the reject file once, at its true line.
 */
import { describe, expect, it } from 'vitest';
import { killableCli } from '../support/checkpoint.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { readRejects } from '../support/rejects.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
const aws = useLocalAws({ name: 'stripe-keys-unkeyed', processCredentials: true, keys: KEYS });
const { client, newTable, dropTable } = aws;
const { inputFile, path, run } = localLoad(aws, { types: { v: 'N' } });

const key = (j: number) => `k${String(j).padStart(4, '0')}`;
/**
 * ~1.15 MB, sorted: 300 keys of 60 rows and key 150 of 6,000 rows (over three ranges of ~64 KB), with 2,500
 * rows of an empty key after its 200th row; every 50th row of a key written twice (a new value).
 */
function sortedText(): { text: string; keyed: { pk: string; sk: string; v: string }[]; unkeyedLines: number[] } {
  const rows = ['pk,sk,v,note'];
  // The line the next row starts on (a quoted line break is a line too).
  let line = 2;
  const push = (row: string) => {
    rows.push(row);
    line += row.split('\r\n').length;
  };
  const keyed: { pk: string; sk: string; v: string }[] = [];
  const unkeyedLines: number[] = [];
  let v = 0;
  for (let j = 0; j < 300; j++) {
    for (let i = 0; i < (j === 150 ? 6000 : 60); i++) {
      if (j === 150 && i === 200) {
        for (let x = 0; x < 2500; x++) {
          unkeyedLines.push(line);
          push(`,s${x},${v++},no key`);
        }
      }
      for (let again = i % 50 === 7 ? 2 : 1; again > 0; again--) {
        const row = { pk: key(j), sk: `s${i}`, v: String(v++) };
        keyed.push(row);
        push(`${row.pk},${row.sk},${row.v},${i % 9 === 0 ? '"quoted\r\nbreak"' : `note ${'x'.repeat(i % 13)}`}`);
      }
    }
  }
  return { text: `${rows.join('\n')}\n`, keyed, unkeyedLines };
}

async function expectTable(table: string, keyed: { pk: string; sk: string; v: string }[]): Promise<void> {
  const last = new Map(keyed.map((r) => [`${r.pk}|${r.sk}`, r.v]));
  const items = await scanAll(client(), table);
  expect(items.length).toBe(last.size);
  for (const item of items) expect(item['v']!.N).toBe(last.get(`${item['pk']!.S}|${item['sk']!.S}`));
}

describe('--order stripes, a run of rows without a key inside a key over whole ranges', () => {
  it('loads the sorted file in stripes: every row as one-by-one writing leaves it, each reject once at its line', async () => {
    const { text, keyed, unkeyedLines } = sortedText();
    const file = await inputFile('sorted-unkeyed.csv', text);
    const rejectsPath = path('sorted-unkeyed.rejects.jsonl');
    const table = await newTable();
    try {
      const result = await run({ input: file, table, order: 'stripes', rejectsPath, concurrency: 4 });
      expect(result.order).toBe('stripes');
      expect(result.rowsRead).toBe(keyed.length + unkeyedLines.length);
      expect(result.rejected).toBe(unkeyedLines.length);
      expect(result.written + result.superseded).toBe(keyed.length);
      await expectTable(table, keyed);
      const rejects = await readRejects(rejectsPath);
      expect(rejects.map((r) => r.line).sort((a, b) => a - b)).toEqual(unkeyedLines);
      const fileLines = text.split(/\r\n|\n/);
      for (const r of rejects) expect(r.raw).toBe(fileLines[r.line - 1]);
      expect(rejects.every((r) => r.raw.startsWith(',s'))).toBe(true);
    } finally {
      await dropTable(table);
    }
  });

  it('kill -9 mid-load and the same command again: resumes in the same stripes, every row as one-by-one writing leaves it', async () => {
    const { text, keyed, unkeyedLines } = sortedText();
    const file = await inputFile('resume-unkeyed.csv', text);
    const table = await newTable();
    const checkpoint = path('resume-unkeyed.checkpoint.json');
    const rejectsPath = path('resume-unkeyed.rejects.jsonl');
    const args = [
      'load',
      file,
      '--table',
      table,
      '--types',
      'v:N',
      '--order',
      'stripes',
      '--checkpoint',
      checkpoint,
      '--rejects',
      rejectsPath,
      '--concurrency',
      '2',
    ];
    const env = localEnv(aws.endpoint);
    const load = killableCli(args, checkpoint, { cwd: aws.dir(), env });
    try {
      expect((await load(300)).signal).toBe('SIGKILL');
      const resumed = await load();
      // 2: finished, with rows in the reject file.
      expect(resumed.code, resumed.stderr).toBe(2);
      expect(resumed.stderr).toContain('resuming from checkpoint');
      await expectTable(table, keyed);
      // Each row without a key once in the reject file, whichever run read it.
      const rejects = await readRejects(rejectsPath);
      expect(rejects.map((r) => r.line).sort((a, b) => a - b)).toEqual(unkeyedLines);
    } finally {
      await dropTable(table);
    }
  });
});
