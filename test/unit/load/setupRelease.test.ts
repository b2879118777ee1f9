import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { offlineTableInfo } from '../../../src/estimating/offlineTable.js';
import { dryRunLoad, load, type LoadDependencies } from '../../../src/load/load.js';
import type { LoadOptions } from '../../../src/load/options.js';
import { FileLock } from '../../../src/files/fileLock.js';
import type { LoadEvent } from '../../../src/reporting/events.js';
import { LoaderError } from '../../../src/shared/errors.js';

/*
 * Every way a load's setup can fail releases what the steps before it acquired: no lock file, no
 * temporary folder, no open checkpoint is left behind, and the checkpoint records the load as stopped.
 * DynamoDB is a fake answering DescribeTable (and BatchWriteItem, all written), so this runs offline.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'setup-release-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const TABLE = {
  TableName: 'Orders',
  TableStatus: 'ACTIVE',
  KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
  BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
};

/** A client whose DescribeTable runs `onDescribe` first (a hook into setup), and whose BatchWriteItem writes everything. */
function fakeClient(onDescribe: () => unknown = () => undefined, calls: string[] = []): DynamoDBDocumentClient {
  return {
    config: { region: () => Promise.resolve('us-east-1') },
    send: async (command: { constructor: { name: string } }) => {
      const name = command.constructor.name;
      calls.push(name);
      if (name === 'DescribeTableCommand') {
        await onDescribe();
        return { Table: TABLE };
      }
      return { UnprocessedItems: {}, ConsumedCapacity: [] };
    },
    destroy: () => undefined,
  } as unknown as DynamoDBDocumentClient;
}

async function inputFile(rows = 20): Promise<string> {
  const path = join(dir, 'in.csv');
  await writeFile(path, `pk,v\n${Array.from({ length: rows }, (_, i) => `k${i},${i}`).join('\n')}\n`);
  return path;
}

function options(input: string, more: Partial<LoadOptions> = {}): LoadOptions {
  return { input, table: 'Orders', region: 'us-east-1', rejectsPath: join(dir, 'rejects.jsonl'), tempDir: dir, order: 'round-robin', ...more };
}

/** What a load may leave in `dir` besides its inputs and outputs: nothing locked, no temporary folder. */
function leftovers(): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.lock') || name.includes('ddb-spread-') || name.endsWith('.tmp'));
}

