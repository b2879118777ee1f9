/**
 * writeBatch against a fake `send`, in the way of lib-storage's Upload.spec.ts: the client records the
 * input of every command and answers from a script, and each test asserts the exact inputs sent. Time is
 * injected (random, sleep), so retries take no real time.
 */
import { BatchWriteItemCommand, type BatchWriteItemCommandInput, type BatchWriteItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/aws/backoff.js';
import { LoaderError } from '../../../src/shared/errors.js';
import { keyIdsOf } from '../../../src/typing/key.js';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import { sentInputOf } from '../../../src/writing/preSerialized.js';
import type { SendReport } from '../../../src/pacing/sendPacer.js';
import { writeBatch, type WriterContext } from '../../../src/writing/writeBatch.js';

const TABLE = 'Orders';
const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };

/** A planned put of `{ pk, n }`, on line `n` of in.csv. */
function put(pk: string, n: number): PlannedWrite {
  const item = { pk, n: String(n) };
  return { origin: { file: 'in.csv', line: n, raw: `${pk},${n}` }, item, ...keyIdsOf(item, SCHEMA), size: 10, wcu: 1 };
}

/** The PutRequest DynamoDB receives for put(pk, n), and returns in UnprocessedItems. */
const request = (pk: string, n: number) => ({ PutRequest: { Item: { pk: { S: pk }, n: { S: String(n) } } } });

/** The input of one BatchWriteItem call holding these requests. */
const callOf = (...requests: ReturnType<typeof request>[]): BatchWriteItemCommandInput => ({
  RequestItems: { [TABLE]: requests },
  ReturnConsumedCapacity: 'INDEXES',
});

/** An answer: a response, an error to throw, or either computed from the call's input. */
type Answer = Partial<BatchWriteItemCommandOutput> | Error | ((input: BatchWriteItemCommandInput) => Partial<BatchWriteItemCommandOutput> | Error);

const ok = (units?: number): Partial<BatchWriteItemCommandOutput> => ({
  UnprocessedItems: {},
  ...(units === undefined ? {} : { ConsumedCapacity: [{ TableName: TABLE, CapacityUnits: units }] }),
});
const unprocessed = (units: number, ...requests: ReturnType<typeof request>[]): Partial<BatchWriteItemCommandOutput> => ({
  UnprocessedItems: { [TABLE]: requests },
  ConsumedCapacity: [{ TableName: TABLE, CapacityUnits: units }],
});

/** An SDK service error as the client throws it. */
function awsError(name: string, httpStatusCode: number, message = `${name} message`, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode }, ...extra });
}

/** The number of PutRequests in a call. */
const size = (input: BatchWriteItemCommandInput) => input.RequestItems![TABLE]!.length;
/** The partition keys a call sends, in order. */
const pks = (input: BatchWriteItemCommandInput) => input.RequestItems![TABLE]!.map((r) => r.PutRequest!.Item!['pk']!.S);

/**
 * A writer context whose client answers from `script`, one answer a call; a call past its end fails the
 * test. `log` holds the pacer's and the client's calls in the order they happened.
 */
function scripted(script: Answer[], options: Partial<WriterContext> = {}) {
  const inputs: BatchWriteItemCommandInput[] = [];
  const sleeps: number[] = [];
  const retries: Array<{ reason: string; items: number; attempt: number; delayMs: number }> = [];
  const reports: SendReport[] = [];
  const log: string[] = [];
  const client = {
    async send(command: unknown): Promise<Partial<BatchWriteItemCommandOutput>> {
      expect(command).toBeInstanceOf(BatchWriteItemCommand);
      const input = sentInputOf(command as BatchWriteItemCommand);
      inputs.push(input);
      log.push(`send ${pks(input).join(',')}`);
      const next = script.shift();
      if (next === undefined) throw new Error(`the script has no answer for call ${inputs.length}`);
      const answer = typeof next === 'function' ? next(input) : next;
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  const ctx: WriterContext = {
    client: client as unknown as DynamoDBDocumentClient,
    table: TABLE,
    keySchema: SCHEMA,
    endpoint: 'http://localhost:8000',
    maxAttempts: 4,
    backoff: DEFAULT_BACKOFF,
    // Half of each backoff ceiling: 25 ms before the first retry, 50, 100, ...
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    onRetry: (info) => retries.push(info),
    pacer: {
      async beforeSend(writes) {
        log.push(`before ${writes.map((w) => w.item['pk']).join(',')}`);
      },
      afterSend(report) {
        reports.push(report);
        log.push(`after ${report.stored.length} stored, ${report.throttled.length} throttled`);
      },
    },
    ...options,
  };
  return { ctx, inputs, sleeps, retries, reports, log, script };
}

describe('writeBatch: one call', () => {
  it('sends every write as a PutRequest of its wire item, asks for INDEXES capacity, and sums the units', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, inputs, sleeps } = scripted([
      {
        UnprocessedItems: {},
        ConsumedCapacity: [
          { TableName: TABLE, CapacityUnits: 2 },
          { TableName: TABLE, CapacityUnits: 1.5 },
        ],
      },
    ]);
    const outcome = await writeBatch([a, b], ctx);
    expect(inputs).toEqual([callOf(request('a', 1), request('b', 2))]);
    expect(outcome).toEqual({ written: [a, b], rejected: [], consumedWcu: 3.5, throttledItems: 0, retries: 0, revived: 0 });
    expect(sleeps).toEqual([]);
  });

  it('an answer without ConsumedCapacity counts no units', async () => {
    const { ctx } = scripted([ok()]);
    const outcome = await writeBatch([put('a', 1)], ctx);
    expect(outcome.consumedWcu).toBe(0);
    expect(outcome.written).toHaveLength(1);
  });
});

