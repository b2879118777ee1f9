/**
 * A load's BatchWriteItem calls go below the SDK client's middleware chain after the first
 * (src/writing/directSend.ts). Both paths go through a real client down to its HTTP handler, which records
 * each request and answers from a script: the direct path must send the request the SDK sends (same
 * endpoint, headers and body; only the signature's date and the SDK's per-attempt ids may differ), and
 * make of every answer what the SDK makes of it: the output (binary values as bytes), and for an error
 * its name, message, fault, status and fields, which are all the writer reads (awsErrors.ts).
 */
import { BatchWriteItemCommand, DynamoDBClient, type BatchWriteItemCommandOutput } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { withDirectBatchWrites } from '../../../src/writing/directSend.js';
import { preSerializedBatchWrite } from '../../../src/writing/preSerialized.js';

const TABLE = 'Orders';

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

interface Sent {
  method: string;
  hostname: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A document client whose HTTP handler records each request and gives the next answer; `chained` counts calls through the middleware chain. */
function scriptedClient(answers: Answer[], endpointDiscoveryEnabled?: boolean) {
  const sent: Sent[] = [];
  let chained = 0;
  const base = new DynamoDBClient({
    ...(endpointDiscoveryEnabled === undefined ? {} : { endpointDiscoveryEnabled }),
    region: 'us-east-1',
    endpoint: 'https://dynamodb.example.test',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' },
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: { method: string; hostname: string; path: string; body?: unknown; headers: Record<string, string> }) => {
        const body = request.body;
        sent.push({
          method: request.method,
          hostname: request.hostname,
          path: request.path,
          headers: { ...request.headers },
          body: typeof body === 'string' ? body : Buffer.from(body as Uint8Array).toString('utf8'),
        });
        const answer = answers.shift() ?? { status: 200, body: '{"UnprocessedItems":{}}' };
        return {
          response: {
            statusCode: answer.status,
            headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `req-${sent.length}`, ...answer.headers },
            body: Readable.from([Buffer.from(answer.body, 'utf8')]),
          },
        };
      },
    },
  });
  base.middlewareStack.add(
    (next) => async (args) => {
      chained++;
      return next(args);
    },
    { step: 'initialize', name: 'countChained' },
  );
  const client = DynamoDBDocumentClient.from(base);
  return { client, sent, chained: () => chained, answers };
}

const ITEMS = ['{"pk":{"S":"a"},"sk":{"N":"1"}}', '{"pk":{"S":"b"},"sk":{"N":"2"},"bin":{"B":"AAEC"}}'];

/** The outcome of one call: the output, or the facts of the error. */
async function outcome(send: () => Promise<BatchWriteItemCommandOutput>): Promise<unknown> {
  try {
    const { $metadata, ...output } = await send();
    return { output, status: $metadata.httpStatusCode };
  } catch (error) {
    const e = error as Error & Record<string, unknown> & { $metadata?: { httpStatusCode?: number } };
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(e)) if (!key.startsWith('$')) fields[key] = e[key];
    return { error: e.name, message: e.message, fault: e.$fault, status: e.$metadata?.httpStatusCode, fields };
  }
}

