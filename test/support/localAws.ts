import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { createTable, deleteTable, localClient, type TableKeys } from './ddb.js';

export interface LocalAwsOptions {
  /** Names the temp dir: `<tmpdir>/ddb-spread-<name>-XXXXXX`. */
  name: string;
  /**
   * Sets AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to 'local' in this process for the file's tests and
   * restores them afterwards: an in-process load() builds its own client from the default credential chain.
   * @default false
   */
  processCredentials?: boolean;
  /** The key schema newTable() uses when given none. */
  keys?: TableKeys;
}

/** Something to close once the file's tests are done (a proxy in front of DynamoDB Local). */
export interface Closable {
  close(): Promise<void>;
}

export interface LocalAws {
  /** The DynamoDB Local endpoint of the run (from test/support/globalSetup.ts). */
  endpoint: string;
  /** A client for DynamoDB Local; only inside tests and hooks. */
  client(): DynamoDBClient;
  /** The file's temp dir, removed afterwards; only inside tests and hooks. */
  dir(): string;
  /** Creates a PAY_PER_REQUEST table (createTable) that is deleted afterwards; `keys` defaults to the option's. */
  newTable(keys?: TableKeys): Promise<string>;
  /** Deletes a table at once (a test that loads several tables keeps DynamoDB Local small). */
  dropTable(table: string): Promise<void>;
  /** Deletes a table created some other way afterwards; returns its name. */
  trackTable(table: string): string;
  /** Closes `resource` afterwards, before the tables are deleted; returns it. */
  closeAfterAll<T extends Closable>(resource: T): T;
}

/**
 * The shared setup of a test file against DynamoDB Local, in the way of dynein's `tests/util/mod.rs`:
 * call it at the top level of the file. It registers a beforeAll that makes the client and the temp dir,
 * and an afterAll that closes the resources, deletes the tables, destroys the client, removes the dir
 * and restores the environment, each step also when the beforeAll failed half way.
 */
export function useLocalAws(options: LocalAwsOptions): LocalAws {
  const endpoint = inject('ddbEndpoint');
  let client: DynamoDBClient | undefined;
  let dir: string | undefined;
  const tables: string[] = [];
  const resources: Closable[] = [];
  const savedEnv = { id: process.env['AWS_ACCESS_KEY_ID'], secret: process.env['AWS_SECRET_ACCESS_KEY'] };

  beforeAll(async () => {
    if (options.processCredentials) {
      process.env['AWS_ACCESS_KEY_ID'] = 'local';
      process.env['AWS_SECRET_ACCESS_KEY'] = 'local';
    }
    client = localClient(endpoint);
    dir = await mkdtemp(join(tmpdir(), `ddb-spread-${options.name}-`));
  });

  afterAll(async () => {
    for (const resource of resources) await resource.close().catch(() => undefined);
    if (client) for (const table of tables) await deleteTable(client, table).catch(() => undefined);
    client?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (options.processCredentials) {
      restoreEnv('AWS_ACCESS_KEY_ID', savedEnv.id);
      restoreEnv('AWS_SECRET_ACCESS_KEY', savedEnv.secret);
    }
  });

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useLocalAws: the ${what} exists only inside tests and hooks, after its beforeAll`);
    return value;
  };
  const clientOf = () => ready(client, 'client');

  return {
    endpoint,
    client: clientOf,
    dir: () => ready(dir, 'temp dir'),
    async newTable(keys = options.keys) {
      if (keys === undefined) throw new Error('useLocalAws: newTable() needs keys, or the keys option');
      const table = await createTable(clientOf(), keys);
      tables.push(table);
      return table;
    },
    async dropTable(table) {
      await deleteTable(clientOf(), table);
      tables.splice(tables.indexOf(table), 1);
    },
    trackTable(table) {
      tables.push(table);
      return table;
    },
    closeAfterAll(resource) {
      resources.push(resource);
      return resource;
    },
  };
}

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
