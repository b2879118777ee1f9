import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface ClientOptions {
  region?: string | undefined;
  profile?: string | undefined;
  endpoint?: string | undefined;
  /** Socket timeout for one call, in ms; a timed-out call is retried by the writer. */
  requestTimeoutMs: number;
  /** Sockets kept open: at least the number of batches in flight. */
  maxSockets: number;
}

/**
 * One client per run (dynein builds one per call). Credentials come only from the SDK's default chain
 * (env, profile, SSO, instance role); `profile` selects a profile the way --profile does in the AWS CLI.
 * The SDK's own retries are off (maxAttempts 1): the batch writer retries with its own per-item budget,
 * so the two layers never multiply.
 */
export function createClient(options: ClientOptions): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    maxAttempts: 1,
    requestHandler: {
      requestTimeout: options.requestTimeoutMs,
      connectionTimeout: Math.min(options.requestTimeoutMs, 10_000),
      httpAgent: { keepAlive: true, maxSockets: options.maxSockets },
      httpsAgent: { keepAlive: true, maxSockets: options.maxSockets },
    },
  });
  return DynamoDBDocumentClient.from(base, {
    // Items are built by ddb-spread's own type map; these settings make marshalling exact and loud.
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false, convertClassInstanceToMap: false },
    // UnprocessedItems come back with numbers as NumberValue, so they match the keys that were sent.
    unmarshallOptions: { wrapNumbers: true },
  });
}