/** The same answer given to the SDK's client and to the direct path (after its first call, which goes through the client). */
async function both(answer: Answer): Promise<{ sdk: unknown; direct: unknown; sdkSent: Sent; directSent: Sent; chained: number }> {
  const sdk = scriptedClient([{ ...answer }]);
  const viaSdk = await outcome(() =>
    (sdk.client as unknown as { send(c: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> }).send(preSerializedBatchWrite(TABLE, ITEMS)),
  );
  const direct = scriptedClient([{ status: 200, body: '{"UnprocessedItems":{}}' }, { ...answer }]);
  const wrapped = withDirectBatchWrites(direct.client) as unknown as { send(c: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> };
  await wrapped.send(preSerializedBatchWrite(TABLE, ITEMS));
  const viaDirect = await outcome(() => wrapped.send(preSerializedBatchWrite(TABLE, ITEMS)));
  sdk.client.destroy();
  direct.client.destroy();
  return { sdk: viaSdk, direct: viaDirect, sdkSent: sdk.sent[0]!, directSent: direct.sent[1]!, chained: direct.chained() };
}

/** A request without what differs from one signature to the next. */
function stable(sent: Sent) {
  const headers = { ...sent.headers };
  for (const name of ['authorization', 'x-amz-date', 'amz-sdk-invocation-id', 'amz-sdk-request']) delete headers[name];
  return { ...sent, headers };
}

const answers: Record<string, Answer> = {
  'everything stored, with ConsumedCapacity of the table and an index': {
    status: 200,
    body: JSON.stringify({
      UnprocessedItems: {},
      ConsumedCapacity: [{ TableName: TABLE, CapacityUnits: 4, Table: { CapacityUnits: 2 }, GlobalSecondaryIndexes: { byStatus: { CapacityUnits: 2 } } }],
    }),
  },
  'UnprocessedItems with every kind of value, binary ones included, and a delete': {
    status: 200,
    body: JSON.stringify({
      UnprocessedItems: {
        [TABLE]: [
          {
            PutRequest: {
              Item: {
                pk: { B: 'AAEC/w==' },
                sk: { N: '-1.50' },
                s: { S: 'ü "quoted" \u0000' },
                set: { BS: ['AQ==', 'Ag=='] },
                ns: { NS: ['1', '2'] },
                ss: { SS: ['x'] },
                m: { M: { inner: { B: 'Aw==' }, list: { L: [{ B: 'BA==' }, { NULL: true }, { BOOL: false }] } } },
              },
            },
          },
          { DeleteRequest: { Key: { pk: { B: 'BQ==' }, sk: { N: '7' } } } },
        ],
      },
    }),
  },
  'a throttle with its reasons, named in the body': {
    status: 400,
    body: JSON.stringify({
      __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
      message: 'The level of configured provisioned throughput for the table was exceeded.',
      ThrottlingReasons: [{ reason: 'TableWriteKeyRangeThroughputExceeded', resource: `arn:aws:dynamodb:us-east-1:1:table/${TABLE}` }],
    }),
  },
  'a throttle named by x-amzn-errortype': {
    status: 400,
    headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/' },
    body: JSON.stringify({ message: 'Rate of requests exceeds the allowed throughput.' }),
  },
  'header and body naming different errors (the body wins, as in the SDK: a throttle, retried)': {
    status: 400,
    headers: { 'x-amzn-errortype': 'ValidationException' },
    body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', code: 'ValidationException', message: 'x' }),
  },
  'code and no __type': {
    status: 400,
    headers: { 'x-amzn-errortype': 'ThrottlingException' },
    body: JSON.stringify({ code: 'ValidationException', message: 'y' }),
  },
  'a validation error': {
    status: 400,
    body: JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message: 'One or more parameter values were invalid' }),
  },
  'a missing table': {
    status: 400,
    body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'Requested resource not found' }),
  },
  'refused credentials, Message capitalised': {
    status: 400,
    body: JSON.stringify({ __type: 'com.amazon.coral.service#UnrecognizedClientException', Message: 'The security token included in the request is invalid.' }),
  },
  'a server error': {
    status: 500,
    body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' }),
  },
  'a 503 from a proxy, in HTML': { status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body>Service Unavailable</body></html>' },
  'a 413 with no body': { status: 413, body: '' },
};

