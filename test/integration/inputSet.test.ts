/**
 * Several local inputs as one load: files, folders and globs read in one fixed order, one
 * write order, one reject file naming each row's file, one summary, --segment over the whole set, and one
 * checkpoint that knows the set (a resume after a stop sends no done batch again; a changed part refuses).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { estimate } from '../../src/estimating/estimate.js';
import { load, LoaderError, type LoadOptions } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { startFaultProxy } from '../support/faultProxy.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejects } from '../support/rejects.js';
import { writeParquet, zstd } from '../support/formatFixtures.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'inputset', processCredentials: true });

/** `count` CSV rows starting at `from`, keys p<i % 50>/<i>, with a header. */
const csvRows = (from: number, count: number) =>
  `pk,sk,v\n${Array.from({ length: count }, (_, i) => `p${(from + i) % 50},${from + i},v${from + i}`).join('\n')}\n`;

let folders = 0;
async function partsFolder(): Promise<string> {
  const root = join(dir(), `set-${++folders}`);
  await mkdir(join(root, 'csv', 'nested'), { recursive: true });
  await writeFile(join(root, 'csv', 'part-00000.csv'), csvRows(0, 300));
  await writeFile(join(root, 'csv', 'part-00001.csv.gz'), gzipSync(csvRows(300, 300)));
  await writeFile(join(root, 'csv', 'nested', 'part-00002.csv'), csvRows(600, 200));
  // Not data: Spark's marker and checksum, a hidden file.
  await writeFile(join(root, 'csv', '_SUCCESS'), '');
  await writeFile(join(root, 'csv', '.part-00000.csv.crc'), 'junk');
  await writeFile(join(root, 'more.jsonl'), Array.from({ length: 100 }, (_, i) => JSON.stringify({ pk: `p${i % 50}`, sk: 800 + i, v: `j${i}` })).join('\n'));
  await mkdir(join(root, 'glob'));
  for (let i = 0; i < 3; i++) await writeFile(join(root, 'glob', `x-${i}.csv`), csvRows(900 + i * 100, 100));
  await writeFile(join(root, 'glob', 'y.csv'), csvRows(5000, 10));
  return root;
}

const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>) =>
  load({ endpoint, region: 'us-east-1', types: { v: 'S' }, rejectsPath: join(dir(), `r${++folders}.rejects.jsonl`), ...options });

