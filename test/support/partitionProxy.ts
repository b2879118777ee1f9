/**
 * An HTTP proxy that puts the partition model (src/core/partitionModel.ts) in front of DynamoDB Local,
 * which never throttles: BatchWriteItem calls are admitted item by item against a model of the table's
 * partitions, the accepted requests are written, and the refused ones come back the way DynamoDB returns
 * them (UnprocessedItems, or ProvisionedThroughputExceededException with ThrottlingReasons when nothing
 * fits). On top, seeded random faults per call (500, 503, ThrottlingException, dropped socket, slow reply,
 * reply lost after the write). So rate control and retries can be tested against a real table.
 *
 * Global secondary indexes: when the proxy asks DynamoDB Local for the table's key (no
 * `partitionKeyName` option), it also reads the table's GSIs, and gives each index a partition model of
 * its own (same options as the table's: a GSI partition has the same ceiling). A put that lands in an
 * index is admitted by the index's model first, on the index's partition key with the index's write
 * units (src/pacing/writeCost.ts), then by the table's on its own units; a write an index refuses comes
 * back with the reason IndexWriteKeyRangeThroughputExceeded. A write an index accepted and the table then
 * refused has spent the index's capacity (DynamoDB's accounting of that case is not documented).
 *
 * Not modelled: everything that is not BatchWriteItem (PutItem, DescribeTable, Scan, ...) is forwarded
 * unchanged and spends no capacity; a delete costs 1 WCU (DynamoDB charges the deleted item's size); an
 * overwrite costs the new item's size (DynamoDB charges the larger of old and new); DynamoDB validates the
 * whole batch before throttling, while here a write the model refuses is never shown to Local, so a batch
 * that Local would reject can come back partly throttled instead; and capacity spent by a forwarded call
 * that Local then fails is not given back.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { itemSize, writeUnits } from '../../src/typing/itemSize.js';
import { parseDynamoNumber } from '../../src/typing/number.js';
import {
  PartitionModel,
  type ModelWrite,
  type PartitionModelOptions,
  type PartitionModelStats,
  type ThrottleScope,
} from '../../src/estimating/partitionModel.js';
import { mulberry32 } from '../../tools/mulberry32.js';
import { createKeyCostModel, parseIndexKeyId } from '../../src/pacing/writeCost.js';
import { tableInfoFromDescription, type TableInfo } from '../../src/shared/tableInfo.js';
import {
  BATCH_WRITE,
  TARGET_PREFIX,
  createForwarder,
  delay,
  dynamoErrors,
  errorBody,
  json,
  ownHeaders,
  reply,
  startProxyServer,
  type DynamoErrorShape,
  type UpstreamAnswer,
} from './httpForward.js';

/** Probabilities per BatchWriteItem call (0..1). internal + unavailable + throttling + drop + lostReply must be <= 1. */
export interface ProxyFaults {
  /** 500 InternalServerError, nothing written. */
  internal?: number;
  /** 503 ServiceUnavailableException, nothing written. */
  unavailable?: number;
  /** 400 ThrottlingException, nothing written. */
  throttling?: number;
  /** The socket is destroyed without an answer, nothing written. */
  drop?: number;
  /** The call is admitted and its accepted writes applied, then the socket is destroyed: the client sees an error for writes that happened. */
  lostReply?: number;
  /** Drawn independently of the above: whatever the answer, it is delayed by `ms`. */
  slow?: { rate: number; ms: number };
}

export type ProxyFaultKind = 'internal' | 'unavailable' | 'throttling' | 'drop' | 'lostReply' | 'slow';

export interface PartitionProxyOptions {
  /** The model of every table written through the proxy (one model per table name, created on its first call). */
  model: PartitionModelOptions;
  /** Monotonic milliseconds since the proxy started; inject one to make throttling deterministic. @default performance.now() relative to start */
  now?: () => number;
  /** Seed of the PRNG that picks faults. @default 1 */
  seed?: number;
  faults?: ProxyFaults;
  /** The partition key attribute of every table; without it the proxy asks DynamoDB Local (DescribeTable, once per table). */
  partitionKeyName?: string;
  /**
   * Draw `faults` for PutItem and DeleteItem calls too (a conditional load's), outside the partition model: each
   * is dropped, refused with an error, or forwarded (and, for lostReply, its answer lost). @default false
   */
  singleWriteFaults?: boolean;
}

