/**
 * --item-conditions through the built CLI against DynamoDB Local: DynamoDB JSON lines, each with its own condition
 * beside its Item, loaded into a table that already holds some keys; killed with SIGKILL and resumed from its
 * checkpoint, the table ends as applying the lines one by one leaves it, every row counted once, every failed
 * one listed once with its own expression; `verify` with the same flags and the load's --condition-failures file
 * then finds every key as the load left it.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { batchesDone } from '../support/checkpoint.js';
import { scanAll } from '../support/ddb.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'itemcondcli', keys: { partitionKey: { name: 'pk', type: 'S' } } });
const { dir, newTable, client } = aws;
const cli = localCli(aws);

const ROWS = 4000;
/** Row i: key k(i mod 1500), version (i * 7) mod 10; every third line without a condition, the others "newer than stored". */
function lines(): { text: string; want: Map<string, number>; failed: number; written: number } {
  const out: string[] = [];
  const want = new Map<string, number>();
  // k0..k299 are in the table at version 5 before the load.
  for (let k = 0; k < 300; k++) want.set(`k${k}`, 5);
  let failed = 0;
  for (let i = 0; i < ROWS; i++) {
    const pk = `k${i % 1500}`;
    const ver = (i * 7) % 10;
    const Item = { pk: { S: pk }, ver: { N: String(ver) }, row: { N: String(i) } };
    const conditioned = i % 3 !== 0;
    out.push(
      JSON.stringify(
        conditioned
          ? {
              Item,
              ConditionExpression: 'attribute_not_exists(pk) OR #v < :v',
              ExpressionAttributeNames: { '#v': 'ver' },
              ExpressionAttributeValues: { ':v': { N: String(ver) } },
            }
          : { Item },
      ),
    );
    const stored = want.get(pk);
    if (!conditioned || stored === undefined || stored < ver) want.set(pk, ver);
    else failed++;
  }
  return { text: `${out.join('\n')}\n`, want, failed, written: ROWS - failed };
}