describe('several local inputs', () => {
  it('a folder, a file and a glob load as one: every row, one summary, no marker or hidden file read', async () => {
    const root = await partsFolder();
    const table = await newTable(KEYS);
    const result = await run({ input: [join(root, 'csv'), join(root, 'more.jsonl'), join(root, 'glob', 'x-*.csv')], table });
    expect(result).toMatchObject({ rowsRead: 1200, written: 1200, rejected: 0, complete: true });
    const items = await scanAll(client(), table);
    expect(items.length).toBe(1200);
    expect(new Set(items.map((i) => Number(i.sk!.N))).size).toBe(1200);
    expect(items.find((i) => i.sk!.N === '805')!.v!.S).toBe('j5');
  });

  it('parts of every format in one set: zstd CSV, Parquet, Ion, and a file whose first bytes say JSON lines', async () => {
    const root = join(dir(), `formats-${++folders}`);
    await mkdir(root);
    await writeFile(join(root, 'a.csv.zst'), zstd(csvRows(0, 100)));
    writeParquet(
      join(root, 'b.parquet'),
      [
        { name: 'pk', data: Array.from({ length: 50 }, (_, i) => `p${i % 50}`) },
        { name: 'sk', data: Array.from({ length: 50 }, (_, i) => 100 + i) },
        { name: 'v', data: Array.from({ length: 50 }, (_, i) => `q${i}`) },
      ],
      [
        { name: 'root', num_children: 3 },
        { name: 'pk', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'sk', type: 'INT32', repetition_type: 'REQUIRED' },
        { name: 'v', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
      ],
      { rowGroupSize: 20 },
    );
    await writeFile(join(root, 'c.ion'), Array.from({ length: 30 }, (_, i) => `$ion_1_0 {Item:{pk:"p${i}",sk:${150 + i},v:"i${i}"}}`).join('\n') + '\n');
    await writeFile(join(root, 'd-noext'), Array.from({ length: 20 }, (_, i) => JSON.stringify({ pk: `p${i}`, sk: 180 + i, v: `j${i}` })).join('\n'));
    const table = await newTable(KEYS);
    expect(await run({ input: root, table })).toMatchObject({ rowsRead: 200, written: 200, rejected: 0, complete: true });
    const items = await scanAll(client(), table);
    expect(new Set(items.map((i) => Number(i.sk!.N))).size).toBe(200);
    expect(items.find((i) => i.sk!.N === '149')!.v!.S).toBe('q49');
    expect(items.find((i) => i.sk!.N === '151')!.v!.S).toBe('i1');
    expect(items.find((i) => i.sk!.N === '199')!.v!.S).toBe('j19');
  });

  it('stripes (the default order) cut one plain local file, and a set of them across its parts', async () => {
    const root = join(dir(), `stripes-${++folders}`);
    await mkdir(root);
    // Grouped by partition key and over 128 KB each, keys ascending from one to two: each alone, and both, are read in stripes.
    const grouped = (from: number) =>
      `pk,sk,v\n${Array.from({ length: 3000 }, (_, i) => `g${String(from + Math.floor(i / 100)).padStart(5, '0')},${from * 100 + i},${'x'.repeat(40)}`).join('\n')}\n`;
    await writeFile(join(root, 'one.csv'), grouped(0));
    await writeFile(join(root, 'two.csv'), grouped(1000));
    const single = await run({ input: join(root, 'one.csv'), table: await newTable(KEYS) });
    expect(single).toMatchObject({ order: 'stripes', written: 3000, complete: true });
    const table = await newTable(KEYS);
    const both = await run({ input: [join(root, 'one.csv'), join(root, 'two.csv')], table });
    expect(both).toMatchObject({ order: 'stripes', written: 6000, complete: true });
    expect((await scanAll(client(), table)).length).toBe(6000);
  });

  it('the reject file names the file of each rejected row, with its line in that file', async () => {
    const root = join(dir(), `bad-${++folders}`);
    await mkdir(root);
    await writeFile(join(root, 'a.csv'), 'pk,sk,v\np1,1,a\np1,notanumber,b\n');
    await writeFile(join(root, 'b.csv'), 'pk,sk,v\np2,2,a\np2,3,b\n,4,c\n');
    const table = await newTable(KEYS);
    const result = await run({ input: root, table });
    expect(result).toMatchObject({ rowsRead: 5, written: 3, rejected: 2 });
    const rejects = await readRejects(result.rejectsPath!);
    expect(rejects.map((r) => [r.file, r.line])).toEqual([
      [join(root, 'a.csv'), 3],
      [join(root, 'b.csv'), 4],
    ]);
  });

  it('--segment i/N over the set: two workers load every row exactly once', async () => {
    const root = await partsFolder();
    const table = await newTable(KEYS);
    const input = [join(root, 'csv'), join(root, 'more.jsonl')];
    // A folder is listed: the workers share one listing, the first to get there writes it.
    const listing = join(root, 'listing.json');
    const results = await Promise.all([0, 1].map((i) => run({ input, table, segment: `${i}/2`, listing, rejectsPath: join(root, `w${i}.rejects.jsonl`) })));
    expect(results[0]!.written + results[1]!.written).toBe(900);
    for (const r of results) expect(r.written + r.otherSegments).toBe(900);
    expect((await scanAll(client(), table)).length).toBe(900);
  });

  it('the estimate reads the same set: every row of every part, nothing written', async () => {
    const root = await partsFolder();
    const table = await newTable(KEYS);
    const result = await estimate({
      input: [join(root, 'csv'), join(root, 'more.jsonl')],
      table,
      endpoint,
      region: 'us-east-1',
      rejectsPath: join(dir(), `est-${folders}.rejects.jsonl`),
    });
    expect(result.input).toMatchObject({ rows: 900, validRows: 900, rejected: 0 });
    expect((await scanAll(client(), table)).length).toBe(0);
  });

  it('a part given twice, an input that holds nothing, a missing file: clear errors before any write', async () => {
    const root = await partsFolder();
    const table = await newTable(KEYS);
    const twice = await run({ input: [join(root, 'glob'), join(root, 'glob', 'y.csv')], table }).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(LoaderError);
    expect((twice as LoaderError).message).toMatch(/y\.csv is given twice/);
    const none = await run({ input: join(root, 'glob', 'z-*.csv'), table }).catch((e: unknown) => e);
    expect((none as LoaderError).code).toBe('INPUT_NOT_FOUND');
    const missing = await run({ input: [join(root, 'more.jsonl'), join(root, 'gone.csv')], table }).catch((e: unknown) => e);
    expect((missing as LoaderError).code).toBe('INPUT_NOT_FOUND');
    expect((await scanAll(client(), table)).length).toBe(0);
  });

  it('one checkpoint for the set: a stopped load resumes without sending done batches; a changed part is refused', async () => {
    const root = await partsFolder();
    const table = await newTable(KEYS);
    const checkpointPath = join(dir(), `set-${folders}.checkpoint.json`);
    const input = [join(root, 'csv'), join(root, 'more.jsonl')];
    const controller = new AbortController();
    const first = await run({ input, table, checkpointPath });
    expect(first).toMatchObject({ rowsRead: 900, written: 900, complete: true });
    // A second run of the finished load reports it finished.
    const again = await run({ input, table, checkpointPath }).catch((e: unknown) => e);
    expect((again as LoaderError).code).toBe('CHECKPOINT_COMPLETE');

    const table2 = await newTable(KEYS);
    const checkpoint2 = join(dir(), `set-${folders}.second.checkpoint.json`);
    // The stop lands while the ninth BatchWriteItem call is in flight, however fast the machine: a stop
    // on a progress event could come only after the last write (one progress event per 200 ms).
    const proxy = await startFaultProxy(endpoint, (call) => {
      if (call === 8) controller.abort();
      return { kind: 'forward' };
    });
    closeAfterAll(proxy);
    const stopped = await load(
      {
        endpoint: proxy.url,
        region: 'us-east-1',
        input,
        table: table2,
        checkpointPath: checkpoint2,
        concurrency: 1,
        order: 'input',
        rejectsPath: join(dir(), 'stop.rejects.jsonl'),
      },
      { signal: controller.signal },
    ).catch((e: unknown) => e);
    expect((stopped as LoaderError).code).toBe('ABORTED');
    expect((stopped as LoaderError).result?.written).toBeGreaterThanOrEqual(8 * 25);
    expect((stopped as LoaderError).result?.written).toBeLessThan(900);
    const resumed = await load({
      endpoint,
      region: 'us-east-1',
      input,
      table: table2,
      checkpointPath: checkpoint2,
      order: 'input',
      rejectsPath: join(dir(), 'stop.rejects.jsonl'),
    });
    expect(resumed).toMatchObject({ rowsRead: 900, written: 900, complete: true });
    expect(resumed.resumedFromBatch).toBeGreaterThan(0);
    expect((await scanAll(client(), table2)).length).toBe(900);

    await writeFile(join(root, 'more.jsonl'), '{"pk":"changed","sk":1}\n');
    const refused = await run({ input, table: table2, checkpointPath: checkpoint2, order: 'input' }).catch((e: unknown) => e);
    expect((refused as LoaderError).code).toBe('CHECKPOINT_MISMATCH');
  });
});
