/**
 * kill -9 and resume of `ddb-spread verify --checkpoint` (the built CLI against DynamoDB Local): a verify of a
 * tampered table, slowed by --rcu, is killed once its checkpoint has settled part of the keys; the input is
 * then changed (refused, 78) and put back; the resume reads only the keys not settled, and its counts and
 * differences file are byte for byte an uninterrupted verify's. The checkpoint and the differences file are private.
 */
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import type { TableKeys } from '../support/ddb.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import { rawScan } from '../support/rawScan.js';
import type { VerifyResult } from '../../src/verifying/verifyResult.js';

type VerifyJson = VerifyResult & { matched: boolean };

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'verify-resume', keys: KEYS });
const { dir, newTable } = aws;
const cli = localCli(aws, { stdin: '' });

const ROWS = 3000;
const FLAGS = ['--types', 'qty:N,tags:SS', '--operation-column', 'op'];

/** 3,000 keys (k-0..k-999 × sk 0..2), one row superseded at the end, k-7's rows deleted at the end. */
function csvInput(): string {
  const rows = ['op,pk,sk,qty,tags,note'];
  for (let i = 0; i < ROWS; i++) rows.push(`put,k-${i % 1000},${Math.floor(i / 1000)},${i},a|t${i % 5},n${i}`);
  rows.push('put,k-500,1,7,x|y,superseding');
  for (let sk = 0; sk < 3; sk++) rows.push(`delete,k-7,${sk},,,`);
  return `${rows.join('\n')}\n`;
}

/** Saved progress of the verify's checkpoint (0 while there is none). */
function settled(path: string): number {
  if (!existsSync(path)) return 0;
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { done: number }).done;
  } catch {
    return 0;
  }
}