export interface PartitionProxyStats {
  /** BatchWriteItem calls received. */
  calls: number;
  /** Other calls, forwarded unchanged. */
  otherCalls: number;
  /** Write requests the model accepted and DynamoDB Local wrote. */
  acceptedItems: number;
  /** Write requests the model refused (returned in UnprocessedItems or in an all-throttled error). */
  throttledItems: number;
  /** Calls answered ProvisionedThroughputExceededException because nothing in them was accepted. */
  throttledCalls: number;
  faults: Record<ProxyFaultKind, number>;
  /** The model's counters per table name, per-partition per-second WCU included. */
  tables: Record<string, PartitionModelStats>;
  /** The same per global secondary index, keyed "table/index". */
  indexes: Record<string, PartitionModelStats>;
}

export interface PartitionProxy {
  /** http://127.0.0.1:<port>, to use as the endpoint. */
  readonly url: string;
  stats(): PartitionProxyStats;
  /** The model of a table, once the table has had a BatchWriteItem call. */
  model(table: string): PartitionModel | undefined;
  /** The model of a table's GSI, once a write landed in it. */
  indexModel(table: string, index: string): PartitionModel | undefined;
  /** Replaces the fault rates (the PRNG carries on from where it was). */
  setFaults(faults: ProxyFaults): void;
  close(): Promise<void>;
}

type WireItem = Record<string, AttributeValue>;
interface WriteRequest {
  PutRequest?: { Item?: WireItem };
  DeleteRequest?: { Key?: WireItem };
}
interface BatchWriteBody {
  RequestItems?: Record<string, WriteRequest[]>;
  [member: string]: unknown;
}

/** What refused a write: the table's partition or table bucket, or an index's partition. */
type RefusalScope = ThrottleScope | 'index';

/** Why a write request was refused, as DynamoDB names it in ThrottlingReason.reason. */
const REASONS: Record<RefusalScope, string> = {
  partition: 'TableWriteKeyRangeThroughputExceeded',
  table: 'TableWriteProvisionedThroughputExceeded',
  index: 'IndexWriteKeyRangeThroughputExceeded',
};

/** One write request as the models see it: the table's key and units, and each index's. */
interface PlannedRequest extends ModelWrite {
  indexes: Array<{ index: string; key: string; wcu: number }>;
}

/** What the proxy knows of a table: its partition key and, when it asked Local, its GSIs. */
interface TableShape {
  keyName: string;
  info?: TableInfo;
}

const FAULT_ERRORS: Record<'internal' | 'unavailable' | 'throttling', DynamoErrorShape> = {
  internal: dynamoErrors.internal,
  unavailable: dynamoErrors.unavailable,
  throttling: dynamoErrors.throttling,
};

/** A call the proxy cannot plan (no key, unknown table): it is forwarded as is, for Local to answer. */
class Unplannable extends Error {}