describe('writeBatch: UnprocessedItems', () => {
  it('resends only the unprocessed requests, in the order DynamoDB returned them, after a backoff, until none is left', async () => {
    const [a, b, c] = [put('a', 1), put('b', 2), put('c', 3)];
    const { ctx, inputs, sleeps, retries } = scripted([unprocessed(1, request('c', 3), request('a', 1)), unprocessed(1, request('c', 3)), ok(1)]);
    const outcome = await writeBatch([a, b, c], ctx);
    expect(inputs).toEqual([callOf(request('a', 1), request('b', 2), request('c', 3)), callOf(request('c', 3), request('a', 1)), callOf(request('c', 3))]);
    expect(outcome.written).toEqual([b, a, c]);
    expect(outcome).toMatchObject({ rejected: [], consumedWcu: 3, throttledItems: 3, retries: 2 });
    expect(sleeps).toEqual([25, 50]);
    expect(retries).toEqual([
      { reason: 'UnprocessedItems', items: 2, attempt: 1, delayMs: 25 },
      { reason: 'UnprocessedItems', items: 1, attempt: 2, delayMs: 50 },
    ]);
  });

  it('an unprocessed request that matches no write sent is read as "resend all" (puts are idempotent)', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, inputs } = scripted([unprocessed(0, request('zz', 9)), ok()]);
    const outcome = await writeBatch([a, b], ctx);
    expect(inputs).toEqual([callOf(request('a', 1), request('b', 2)), callOf(request('a', 1), request('b', 2))]);
    expect(outcome.written).toEqual([a, b]);
  });

  it('requests still unprocessed after --max-attempts sends are RETRIES_EXHAUSTED, with their key', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, inputs, sleeps } = scripted([unprocessed(1, request('b', 2)), unprocessed(0, request('b', 2)), unprocessed(0, request('b', 2))], {
      maxAttempts: 3,
    });
    const outcome = await writeBatch([a, b], ctx);
    expect(inputs).toEqual([callOf(request('a', 1), request('b', 2)), callOf(request('b', 2)), callOf(request('b', 2))]);
    expect(outcome.written).toEqual([a]);
    expect(outcome.rejected).toEqual([
      {
        origin: b.origin,
        code: 'RETRIES_EXHAUSTED',
        message: 'not stored after 3 attempts (last: UnprocessedItems); retry later or raise --max-attempts',
        key: { pk: 'b' },
      },
    ]);
    expect(outcome).toMatchObject({ throttledItems: 3, retries: 2 });
    expect(sleeps).toEqual([25, 50]);
  });
});