describe('ddb-spread verify --checkpoint', () => {
  it('kill -9 mid-verify, then resume: the same counts and differences as an uninterrupted verify, and the keys settled are not read again', async () => {
    const table = await newTable();
    const input = join(dir(), `${table}.csv`);
    const original = csvInput();
    await writeFile(input, original);
    const load = await cli(['load', input, '--table', table, ...FLAGS]);
    expect(load.code, load.stderr).toBe(0);

    // Tamperings spread over the input, before and after where the kill falls.
    const c = aws.client();
    const key = (pk: string, sk: number) => ({ pk: { S: pk }, sk: { N: String(sk) } });
    for (const [pk, sk] of [
      ['k-3', 0],
      ['k-640', 0],
      ['k-20', 2],
    ] as const)
      await c.send(new DeleteItemCommand({ TableName: table, Key: key(pk, sk) }));
    for (const [pk, sk] of [
      ['k-11', 0],
      ['k-300', 1],
      ['k-900', 2],
    ] as const)
      await c.send(
        new UpdateItemCommand({ TableName: table, Key: key(pk, sk), UpdateExpression: 'SET note = :v', ExpressionAttributeValues: { ':v': { S: 'changed' } } }),
      );
    await c.send(new PutItemCommand({ TableName: table, Item: { ...key('k-7', 1), note: { S: 'back' } } }));
    const before = await rawScan(aws.endpoint, table);

    // The uninterrupted verify.
    const whole = join(dir(), `${table}.whole.jsonl`);
    const reference = await cli(['verify', input, '--table', table, ...FLAGS, '--json', '--differences', whole]);
    expect(reference.code, reference.stderr).toBe(5);
    const expected = JSON.parse(reference.stdout) as VerifyJson;
    expect(expected.outcomes).toMatchObject({ missing: 3, different: 3, deletedButPresent: 1 });
    expect(expected.reads.keys).toBe(3000);

    // The same verify with a checkpoint, at 300 read units a second (about 10 s), killed once 900 keys are settled.
    const checkpoint = join(dir(), `${table}.checkpoint.json`);
    const saved = `${checkpoint}.verify`;
    const differences = join(dir(), `${table}.resumed.jsonl`);
    const args = ['verify', input, '--table', table, ...FLAGS, '--json', '--differences', differences, '--checkpoint', checkpoint];
    const killed = await cli([...args, '--rcu', '300', '--log-interval', '1'], { kill: { signal: 'SIGKILL', when: () => settled(saved) >= 900 } });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // Its progress, a line a second without a terminal: the writes settled of all, the keys checked, the reads.
    expect(killed.stderr).toMatch(
      /ddb-spread: verify: checking keys: [\d,]+ of 3,004 planned writes settled \(\d+(\.\d+)?%\), [\d,]+ keys? checked, \d+ differ, /,
    );
    const atKill = JSON.parse(await readFile(saved, 'utf8')) as { status: string; done: number; differences: { bytes: number } };
    expect(atKill.status).toBe('running');
    expect(atKill.done).toBeLessThan(ROWS);
    expect((await stat(saved)).mode & 0o777).toBe(0o600);
    // The verify never writes the load's checkpoint: it keeps its own beside it.
    expect(existsSync(checkpoint)).toBe(false);

    // A changed input (same size, one letter) is refused with 78, before any read of the table.
    const stamp = await stat(input);
    await writeFile(input, original.replace('n2999', 'm2999'));
    const changed = await cli(args);
    expect(changed.code, changed.stderr).toBe(78);
    expect(changed.stderr).toContain('changed since checkpoint');
    // Put back as it was (content and time): the resume goes on.
    await writeFile(input, original);
    await utimes(input, stamp.atime, stamp.mtime);

    const report = join(dir(), `${table}.report.json`);
    const resumed = await cli([...args, '--report', report]);
    expect(resumed.code, resumed.stderr).toBe(5);
    const result = JSON.parse(resumed.stdout) as VerifyJson;
    // --report: the --json object with the version and timings, private.
    const written = JSON.parse(await readFile(report, 'utf8')) as VerifyJson & { command: string; complete: boolean; durationMs: number };
    expect(written).toMatchObject({ command: 'verify', complete: true, matched: false, outcomes: expected.outcomes, writes: expected.writes });
    expect(written.durationMs).toBeGreaterThan(0);
    expect((await stat(report)).mode & 0o777).toBe(0o600);
    expect(result.outcomes).toEqual(expected.outcomes);
    expect(result.writes).toEqual(expected.writes);
    expect(result.checked).toBe(expected.checked);
    expect(result.examples).toEqual(expected.examples);
    // Nothing listed twice, nothing left out, in the same order.
    expect(await readFile(differences, 'utf8')).toBe(await readFile(whole, 'utf8'));
    expect((await stat(differences)).mode & 0o777).toBe(0o600);
    // The keys settled before the kill were not read again: only the rest.
    expect(result.checkpoint!.checkedBefore).toBeGreaterThanOrEqual(900);
    expect(result.reads.keys).toBe(expected.reads.keys - result.checkpoint!.checkedBefore);
    expect(result.reads.keys).toBeLessThan(expected.reads.keys);
    expect(JSON.parse(await readFile(saved, 'utf8'))).toMatchObject({ status: 'complete', done: expected.writes.planned });

    // A finished checkpoint does not end the next verify: it checks the table again, from the start.
    const again = await cli(args);
    expect(again.code).toBe(5);
    const againResult = JSON.parse(again.stdout) as VerifyJson;
    expect(againResult.checkpoint!.resumedFrom).toBe(0);
    expect(againResult.reads.keys).toBe(3000);
    expect(await readFile(differences, 'utf8')).toBe(await readFile(whole, 'utf8'));
    // Only reads.
    expect(await rawScan(aws.endpoint, table)).toEqual(before);
  }, 120_000);

  it('Ctrl-C saves the progress as stopped, and the same command resumes from it', async () => {
    const table = await newTable();
    const input = join(dir(), `${table}.csv`);
    await writeFile(input, csvInput());
    expect((await cli(['load', input, '--table', table, ...FLAGS])).code).toBe(0);
    await aws.client().send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: 'k-999' }, sk: { N: '2' } } }));
    const checkpoint = join(dir(), `${table}.checkpoint.json`);
    const saved = `${checkpoint}.verify`;
    const args = ['verify', input, '--table', table, ...FLAGS, '--json', '--checkpoint', checkpoint];
    const stopped = await cli([...args, '--rcu', '300'], { kill: { signal: 'SIGINT', when: () => settled(saved) >= 300 } });
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ complete: false, error: { code: 'ABORTED' } });
    const atStop = JSON.parse(await readFile(saved, 'utf8')) as { status: string; done: number };
    expect(atStop.status).toBe('stopped');
    expect(atStop.done).toBeGreaterThanOrEqual(300);
    expect(atStop.done).toBeLessThan(ROWS);
    const resumed = await cli(args);
    expect(resumed.code, resumed.stderr).toBe(5);
    const result = JSON.parse(resumed.stdout) as VerifyJson;
    expect(result.outcomes).toMatchObject({ matched: 2996, absent: 3, missing: 1 });
    expect(result.checkpoint!.resumedFrom).toBe(atStop.done);
    expect(result.reads.keys).toBe(3000 - result.checkpoint!.checkedBefore);
  }, 120_000);
});