export async function startPartitionProxy(target: string, options: PartitionProxyOptions): Promise<PartitionProxy> {
  const upstream = createForwarder(target);
  const start = performance.now();
  const now = options.now ?? (() => performance.now() - start);
  const random = mulberry32(options.seed ?? 1);
  let faults = checkFaults(options.faults ?? {});
  // Validated once here, so a bad option fails the test setup, not the first call.
  new PartitionModel(options.model);

  const models = new Map<string, PartitionModel>();
  const keyNames = new Map<string, Promise<TableShape>>();
  const indexModels = new Map<string, PartitionModel>();
  const indexModelOf = (table: string, index: string): PartitionModel => {
    let model = indexModels.get(`${table}/${index}`);
    if (!model) {
      model = new PartitionModel(options.model);
      indexModels.set(`${table}/${index}`, model);
    }
    return model;
  };
  const stats = {
    calls: 0,
    otherCalls: 0,
    acceptedItems: 0,
    throttledItems: 0,
    throttledCalls: 0,
    faults: { internal: 0, unavailable: 0, throttling: 0, drop: 0, lostReply: 0, slow: 0 } satisfies Record<ProxyFaultKind, number>,
  };

  const modelOf = (table: string): PartitionModel => {
    let model = models.get(table);
    if (!model) {
      model = new PartitionModel(options.model);
      models.set(table, model);
    }
    return model;
  };

  /** The table's partition key attribute, asked of Local once per table (a failed lookup is retried next call). */
  const tableShape = (table: string, req: IncomingMessage): Promise<TableShape> => {
    if (options.partitionKeyName !== undefined) return Promise.resolve({ keyName: options.partitionKeyName });
    let name = keyNames.get(table);
    if (!name) {
      name = upstream.forward(req, json({ TableName: table }), { 'x-amz-target': `${TARGET_PREFIX}DescribeTable` }).then((answer) => {
        const description =
          answer.status === 200 ? (JSON.parse(answer.body.toString('utf8')) as { Table?: Parameters<typeof tableInfoFromDescription>[0] }).Table : undefined;
        const hash = description?.KeySchema?.find((k) => k.KeyType === 'HASH')?.AttributeName;
        if (hash === undefined || description === undefined) throw new Unplannable(`DescribeTable ${table}: HTTP ${answer.status}`);
        return { keyName: hash, info: tableInfoFromDescription(description, table) };
      });
      keyNames.set(table, name);
      name.catch(() => keyNames.delete(table));
    }
    return name;
  };

  /** One draw for the fault, one for slowness, on every call, so a given seed gives the same sequence whatever the rates. */
  const pickFaults = (): { fault: Exclude<ProxyFaultKind, 'slow'> | undefined; slowMs: number } => {
    const u = random();
    const v = random();
    let edge = 0;
    let fault: Exclude<ProxyFaultKind, 'slow'> | undefined;
    for (const kind of ['internal', 'unavailable', 'throttling', 'drop', 'lostReply'] as const) {
      edge += faults[kind] ?? 0;
      if (u < edge) {
        fault = kind;
        break;
      }
    }
    const slowMs = faults.slow && v < faults.slow.rate ? faults.slow.ms : 0;
    return { fault, slowMs };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const target = req.headers['x-amz-target'];
    if (
      options.singleWriteFaults &&
      (target === `${BATCH_WRITE.replace('BatchWriteItem', 'PutItem')}` || target === `${BATCH_WRITE.replace('BatchWriteItem', 'DeleteItem')}`)
    ) {
      const index = stats.otherCalls++;
      const { fault } = pickFaults();
      if (fault) stats.faults[fault]++;
      if (fault === 'drop') return void req.socket.destroy();
      if (fault === 'internal' || fault === 'unavailable' || fault === 'throttling') {
        const shape = FAULT_ERRORS[fault];
        return reply(res, shape.status, ownHeaders(`PARTITIONPROXY${index}`), errorBody(shape.type, shape.message));
      }
      const answer = await upstream.forward(req, body);
      // Stored (or refused by its condition), and the answer lost: the client cannot tell which.
      if (fault === 'lostReply') return void req.socket.destroy();
      return reply(res, answer.status, answer.headers, answer.body);
    }
    if (target !== BATCH_WRITE) {
      stats.otherCalls++;
      const answer = await upstream.forward(req, body);
      return reply(res, answer.status, answer.headers, answer.body);
    }
    const index = stats.calls++;
    const { fault, slowMs } = pickFaults();
    if (fault) stats.faults[fault]++;
    if (slowMs > 0) stats.faults.slow++;
    const answer = async (status: number, headers: UpstreamAnswer['headers'], out: Buffer) => {
      if (slowMs > 0) await delay(slowMs);
      reply(res, status, headers, out);
    };
    const hangUp = async () => {
      if (slowMs > 0) await delay(slowMs);
      req.socket.destroy();
    };

    // Faults that stop the call before DynamoDB sees it: nothing written, no capacity spent.
    if (fault === 'drop') return hangUp();
    if (fault === 'internal' || fault === 'unavailable' || fault === 'throttling') {
      const shape = FAULT_ERRORS[fault];
      return answer(shape.status, ownHeaders(`PARTITIONPROXY${index}`), errorBody(shape.type, shape.message));
    }

    let parsed: BatchWriteBody;
    let outcome: Admission;
    try {
      try {
        parsed = JSON.parse(body.toString('utf8')) as BatchWriteBody;
      } catch {
        throw new Unplannable('the body is not JSON');
      }
      outcome = await admitCall(parsed, req);
    } catch (error) {
      if (!(error instanceof Unplannable)) throw error;
      // Unknown table, missing key, malformed request: DynamoDB Local gives the real validation error.
      const upstreamAnswer = await upstream.forward(req, body);
      if (fault === 'lostReply') return hangUp();
      return answer(upstreamAnswer.status, upstreamAnswer.headers, upstreamAnswer.body);
    }
    stats.throttledItems += outcome.refusedCount;

    if (outcome.acceptedCount === 0) {
      stats.throttledCalls++;
      if (fault === 'lostReply') return hangUp();
      const shape = dynamoErrors.provisionedThroughputExceeded;
      const region = regionOf(req);
      const ThrottlingReasons = outcome.reasons.map(({ table, scope, index }) => ({
        reason: REASONS[scope],
        resource: `arn:aws:dynamodb:${region}:000000000000:table/${table}${index === undefined ? '' : `/index/${index}`}`,
      }));
      return answer(shape.status, ownHeaders(`PARTITIONPROXY${index}`), errorBody(shape.type, shape.message, { ThrottlingReasons }));
    }

    // Everything accepted: the client's own bytes go through.
    const forwarded = await upstream.forward(req, outcome.refusedCount === 0 ? body : json({ ...parsed, RequestItems: outcome.accepted }));
    if (forwarded.status === 200) stats.acceptedItems += outcome.acceptedCount;
    if (fault === 'lostReply') return hangUp();
    if (forwarded.status !== 200 || outcome.refusedCount === 0) return answer(forwarded.status, forwarded.headers, forwarded.body);
    const result = JSON.parse(forwarded.body.toString('utf8')) as { UnprocessedItems?: Record<string, WriteRequest[]> } & Record<string, unknown>;
    const unprocessed: Record<string, WriteRequest[]> = { ...result.UnprocessedItems };
    for (const [table, list] of Object.entries(outcome.refused)) unprocessed[table] = [...(unprocessed[table] ?? []), ...list];
    return answer(200, forwarded.headers, json({ ...result, UnprocessedItems: unprocessed }));
  };

  interface Admission {
    accepted: Record<string, WriteRequest[]>;
    refused: Record<string, WriteRequest[]>;
    acceptedCount: number;
    refusedCount: number;
    /** Each (table, scope, index) that refused something, in the order first seen. */
    reasons: Array<{ table: string; scope: RefusalScope; index?: string }>;
  }

  /** Plans every request (key, write units) first, then admits the whole call at one instant. */
  const admitCall = async (parsed: BatchWriteBody, req: IncomingMessage): Promise<Admission> => {
    const requestItems = parsed.RequestItems;
    if (!requestItems || typeof requestItems !== 'object' || Object.keys(requestItems).length === 0) throw new Unplannable('no RequestItems');
    const planned: Array<{ table: string; requests: WriteRequest[]; writes: PlannedRequest[] }> = [];
    for (const [table, requests] of Object.entries(requestItems)) {
      if (!Array.isArray(requests) || requests.length === 0) throw new Unplannable(`no requests for ${table}`);
      const shape = await tableShape(table, req);
      planned.push({ table, requests, writes: requests.map((request) => planWrite(request, shape)) });
    }
    // Read the clock only now, after every await, so calls reach the model in clock order.
    const at = now();
    const admission: Admission = { accepted: {}, refused: {}, acceptedCount: 0, refusedCount: 0, reasons: [] };
    for (const { table, requests, writes } of planned) {
      const model = modelOf(table);
      writes.forEach((write, i) => {
        const request = requests[i]!;
        const refusal = admitWrite(at, table, model, write);
        if (refusal === undefined) {
          (admission.accepted[table] ??= []).push(request);
          admission.acceptedCount++;
          return;
        }
        (admission.refused[table] ??= []).push(request);
        admission.refusedCount++;
        if (!admission.reasons.some((r) => r.table === table && r.scope === refusal.scope && r.index === refusal.index))
          admission.reasons.push({ table, ...refusal });
      });
    }
    return admission;
  };

  /** The indexes first, each on its own key and units, then the table: undefined when accepted, else what refused. */
  const admitWrite = (at: number, table: string, model: PartitionModel, write: PlannedRequest): { scope: RefusalScope; index?: string } | undefined => {
    for (const entry of write.indexes) {
      if (!indexModelOf(table, entry.index).admitOne(at, entry.key, entry.wcu).accepted) return { scope: 'index', index: entry.index };
    }
    const result = model.admitOne(at, write.partitionKey, write.wcu);
    return result.accepted ? undefined : { scope: result.scope };
  };

  const server = await startProxyServer('partitionProxy', handle);

  return {
    url: server.url,
    stats: () => ({
      ...stats,
      faults: { ...stats.faults },
      tables: Object.fromEntries([...models].map(([table, model]) => [table, model.stats()])),
      indexes: Object.fromEntries([...indexModels].map(([name, model]) => [name, model.stats()])),
    }),
    model: (table) => models.get(table),
    indexModel: (table, index) => indexModels.get(`${table}/${index}`),
    setFaults(next) {
      faults = checkFaults(next);
    },
    async close() {
      await server.close();
      upstream.close();
    },
  };
}

