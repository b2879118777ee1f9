// Type-only import so the augmentation below has 'vitest' in the program even when this file is checked alone.
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startDynamoDBLocal } from '../../tools/dynamodbLocal.js';

declare module 'vitest' {
  export interface ProvidedContext {
    ddbEndpoint: string;
  }
}

/** Starts one in-memory DynamoDB Local for the whole run; tests read it with inject('ddbEndpoint'). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const local = await startDynamoDBLocal({
    log: (msg) => {
      process.stderr.write(`[dynamodb-local] ${msg}\n`);
    },
  });
  project.provide('ddbEndpoint', local.endpoint);
  return async () => {
    await local.stop();
  };
}
