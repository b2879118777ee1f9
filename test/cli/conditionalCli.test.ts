/**
 * Conditional writes through the built CLI against DynamoDB Local: --if-not-exists killed with SIGKILL mid-load
 * and resumed leaves the table the one load leaves and counts no row twice (a row whose PutItem landed before the
 * kill is recognised as the load's own write, not a conflict); the config file; the checkpoint pins the condition;
 * the flags that cannot go together are refused before any write.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { batchesDone } from '../support/checkpoint.js';
import { scanAll } from '../support/ddb.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'conditionalcli', keys: { partitionKey: { name: 'pk', type: 'S' } } });
const { dir, newTable, client } = aws;
const cli = localCli(aws);
let seq = 0;

async function file(name: string, text: string): Promise<string> {
  const path = join(dir(), `${++seq}-${name}`);
  await writeFile(path, text);
  return path;
}

interface Counters {
  rowsRead: number;
  written: number;
  superseded: number;
  rejected: number;
  conditionFailed: number;
  notWritten: number;
  complete: boolean;
}

describe('conditional writes (CLI)', () => {
  it('--if-not-exists killed with SIGKILL and resumed: the same table, every row counted once, its own landed writes not taken for conflicts', async () => {
    const table = await newTable();
    const rows = 6000;
    // 50 keys already there, with another value: those rows fail their condition, in both runs.
    for (let i = 0; i < rows; i += 120)
      await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: `k${i}` }, v: { S: 'there before' }, n: { N: '0' } } }));
    const lines = ['pk,v,n'];
    for (let i = 0; i < rows; i++) lines.push(`k${i},row ${i},${i}.50`);
    const input = await file('rows.csv', lines.join('\n') + '\n');
    const checkpoint = join(dir(), `${++seq}.checkpoint.json`);
    const args = [
      'load',
      input,
      '--table',
      table,
      '--types',
      'n:N',
      '--if-not-exists',
      '--checkpoint',
      checkpoint,
      '--wcu',
      '1500',
      '--concurrency',
      '8',
      '--json',
    ];
    const killed = await cli(args, { kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 60 }, timeoutMs: 120_000 });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const resumed = await cli(args, { timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('resuming from checkpoint');
    const result = JSON.parse(resumed.stdout) as Counters;
    expect(result).toMatchObject({ rowsRead: rows, written: rows - 50, conditionFailed: 50, superseded: 0, rejected: 0, notWritten: 0, complete: true });
    const items = await scanAll(client(), table);
    expect(items).toHaveLength(rows);
    for (const item of items) {
      const i = Number(item.pk!.S!.slice(1));
      expect(item.v!.S, item.pk!.S).toBe(i % 120 === 0 ? 'there before' : `row ${i}`);
    }
  }, 240_000);

  it('from the config file, in --dry-run and estimate; a checkpoint refuses a resume under another condition; both flags together are refused (64)', async () => {
    const table = await newTable();
    const input = await file('rows.csv', 'pk,v,ver\na,x,2\nb,y,3\na,z,1\n');
    const config = await file('job.json', JSON.stringify({ table, ifNewer: 'ver', types: { ver: 'N' } }));
    const run = await cli(['load', input, '--config', config, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rowsRead: 3, written: 2, conditionFailed: 1, superseded: 0, complete: true });

    const dry = await cli(['load', input, '--table', table, '--if-not-exists', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    const estimate = await cli(['estimate', input, '--table', table, '--if-not-exists']);
    expect(estimate.code, estimate.stderr).toBe(0);
    const text = estimate.stdout.replace(/\s+/g, ' ');
    expect(text).toMatch(/conditional writes: 3 PutItem\/DeleteItem calls, one row each/);
    expect(text).toMatch(/cannot know how many conditions will fail/);
    const json = await cli(['estimate', input, '--table', table, '--if-newer', 'ver', '--types', 'ver:N', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ input: { rows: 3, superseded: 0 }, conditional: { condition: '--if-newer ver', calls: 3 } });

    const checkpoint = join(dir(), `${++seq}.checkpoint.json`);
    const first = await cli(['load', input, '--table', table, '--if-not-exists', '--checkpoint', checkpoint]);
    expect(first.code, first.stderr).toBe(0);
    const other = await cli(['load', input, '--table', table, '--if-newer', 'ver', '--types', 'ver:N', '--checkpoint', checkpoint]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/condition/);

    const expression = await cli([
      'load',
      input,
      '--table',
      table,
      '--types',
      'ver:N',
      '--json',
      '--condition',
      '#ver < :cap',
      '--condition-names',
      '{"#ver": "ver"}',
      '--condition-values',
      '{":cap": {"N": "3"}}',
    ]);
    expect(expression.code, expression.stderr).toBe(0);
    // a holds ver 2 (< 3: lines 2 and 4 are written), b holds 3 (not < 3: its row fails).
    expect(JSON.parse(expression.stdout)).toMatchObject({ rowsRead: 3, written: 2, conditionFailed: 1, complete: true });
    const badJson = await cli(['load', input, '--table', table, '--condition', '#v = :v', '--condition-names', '{#v: v}']);
    expect(badJson.code).toBe(64);
    expect(badJson.stderr).toMatch(/--condition-names is not JSON/);

    const both = await cli(['load', input, '--table', table, '--if-not-exists', '--if-newer', 'ver']);
    expect(both.code).toBe(64);
    expect(both.stderr).toMatch(/ifNewer|--if-newer/);
  }, 120_000);
});
