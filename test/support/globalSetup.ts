// Type-only import so the augmentation below has 'vitest' in the program even when this file is checked alone.
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startDynamoDBLocal } from '../../tools/dynamodbLocal.js';
import { startS3Local } from '../../tools/s3Local.js';

declare module 'vitest' {
  export interface ProvidedContext {
    ddbEndpoint: string;
    /** An S3-compatible server (s3rver) on loopback, path-style. */
    s3Endpoint: string;
  }
}

/**
 * Starts one in-memory DynamoDB Local and one S3-compatible server for the whole run; tests read them
 * with inject('ddbEndpoint') and inject('s3Endpoint').
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const local = await startDynamoDBLocal({
    log: (msg) => {
      process.stderr.write(`[dynamodb-local] ${msg}\n`);
    },
  });
  project.provide('ddbEndpoint', local.endpoint);
  const s3 = await startS3Local();
  project.provide('s3Endpoint', s3.endpoint);
  return async () => {
    await s3.stop();
    await local.stop();
  };
}