const keyCostModels = new WeakMap<TableInfo, ReturnType<typeof createKeyCostModel>>();

/**
 * A write request's partition key text and write units: puts by DynamoDB's size rules, deletes 1 (and
 * no index write: the deleted item's index entries are not known here); a put's index keys and units.
 */
function planWrite(request: WriteRequest, shape: TableShape): PlannedRequest {
  const { keyName, info } = shape;
  if (request.PutRequest?.Item) {
    const item = request.PutRequest.Item;
    const native = unmarshall(decodeBinary(item), { wrapNumbers: true });
    const size = itemSize(native);
    const partitionKey = keyText(item[keyName], keyName);
    const indexes: PlannedRequest['indexes'] = [];
    if (info && info.gsis.length > 0) {
      let model = keyCostModels.get(info);
      if (!model) {
        model = createKeyCostModel(info);
        keyCostModels.set(info, model);
      }
      for (const { key, units } of model({ item: native, size, partitionId: '' }).keys) {
        const id = parseIndexKeyId(key);
        if (id) indexes.push({ index: id.index, key: id.value, wcu: units });
      }
    }
    return { partitionKey, wcu: writeUnits(size), indexes };
  }
  if (request.DeleteRequest?.Key) return { partitionKey: keyText(request.DeleteRequest.Key[keyName], keyName), wcu: 1, indexes: [] };
  throw new Unplannable('a write request with neither PutRequest.Item nor DeleteRequest.Key');
}

