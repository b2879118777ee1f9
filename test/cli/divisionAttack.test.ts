/**
 * An attack on how `--segment i/N` workers divide the reading (issue 32), each worker a real process against
 * DynamoDB Local, the table read back and compared with the input: a listing loaded again into another table
 * (the same Job run again), rejects in several workers' shares, and an S3 part overwritten between the
 * listing and the reading. Nothing may say complete while a row of the input is neither in the table nor in
 * a reject file.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateTableCommand, DeleteTableCommand, waitUntilTableExists, waitUntilTableNotExists } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { killableCli } from '../support/checkpoint.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejectsIfAny } from '../support/rejects.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable, trackTable } = useLocalAws({ name: 'divattack' });

const env = () => ({ ...localEnv(endpoint), AWS_ENDPOINT_URL_S3: s3Endpoint() });
const run = (args: string[]): Promise<ProcessRun> => runCli(args, { cwd: dir(), env: env(), timeoutMs: 60_000 });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;
const keysOf = (items: ReadonlyArray<Record<string, { S?: string; N?: string }>>) => items.map((i) => `${i['pk']!.S}|${i['sk']!.N}`).sort();

/** A CSV part whose partition keys are its own (`<name>-<k>`): no primary key is in two parts. `bad` rows have a sort key that is no number. */
function partCsv(name: string, rows: number, bad: readonly number[] = []): { text: string; keys: string[] } {
  const lines = ['pk,sk,v'];
  const keys: string[] = [];
  for (let i = 0; i < rows; i++) {
    if (bad.includes(i)) lines.push(`${name}-${i % 7},x${i},bad`);
    else {
      lines.push(`${name}-${i % 7},${i},${name}:${i}`);
      keys.push(`${name}-${i % 7}|${i}`);
    }
  }
  return { text: `${lines.join('\n')}\n`, keys };
}

interface StatusJson {
  complete: boolean;
  finished: boolean;
  rows: number;
  written: number;
  superseded: number;
  rejected: number;
  notWritten: number;
  workers: Array<{ segment: string; state: string }>;
  rejectFiles: Array<{ segment: string; path: string; rejected: number }>;
}