describe('--item-conditions (CLI)', () => {
  it('SIGKILLed and resumed: the table as the lines one by one leave it, every row once; verify agrees', async () => {
    const table = await newTable();
    for (let k = 0; k < 300; k++)
      await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: `k${k}` }, ver: { N: '5' }, row: { N: '-1' } } }));
    const { text, want, failed, written } = lines();
    const input = join(dir(), 'rows.json');
    await writeFile(input, text);
    const failures = join(dir(), 'failed.jsonl');
    const checkpoint = join(dir(), 'load.checkpoint.json');
    const args = [
      'load',
      input,
      '--table',
      table,
      '--input-format',
      'ddb-json',
      '--item-conditions',
      '--condition-failures',
      failures,
      '--checkpoint',
      checkpoint,
    ];
    const killed = await cli([...args, '--wcu', '1500', '--concurrency', '8'], {
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 40 },
      timeoutMs: 120_000,
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const resumed = await cli([...args, '--json'], { timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    const result = JSON.parse(resumed.stdout) as Record<string, unknown>;
    expect(result).toMatchObject({ rowsRead: ROWS, written, conditionFailed: failed, rejected: 0, superseded: 0, notWritten: 0, complete: true });
    const listed = readFileSync(failures, 'utf8').split('\n').filter(Boolean);
    expect(listed).toHaveLength(failed);
    expect(new Set(listed.map((l) => (JSON.parse(l) as { line: number }).line)).size).toBe(failed);
    for (const l of listed) expect(JSON.parse(l)).toMatchObject({ code: 'CONDITION_FAILED', condition: 'attribute_not_exists(pk) OR #v < :v' });
    const items = await scanAll(client(), table);
    expect(new Map(items.map((i) => [i.pk!.S!, Number(i.ver!.N)]))).toEqual(want);

    const verify = await cli([
      'verify',
      input,
      '--table',
      table,
      '--input-format',
      'ddb-json',
      '--item-conditions',
      '--condition-failures',
      failures,
      '--json',
    ]);
    expect(verify.code, verify.stderr).toBe(0);
    const verdict = JSON.parse(verify.stdout) as {
      matched: boolean;
      outcomes: { matched: number; different: number; missing: number; rejectedButPresent: number; conditionKept: number };
    };
    expect(verdict.matched).toBe(true);
    expect(verdict.outcomes.different + verdict.outcomes.missing + verdict.outcomes.rejectedButPresent).toBe(0);
    expect(verdict.outcomes.matched + verdict.outcomes.conditionKept).toBe(1500);
  }, 300_000);

  it('without the flag, a file whose first lines all carry a condition is refused before any write (exit 65), saying to pass it', async () => {
    const table = await newTable();
    const input = join(dir(), 'all.json');
    const line = (pk: string) => JSON.stringify({ Item: { pk: { S: pk } }, ConditionExpression: 'attribute_not_exists(pk)' });
    await writeFile(input, `${line('a')}\n${line('b')}\n${line('c')}\n`);
    const run = await cli(['load', input, '--table', table, '--input-format', 'ddb-json', '--json']);
    expect(run.code, run.stderr).toBe(65);
    expect(run.stderr).toMatch(/the first 3 lines of .*all\.json carry their own condition .*pass --item-conditions/s);
    expect(await scanAll(client(), table)).toEqual([]);
  }, 60_000);

  it('conditioned DynamoDB JSON lines in a .jsonl file (read as plain JSON by its name) are refused before any write, saying --input-format ddb-json', async () => {
    const table = await newTable();
    const input = join(dir(), 'rows.jsonl');
    await writeFile(
      input,
      `${JSON.stringify({ Item: { pk: { S: 'a' } }, ConditionExpression: 'attribute_not_exists(pk)' })}\n${JSON.stringify({ Item: { pk: { S: 'b' } } })}\n`,
    );
    for (const extra of [[], ['--item-conditions']]) {
      const run = await cli(['load', input, '--table', table, ...extra]);
      expect(run.code, run.stderr).toBe(65);
      expect(run.stderr).toMatch(/rows\.jsonl holds DynamoDB JSON lines with their own condition .* pass --input-format ddb-json/s);
    }
    expect(await scanAll(client(), table)).toEqual([]);
    const loaded = await cli(['load', input, '--table', table, '--input-format', 'ddb-json', '--item-conditions', '--json']);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(JSON.parse(loaded.stdout)).toMatchObject({ rowsRead: 2, written: 2, conditionFailed: 0 });
  }, 60_000);

  it('given a CSV file, --item-conditions is refused before any write (64): a column named ConditionExpression would be stored unguarded', async () => {
    const table = await newTable();
    const input = join(dir(), 'rows.csv');
    await writeFile(input, 'pk,ConditionExpression\na,attribute_not_exists(pk)\n');
    const run = await cli(['load', input, '--table', table, '--item-conditions']);
    expect(run.code, run.stderr).toBe(64);
    expect(run.stderr).toMatch(/--item-conditions reads the condition a DynamoDB JSON line carries .* is read as csv/s);
    expect(await scanAll(client(), table)).toEqual([]);
  }, 60_000);

  it('without the flag the CLI rejects each line that carries a condition (exit 2: rows rejected) and writes the others', async () => {
    const table = await newTable();
    const input = join(dir(), 'two.json');
    await writeFile(
      input,
      `${JSON.stringify({ Item: { pk: { S: 'a' } }, ConditionExpression: 'attribute_not_exists(pk)' })}\n${JSON.stringify({ Item: { pk: { S: 'b' } } })}\n`,
    );
    const run = await cli(['load', input, '--table', table, '--input-format', 'ddb-json', '--json']);
    expect(run.code, run.stderr).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ rowsRead: 2, written: 1, rejected: 1 });
    expect(run.stderr).toMatch(/ITEM_CONDITION.*--item-conditions/s);
    expect((await scanAll(client(), table)).map((i) => i.pk!.S)).toEqual(['b']);
  }, 60_000);
});
