/**
 * Each part of a set is read by its own name: its format, its compression suffix and its
 * delimiter (a tab for .tsv whatever the compression after it). The delimiter was chosen once, from the
 * first name and only for .tsv/.tsv.gz, so `x.tsv.zst` alone and the sets `a.csv b.tsv` / `b.tsv a.csv`
 * rejected valid rows MISSING_KEY. An explicit --delimiter is the user's word for every part.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { estimate } from '../../src/estimating/estimate.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { zstd } from '../support/formatFixtures.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const aws = useLocalAws({ name: 'partformats', processCredentials: true });
const { client, endpoint, newTable } = aws;
const { path, inputFile, run } = localLoad(aws, { order: 'input', types: { v: 'S' } });

/** `count` rows from `from`, cells joined by `delimiter`; each value holds the other delimiters, so a wrong one misreads it. */
function rows(delimiter: string, from: number, count: number): string {
  const body = Array.from({ length: count }, (_, i) => [`p${(from + i) % 7}`, String(from + i), `"v${from + i}, ; |"`].join(delimiter));
  return `${['pk', 'sk', 'v'].join(delimiter)}\n${body.join('\n')}\n`;
}

/** Every item's sk and v: what each row must be stored as. */
async function stored(table: string): Promise<Map<number, string>> {
  const items = await scanAll(client(), table);
  return new Map(items.map((item) => [Number(item.sk!.N), item.v!.S!]));
}

const expected = (count: number) => new Map(Array.from({ length: count }, (_, i) => [i, `v${i}, ; |`]));

describe('each part its own format, compression and delimiter', () => {
  it.each([
    ['x.tsv.zst', (text: string) => zstd(text)],
    ['x.tsv.gzip', (text: string) => gzipSync(text)],
    ['x.TSV.GZ', (text: string) => gzipSync(text)],
  ])('%s alone loads every row', async (name, compress) => {
    const table = await newTable(KEYS);
    const input = await inputFile(name, compress(rows('\t', 0, 120)));
    const result = await run({ input, table });
    expect(result).toMatchObject({ rowsRead: 120, written: 120, rejected: 0, complete: true });
    expect(await stored(table)).toEqual(expected(120));
  });

  it.each([[['a.csv', 'b.tsv']], [['b.tsv', 'a.csv']], [['a.csv.zst', 'b.tsv.gz']], [['b.tsv.zst', 'a.csv', 'c.tsv']]])(
    'the set %j loads every row, each part by its own delimiter',
    async (names) => {
      const table = await newTable(KEYS);
      const inputs: string[] = [];
      for (const [i, name] of names.entries()) {
        const text = rows(/\.tsv/.test(name) ? '\t' : ',', i * 100, 100);
        inputs.push(await inputFile(name, name.endsWith('.zst') ? zstd(text) : name.endsWith('.gz') ? gzipSync(text) : text));
      }
      const result = await run({ input: inputs, table });
      expect(result).toMatchObject({ rowsRead: names.length * 100, written: names.length * 100, rejected: 0, complete: true });
      expect(await stored(table)).toEqual(expected(names.length * 100));
    },
  );

  it('a folder of .csv and .tsv parts, compressed or not, loads every row; the estimate reads them the same', async () => {
    const root = path('mixed');
    await mkdir(root);
    await writeFile(join(root, 'p0.tsv.zst'), zstd(rows('\t', 0, 100)));
    await writeFile(join(root, 'p1.csv.gz'), gzipSync(rows(',', 100, 100)));
    await writeFile(join(root, 'p2.tsv'), rows('\t', 200, 100));
    const table = await newTable(KEYS);
    const estimated = await estimate({ input: root, table, endpoint, region: 'us-east-1', types: { v: 'S' }, rejectsPath: path('est.rejects.jsonl') });
    expect(estimated.input).toMatchObject({ rows: 300, validRows: 300, rejected: 0 });
    const result = await run({ input: root, table });
    expect(result).toMatchObject({ rowsRead: 300, written: 300, rejected: 0, complete: true });
    expect(await stored(table)).toEqual(expected(300));
  });

  it('an explicit --delimiter applies to every part, .tsv and .csv alike', async () => {
    const table = await newTable(KEYS);
    const a = await inputFile('a.csv', rows('|', 0, 50));
    const b = await inputFile('b.tsv.zst', zstd(rows('|', 50, 50)));
    const result = await run({ input: [b, a], table, delimiter: '|' });
    expect(result).toMatchObject({ rowsRead: 100, written: 100, rejected: 0, complete: true });
    expect(await stored(table)).toEqual(expected(100));
  });
});
