/**
 * writeConditional (a conditional load's sink), against a fake `send` that answers each PutItem/DeleteItem by its key: the calls
 * sent (one a row, with its condition), a false condition counted apart and never resent, throttles resent after
 * a backoff, a validation error rejected, and a resumed load's own landed write told from another's.
 */
import { DeleteItemCommand, PutItemCommand, type PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/aws/backoff.js';
import { keyIdsOf } from '../../../src/typing/key.js';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import type { SendReport } from '../../../src/pacing/sendPacer.js';
import type { WriterContext } from '../../../src/writing/writeBatch.js';
import { writeConditional } from '../../../src/writing/conditionalWrite.js';

const TABLE = 'Orders';
const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };

function put(pk: string, n: number, op?: 'delete'): PlannedWrite {
  const item = op ? { pk } : { pk, n: String(n) };
  return { origin: { file: 'in.csv', line: n, raw: pk }, item, ...keyIdsOf(item, SCHEMA), size: 10, wcu: 1, ...(op ? { op } : {}) };
}

function awsError(name: string, httpStatusCode: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} message`), { name, $metadata: { httpStatusCode }, ...extra });
}

type Answer = { ConsumedCapacity?: { CapacityUnits: number } } | Error;

/** A client answering each key's calls from its own script. */
function scripted(scripts: Record<string, Answer[]>, options: Partial<WriterContext> = {}) {
  const calls: Array<{ kind: string; input: PutItemCommandInput }> = [];
  const reports: SendReport[] = [];
  const client = {
    async send(command: unknown): Promise<unknown> {
      const kind = command instanceof PutItemCommand ? 'put' : command instanceof DeleteItemCommand ? 'delete' : 'other';
      const input = (command as PutItemCommand).input;
      calls.push({ kind, input });
      const pk = (input.Item ?? (input as unknown as { Key: PutItemCommandInput['Item'] }).Key)!['pk']!.S!;
      const next = scripts[pk]!.shift();
      if (next === undefined) throw new Error(`no answer for ${pk}`);
      if (next instanceof Error) throw next;
      return next;
    },
  };
  const ctx: WriterContext = {
    client: client as unknown as DynamoDBDocumentClient,
    table: TABLE,
    keySchema: SCHEMA,
    maxAttempts: 3,
    backoff: DEFAULT_BACKOFF,
    random: () => 0.5,
    sleep: async () => {},
    pacer: { beforeSend: () => undefined, afterSend: (r) => reports.push(r) },
    condition: { kind: 'ifNotExists' },
    ...options,
  };
  return { ctx, calls, reports };
}

describe('writeConditional', () => {
  it('one PutItem (DeleteItem) a row with its condition; a false condition is conditionFailed, not resent, its units counted', async () => {
    const [a, b, c] = [put('a', 1), put('b', 2), put('c', 3, 'delete')];
    const { ctx, calls, reports } = scripted({
      a: [{ ConsumedCapacity: { CapacityUnits: 2 } }],
      b: [awsError('ConditionalCheckFailedException', 400)],
      c: [{ ConsumedCapacity: { CapacityUnits: 1 } }],
    });
    const outcome = await writeConditional([a, b, c], ctx, ctx.condition!);
    expect(outcome.written).toEqual([a, c]);
    expect(outcome.conditionFailed).toEqual([b]);
    expect(outcome.rejected).toEqual([]);
    expect(outcome.retries).toBe(0);
    expect(outcome.consumedWcu).toBe(2 + 1 + 1);
    expect(calls.map((x) => x.kind)).toEqual(['put', 'put', 'delete']);
    expect(calls[0]!.input).toMatchObject({
      TableName: TABLE,
      Item: { pk: { S: 'a' }, n: { S: '1' } },
      ConditionExpression: 'attribute_not_exists(#k)',
      ExpressionAttributeNames: { '#k': 'pk' },
      ReturnConsumedCapacity: 'INDEXES',
    });
    expect(calls[0]!.input.ReturnValuesOnConditionCheckFailure).toBeUndefined();
    expect(reports).toHaveLength(3);
  });

  it('throttles and 5xx are resent after a backoff; a validation error rejects the row; attempts run out as RETRIES_EXHAUSTED', async () => {
    const [a, b, c] = [put('a', 1), put('b', 2), put('c', 3)];
    const { ctx, calls } = scripted({
      a: [awsError('ProvisionedThroughputExceededException', 400, { ThrottlingReasons: [{ reason: 'TableWriteKeyRangeThroughputExceeded' }] }), {}],
      b: [awsError('ValidationException', 400)],
      c: [awsError('ThrottlingException', 400), awsError('ThrottlingException', 400), awsError('ThrottlingException', 400)],
    });
    const outcome = await writeConditional([a, b, c], ctx, ctx.condition!);
    expect(outcome.written).toEqual([a]);
    expect(outcome.conditionFailed).toEqual([]);
    expect(outcome.rejected.map((r) => [r.origin.line, r.code])).toEqual([
      [2, 'WRITE_REJECTED'],
      [3, 'RETRIES_EXHAUSTED'],
    ]);
    expect(outcome.throttles).toEqual({ TableWriteKeyRangeThroughputExceeded: 1, ThrottlingException: 3 });
    expect(calls).toHaveLength(2 + 1 + 3);
  });

  it("a resumed load asks for the stored item of a false condition: the row's own landed write is written, another item conditionFailed", async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, calls } = scripted(
      {
        a: [awsError('ConditionalCheckFailedException', 400, { Item: { n: { S: '1' }, pk: { S: 'a' } } })],
        b: [awsError('ConditionalCheckFailedException', 400, { Item: { pk: { S: 'b' }, n: { S: 'theirs' } } })],
      },
      { ownEarlierWrites: () => true },
    );
    const outcome = await writeConditional([a, b], ctx, ctx.condition!);
    expect(calls[0]!.input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expect(outcome.written).toEqual([a]);
    expect(outcome.conditionFailed).toEqual([b]);
  });

  it('a resend after a 5xx (the first call may have landed) asks for the stored item too: its own write is written', async () => {
    const [a, b] = [put('a', 1), put('b', 2)];
    const { ctx, calls } = scripted({
      a: [awsError('InternalServerError', 500), awsError('ConditionalCheckFailedException', 400, { Item: { pk: { S: 'a' }, n: { S: '1' } } })],
      // A throttle is a refusal: nothing landed, the resend asks for nothing more.
      b: [awsError('ThrottlingException', 400), awsError('ConditionalCheckFailedException', 400)],
    });
    const outcome = await writeConditional([a, b], ctx, ctx.condition!);
    expect(calls.filter((c) => c.input.Item!['pk']!.S === 'a').map((c) => c.input.ReturnValuesOnConditionCheckFailure)).toEqual([undefined, 'ALL_OLD']);
    expect(calls.filter((c) => c.input.Item!['pk']!.S === 'b').map((c) => c.input.ReturnValuesOnConditionCheckFailure)).toEqual([undefined, undefined]);
    expect(outcome.written).toEqual([a]);
    expect(outcome.conditionFailed).toEqual([b]);
  });

  it("a delete's false condition with no item is its own delete only after its own call may have landed, not because the load resumed", async () => {
    const [c, d, e] = [put('c', 3, 'delete'), put('d', 4, 'delete'), put('e', 5, 'delete')];
    const { ctx, calls } = scripted(
      {
        // Never sent before: the key is absent, its condition (attribute_exists) false: not a delete of this load.
        c: [awsError('ConditionalCheckFailedException', 400)],
        // Its answer lost after a 500: the item it deleted is gone; the resend's false condition is its own delete.
        d: [awsError('InternalServerError', 500), awsError('ConditionalCheckFailedException', 400)],
        // Another writer's item is there: not this delete's effect.
        e: [awsError('InternalServerError', 500), awsError('ConditionalCheckFailedException', 400, { Item: { pk: { S: 'e' } } })],
      },
      { ownEarlierWrites: () => true, condition: { kind: 'expression', expression: 'attribute_exists(#p)', names: { '#p': 'pk' }, values: {} } },
    );
    const outcome = await writeConditional([c, d, e], ctx, ctx.condition!);
    expect(calls.every((call) => call.kind === 'delete' && call.input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD')).toBe(true);
    expect(outcome.written).toEqual([d]);
    expect(outcome.conditionFailed).toEqual([c, e]);
  });

  it('--if-newer: the condition carries the row value', async () => {
    const a = put('a', 1);
    const { ctx, calls } = scripted({ a: [{}] }, { condition: { kind: 'ifNewer', attribute: 'n' } });
    await writeConditional([a], ctx, ctx.condition!);
    expect(calls[0]!.input).toMatchObject({
      ConditionExpression: 'attribute_not_exists(#a) OR #a < :v',
      ExpressionAttributeNames: { '#a': 'n' },
      ExpressionAttributeValues: { ':v': { S: '1' } },
    });
  });
});