describe('BatchWriteItem below the client', () => {
  it.each(Object.entries(answers))('%s: the same request, and the same outcome as through the client', async (_, answer) => {
    const { sdk, direct, sdkSent, directSent, chained } = await both(answer);
    // The second call did not go through the middleware chain.
    expect(chained).toBe(1);
    expect(stable(directSent)).toEqual(stable(sdkSent));
    expect(directSent.headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/dynamodb\/aws4_request/);
    expect(directSent.headers['x-amz-security-token']).toBe('token');
    expect(direct).toEqual(sdk);
  });

  it('gives binary values as bytes, as the client does', async () => {
    const { direct } = await both(answers['UnprocessedItems with every kind of value, binary ones included, and a delete']!);
    const requests = (direct as { output: BatchWriteItemCommandOutput }).output.UnprocessedItems![TABLE]!;
    expect(requests[0]!.PutRequest!.Item!['pk']!.B).toEqual(new Uint8Array([0, 1, 2, 255]));
    expect(requests[1]!.DeleteRequest!.Key!['pk']!.B).toEqual(new Uint8Array([5]));
  });

  it.each(['', 'null', '[]', '{"UnprocessedItems":'])('answers HTTP 200 with %j: an error, never "everything stored"', async (body) => {
    // The SDK reads an empty body, null or [] as an answer without UnprocessedItems: every write stored.
    const { direct } = await both({ status: 200, body });
    expect(direct).toMatchObject({ error: 'SyntaxError', status: 200 });
  });

  it("keeps an unprocessed item's attribute named __proto__ as its own attribute", async () => {
    const body = `{"UnprocessedItems":{"${TABLE}":[{"PutRequest":{"Item":{"__proto__":{"S":"x"},"pk":{"B":"AQ=="},"m":{"M":{"__proto__":{"B":"Ag=="}}}}}}]}}`;
    const { direct } = await both({ status: 200, body });
    const item = (direct as { output: BatchWriteItemCommandOutput }).output.UnprocessedItems![TABLE]![0]!.PutRequest!.Item!;
    expect(Object.hasOwn(item, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(item, '__proto__')!.value).toEqual({ S: 'x' });
    expect(item['pk']!.B).toEqual(new Uint8Array([1]));
    expect(Object.getOwnPropertyDescriptor(item['m']!.M!, '__proto__')!.value).toEqual({ B: new Uint8Array([2]) });
  });

  it('keeps the client for other commands, and for a fake of the client', async () => {
    const { client, chained } = scriptedClient([]);
    const wrapped = withDirectBatchWrites(client) as unknown as { send(c: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> };
    await wrapped.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: [{ PutRequest: { Item: { pk: { S: 'a' } } } }] } }));
    await wrapped.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: [{ PutRequest: { Item: { pk: { S: 'b' } } } }] } }));
    expect(chained()).toBe(2);
    client.destroy();
    const fake = { send: async () => ({ UnprocessedItems: {}, $metadata: {} }) };
    expect(withDirectBatchWrites(fake as never)).toBe(fake);
  });

  it('sends every call through the client when it discovers its endpoints', async () => {
    const { client, chained } = scriptedClient([], true);
    const wrapped = withDirectBatchWrites(client) as unknown as { send(c: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> };
    for (let i = 0; i < 3; i++) await wrapped.send(preSerializedBatchWrite(TABLE, ITEMS));
    expect(chained()).toBeGreaterThanOrEqual(3);
    client.destroy();
  });

  it('corrects the clock from a skewed answer, as the client does, and signs the next call with it', async () => {
    const skewed = new Date(Date.now() + 3_600_000).toUTCString();
    const direct = scriptedClient([
      { status: 200, body: '{"UnprocessedItems":{}}' },
      {
        status: 400,
        headers: { date: skewed },
        body: JSON.stringify({ __type: 'com.amazon.coral.service#InvalidSignatureException', message: 'Signature expired' }),
      },
      { status: 200, body: '{"UnprocessedItems":{}}' },
    ]);
    const wrapped = withDirectBatchWrites(direct.client) as unknown as { send(c: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> };
    await wrapped.send(preSerializedBatchWrite(TABLE, ITEMS));
    await expect(wrapped.send(preSerializedBatchWrite(TABLE, ITEMS))).rejects.toMatchObject({ name: 'InvalidSignatureException' });
    await wrapped.send(preSerializedBatchWrite(TABLE, ITEMS));
    const signedAt = (s: Sent) => Date.parse(s.headers['x-amz-date']!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    // Signed an hour ahead, as the server's clock says.
    expect(signedAt(direct.sent[2]!) - Date.now()).toBeGreaterThan(3_500_000);
    expect(direct.chained()).toBe(1);
    direct.client.destroy();
  });
});