/** The key value as text, as partitionOf hashes it: S as is, N in canonical text (1.0 and 1 are one key), B in base64. */
function keyText(value: AttributeValue | undefined, keyName: string): string {
  if (value?.S !== undefined) return value.S;
  if (value?.N !== undefined) {
    const parsed = parseDynamoNumber(value.N);
    return typeof parsed === 'string' ? value.N : parsed.text;
  }
  // On the wire B is base64 text; decode and re-encode so two spellings of the same bytes are one key.
  if (value?.B !== undefined) return Buffer.from(value.B as unknown as string, 'base64').toString('base64');
  throw new Unplannable(`the partition key "${keyName}" is missing or not S, N or B`);
}

/** Wire JSON carries binaries as base64 text; unmarshall expects bytes (else it sizes the base64 text). */
function decodeBinary(item: WireItem): WireItem {
  const out: WireItem = {};
  for (const [name, value] of Object.entries(item)) out[name] = decodeValue(value);
  return out;
}

function decodeValue(value: AttributeValue): AttributeValue {
  const v = value as unknown as Record<string, unknown>;
  if (typeof v['B'] === 'string') return { B: Buffer.from(v['B'], 'base64') };
  if (Array.isArray(v['BS'])) return { BS: (v['BS'] as string[]).map((b) => Buffer.from(b, 'base64')) };
  if (Array.isArray(v['L'])) return { L: (v['L'] as AttributeValue[]).map(decodeValue) };
  if (v['M'] && typeof v['M'] === 'object') return { M: decodeBinary(v['M'] as WireItem) };
  return value;
}

/** The region of the request's SigV4 credential scope (Credential=AKID/date/region/service/aws4_request). */
function regionOf(req: IncomingMessage): string {
  const match = /Credential=[^/]+\/\d+\/([^/]+)\//.exec(req.headers.authorization ?? '');
  return match?.[1] ?? 'us-east-1';
}

function checkFaults(faults: ProxyFaults): ProxyFaults {
  const exclusive = [faults.internal, faults.unavailable, faults.throttling, faults.drop, faults.lostReply];
  for (const rate of [...exclusive, faults.slow?.rate]) {
    if (rate !== undefined && !(rate >= 0 && rate <= 1)) throw new RangeError(`fault rates must be in 0..1, got ${rate}`);
  }
  const sum = exclusive.reduce<number>((n, rate) => n + (rate ?? 0), 0);
  if (sum > 1 + 1e-9) throw new RangeError(`internal + unavailable + throttling + drop + lostReply must be <= 1, got ${sum}`);
  if (faults.slow && !(faults.slow.ms >= 0)) throw new RangeError(`slow.ms must be >= 0, got ${faults.slow.ms}`);
  return { ...faults, ...(faults.slow ? { slow: { ...faults.slow } } : {}) };
}
