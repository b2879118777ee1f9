/**
 * Through the CLI: attribute names that are Object.prototype members in --types, --columns,
 * --keep-original-key and a --config job file's keys, loaded with the built bin and scanned back raw.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';
import { expectedScan, rawScan } from '../support/rawScan.js';

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'protocli' });
const { endpoint, dir, newTable } = aws;
let seq = 0;

async function file(name: string, text: string): Promise<string> {
  const path = join(dir(), `${++seq}-${name}`);
  await writeFile(path, text);
  return path;
}

const cli = localCli(aws);

describe('Object.prototype member names on the command line', () => {
  it('--types constructor:N,__proto__:N,valueOf:BOOL types those columns', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('types.csv', 'pk,constructor,__proto__,valueOf,toString\nk1,5,6,true,t\n');
    const run = await cli(['load', input, '--table', table, '--types', 'constructor:N,__proto__:N', '--types', 'valueOf:BOOL', '--json']);
    expect(run.stderr).not.toMatch(/error|warning/);
    expect(run.code).toBe(0);
    expect(await rawScan(endpoint, table)).toEqual(
      expectedScan('{"pk":{"S":"k1"},"constructor":{"N":"5"},"__proto__":{"N":"6"},"valueOf":{"BOOL":true},"toString":{"S":"t"}}'),
    );
  });

  it('--columns and --keep-original-key with such names, the key attribute named constructor', async () => {
    const table = await newTable({ partitionKey: { name: 'constructor', type: 'S' }, sortKey: { name: 'hasOwnProperty', type: 'S' } });
    const input = await file('columns.csv', 'c1,s1,v\n');
    const run = await cli([
      'load',
      input,
      '--table',
      table,
      '--columns',
      'constructor,hasOwnProperty,__proto__',
      '--shard',
      'hash:2',
      '--keep-original-key',
      'toString',
      '--shard-manifest',
      join(dir(), `${++seq}.shards.json`),
    ]);
    expect(run.code).toBe(0);
    const [item] = await rawScan(endpoint, table);
    const parsed = JSON.parse(item!) as Record<string, { S: string }>;
    expect(Object.keys(parsed).sort()).toEqual(['__proto__', 'constructor', 'hasOwnProperty', 'toString']);
    expect(parsed['constructor']!.S).toMatch(/^c1#[01]$/);
    expect([parsed['toString']!.S, parsed['hasOwnProperty']!.S, JSON.parse(item!)['__proto__'].S]).toEqual(['c1', 's1', 'v']);
  });

  it('a --config job file with such names as --types keys', async () => {
    const table = await newTable({ partitionKey: { name: 'pk', type: 'S' } });
    const input = await file('config.csv', 'pk,__proto__,constructor\nk1,7,8\n');
    const config = await file('job.json', `{"table":"${table}","types":{"__proto__":"N","constructor":"N"}}`);
    const run = await cli(['load', input, '--config', config]);
    expect(run.stderr).not.toMatch(/ddb-spread: error/);
    expect(run.code).toBe(0);
    expect(await rawScan(endpoint, table)).toEqual(expectedScan('{"pk":{"S":"k1"},"__proto__":{"N":"7"},"constructor":{"N":"8"}}'));
  });
});
