/**
 * DeleteRequest in writeBatch: a delete goes out as a DeleteRequest of its key, next to puts of
 * other keys, and an unprocessed DeleteRequest is matched back to its write and sent again.
 */
import { BatchWriteItemCommand, type BatchWriteItemCommandInput, type BatchWriteItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/aws/backoff.js';
import { keyIdsOf } from '../../../src/typing/key.js';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import { writeBatch, type WriterContext } from '../../../src/writing/writeBatch.js';
import { sentInputOf } from '../../../src/writing/preSerialized.js';

const TABLE = 'Orders';
const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };

function write(pk: string, line: number, op?: 'delete'): PlannedWrite {
  const item = op ? { pk } : { pk, v: 'x' };
  return { origin: { file: 'in.csv', line, raw: '' }, item, ...keyIdsOf(item, SCHEMA), size: 5, wcu: 1, ...(op ? { op } : {}) };
}

function scripted(answers: Partial<BatchWriteItemCommandOutput>[]) {
  const inputs: BatchWriteItemCommandInput[] = [];
  const client = {
    send(command: unknown) {
      expect(command).toBeInstanceOf(BatchWriteItemCommand);
      // The body actually sent (the writer pre-serializes it; command.input holds an empty list).
      inputs.push(sentInputOf(command as BatchWriteItemCommand));
      const next = answers.shift();
      if (!next) throw new Error('no answer left');
      return Promise.resolve(next);
    },
  };
  const ctx: WriterContext = {
    client: client as unknown as DynamoDBDocumentClient,
    table: TABLE,
    keySchema: SCHEMA,
    endpoint: undefined,
    maxAttempts: 4,
    backoff: DEFAULT_BACKOFF,
    random: () => 0.5,
    sleep: () => Promise.resolve(),
  } as WriterContext;
  return { ctx, inputs };
}

describe('writeBatch: deletes', () => {
  it('sends a DeleteRequest of the key; an unprocessed one is matched and sent again alone', async () => {
    const [a, b] = [write('a', 1), write('b', 2, 'delete')];
    const { ctx, inputs } = scripted([{ UnprocessedItems: { [TABLE]: [{ DeleteRequest: { Key: { pk: { S: 'b' } } } }] } }, { UnprocessedItems: {} }]);
    const outcome = await writeBatch([a, b], ctx);
    expect(inputs[0]!.RequestItems![TABLE]).toEqual([
      { PutRequest: { Item: { pk: { S: 'a' }, v: { S: 'x' } } } },
      { DeleteRequest: { Key: { pk: { S: 'b' } } } },
    ]);
    expect(inputs[1]!.RequestItems![TABLE]).toEqual([{ DeleteRequest: { Key: { pk: { S: 'b' } } } }]);
    expect(outcome.written).toEqual([a, b]);
    expect(outcome.rejected).toEqual([]);
  });
});