async function failure(run: Promise<unknown>): Promise<LoaderError> {
  const error = await run.then(
    () => new Error('expected the load to fail'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LoaderError);
  return error as LoaderError;
}

const statusOf = (path: string) => (JSON.parse(readFileSync(path, 'utf8')) as { status: string }).status;

describe('setup releases what it acquired, however it fails', () => {
  it('a load that finishes leaves its outputs and nothing locked', async () => {
    const input = await inputFile();
    const checkpointPath = join(dir, 'ck.json');
    const manifestPath = join(dir, 'manifest.json');
    const result = await load(options(input, { checkpointPath, shard: ['hash:2:v'], shardManifestPath: manifestPath }), { client: fakeClient() });
    expect(result.written).toBe(20);
    expect(statusOf(checkpointPath)).toBe('complete');
    expect(result.shardManifestPath).toBe(manifestPath);
    expect(leftovers()).toEqual([]);
  });

  it('the reject file locked by another load: refused, and that load keeps its lock', async () => {
    const input = await inputFile();
    const theirs = await FileLock.acquire({ option: '--rejects', path: join(dir, 'rejects.jsonl'), code: 'REJECTS_UNWRITABLE' });
    try {
      const calls: string[] = [];
      const error = await failure(load(options(input, { checkpointPath: join(dir, 'ck.json') }), { client: fakeClient(undefined, calls) }));
      expect(error.message).toMatch(/in use by/);
      expect(calls).toEqual([]);
      expect(leftovers()).toEqual(['rejects.jsonl.lock']);
      expect(existsSync(join(dir, 'ck.json'))).toBe(false);
    } finally {
      await theirs.release();
    }
  });

  it('the table missing: the reject file is unlocked and no checkpoint is made', async () => {
    const input = await inputFile();
    const missing = Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException', $metadata: {} });
    const error = await failure(
      load(options(input, { checkpointPath: join(dir, 'ck.json') }), {
        client: fakeClient(() => {
          throw missing;
        }),
      }),
    );
    expect(error.code).toBe('TABLE_NOT_FOUND');
    expect(leftovers()).toEqual([]);
    expect(existsSync(join(dir, 'ck.json'))).toBe(false);
  });

  it('a checkpoint refused (not a checkpoint): its lock and the reject lock are released', async () => {
    const input = await inputFile();
    const checkpointPath = join(dir, 'ck.json');
    await writeFile(checkpointPath, 'not json');
    const error = await failure(load(options(input, { checkpointPath }), { client: fakeClient() }));
    expect(error.code).toBe('CHECKPOINT_INVALID');
    expect(readFileSync(checkpointPath, 'utf8')).toBe('not json');
    expect(leftovers()).toEqual([]);
  });

  it('a checkpoint of a finished load: ends at once with its outcome, nothing locked', async () => {
    const input = await inputFile();
    const checkpointPath = join(dir, 'ck.json');
    await load(options(input, { checkpointPath }), { client: fakeClient() });
    const calls: string[] = [];
    const error = await failure(load(options(input, { checkpointPath }), { client: fakeClient(undefined, calls) }));
    expect(error.code).toBe('CHECKPOINT_COMPLETE');
    expect(error.result?.written).toBe(20);
    expect(calls).toEqual(['DescribeTableCommand']);
    expect(statusOf(checkpointPath)).toBe('complete');
    expect(leftovers()).toEqual([]);
  });

  it('the manifest unwritable after the checkpoint was taken: the checkpoint is closed stopped and unlocked', async () => {
    const input = await inputFile();
    const checkpointPath = join(dir, 'ck.json');
    const manifestDir = join(dir, 'manifests');
    await mkdir(manifestDir);
    const shardManifest = join(manifestDir, 'm.json');
    // The folder is checked writable before the table is described, and gone by the time the manifest is written.
    const client = fakeClient(() => rmSync(manifestDir, { recursive: true }));
    const error = await failure(load(options(input, { checkpointPath, shard: ['hash:2:v'], shardManifestPath: shardManifest }), { client }));
    expect(error.code).toBe('MANIFEST_UNWRITABLE');
    expect(statusOf(checkpointPath)).toBe('stopped');
    expect(leftovers()).toEqual([]);
  });

  it('a shard rule refused after the checkpoint was taken (the table has no sort key): the checkpoint is closed stopped and unlocked', async () => {
    const input = await inputFile();
    const checkpointPath = join(dir, 'ck.json');
    const error = await failure(load(options(input, { checkpointPath, shard: ['hash:2'] }), { client: fakeClient() }));
    expect(error.message).toMatch(/no sort key/);
    expect(statusOf(checkpointPath)).toBe('stopped');
    expect(leftovers()).toEqual([]);
  });

  it('aborted during setup: nothing is sent, the checkpoint is closed stopped and unlocked', async () => {
    const input = await inputFile();
    const checkpointPath = join(dir, 'ck.json');
    const controller = new AbortController();
    const calls: string[] = [];
    const error = await failure(load(options(input, { checkpointPath }), { client: fakeClient(() => controller.abort(), calls), signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(calls).toEqual(['DescribeTableCommand']);
    expect(statusOf(checkpointPath)).toBe('stopped');
    expect(leftovers()).toEqual([]);
  });

  it("a dry run that asks to start over resolves with the table, before 'started', everything released", async () => {
    const input = await inputFile();
    const table = offlineTableInfo('Orders', { partitionKey: { name: 'pk', type: 'S' }, billing: 'on-demand' });
    const events: LoadEvent[] = [];
    const recorded: number[] = [];
    const deps: LoadDependencies & Required<Pick<LoadDependencies, 'dryRun'>> = {
      onEvent: (e) => events.push(e),
      dryRun: { tableInfo: table, onTable: () => 'start over', onPlanned: (w) => w, record: (writes) => recorded.push(writes.length) },
    };
    const outcome = await dryRunLoad(options(input), deps);
    expect(outcome).toEqual({ startOver: table });
    expect(events.map((e) => e.type)).not.toContain('started');
    expect(recorded).toEqual([]);
    expect(leftovers()).toEqual([]);
    // Through load(), a start-over is not a result: a bug of the caller, said so.
    await expect(load(options(input), deps)).rejects.toThrow(/dryRunLoad/);
    expect(leftovers()).toEqual([]);
  });
});
