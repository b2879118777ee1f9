/**
 * --condition-failures under --no-excerpts, through the built CLI against DynamoDB Local: the terminal (the
 * summary, warnings, --json) names the file and counts its rows but shows no row's contents, while the file the
 * user asked for holds each conditionFailed row's text (as the reject file does), 0600.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

beforeAll(assertCliBuilt);
const aws = useLocalAws({ name: 'condfailexcerpts', keys: { partitionKey: { name: 'pk', type: 'S' } } });
const { dir, newTable, client } = aws;
const cli = localCli(aws);

describe('--condition-failures with --no-excerpts (CLI)', () => {
  it('the terminal shows no row contents; the file holds them', async () => {
    const table = await newTable();
    // k0..k9 hold a newer version already: those rows' --if-newer is false.
    for (let i = 0; i < 10; i++)
      await client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: `k${i}` }, ver: { N: '100' }, secret: { S: 'kept' } } }));
    const rows = Array.from({ length: 60 }, (_, i) => `k${i},${i % 50},SECRET-${i}-VALUE`);
    const input = join(dir(), 'rows.csv');
    await writeFile(input, `pk,ver,secret\n${rows.join('\n')}\n`);
    const failures = join(dir(), 'failed.jsonl');
    for (const json of [false, true]) {
      const run = await cli([
        'load',
        input,
        '--table',
        table,
        '--types',
        'ver:N',
        '--if-newer',
        'ver',
        '--condition-failures',
        failures,
        '--no-excerpts',
        ...(json ? ['--json'] : []),
      ]);
      expect(run.code, run.stderr).toBe(0);
      const terminal = run.stdout + run.stderr;
      expect(terminal).not.toContain('SECRET-');
      expect(terminal).toContain(failures);
      const lines = readFileSync(failures, 'utf8').split('\n').filter(Boolean);
      // The first run fails k0..k9 (stored 100); the second every row (its own items, not newer than themselves).
      expect(lines).toHaveLength(json ? 60 : 10);
      expect(lines.every((l) => /SECRET-\d+-VALUE/.test((JSON.parse(l) as { raw: string }).raw))).toBe(true);
      expect(statSync(failures).mode & 0o777).toBe(0o600);
    }
  }, 60_000);
});
