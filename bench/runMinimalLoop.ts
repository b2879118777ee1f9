/**
 * Bench child: the minimal hand-written loader ddb-spread is measured against. csv-parse with
 * columns:true, plain objects (amount/qty via Number()), chunks of 25, BatchWriteCommand with at most N
 * calls in flight, UnprocessedItems resent at once. No validation, no size computation, no reject file.
 * With --rcc it asks for ReturnConsumedCapacity=INDEXES on every call (ddb-spread: on its first 64 calls and
 * one in 16 after): DynamoDB Local spends markedly more CPU on such calls, and on 2 cores Local's CPU is
 * what bounds items/s. Against the instant sink (bench/instantSink.ts) the loop always asks for it, as
 * the sink bench's hand loop does.
 *   node --import tsx bench/runMinimalLoop.ts --input f.csv --table t --endpoint http://... --concurrency 8
 * bench.ts runs a plain-JS transpile of this file (no tsx loader in the measured process); by hand,
 * `node --import tsx` works too (its loader thread adds ~28 MB RSS).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { parse } from 'csv-parse';
import { createReadStream } from 'node:fs';
import { childArgs, startMeasuring } from './childStats.js';

const args = childArgs();
const done = startMeasuring();

// Same socket budget as ddb-spread gives itself, so the comparison is about the client code alone.
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint: args.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: { httpAgent: { keepAlive: true, maxSockets: Math.max(50, args.concurrency * 2) } },
  }),
);

type Row = Record<string, string>;
type Put = { PutRequest: { Item: Record<string, unknown> } };

let written = 0;
let calls = 0;

async function writeChunk(requests: Put[]): Promise<void> {
  let pending: Put[] = requests;
  while (pending.length > 0) {
    calls++;
    const out = await client.send(
      new BatchWriteCommand({ RequestItems: { [args.table]: pending }, ...(args.rcc ? { ReturnConsumedCapacity: 'INDEXES' as const } : {}) }),
    );
    const left = (out.UnprocessedItems?.[args.table] ?? []) as Put[];
    written += pending.length - left.length;
    pending = left;
  }
}

const inFlight = new Set<Promise<void>>();
const submit = async (chunk: Put[]) => {
  while (inFlight.size >= args.concurrency) await Promise.race(inFlight);
  const p: Promise<void> = writeChunk(chunk).finally(() => inFlight.delete(p));
  inFlight.add(p);
};

const parser = createReadStream(args.input).pipe(parse({ columns: true }));
let chunk: Put[] = [];
for await (const row of parser as AsyncIterable<Row>) {
  chunk.push({
    PutRequest: {
      Item: { ...row, amount: Number(row['amount']), qty: Number(row['qty']) },
    },
  });
  if (chunk.length === 25) {
    await submit(chunk);
    chunk = [];
  }
}
if (chunk.length > 0) await submit(chunk);
await Promise.all(inFlight);
client.destroy();
done(written, { calls });
