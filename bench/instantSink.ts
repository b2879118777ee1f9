/**
 * An instant sink: a local HTTP endpoint that speaks just enough of DynamoDB's JSON protocol
 * for a load and answers every BatchWriteItem at once, with UnprocessedItems {} (and ConsumedCapacity when
 * the call asks for it). That is what a table far from its capacity looks like to the client: the
 * server's time drops out, and items/s measure the client's own cost per item.
 *
 * - BatchWriteItem: counts the PutRequests and DeleteRequests in the body (a byte search, no JSON parse,
 *   so the sink spends little of the machine's CPU) and answers `{"UnprocessedItems":{}}`; with ReturnConsumedCapacity TOTAL
 *   or INDEXES, one write unit per request (the bench's rows are all under 1 KB).
 * - PutItem and DeleteItem (a conditional load's calls): stored, one write unit each.
 * - DescribeTable: an ACTIVE on-demand table with the bench's key schema (pk S HASH, sk S RANGE), no
 *   indexes and, as DynamoDB Local, no WarmThroughput: nothing for ddb-spread's pacing to aim below.
 * - Anything else: 400 UnknownOperationException.
 *
 * Nothing is stored and requests are not authenticated: use it for benches only.
 *
 *   npx tsx bench/instantSink.ts [port]     # by hand: prints the endpoint, runs until Ctrl-C
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface InstantSinkStats {
  batchCalls: number;
  /** PutRequests received, summed over calls. */
  items: number;
  /** DeleteRequests received, summed over calls (an incremental export's deletes). */
  deletes: number;
  describeCalls: number;
  bytesIn: number;
}

export interface InstantSink {
  endpoint: string;
  stats: InstantSinkStats;
  close(): Promise<void>;
}

const TARGET_PREFIX = 'DynamoDB_20120810.';
const PUT = Buffer.from('{"PutRequest":');
const DELETE = Buffer.from('{"DeleteRequest":');
const TABLE_RE = /^\{"RequestItems":\{("(?:[^"\\]|\\.)*"):/;

export async function startInstantSink(port = 0): Promise<InstantSink> {
  const stats: InstantSinkStats = { batchCalls: 0, items: 0, deletes: 0, describeCalls: 0, bytesIn: 0 };
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), stats));
  });
  await new Promise<void>((resolveListen) => server.listen(port, '127.0.0.1', resolveListen));
  const { port: bound } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    stats,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

function answer(req: IncomingMessage, res: ServerResponse, body: Buffer, stats: InstantSinkStats): void {
  stats.bytesIn += body.length;
  const target = String(req.headers['x-amz-target'] ?? '');
  const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : target;
  if (operation === 'BatchWriteItem') {
    stats.batchCalls++;
    let items = 0;
    for (let at = body.indexOf(PUT); at !== -1; at = body.indexOf(PUT, at + PUT.length)) items++;
    stats.items += items;
    let deletes = 0;
    for (let at = body.indexOf(DELETE); at !== -1; at = body.indexOf(DELETE, at + DELETE.length)) deletes++;
    stats.deletes += deletes;
    // A delete costs a write unit as a put does.
    send(res, 200, batchAnswer(body, items + deletes));
    return;
  }
  if (operation === 'PutItem' || operation === 'DeleteItem') {
    // A conditional write (--if-not-exists, --if-newer): its condition holds, as on an empty table.
    stats.items++;
    send(res, 200, '{"ConsumedCapacity":{"TableName":"sink","CapacityUnits":1,"Table":{"CapacityUnits":1}}}');
    return;
  }
  if (operation === 'DescribeTable') {
    stats.describeCalls++;
    const { TableName } = JSON.parse(body.toString('utf8')) as { TableName: string };
    send(res, 200, JSON.stringify({ Table: tableDescription(TableName) }));
    return;
  }
  send(res, 400, JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#UnknownOperationException', message: `instant sink: ${operation} is not served` }));
}

/** UnprocessedItems {}, and ConsumedCapacity as DynamoDB shapes it for TOTAL and for INDEXES. */
function batchAnswer(body: Buffer, items: number): string {
  // The SDK writes ReturnConsumedCapacity after RequestItems, so it ends the body when present.
  const tail = body.subarray(Math.max(0, body.length - 40)).toString('latin1');
  const mode = /"ReturnConsumedCapacity":"(TOTAL|INDEXES)"\}$/.exec(tail)?.[1];
  if (mode === undefined) return '{"UnprocessedItems":{}}';
  const head = body.subarray(0, 400).toString('utf8');
  const table = TABLE_RE.exec(head)?.[1] ?? '"unknown"';
  const units = `"CapacityUnits":${items}`;
  const consumed = mode === 'INDEXES' ? `{"TableName":${table},${units},"Table":{${units}}}` : `{"TableName":${table},${units}}`;
  return `{"UnprocessedItems":{},"ConsumedCapacity":[${consumed}]}`;
}

function tableDescription(name: string): Record<string, unknown> {
  return {
    TableName: name,
    TableStatus: 'ACTIVE',
    TableArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${name}`,
    CreationDateTime: 1_700_000_000,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
    ProvisionedThroughput: { ReadCapacityUnits: 0, WriteCapacityUnits: 0, NumberOfDecreasesToday: 0 },
    ItemCount: 0,
    TableSizeBytes: 0,
  };
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': 'instant-sink',
  });
  res.end(text);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sink = await startInstantSink(Number(process.argv[2] ?? 0));
  process.stdout.write(`instant sink on ${sink.endpoint}\n`);
  process.once('SIGINT', () => void sink.close().then(() => process.stdout.write(`${JSON.stringify(sink.stats)}\n`)));
}
