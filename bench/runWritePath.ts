/**
 * The write path alone (the client's cost per item): 200k synthetic flights-like rows go through the built library's
 * batcher, Dispatcher, pacer and dynamoSink with a createClient client (`ours`), or through the hand
 * loop's BatchWriteCommand with 8 calls in flight (`loop`), into an endpoint such as bench/instantSink.ts.
 * No reading or typing: what is left is the CPU of everything after a row is planned. The rows are in key
 * order, so --key-wcu is lifted (a stripes load interleaves many keys). Prints one JSON line.
 *   npx tsx bench/instantSink.ts 8123 &
 *   node --import tsx bench/runWritePath.ts --endpoint http://127.0.0.1:8123 --mode ours|loop [--rows N]
 * Run two builds side by side (a copy of dist/ each) on a busy machine: both see the same contention.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { parseArgs } from 'node:util';
import { createBatcher, type Batch } from '../dist/batching/batch.js';
import { Dispatcher } from '../dist/load/dispatcher.js';
import { LoadStop } from '../dist/load/loadStop.js';
import { LoadTally } from '../dist/load/loadTally.js';
import type { Rejections } from '../dist/load/rejections.js';
import { InFlightLimit } from '../dist/pacing/inFlight.js';
import { RateController } from '../dist/pacing/rateControl.js';
import { RatePacer } from '../dist/pacing/ratePacer.js';
import type { KeySchema, PlannedWrite } from '../dist/shared/types.js';
import { DEFAULT_BACKOFF } from '../dist/aws/backoff.js';
import { dynamoSink } from '../dist/writing/batchSink.js';
import { createClient } from '../dist/aws/client.js';

const { values } = parseArgs({
  options: { endpoint: { type: 'string' }, mode: { type: 'string', default: 'ours' }, rows: { type: 'string', default: '200000' } },
});
const endpoint = values.endpoint ?? '';
const rows = Number(values.rows);
process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';

const PAYLOAD = 'medium exchange delayed tracking weather holiday express small medium parcel delayed economy order promo door medium handle fragile';
const items = Array.from({ length: rows }, (_, i) => ({
  pk: `ORIGIN#${String(Math.floor(i / 877)).padStart(3, '0')}`,
  sk: `ORDER#${String(i).padStart(7, '0')}`,
  status: 'SHIPPED',
  amount: 451.99,
  qty: 17,
  payload: PAYLOAD,
}));

const before = process.cpuUsage();
const t0 = performance.now();
const written = values.mode === 'loop' ? await viaLoop() : await viaDispatcher();
const cpu = process.cpuUsage(before);
process.stdout.write(`${JSON.stringify({ mode: values.mode, written, cpuS: (cpu.user + cpu.system) / 1e6, seconds: (performance.now() - t0) / 1000 })}\n`);

async function viaLoop(): Promise<number> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      requestHandler: { httpAgent: { keepAlive: true, maxSockets: 50 } },
    }),
  );
  type Put = { PutRequest: { Item: Record<string, unknown> } };
  let count = 0;
  const writeChunk = async (requests: Put[]) => {
    let pending = requests;
    while (pending.length > 0) {
      const out = await client.send(new BatchWriteCommand({ RequestItems: { bench: pending }, ReturnConsumedCapacity: 'INDEXES' }));
      const left = (out.UnprocessedItems?.['bench'] ?? []) as Put[];
      count += pending.length - left.length;
      pending = left;
    }
  };
  const inFlight = new Set<Promise<void>>();
  let chunk: Put[] = [];
  for (const item of items) {
    chunk.push({ PutRequest: { Item: item } });
    if (chunk.length < 25) continue;
    while (inFlight.size >= 8) await Promise.race(inFlight);
    const p: Promise<void> = writeChunk(chunk).finally(() => inFlight.delete(p));
    inFlight.add(p);
    chunk = [];
  }
  await Promise.all(inFlight);
  client.destroy();
  return count;
}

async function viaDispatcher(): Promise<number> {
  const client = createClient({ region: 'us-east-1', endpoint, requestTimeoutMs: 30_000, maxSockets: 128 });
  const now = () => performance.now();
  const keySchema: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } };
  const inFlight = new InFlightLimit({ start: 8 });
  const pacer = new RatePacer({ controller: new RateController({ targetWcu: Infinity, keyWcu: 1e9 }, now()), costOf: (w) => w.wcu, now });
  const sink = dynamoSink({ client, table: 'bench', keySchema, maxAttempts: 15, backoff: DEFAULT_BACKOFF, random: Math.random, pacer }, inFlight, now);
  const tally = new LoadTally();
  const dispatcher = new Dispatcher({
    concurrency: 8,
    inFlight,
    now,
    sink,
    keySchema,
    costOf: (w) => w.wcu,
    countKeys: true,
    tally,
    rejections: { reject: () => Promise.resolve() } as unknown as Rejections,
    stop: new LoadStop(),
    progress: () => undefined,
    checkpoint: undefined,
    resumeFrom: 0,
    manifest: undefined,
  });
  const batcher = createBatcher();
  const send = async (batch: Batch | undefined) => {
    if (batch) await dispatcher.dispatch(batch);
  };
  let line = 1;
  for (const item of items) {
    const write: PlannedWrite = {
      origin: { file: 'bench.csv', line: line++, raw: '' },
      item,
      keyId: `S${item.pk}\u0000S${item.sk}`,
      partitionId: `S${item.pk}`,
      size: 300,
      wcu: 1,
    };
    tally.rowRead();
    await send(batcher.push(write).full);
  }
  await send(batcher.flush());
  await dispatcher.finish();
  client.destroy();
  return tally.counters.written;
}
