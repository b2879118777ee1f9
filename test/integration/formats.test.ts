/**
 * A Parquet file, a zstd CSV, a bzip2 CSV and a gzipped DynamoDB ION export load into DynamoDB
 * Local; every item is scanned back and compared with its types, exactly. The same inputs go through
 * the CLI's estimate and --dry-run, which share load's reading and typing.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { EstimateResult } from '../../src/estimating/estimateTypes.js';
import { localEnv } from '../support/env.js';
import { WAREHOUSE_COLUMNS, WAREHOUSE_SCHEMA, writeParquet, zstd } from '../support/formatFixtures.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { expectedScan, rawScan } from '../support/rawScan.js';
import { readRejects } from '../support/rejects.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin', 'ddb-spread.js');
const aws = useLocalAws({ name: 'formats', processCredentials: true });
const { endpoint, newTable } = aws;
const { path, inputFile, run } = localLoad(aws, { order: 'input' });
const cli = (args: string[]) => promisify(execFile)(process.execPath, [BIN, ...args], { env: localEnv(endpoint), maxBuffer: 16 * 1024 * 1024 });

describe('Parquet, zstd, bzip2 and Ion inputs into DynamoDB Local', () => {
  it('Parquet: every item and type as the file holds it, nulls omitted, a bad row rejected with its row group', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = path('warehouse.parquet');
    const columns = WAREHOUSE_COLUMNS.map((c) => (c.name === 'f64' ? { ...c, data: [0.1, 2 ** 53 + 2, Number.NaN] } : c));
    writeParquet(input, columns, WAREHOUSE_SCHEMA, { rowGroupSize: 2 });
    const rejectsPath = path('parquet.rejects.jsonl');
    const result = await run({ table, input, rejectsPath });
    expect([result.rowsRead, result.written, result.rejected]).toEqual([3, 2, 1]);
    expect(await rawScan(endpoint, table)).toEqual(
      expectedScan(
        JSON.stringify({
          pk: { S: 'a' },
          i32: { N: '-2147483648' },
          i64: { N: '9007199254740993' },
          price: { N: '1234567890123456789012345678901234.5678' },
          cents: { N: '1234567890123456.78' },
          f32: { N: '0.1' },
          f64: { N: '0.1' },
          active: { BOOL: true },
          blob: { B: Buffer.from([0, 1, 255]).toString('base64') },
          at: { S: '2024-01-15T13:45:00.123456Z' },
          day: { S: '2024-01-15' },
          tags: { L: [{ S: 'x' }, { S: 'y' }] },
          dims: { M: { w: { N: '12.5' }, unit: { S: 'cm' } } },
          note: { S: 'héllo ✓' },
        }),
        JSON.stringify({
          pk: { S: 'b' },
          i32: { N: '7' },
          i64: { N: '-9223372036854775808' },
          price: { N: '-0.0005' },
          cents: { N: '1' },
          f32: { N: '1.5' },
          f64: { N: '9007199254740994' },
          active: { BOOL: false },
          blob: { B: '' },
          at: { S: '1970-01-01T00:00:00Z' },
          day: { S: '1970-01-01' },
          tags: { L: [] },
          dims: { M: { unit: { S: 'in' } } },
          note: { S: '' },
        }),
      ),
    );
    const [reject] = await readRejects(rejectsPath);
    expect(reject).toMatchObject({ file: input, line: 3, code: 'TYPE_ERROR', field: 'f64', key: { pk: 'c' } });
    expect(reject!.message).toMatch(/^row group 1 row 0: "f64" is NaN/);
    expect(JSON.parse(reject!.raw)).toMatchObject({ pk: 'c', f64: null });
  });

  it('a zstd CSV and a bzip2 CSV load exactly like the plain CSV', async () => {
    const csv = 'pk,qty,note\n' + Array.from({ length: 300 }, (_, i) => `k${i},${i}.50,"a, b ${i}"`).join('\n') + '\n';
    const plainTable = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const zstdTable = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    await run({ table: plainTable, input: await inputFile('rows.csv', csv), types: { qty: 'N' } });
    const zst = await run({ table: zstdTable, input: await inputFile('rows.csv.zst', zstd(csv)), types: { qty: 'N' } });
    expect([zst.written, zst.rejected]).toEqual([300, 0]);
    const expected = await rawScan(endpoint, plainTable);
    expect(expected).toHaveLength(300);
    expect(await rawScan(endpoint, zstdTable)).toEqual(expected);

    const bzTable = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const bz = join(ROOT, 'test/fixtures/formats/rows.csv.bz2');
    const bzResult = await run({ table: bzTable, input: bz, types: { qty: 'N' }, rejectsPath: path('bz.rejects.jsonl') });
    expect([bzResult.written, bzResult.rejected]).toEqual([3000, 0]);
    const scanned = await rawScan(endpoint, bzTable);
    expect(scanned).toContain(JSON.stringify({ note: { S: 'row number 3000 of the bzip2 fixture' }, pk: { S: 'r3000' }, qty: { N: '3000' } }));
  });

  it('a gzipped DynamoDB ION export: decimals exact, sets, binary, nulls and nesting as exported', async () => {
    const table = await newTable({ partitionKey: { name: 'Id', type: 'N' }, sortKey: { name: 'Sk', type: 'S' } });
    const lines = [
      '$ion_1_0 {Item:{"Id":103.,"Sk":"book","Authors":$dynamodb_SS::["Author1","Author2"],"Price":2000.00,"InPublication":false,"Ratio":0.12345678901234567890123456789012345678}}',
      '$ion_1_0 {Item:{"Id":12345678901234567890123456789012345678,"Sk":"big","Nums":$dynamodb_NS::[1,2.5,1.0],"Bins":$dynamodb_BS::[{{AQI=}}],"Blob":{{aGk=}},"Gone":null,"Doc":{"l":[1,"two",[true]],"m":{}}}}',
      '$ion_1_0 {Item:{"Id":"not a number","Sk":"bad"}}',
    ];
    const input = await inputFile('export.ion.gz', gzipSync(lines.join('\n') + '\n'));
    const rejectsPath = path('ion.rejects.jsonl');
    const result = await run({ table, input, rejectsPath });
    expect([result.written, result.rejected]).toEqual([2, 1]);
    const scanned = (await rawScan(endpoint, table)).map((t) => JSON.parse(t) as Record<string, unknown>);
    const byKey = Object.fromEntries(scanned.map((item) => [(item.Sk as { S: string }).S, item]));
    expect(byKey.book).toEqual({
      Id: { N: '103' },
      Sk: { S: 'book' },
      Authors: { SS: expect.arrayContaining(['Author1', 'Author2']) as unknown },
      Price: { N: '2000' },
      InPublication: { BOOL: false },
      Ratio: { N: '0.12345678901234567890123456789012345678' },
    });
    expect(byKey.big).toMatchObject({
      Id: { N: '12345678901234567890123456789012345678' },
      Bins: { BS: ['AQI='] },
      Blob: { B: 'aGk=' },
      Gone: { NULL: true },
      Doc: { M: { l: { L: [{ N: '1' }, { S: 'two' }, { L: [{ BOOL: true }] }] }, m: { M: {} } } },
    });
    expect([...(byKey.big!.Nums as { NS: string[] }).NS].sort()).toEqual(['1', '2.5']);
    const [reject] = await readRejects(rejectsPath);
    expect(reject).toMatchObject({ line: 3, code: 'KEY_TYPE_MISMATCH', raw: lines[2] });
  });

  it('estimate and load --dry-run read each format as load does, writing nothing', async () => {
    const parquet = path('est.parquet');
    writeParquet(parquet, WAREHOUSE_COLUMNS, WAREHOUSE_SCHEMA, { rowGroupSize: 2 });
    const ion = await inputFile('est.ion', '$ion_1_0 {Item:{"pk":"a","n":1.5}}\n$ion_1_0 {Item:{"pk":"b" x}}\n');
    const zst = await inputFile('est.csv.zst', zstd('pk,n\na,1\nb,x\n'));
    for (const [input, rows, rejected] of [
      [parquet, 3, 0],
      [ion, 2, 1],
      [zst, 2, 1],
    ] as const) {
      // Rows that would be rejected make the estimate exit 2, as the load would.
      const { stdout, code } = await cli(['estimate', input, '--partition-key', 'pk:S', '--types', 'n:N', '--json']).then(
        (done) => ({ stdout: done.stdout, code: 0 }),
        (failed: { stdout: string; code: number }) => failed,
      );
      expect(code, input).toBe(rejected > 0 ? 2 : 0);
      expect((JSON.parse(stdout) as EstimateResult).input, input).toMatchObject({ rows, rejected, validRows: rows - rejected });
    }
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const dry = await cli(['load', parquet, '--table', table, '--endpoint-url', endpoint, '--dry-run', '--json']);
    expect((JSON.parse(dry.stdout) as EstimateResult).input).toMatchObject({ rows: 3, validRows: 3 });
    expect(await rawScan(endpoint, table)).toEqual([]);
  });
});
