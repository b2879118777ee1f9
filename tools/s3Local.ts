/**
 * An S3-compatible server on a free loopback port for the integration tests (issue 16), as DynamoDB Local
 * is for DynamoDB: the npm package `s3rver` (the S3 REST API over a folder; ranged GETs, ETags as MD5,
 * path-style buckets). It takes the key pair local/local, the tests' fake keys for DynamoDB Local too. It does not honour If-Match; the loader checks each answer's ETag itself as well.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export interface S3Local {
  /** http://127.0.0.1:<port>: use with path-style addressing. */
  endpoint: string;
  stop(): Promise<void>;
}

export async function startS3Local(): Promise<S3Local> {
  const require = createRequire(import.meta.url);
  const S3rver = require('s3rver') as S3rverClass;
  // The tests' fake credentials (as for DynamoDB Local) as one more key pair of s3rver's one account.
  (require('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } }).DUMMY_ACCOUNT.createKeyPair(
    'local',
    'local',
  );
  const directory = await mkdtemp(join(tmpdir(), 'ddb-spread-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, allowMismatchedSignatures: true });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