describe('writeBatch: retryable errors', () => {
  it('a throttled call is sent again, whole and unchanged, after a growing backoff', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const throttled = () => awsError('ProvisionedThroughputExceededException', 400);
    const { ctx, inputs, sleeps, retries } = scripted([throttled(), awsError('ThrottlingException', 400), ok(2)]);
    const outcome = await writeBatch([a, b], ctx);
    const call = callOf(request('a', 1), request('b', 2));
    expect(inputs).toEqual([call, call, call]);
    // Counted by kind: neither answer gave ThrottlingReasons, so each under its exception's name.
    expect(outcome).toEqual({
      written: [a, b],
      rejected: [],
      consumedWcu: 2,
      throttledItems: 4,
      throttles: { ProvisionedThroughputExceededException: 1, ThrottlingException: 1 },
      retries: 2,
      revived: 0,
    });
    expect(sleeps).toEqual([25, 50]);
    expect(retries.map((r) => r.reason)).toEqual(['ProvisionedThroughputExceededException', 'ThrottlingException']);
  });

  it('a server error and a network reset are retried, not counted as throttling, and named by the error', async () => {
    const network = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const { ctx, inputs, retries } = scripted([awsError('InternalServerError', 500), network, ok()]);
    const outcome = await writeBatch([put('a', 1)], ctx);
    expect(inputs).toHaveLength(3);
    expect(outcome).toMatchObject({ throttledItems: 0, retries: 2, rejected: [] });
    expect(retries.map((r) => r.reason)).toEqual(['HTTP 500 InternalServerError', 'ECONNRESET']);
  });

  it('after --max-attempts throttled calls every write of the call is RETRIES_EXHAUSTED, naming the last error', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, inputs, sleeps } = scripted([awsError('ThrottlingException', 400), awsError('ThrottlingException', 400)], { maxAttempts: 2 });
    const outcome = await writeBatch([a, b], ctx);
    expect(inputs).toHaveLength(2);
    const message = 'not stored after 2 attempts (last: ThrottlingException); retry later or raise --max-attempts';
    expect(outcome.rejected).toEqual([
      { origin: a.origin, code: 'RETRIES_EXHAUSTED', message, key: { pk: 'a' } },
      { origin: b.origin, code: 'RETRIES_EXHAUSTED', message, key: { pk: 'b' } },
    ]);
    expect(outcome.written).toEqual([]);
    expect(sleeps).toEqual([25]);
  });

  it('the backoff is capped: random 1 and a 60 ms cap give 50, 60, 60', async () => {
    const { ctx, sleeps } = scripted([awsError('ThrottlingException', 400), awsError('ThrottlingException', 400), awsError('ThrottlingException', 400), ok()], {
      random: () => 1,
      backoff: { baseMs: 50, capMs: 60 },
    });
    await writeBatch([put('a', 1)], ctx);
    expect(sleeps).toEqual([50, 60, 60]);
  });
});

describe('writeBatch: halving on ValidationException', () => {
  it('a call too large for DynamoDB is halved until the halves are accepted; halving spends no attempt', async () => {
    const writes = ['a', 'b', 'c', 'd', 'e'].map((pk, i) => put(pk, i + 1));
    const tooLarge = (input: BatchWriteItemCommandInput) =>
      size(input) > 2 ? awsError('ValidationException', 400, 'Item size has exceeded the maximum allowed size') : ok(size(input));
    // maxAttempts 1: any attempt spent on halving would leave the halves nothing to send with.
    const { ctx, inputs, sleeps } = scripted(Array(5).fill(tooLarge), { maxAttempts: 1 });
    const outcome = await writeBatch(writes, ctx);
    expect(inputs.map(pks)).toEqual([['a', 'b', 'c', 'd', 'e'], ['a', 'b', 'c'], ['a', 'b'], ['c'], ['d', 'e']]);
    expect(inputs[3]).toEqual(callOf(request('c', 3)));
    expect(outcome).toEqual({ written: writes, rejected: [], consumedWcu: 5, throttledItems: 0, retries: 0, revived: 0 });
    expect(sleeps).toEqual([]);
  });

  it('the one row DynamoDB refuses is found by halving and rejected with the service message; the rest are written', async () => {
    const writes = ['a', 'b', 'bad', 'd'].map((pk, i) => put(pk, i + 1));
    const refuseBad = (input: BatchWriteItemCommandInput) =>
      pks(input).includes('bad') ? awsError('ValidationException', 400, 'One or more parameter values were invalid: Type mismatch for key') : ok(size(input));
    const { ctx, inputs } = scripted(Array(5).fill(refuseBad));
    const outcome = await writeBatch(writes, ctx);
    expect(inputs.map(pks)).toEqual([['a', 'b', 'bad', 'd'], ['a', 'b'], ['bad', 'd'], ['bad'], ['d']]);
    expect(outcome.written).toEqual([writes[0], writes[1], writes[3]]);
    expect(outcome.rejected).toEqual([
      {
        origin: writes[2]!.origin,
        code: 'WRITE_REJECTED',
        message: 'DynamoDB rejected the item: ValidationException: One or more parameter values were invalid: Type mismatch for key',
        key: { pk: 'bad' },
      },
    ]);
    expect(outcome.retries).toBe(0);
  });
});

