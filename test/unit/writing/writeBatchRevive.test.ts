/**
 * A row superseded by a later row with the same primary key is written in its place when
 * DynamoDB refuses that later row, as writing the rows one by one in input order would leave the table.
 * A fake `send` stands in for DynamoDB: it refuses items by content, as a ValidationException or an
 * endless InternalServerError.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createBatcher } from '../../../src/batching/batch.js';
import { DEFAULT_BACKOFF } from '../../../src/aws/backoff.js';
import type { AttributeValue, BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { sentInputOf } from '../../../src/writing/preSerialized.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import { writeBatch, type WriterContext } from '../../../src/writing/writeBatch.js';

let line = 0;
function write(pk: string, status: string): PlannedWrite {
  line++;
  return { origin: { file: 'in.jsonl', line, raw: `${pk},${status}` }, item: { pk, status }, keyId: `S${pk}`, partitionId: `S${pk}`, size: 20, wcu: 1 };
}

type Refusal = 'validation' | 'internal' | 'throttled';

/** A DynamoDB that stores what it is sent, refusing any call holding an item whose status is in `refuse`. */
function fakeDynamo(refuse: Record<string, Refusal>) {
  const table = new Map<string, { pk: string; status: string }>();
  const calls: unknown[][] = [];
  const client = {
    async send(command: BatchWriteItemCommand) {
      const input = sentInputOf(command) as { RequestItems: Record<string, Array<{ PutRequest: { Item: Record<string, AttributeValue> } }>> };
      const items = Object.values(input.RequestItems)
        .flat()
        .map((r) => ({ pk: r.PutRequest.Item['pk']!.S!, status: r.PutRequest.Item['status']!.S! }));
      calls.push(items);
      for (const item of items) {
        const refusal = refuse[item.status];
        if (refusal === 'validation')
          throw Object.assign(new Error('One or more parameter values were invalid: Type mismatch for Index Key status'), {
            name: 'ValidationException',
            $metadata: { httpStatusCode: 400 },
          });
        if (refusal === 'throttled')
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
            name: 'ThrottlingException',
            $metadata: { httpStatusCode: 400 },
          });
        if (refusal === 'internal')
          throw Object.assign(new Error('Internal server error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
      }
      for (const item of items) table.set(item.pk, item);
      return { UnprocessedItems: {}, ConsumedCapacity: [] };
    },
  };
  const ctx: WriterContext = {
    client: client as unknown as DynamoDBDocumentClient,
    table: 'T',
    keySchema: { partitionKey: { name: 'pk', type: 'S' } },
    maxAttempts: 3,
    backoff: DEFAULT_BACKOFF,
    random: () => 0,
    sleep: async () => undefined,
  };
  return { table, calls, ctx };
}

/** Runs rows through the batcher (one batch), as load() does, and returns the batch. */
function batchOf(rows: PlannedWrite[]): { writes: PlannedWrite[]; superseded: number } {
  const batcher = createBatcher();
  let superseded = 0;
  for (const row of rows) if (batcher.push(row).superseded) superseded++;
  return { writes: batcher.flush()!.writes, superseded };
}

describe('a superseded row revived when its successor is refused', () => {
  it('the batcher keeps the superseded write as the predecessor of the one that replaced it', () => {
    const first = write('a', 'shipped');
    const second = write('a', '404');
    const { writes } = batchOf([first, second]);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.origin.line).toBe(second.origin.line);
    expect(writes[0]!.predecessor).toBe(first);
  });

  it('ValidationException on the survivor: the predecessor is written, the survivor rejected', async () => {
    const { table, ctx } = fakeDynamo({ '404': 'validation' });
    const first = write('a', 'shipped');
    const refused = write('a', '404');
    const other = write('b', 'new');
    const { writes, superseded } = batchOf([first, other, refused]);
    expect(superseded).toBe(1);
    const outcome = await writeBatch(writes, ctx);
    expect(table.get('a')).toEqual({ pk: 'a', status: 'shipped' });
    expect(table.get('b')).toEqual({ pk: 'b', status: 'new' });
    expect(outcome.rejected.map((r) => [r.origin.line, r.code])).toEqual([[refused.origin.line, 'WRITE_REJECTED']]);
    expect(outcome.rejected[0]!.message).toContain(`line ${first.origin.line}`);
    expect(outcome.written.map((w) => w.origin.line).sort()).toEqual([first.origin.line, other.origin.line].sort());
    expect(outcome.revived).toBe(1);
  });

  it('a chain: each refused row hands over to the one it superseded, down to one that is stored', async () => {
    const { table, ctx } = fakeDynamo({ bad1: 'validation', bad2: 'validation' });
    const a = write('k', 'good');
    const b = write('k', 'bad1');
    const c = write('k', 'bad2');
    const outcome = await writeBatch(batchOf([a, b, c]).writes, ctx);
    expect(table.get('k')).toEqual({ pk: 'k', status: 'good' });
    expect(outcome.rejected.map((r) => r.origin.line)).toEqual([c.origin.line, b.origin.line]);
    expect(outcome.written.map((w) => w.origin.line)).toEqual([a.origin.line]);
    expect(outcome.revived).toBe(2);
  });

  it('only the nearest predecessor that is stored is revived; older ones stay superseded', async () => {
    const { table, ctx } = fakeDynamo({ bad: 'validation' });
    const a = write('k', 'old');
    const b = write('k', 'newer');
    const c = write('k', 'bad');
    const outcome = await writeBatch(batchOf([a, b, c]).writes, ctx);
    expect(table.get('k')).toEqual({ pk: 'k', status: 'newer' });
    expect(outcome.written.map((w) => w.origin.line)).toEqual([b.origin.line]);
    expect(outcome.revived).toBe(1);
  });

  it('RETRIES_EXHAUSTED on the survivor: the predecessor is sent in its place, with its own attempts', async () => {
    const { table, ctx, calls } = fakeDynamo({ flaky: 'throttled' });
    const first = write('a', 'shipped');
    const refused = write('a', 'flaky');
    const outcome = await writeBatch(batchOf([first, refused]).writes, ctx);
    expect(outcome.rejected.map((r) => [r.origin.line, r.code])).toEqual([[refused.origin.line, 'RETRIES_EXHAUSTED']]);
    expect(table.get('a')).toEqual({ pk: 'a', status: 'shipped' });
    expect(outcome.revived).toBe(1);
    expect(calls).toHaveLength(4);
  });

  it('a refused row without a predecessor is only rejected', async () => {
    const { table, ctx } = fakeDynamo({ '404': 'validation' });
    const outcome = await writeBatch(batchOf([write('a', '404')]).writes, ctx);
    expect(table.size).toBe(0);
    expect(outcome.rejected).toHaveLength(1);
    expect(outcome.revived).toBe(0);
  });
});