describe('--segment workers dividing the parts, attacked', () => {
  it('the same listing loaded again into a new table: status does not take the earlier load’s finished workers for this load’s', async () => {
    const folder = join(dir(), 'again');
    await mkdir(folder);
    const keys: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      const part = partCsv(name, 300);
      keys.push(...part.keys);
      await writeFile(join(folder, `${name}.csv`), part.text);
    }
    const listing = join(dir(), 'again.listing.json');
    const worker = (i: number, table: string, run_: string) =>
      run([
        'load',
        folder,
        '--table',
        table,
        '--types',
        'sk:N',
        '--segment',
        `${i}/2`,
        '--listing',
        listing,
        '--parts-disjoint',
        '--json',
        '--rejects',
        join(dir(), `again-${run_}-${i}.rejects.jsonl`),
      ]);
    const first = await newTable(KEYS);
    for (const r of await Promise.all([worker(0, first, 'a'), worker(1, first, 'a')])) expect(r.code, r.stderr).toBe(EXIT.OK);
    const before = await run(['status', listing, '--json']);
    expect(before.code, before.stdout).toBe(EXIT.OK);
    // The same Job again into a new table: worker 0 has finished, worker 1 has not started yet.
    const second = await newTable(KEYS);
    const w0 = await worker(0, second, 'b');
    expect(w0.code, w0.stderr).toBe(EXIT.OK);
    const inSecond = (await scanAll(client(), second)).length;
    expect(inSecond).toBe(resultOf(w0).written);
    expect(inSecond).toBeLessThan(keys.length);
    const mid = await run(['status', listing, '--json']);
    // Half the rows are in neither table B nor a reject file: not complete (75), worker 1 not started for this load.
    expect(mid.code, mid.stdout).toBe(EXIT.TEMP_FAIL);
    const midAnswer = JSON.parse(mid.stdout) as StatusJson & { table?: string };
    expect(midAnswer.complete).toBe(false);
    expect(midAnswer.table).toBe(second);
    expect(midAnswer.workers.map((w) => w.state)).toEqual(['finished', 'not started']);
    expect(midAnswer.rows).toBe(inSecond);
    const text = await run(['status', listing]);
    expect(text.stdout).toMatch(/NOT COMPLETE/);
    expect(text.stdout).toContain(first);
    // Asked by table, whichever worker ran last: the load into B is not complete; nor can the load into A be
    // said to be (worker 0's state is now of the load into B).
    const ofFirst = await run(['status', listing, '--table', first, '--json']);
    expect(ofFirst.code, ofFirst.stdout).toBe(EXIT.TEMP_FAIL);
    expect(JSON.parse(ofFirst.stdout)).toMatchObject({ complete: false, table: first });
    const ofSecond = await run(['status', listing, '--table', second]);
    expect(ofSecond.code, ofSecond.stdout).toBe(EXIT.TEMP_FAIL);
    expect(ofSecond.stdout).toMatch(/worker 1\/2 +not started into this table: its state is of a load of this listing into t_/);
    // Worker 1 run into table B: now complete, every row of the input in table B.
    const w1 = await worker(1, second, 'b');
    expect(w1.code, w1.stderr).toBe(EXIT.OK);
    expect(keysOf(await scanAll(client(), second))).toEqual([...keys].sort());
    const after = await run(['status', listing, '--json']);
    expect(after.code, after.stdout).toBe(EXIT.OK);
    expect(JSON.parse(after.stdout)).toMatchObject({ complete: true, rows: keys.length, written: keys.length, table: second });
  });

  it('rejected rows in every worker’s share: each in one reject file, once, with its file and line; status names every file and exits 2', async () => {
    const folder = join(dir(), 'rejects');
    await mkdir(folder);
    const keys: string[] = [];
    const bad: Array<{ file: string; line: number }> = [];
    let rows = 0;
    for (const [n, name] of ['a', 'b', 'c', 'd', 'e', 'f'].entries()) {
      // Bad rows at rows n+3 and 150+n of each part: line = row + 2 (the header is line 1).
      const lines = [n + 3, 150 + n];
      const part = partCsv(name, 200 + n * 30, lines);
      keys.push(...part.keys);
      rows += 200 + n * 30;
      const path = join(folder, `${name}.csv`);
      await writeFile(path, part.text);
      for (const l of lines) bad.push({ file: path, line: l + 2 });
    }
    const table = await newTable(KEYS);
    const listing = join(dir(), 'rejects.listing.json');
    const rejects = (i: number) => join(dir(), `rej${i}.rejects.jsonl`);
    const runs = await Promise.all(
      [0, 1, 2].map((i) =>
        run([
          'load',
          folder,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/3`,
          '--listing',
          listing,
          '--parts-disjoint',
          '--json',
          '--rejects',
          rejects(i),
          '--checkpoint',
          join(dir(), `rej${i}.checkpoint.json`),
        ]),
      ),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(EXIT.REJECTED);
    const results = runs.map(resultOf);
    for (const r of results) {
      expect(r.division?.by).toBe('parts');
      expect(r.rowsRead).toBe(r.written + r.superseded + r.rejected + r.notWritten + r.otherSegments);
    }
    const records = (await Promise.all([0, 1, 2].map(async (i) => (await readRejectsIfAny(rejects(i))).map((rec) => ({ ...rec, worker: i }))))).flat();
    expect(records.map((r) => `${r.file}:${r.line}`).sort()).toEqual(bad.map((b) => `${b.file}:${b.line}`).sort());
    // Each worker's reject file holds only rows of its own share's parts, and every worker has some.
    for (const i of [0, 1, 2]) expect(records.some((r) => r.worker === i)).toBe(true);
    const partsOfWorker = new Map<string, number>();
    for (const r of records) {
      expect(partsOfWorker.get(r.file) ?? r.worker).toBe(r.worker);
      partsOfWorker.set(r.file, r.worker);
    }
    expect(keysOf(await scanAll(client(), table))).toEqual([...keys].sort());
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stdout).toBe(EXIT.REJECTED);
    const answer = JSON.parse(status.stdout) as StatusJson;
    expect(answer).toMatchObject({ finished: true, complete: false, rows, written: keys.length, rejected: bad.length, superseded: 0, notWritten: 0 });
    expect(answer.rejectFiles.map((f) => f.path).sort()).toEqual([0, 1, 2].map(rejects).sort());
    expect(answer.rejectFiles.reduce((n, f) => n + f.rejected, 0)).toBe(bad.length);
    // Every worker run again (a recreated Job): nothing is written or rejected twice, the answer stays the same.
    const again = await Promise.all(
      [0, 1, 2].map((i) =>
        run([
          'load',
          folder,
          '--table',
          table,
          '--types',
          'sk:N',
          '--segment',
          `${i}/3`,
          '--listing',
          listing,
          '--parts-disjoint',
          '--json',
          '--rejects',
          rejects(i),
          '--checkpoint',
          join(dir(), `rej${i}.checkpoint.json`),
        ]),
      ),
    );
    for (const r of again) expect(r.code, r.stderr).toBe(EXIT.REJECTED);
    const recordsAfter = (await Promise.all([0, 1, 2].map((i) => readRejectsIfAny(rejects(i))))).flat();
    expect(recordsAfter).toHaveLength(bad.length);
    const after = await run(['status', listing, '--json']);
    expect(after.code, after.stdout).toBe(EXIT.REJECTED);
    expect(JSON.parse(after.stdout)).toMatchObject({ rows, written: keys.length, rejected: bad.length });
  });

  it('an S3 part overwritten (same size) after the listing: the worker whose share holds it stops before any write (66), and status says so', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    const names = ['p1', 'p2', 'p3', 'p4'];
    const parts = Object.fromEntries(names.map((name, n) => [`in/${name}.csv`, partCsv(name, 300 + n * 50).text]));
    await putObjects(s3, bucket, parts);
    const table = await newTable(KEYS);
    const listing = `s3://${bucket}/state/listing.json`;
    const worker = (i: number) =>
      run([
        'load',
        `s3://${bucket}/in/`,
        '--table',
        table,
        '--types',
        'sk:N',
        '--s3-path-style',
        '--segment',
        `${i}/2`,
        '--listing',
        listing,
        '--parts-disjoint',
        '--json',
        '--rejects',
        join(dir(), `s3o${i}.rejects.jsonl`),
      ]);
    const first = await worker(0);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    const loaded = (await scanAll(client(), table)).length;
    expect(loaded).toBe(resultOf(first).written);
    // Every part rewritten with other values of the same length: the size alone cannot tell.
    await putObjects(s3, bucket, Object.fromEntries(Object.entries(parts).map(([key, text]) => [key, text.replaceAll(':', ';')])));
    const second = await worker(1);
    expect(second.code, second.stderr).toBe(EXIT.NO_INPUT);
    expect(second.stderr).toMatch(/changed/);
    expect((await scanAll(client(), table)).length).toBe(loaded);
    const status = await run(['status', listing, '--s3-path-style', '--json']);
    expect(status.code, status.stdout).toBe(EXIT.NO_INPUT);
    expect(JSON.parse(status.stdout)).toMatchObject({ complete: false, finished: false });
  });

  it('a part taken out of the listing by hand after a worker loaded its share: the next worker refuses the listing, so no part is left to no worker', async () => {
    const folder = join(dir(), 'edited');
    await mkdir(folder);
    const keys: string[] = [];
    for (const [n, name] of ['a', 'b', 'c', 'd', 'e'].entries()) {
      const part = partCsv(name, 100 + n * 40);
      keys.push(...part.keys);
      await writeFile(join(folder, `${name}.csv`), part.text);
    }
    const table = await newTable(KEYS);
    const listing = join(dir(), 'edited.listing.json');
    const worker = (i: number) =>
      run([
        'load',
        folder,
        '--table',
        table,
        '--types',
        'sk:N',
        '--segment',
        `${i}/2`,
        '--listing',
        listing,
        '--parts-disjoint',
        '--json',
        '--rejects',
        join(dir(), `edited${i}.rejects.jsonl`),
      ]);
    const first = await worker(0);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    // The largest part (dealt first, to worker 0) taken out: worker 1's deal would now differ from worker 0's.
    const text = await readFile(listing, 'utf8');
    const edited = text
      .split('\n')
      .filter((line) => !line.includes('e.csv'))
      .join('\n')
      .replace(/\},\n {2}\]/, '}\n  ]');
    expect(edited).not.toBe(text);
    expect(() => JSON.parse(edited) as unknown).not.toThrow();
    await writeFile(listing, edited);
    const second = await worker(1);
    const loaded = keysOf(await scanAll(client(), table));
    // Before, worker 1 loaded its share of the edited listing (exit 0) and rows of a part were in no share.
    expect(second.code, second.stderr).toBe(EXIT.USAGE);
    expect(second.stderr).toMatch(/--listing .* was changed since it was written/);
    expect(loaded.length).toBe(resultOf(first).written);
    expect(loaded.length).toBeLessThan(keys.length);
    // status reads the listing too: it refuses it rather than answer for the load.
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stdout).toBe(EXIT.USAGE);
    expect(status.stderr).toMatch(/was changed since it was written/);
  });

  it('divided by key (one file), a worker killed with SIGKILL and started again from its checkpoint: status adds up to the input, rows = written + rejected', async () => {
    const lines = ['pk,sk,v'];
    const keys: string[] = [];
    const total = 3000;
    for (let i = 0; i < total; i++) {
      if (i === 700 || i === 2500) lines.push(`k${i % 53},bad${i},x`);
      else {
        lines.push(`k${i % 53},${i},v${i}`);
        keys.push(`k${i % 53}|${i}`);
      }
    }
    const csv = join(dir(), 'bykey.csv');
    await writeFile(csv, `${lines.join('\n')}\n`);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'bykey.listing.json');
    const checkpoint = (i: number) => join(dir(), `bykey${i}.checkpoint.json`);
    const args = (i: number) => [
      'load',
      csv,
      '--table',
      table,
      '--types',
      'sk:N',
      '--segment',
      `${i}/2`,
      '--listing',
      listing,
      '--checkpoint',
      checkpoint(i),
      '--rejects',
      join(dir(), `bykey${i}.rejects.jsonl`),
    ];
    // Restart points every 200 rows, so the resume skips what it had read.
    const envRestart = { ...env(), DDB_SPREAD_TEST_RESTART_ROWS: '200' };
    const slow = killableCli([...args(1), '--wcu', '150'], checkpoint(1), { cwd: dir(), env: envRestart });
    const [killed, other] = await Promise.all([slow(8), runCli([...args(0), '--json'], { cwd: dir(), env: envRestart, timeoutMs: 60_000 })]);
    expect(killed!.signal).toBe('SIGKILL');
    expect([EXIT.OK, EXIT.REJECTED], other!.stderr).toContain(other!.code);
    const mid = await run(['status', listing, '--json']);
    expect(mid.code, mid.stdout).toBe(EXIT.TEMP_FAIL);
    const resumed = await runCli([...args(1), '--json'], { cwd: dir(), env: envRestart, timeoutMs: 60_000 });
    expect([EXIT.OK, EXIT.REJECTED], resumed.stderr).toContain(resumed.code);
    expect(resultOf(resumed).resumedFromBatch).toBeGreaterThan(0);
    expect(resultOf(resumed).division?.by).toBe('keys');
    expect(keysOf(await scanAll(client(), table))).toEqual([...keys].sort());
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stdout).toBe(EXIT.REJECTED);
    const answer = JSON.parse(status.stdout) as StatusJson;
    expect(answer).toMatchObject({ finished: true, rows: total, written: keys.length, rejected: 2, superseded: 0, notWritten: 0 });
    expect(answer.rejectFiles.reduce((n, f) => n + f.rejected, 0)).toBe(2);
    const rejected = (await Promise.all([0, 1].map((i) => readRejectsIfAny(join(dir(), `bykey${i}.rejects.jsonl`))))).flat();
    expect(rejected.map((r) => r.line).sort((a, b) => a - b)).toEqual([702, 2502]);
  });

  it('the table deleted and created again under its name, the same Job run again: status does not take the first load’s finished workers for this table’s', async () => {
    const folder = join(dir(), 'recreated');
    await mkdir(folder);
    const keys: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      const part = partCsv(name, 250);
      keys.push(...part.keys);
      await writeFile(join(folder, `${name}.csv`), part.text);
    }
    const table = trackTable(`t_recreated_${Date.now()}`);
    const create = async () => {
      await client().send(
        new CreateTableCommand({
          TableName: table,
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'N' },
          ],
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      await waitUntilTableExists({ client: client(), maxWaitTime: 30 }, { TableName: table });
    };
    await create();
    const listing = join(dir(), 'recreated.listing.json');
    const worker = (i: number, run_: string) =>
      run([
        'load',
        folder,
        '--table',
        table,
        '--types',
        'sk:N',
        '--segment',
        `${i}/2`,
        '--listing',
        listing,
        '--parts-disjoint',
        '--json',
        '--rejects',
        join(dir(), `recreated-${run_}-${i}.rejects.jsonl`),
      ]);
    for (const r of await Promise.all([worker(0, 'a'), worker(1, 'a')])) expect(r.code, r.stderr).toBe(EXIT.OK);
    await client().send(new DeleteTableCommand({ TableName: table }));
    await waitUntilTableNotExists({ client: client(), maxWaitTime: 30 }, { TableName: table });
    await create();
    const w0 = await worker(0, 'b');
    expect(w0.code, w0.stderr).toBe(EXIT.OK);
    const inTable = (await scanAll(client(), table)).length;
    expect(inTable).toBeLessThan(keys.length);
    // Half the input is in no table and no reject file: worker 1's finished state is of the table deleted.
    const status = await run(['status', listing, '--json']);
    expect(status.code, status.stdout).toBe(EXIT.TEMP_FAIL);
    const answer = JSON.parse(status.stdout) as StatusJson;
    expect(answer).toMatchObject({ complete: false, rows: inTable });
    expect(answer.workers.map((w) => w.state)).toEqual(['finished', 'not started']);
    const text = await run(['status', listing, '--table', table]);
    expect(text.code).toBe(EXIT.TEMP_FAIL);
    expect(text.stdout).toMatch(/worker 1\/2 +not started into this table: its state is of a load of this listing into .*deleted/);
    const w1 = await worker(1, 'b');
    expect(w1.code, w1.stderr).toBe(EXIT.OK);
    expect(keysOf(await scanAll(client(), table))).toEqual([...keys].sort());
    const after = await run(['status', listing, '--json']);
    expect(after.code, after.stdout).toBe(EXIT.OK);
    expect(JSON.parse(after.stdout)).toMatchObject({ complete: true, rows: keys.length });
  });

  it('parts added to the folder after the listing: a worker that loads the listing names them as read by no worker; a part removed stops a worker before any write (66)', async () => {
    const folder = join(dir(), 'grown');
    await mkdir(folder);
    const listed: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const part = partCsv(name, 120);
      listed.push(...part.keys);
      await writeFile(join(folder, `${name}.csv`), part.text);
    }
    const table = await newTable(KEYS);
    const listing = join(dir(), 'grown.listing.json');
    const worker = (i: number) =>
      run([
        'load',
        folder,
        '--table',
        table,
        '--types',
        'sk:N',
        '--segment',
        `${i}/2`,
        '--listing',
        listing,
        '--parts-disjoint',
        '--json',
        '--rejects',
        join(dir(), `grown${i}.rejects.jsonl`),
      ]);
    const first = await worker(0);
    expect(first.code, first.stderr).toBe(EXIT.OK);
    expect(first.stderr).not.toMatch(/in the input now/);
    // A job still writing the folder: two parts land after worker 0 listed it.
    for (const name of ['e', 'f']) await writeFile(join(folder, `${name}.csv`), partCsv(name, 50).text);
    const second = await worker(1);
    expect(second.code, second.stderr).toBe(EXIT.OK);
    expect(second.stderr).toMatch(
      /2 parts are in the input now that were not when --listing .* was listed \([^)]+\): .*e\.csv, .*f\.csv\. No worker of this load reads them/,
    );
    // The listing's parts are loaded, every row once; the parts added are not.
    expect(keysOf(await scanAll(client(), table))).toEqual([...listed].sort());
    // A part of the listing removed: refused before any write, naming it.
    await rm(join(folder, 'a.csv'));
    const again = await worker(0);
    expect(again.code, again.stderr).toBe(EXIT.NO_INPUT);
    expect(again.stderr).toMatch(/a\.csv is gone since it was listed/);
  });
});