describe('writeBatch: fatal errors', () => {
  it('a missing table stops at once: TABLE_NOT_FOUND naming table and endpoint, no retry, nothing written or rejected', async () => {
    const { ctx, inputs, sleeps } = scripted([awsError('ResourceNotFoundException', 400, 'Requested resource not found')]);
    const outcome = await writeBatch([put('a', 1), put('b', 2)], ctx);
    expect(inputs).toHaveLength(1);
    expect(outcome.fatal).toBeInstanceOf(LoaderError);
    expect(outcome.fatal?.code).toBe('TABLE_NOT_FOUND');
    expect(outcome.fatal?.message).toBe('table "Orders" was not found in endpoint http://localhost:8000; check --table and --region (or --endpoint-url)');
    expect(outcome).toMatchObject({ written: [], rejected: [], retries: 0 });
    expect(sleeps).toEqual([]);
  });

  it('access denied after a retry: ACCESS_DENIED; the rows of the failed call are in neither list', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, inputs } = scripted([unprocessed(1, request('b', 2)), awsError('AccessDeniedException', 400, 'User is not authorized')]);
    const outcome = await writeBatch([a, b], ctx);
    expect(inputs).toEqual([callOf(request('a', 1), request('b', 2)), callOf(request('b', 2))]);
    expect(outcome.fatal?.code).toBe('ACCESS_DENIED');
    expect(outcome.written).toEqual([a]);
    expect(outcome.rejected).toEqual([]);
  });

  it('a fatal error in the first half of a halved call leaves the second half unsent', async () => {
    const { ctx, inputs } = scripted([awsError('ValidationException', 400), awsError('ResourceNotFoundException', 400)]);
    const outcome = await writeBatch([put('a', 1), put('b', 2), put('c', 3)], ctx);
    expect(inputs.map(pks)).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b'],
    ]);
    expect(outcome.fatal?.code).toBe('TABLE_NOT_FOUND');
    expect(outcome).toMatchObject({ written: [], rejected: [] });
  });
});

describe('writeBatch: the pacer', () => {
  it('waits before every send and learns from every answer: stored, throttled and units', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, log, reports } = scripted([unprocessed(1, request('b', 2)), ok(1)]);
    await writeBatch([a, b], ctx);
    expect(log).toEqual(['before a,b', 'send a,b', 'after 1 stored, 1 throttled', 'before b', 'send b', 'after 1 stored, 0 throttled']);
    expect(reports).toEqual([
      { sent: [a, b], stored: [a], throttled: [b], consumedUnits: 1, throttleReasons: [] },
      { sent: [b], stored: [b], throttled: [], consumedUnits: 1, throttleReasons: [] },
    ]);
  });

  it('a throttling error is reported with its ThrottlingReasons and no units; a server error throttles nothing', async () => {
    const a = put('a', 1);
    const throttled = awsError('ThrottlingException', 400, 'Throughput exceeds the current capacity', {
      ThrottlingReasons: [{ reason: 'TableWriteKeyRangeThroughputExceeded', resource: 'arn:aws:dynamodb:us-east-1:1:table/Orders' }],
    });
    const { ctx, reports } = scripted([throttled, awsError('InternalServerError', 500), ok()]);
    await writeBatch([a], ctx);
    expect(reports).toEqual([
      { sent: [a], stored: [], throttled: [a], consumedUnits: undefined, throttleReasons: ['TableWriteKeyRangeThroughputExceeded'] },
      { sent: [a], stored: [], throttled: [], consumedUnits: undefined, throttleReasons: [] },
      { sent: [a], stored: [a], throttled: [], consumedUnits: undefined, throttleReasons: [] },
    ]);
  });

  it('each half of a halved call waits for the pacer; refused and fatal calls teach it nothing', async () => {
    const { ctx, log } = scripted([awsError('ValidationException', 400), ok(1), awsError('ResourceNotFoundException', 400)]);
    await writeBatch([put('a', 1), put('b', 2)], ctx);
    expect(log).toEqual(['before a,b', 'send a,b', 'before a', 'send a', 'after 1 stored, 0 throttled', 'before b', 'send b']);
  });
});
