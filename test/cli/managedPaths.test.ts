/**
 * The estimate's managed-path advice from the built CLI against DynamoDB Local: DynamoDB JSON into a
 * table that already holds items is bulk put items' job (an existing table) and not Import from S3's
 * (a new table only); a load that deletes is neither's.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';
import { useLocalAws } from '../support/localAws.js';
import { localCli } from '../support/localCli.js';

const aws = useLocalAws({ name: 'managed-paths', keys: { partitionKey: { name: 'pk', type: 'S' } } });
const cli = localCli(aws);

interface ManagedPath {
  name: string;
  serves: boolean;
  why: string;
  wouldNot: string;
  cost: string;
}

let input = '';
beforeAll(async () => {
  assertCliBuilt();
  input = join(aws.dir(), 'items.ddb.jsonl');
  const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ Item: { pk: { S: `k${i}` }, n: { N: String(i) } } }));
  await writeFile(input, `${lines.join('\n')}\n`);
});

async function pathsOf(table: string, extra: string[] = []): Promise<{ paths: ManagedPath[]; text: string }> {
  const json = await cli(['estimate', input, '--table', table, '--input-format', 'ddb-json', '--json', ...extra]);
  expect(json.code, json.stderr).toBe(0);
  const text = await cli(['estimate', input, '--table', table, '--input-format', 'ddb-json', ...extra]);
  expect(text.code, text.stderr).toBe(0);
  return { paths: (JSON.parse(json.stdout) as { managedPaths: ManagedPath[] }).managedPaths, text: text.stdout.replace(/\s+/g, ' ') };
}

describe('estimate: managed paths', () => {
  it('DynamoDB JSON into a table that holds items: bulk put items would serve, Import from S3 would not', async () => {
    const table = await aws.newTable();
    await aws.client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'existing' } } }));
    const { paths, text } = await pathsOf(table);
    const [importFromS3, bulkPut] = paths;
    expect(importFromS3).toMatchObject({ name: 'import-from-s3', serves: false });
    expect(importFromS3!.why).toMatch(/cannot load into this one, which holds items/);
    expect(bulkPut).toMatchObject({ name: 'bulk-put-items', serves: true });
    expect(bulkPut!.why).toMatch(/would have to be copied to S3 first/);
    expect(bulkPut!.wouldNot).toMatch(/pace per partition key/);
    expect(bulkPut!.cost).toMatch(/no public per-unit price was found/);
    expect(text).toMatch(/Managed paths Import from S3 would not serve: it creates a new table and cannot load into this one/);
    expect(text).toMatch(/bulk put items would serve: it loads DynamoDB JSON or Ion from an S3 prefix into this existing table/);
  });

  it('a load that deletes: bulk put items only puts', async () => {
    const table = await aws.newTable();
    await aws.client().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'existing' } } }));
    const { paths } = await pathsOf(table, ['--delete']);
    expect(paths[1]).toMatchObject({ name: 'bulk-put-items', serves: false });
    expect(paths[1]!.why).toMatch(/only puts items, and this load deletes some/);
  });
});
