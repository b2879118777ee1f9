import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../../src/writing/client.js';

const names = (stack: { identify(): string[] }) => stack.identify().map((entry) => entry.split(' ')[0]);

describe('createClient (issue 14: client cost per item)', () => {
  it("leaves out the SDK's logger middleware, which filters every request for a logger that logs nothing", () => {
    // The name exists on a plain client, so its absence below is the removal, not a renamed middleware.
    const plain = new DynamoDBClient({ region: 'us-east-1' });
    expect(names(plain.middlewareStack)).toContain('loggerMiddleware');
    const client = createClient({ region: 'us-east-1', requestTimeoutMs: 1000, maxSockets: 8 }, {});
    expect(names(client.middlewareStack)).not.toContain('loggerMiddleware');
    plain.destroy();
    client.destroy();
  });

  it("makes one SDK attempt per call for a load, whatever the load's own --max-attempts; readers ask for more", async () => {
    // load() spreads its options into createClient: its maxAttempts (sends per item) must not reach the SDK,
    // or every DescribeTable and BatchWriteItem would be retried up to 15 times under the writer's own retries.
    const loadLike = { region: 'us-east-1', requestTimeoutMs: 1000, maxSockets: 8, maxAttempts: 15 };
    const client = createClient(loadLike, {});
    expect(await client.config.maxAttempts()).toBe(1);
    const reader = createClient({ ...loadLike, sdkAttempts: 5 }, {});
    expect(await reader.config.maxAttempts()).toBe(5);
    client.destroy();
    reader.destroy();
  });
});
