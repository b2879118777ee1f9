/**
 * An attack on how `--segment i/N` workers divide the reading (issue 32), each worker a real process against
 * DynamoDB Local, the table read back and compared with the input: a listing loaded again into another table
 * (the same Job run again), rejects in several workers' shares, and an S3 part overwritten between the
 * listing and the reading. Nothing may say complete while a row of the input is neither in the table nor in
 * a reject file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'divattack' });

const env = () => localEnv(endpoint);
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
    // Worker 1 run into table B: now complete, every row of the input in table B.
    const w1 = await worker(1, second, 'b');
    expect(w1.code, w1.stderr).toBe(EXIT.OK);
    expect(keysOf(await scanAll(client(), second))).toEqual([...keys].sort());
    const after = await run(['status', listing, '--json']);
    expect(after.code, after.stdout).toBe(EXIT.OK);
    expect(JSON.parse(after.stdout)).toMatchObject({ complete: true, rows: keys.length, written: keys.length, table: second });
  });
});
