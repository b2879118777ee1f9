import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { createClient } from '../../../src/aws/client.js';

const names = (stack: { identify(): string[] }) => stack.identify().map((entry) => entry.split(' ')[0]);

describe('createClient (client cost per item)', () => {
  it("leaves out the SDK's logger middleware, which filters every request for a logger that logs nothing", () => {
    // The name exists on a plain client, so its absence below is the removal, not a renamed middleware.
    const plain = new DynamoDBClient({ region: 'us-east-1' });
    expect(names(plain.middlewareStack)).toContain('loggerMiddleware');
    const client = createClient({ region: 'us-east-1', requestTimeoutMs: 1000, maxSockets: 8 }, {});
    expect(names(client.middlewareStack)).not.toContain('loggerMiddleware');
    plain.destroy();
    client.destroy();
  });

  it('passes over the retry middleware when the SDK makes one attempt (the writer retries), keeps it for readers', async () => {
    // The retry middleware is what sends amz-sdk-invocation-id; the request is caught before the network.
    const headersOf = async (client: ReturnType<typeof createClient>) => {
      let seen: Record<string, string> = {};
      client.middlewareStack.add(
        () => (args) => {
          seen = { ...(args.request as { headers: Record<string, string> }).headers };
          return Promise.reject(new Error('caught before the network'));
        },
        { step: 'finalizeRequest', priority: 'low', name: 'catchRequest' },
      );
      await expect(client.send(new DescribeTableCommand({ TableName: 'tbl' }))).rejects.toThrow('caught before the network');
      return seen;
    };
    const env = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' };
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    const client = createClient({ region: 'us-east-1', requestTimeoutMs: 1000, maxSockets: 8 }, env);
    const reader = createClient({ region: 'us-east-1', requestTimeoutMs: 1000, maxSockets: 8, sdkAttempts: 5 }, env);
    try {
      const load = await headersOf(client);
      expect(load['authorization']).toMatch(/^AWS4-HMAC-SHA256 /);
      expect(load['amz-sdk-invocation-id']).toBeUndefined();
      expect((await headersOf(reader))['amz-sdk-invocation-id']).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      client.destroy();
      reader.destroy();
      vi.unstubAllEnvs();
    }
  });

  it('keeps one SigV4 signer per auth scheme instead of building one per call', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    const client = createClient({ region: 'eu-west-1', requestTimeoutMs: 1000, maxSockets: 8 }, {});
    try {
      const signer = (client.config as unknown as { signer: (scheme?: unknown) => Promise<unknown> }).signer;
      const first = await signer();
      expect(await signer()).toBe(first);
      expect(await signer({ name: 'sigv4', signingName: 'dynamodb', signingRegion: 'us-west-2', properties: {} })).not.toBe(first);
      const signed = (await (first as { sign(r: unknown): Promise<{ headers: Record<string, string> }> }).sign({
        method: 'POST',
        protocol: 'https:',
        hostname: 'dynamodb.eu-west-1.amazonaws.com',
        path: '/',
        headers: { host: 'dynamodb.eu-west-1.amazonaws.com' },
        body: '{}',
      })) as { headers: Record<string, string> };
      expect(signed.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/eu-west-1\/dynamodb\/aws4_request/);
    } finally {
      client.destroy();
      vi.unstubAllEnvs();
    }
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
