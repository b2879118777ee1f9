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
});
