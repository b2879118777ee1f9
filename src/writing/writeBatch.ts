import type { AttributeValue, BatchWriteItemCommand, BatchWriteItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { backoffDelay, classifyFailure, type BackoffPolicy } from '../aws/backoff.js';
import { LoaderError } from '../shared/errors.js';
import { keyForDisplay, keyIdOf } from '../typing/key.js';
import type { KeySchema, PlannedWrite, RejectedRow } from '../shared/types.js';
import { keyFromWire, toWireItem } from './wireItem.js';
import { errorFacts, fatalAwsError } from '../aws/awsErrors.js';
import type { EndpointWatch } from './endpointWatch.js';
import { endpointFailure } from './outage.js';
import { preSerializedBatchWrite } from './preSerialized.js';
import { itemJson } from './wireJson.js';
import type { CapacityReports } from '../pacing/capacityReports.js';
import type { SendPacer } from '../pacing/sendPacer.js';
import { ownRecord, ownValue, setOwn } from '../shared/ownRecord.js';
import type { WriteCondition } from './condition.js';

export interface WriterContext {
  client: DynamoDBDocumentClient;
  table: string;
  keySchema: KeySchema;
  region?: string | undefined;
  endpoint?: string | undefined;
  /**
   * Sends per item before it is rejected as RETRIES_EXHAUSTED. A send that failed for the endpoint (no
   * answer, or a 5xx: src/writing/outage.ts) is not one: it is the endpoint's failure, never the rows'.
   */
  maxAttempts: number;
  backoff: BackoffPolicy;
  random: () => number;
  sleep?: (ms: number) => Promise<void>;
  onRetry?: (info: { reason: string; items: number; attempt: number; delayMs: number }) => void;
  /** Rate control: waits before every send (first and resends) and learns from every answer. */
  pacer?: SendPacer;
  /** Which calls ask for ConsumedCapacity (src/pacing/capacityReports.ts); every call asks without it. */
  capacity?: CapacityReports;
  /**
   * The load's watch on the endpoint: every send asks it first and tells it how the call went; while the
   * endpoint is down sends wait, and past --outage-timeout the batch stops, its rows not rejected. Without it, a
   * batch whose calls fail for the endpoint `maxAttempts` times in a row stops the same way.
   */
  watch?: EndpointWatch;
  /** --if-not-exists, --if-newer, --condition: the sink sends each write as one conditional PutItem/DeleteItem (conditionalWrite.ts). */
  condition?: WriteCondition | undefined;
  /**
   * Whether an earlier run of this load's checkpoint may have written rows this run sends again (a resume):
   * a conditional write then asks for the stored item of a false condition, to tell its own write from another's.
   */
  ownEarlierWrites?: () => boolean;
}

export interface BatchOutcome {
  written: PlannedWrite[];
  rejected: RejectedRow[];
  /** Writes whose condition (--if-not-exists, --if-newer) was false: neither stored nor rejected, never resent. */
  conditionFailed?: PlannedWrite[];
  /** Table write units DynamoDB reported (ReturnConsumedCapacity). */
  consumedWcu: number;
  /** Items that came back in UnprocessedItems or failed with a throttling error, summed over attempts. */
  throttledItems: number;
  /**
   * Throttled calls by kind (throttleKinds): each ThrottlingReasons[].reason of a call refused whole (its
   * exception's name when it gave none), and UnprocessedItems for a call refused in part, for which
   * DynamoDB gives no reason.
   */
  throttles?: Record<string, number>;
  retries: number;
  /**
   * Superseded writes taken back from "superseded" because DynamoDB refused the write that replaced them:
   * each is in `written` or `rejected` now, or neither when a fatal error stopped the batch (not written).
   */
  revived: number;
  /**
   * Set when the load must stop (table gone, access denied, the endpoint unreachable past
   * --outage-timeout); the batch's unsent rows are in neither list.
   */
  fatal?: LoaderError;
}

const THROTTLE_NAMES = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/**
 * Writes one batch with BatchWriteItem until every request is stored or rejected.
 * AWS: "If DynamoDB returns any unprocessed items, you should retry the batch operation on those items.
 * However, we strongly recommend that you use an exponential backoff algorithm." Unprocessed items and
 * retryable errors are resent after a capped, fully jittered backoff, up to maxAttempts sends per item.
 * A ValidationException names no row, so the batch is halved until the offending rows are alone; only
 * they are rejected, with the service's message.
 *
 * A rejected write that superseded an earlier one of its key (its `predecessor`) hands over to it: the
 * predecessor is sent next, with its own attempts, while the batch, and so the key, is still in flight
 * (no later write of the key can overtake it). One by one, the earlier row would have been stored.
 */
export async function writeBatch(writes: PlannedWrite[], ctx: WriterContext): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { written: [], rejected: [], consumedWcu: 0, throttledItems: 0, retries: 0, revived: 0 };
  const revive: PlannedWrite[] = [];
  const wire = new WireJsons();
  await send(writes, 0, ctx, outcome, revive, wire);
  while (revive.length > 0) {
    const next = revive.splice(0);
    outcome.revived += next.length;
    // Stopped: the predecessors were not sent; no longer superseded, they count as not written.
    if (outcome.fatal) break;
    await send(next, 0, ctx, outcome, revive, wire);
  }
  return outcome;
}

/**
 * Each write's wire JSON, made once per batch: a resend (UnprocessedItems, errors, halving) reuses it.
 * The first send takes the JSON of the whole batch as an array; the map by write, which costs a hash per
 * write object, is built only when a batch is sent again.
 */
class WireJsons {
  #first: readonly PlannedWrite[] | undefined;
  #firstJsons: string[] = [];
  #byWrite: Map<PlannedWrite, string> | undefined;

  of(writes: readonly PlannedWrite[]): string[] {
    if (this.#first === undefined) {
      this.#first = writes;
      this.#firstJsons = writes.map((w) => itemJson(w.item));
      return this.#firstJsons;
    }
    if (writes === this.#first) return this.#firstJsons;
    const byWrite = (this.#byWrite ??= new Map(this.#first.map((w, i) => [w, this.#firstJsons[i]!])));
    return writes.map((w) => {
      let json = byWrite.get(w);
      if (json === undefined) byWrite.set(w, (json = itemJson(w.item)));
      return json;
    });
  }
}

async function send(
  writes: PlannedWrite[],
  attemptsSoFar: number,
  ctx: WriterContext,
  outcome: BatchOutcome,
  revive: PlannedWrite[],
  wire: WireJsons,
): Promise<void> {
  let pending = writes;
  let attempt = attemptsSoFar;
  const sleep = ctx.sleep ?? ((ms: number) => sleepFor(ms));
  const endpoint = ctx.watch;
  // Sends of this batch in a row that failed for the endpoint, and when the first of them was sent.
  let endpointFailures = 0;
  let failingSince: number | undefined;
  while (pending.length > 0) {
    // The endpoint is down: wait for it (or for a probe's turn) before sending, or stop.
    const gate = endpoint?.beforeSend();
    if (gate) {
      const stopped = await gate;
      if (stopped) {
        outcome.fatal = stopped;
        return;
      }
    }
    attempt++;
    let unprocessed: PlannedWrite[];
    let reason: string;
    const paced = ctx.pacer?.beforeSend(pending);
    if (paced) await paced;
    const sentAt = endpoint?.now() ?? 0;
    try {
      // The low-level command with each item's wire JSON made by itemJson, byte for byte what the SDK
      // would write for toWireItem's AttributeValues (every attribute name goes out as written),
      // without the SDK's walk over them, which cost CPU per item. ReturnConsumedCapacity INDEXES, on the calls
      // ctx.capacity picks: the units of each GSI too, so rate control learns the true cost of a write.
      // The document client sends it unchanged.
      const deletes = pending.some((w) => w.op === 'delete') ? pending.map((w) => w.op === 'delete') : undefined;
      const ask = ctx.capacity?.ask(pending) ?? true;
      const response: BatchWriteItemCommandOutput = await (
        ctx.client as unknown as { send(command: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> }
      ).send(preSerializedBatchWrite(ctx.table, wire.of(pending), deletes, ask));
      endpoint?.answered();
      endpointFailures = 0;
      failingSince = undefined;
      let consumed: number | undefined;
      if (ask) for (const c of response.ConsumedCapacity ?? []) consumed = (consumed ?? 0) + (c.CapacityUnits ?? 0);
      unprocessed = matchUnprocessed(pending, response.UnprocessedItems?.[ctx.table] ?? [], ctx.keySchema);
      // Most calls store everything: then `stored` is `pending` itself, not a copy.
      let stored: PlannedWrite[] = pending;
      if (unprocessed.length > 0) {
        const left = new Set(unprocessed);
        stored = pending.filter((w) => !left.has(w));
      }
      if (ask) ctx.capacity?.answered(stored, consumed);
      outcome.consumedWcu += ask ? (consumed ?? 0) : ctx.capacity!.inferred(stored);
      for (const w of stored) outcome.written.push(w);
      ctx.pacer?.afterSend({ sent: pending, stored, throttled: unprocessed, consumedUnits: consumed, throttleReasons: [] });
      if (unprocessed.length === 0) return;
      outcome.throttledItems += unprocessed.length;
      countThrottles(outcome, ['UnprocessedItems']);
      reason = 'UnprocessedItems';
    } catch (error) {
      const facts = errorFacts(error);
      const down = endpointFailure(facts);
      if (down === undefined) {
        endpoint?.answered();
        endpointFailures = 0;
        failingSince = undefined;
      }
      const kind = classifyFailure(facts);
      if (kind === 'fatal') {
        outcome.fatal = fatalAwsError(error, ctx);
        return;
      }
      if (kind === 'reject') {
        if (pending.length > 1) {
          const half = Math.ceil(pending.length / 2);
          await send(pending.slice(0, half), attempt - 1, ctx, outcome, revive, wire);
          if (outcome.fatal) return;
          await send(pending.slice(half), attempt - 1, ctx, outcome, revive, wire);
          return;
        }
        refuse(pending[0]!, 'WRITE_REJECTED', `DynamoDB rejected the item: ${facts.name ?? 'error'}: ${(error as Error).message}`, ctx, outcome, revive);
        return;
      }
      const throttled = facts.name !== undefined && THROTTLE_NAMES.has(facts.name);
      const throttleReasons = throttleReasonsOf(error);
      if (throttled) {
        outcome.throttledItems += pending.length;
        countThrottles(outcome, throttleReasons.length > 0 ? throttleReasons : [facts.name!]);
      }
      ctx.pacer?.afterSend({
        sent: pending,
        stored: [],
        throttled: throttled ? pending : [],
        consumedUnits: undefined,
        throttleReasons,
      });
      unprocessed = pending;
      reason = facts.name ?? facts.code ?? `HTTP ${facts.httpStatus ?? '?'}`;
      if (down !== undefined) {
        // Not the rows' fault: no send of their budget, and never a reject. Bounded by time
        // (the watch: --outage-timeout), or without a watch by maxAttempts such failures in a row.
        attempt--;
        endpointFailures++;
        failingSince ??= sentAt;
        const stopped = endpoint
          ? endpoint.failed(down, sentAt, failingSince)
          : endpointFailures >= ctx.maxAttempts
            ? unreachable(down, endpointFailures, ctx)
            : undefined;
        if (stopped) {
          outcome.fatal = stopped;
          return;
        }
        outcome.retries++;
        // While the endpoint is down the next send waits for it (or its probe's turn) instead.
        const delayMs = endpoint?.down ? 0 : backoffDelay(endpointFailures, ctx.random, ctx.backoff);
        ctx.onRetry?.({ reason: down, items: pending.length, attempt: attempt + 1, delayMs });
        if (delayMs > 0) await sleep(delayMs);
        continue;
      }
    }
    if (attempt >= ctx.maxAttempts) {
      for (const w of unprocessed) {
        refuse(w, 'RETRIES_EXHAUSTED', `not stored after ${attempt} attempts (last: ${reason}); retry later or raise --max-attempts`, ctx, outcome, revive);
      }
      return;
    }
    const delayMs = backoffDelay(attempt, ctx.random, ctx.backoff);
    outcome.retries++;
    ctx.onRetry?.({ reason, items: unprocessed.length, attempt, delayMs });
    await sleep(delayMs);
    pending = unprocessed;
  }
}

/** A batch whose calls kept failing for the endpoint, without a watch to wait for it: the load stops (exit 75). */
function unreachable(reason: string, sends: number, ctx: WriterContext): LoaderError {
  return new LoaderError(
    'ENDPOINT_UNREACHABLE',
    `${sends} calls in a row to DynamoDB${ctx.endpoint ? ` at ${ctx.endpoint}` : ''} failed (${reason}); no row was rejected for it: rows not written are counted as not written`,
    { table: ctx.table },
  );
}

/**
 * One throttled call, under each kind it was throttled for (a call refused for the table and one of its
 * GSIs names both). DynamoDB's reasons, e.g. TableWriteKeyRangeThroughputExceeded (one key range of the
 * table), TableWriteProvisionedThroughputExceeded (the table's capacity), IndexWriteKeyRangeThroughputExceeded.
 */
function countThrottles(outcome: BatchOutcome, kinds: readonly string[]): void {
  // The kinds are the endpoint's words: a record without a prototype counts 'constructor' like any other.
  const counts = (outcome.throttles ??= ownRecord<number>());
  for (const kind of new Set(kinds)) setOwn(counts, kind, (ownValue(counts, kind) ?? 0) + 1);
}

function throttleReasonsOf(error: unknown): string[] {
  const reasons = (error as { ThrottlingReasons?: Array<{ reason?: unknown }> })?.ThrottlingReasons;
  return Array.isArray(reasons) ? reasons.map((r) => r?.reason).filter((r): r is string => typeof r === 'string') : [];
}

/** Maps UnprocessedItems back to the writes that were sent, by primary key (unique within a batch). */
function matchUnprocessed(
  sent: PlannedWrite[],
  unprocessed: Array<{
    PutRequest?: { Item?: Record<string, AttributeValue> | undefined } | undefined;
    DeleteRequest?: { Key?: Record<string, AttributeValue> | undefined } | undefined;
  }>,
  schema: KeySchema,
): PlannedWrite[] {
  if (unprocessed.length === 0) return [];
  const byKey = new Map(sent.map((w) => [w.keyId, w]));
  const out: PlannedWrite[] = [];
  for (const request of unprocessed) {
    const item = request.PutRequest?.Item ?? request.DeleteRequest?.Key;
    let write: PlannedWrite | undefined;
    try {
      write = item ? byKey.get(keyIdOf(keyFromWire(item, schema), schema)) : undefined;
    } catch {
      // The SDK's answer lost a key attribute named __proto__: the attributes it kept may
      // still name exactly one write.
      write = item ? byAttributes(sent, item, out) : undefined;
    }
    // DynamoDB returns the requests it was sent; one we cannot match would be a bug on either side, and
    // resending everything is the safe reading of it (puts are idempotent).
    if (!write) return sent;
    out.push(write);
  }
  return out;
}

/** The one write of `sent` (not yet in `taken`) that agrees with `item` on every attribute `item` still holds. */
function byAttributes(sent: PlannedWrite[], item: Record<string, AttributeValue>, taken: PlannedWrite[]): PlannedWrite | undefined {
  const names = Object.keys(item).filter((name) => item[name] !== undefined);
  if (names.length === 0) return undefined;
  let found: PlannedWrite | undefined;
  for (const w of sent) {
    if (taken.includes(w)) continue;
    const wire = toWireItem(w.item);
    if (!names.every((name) => Object.hasOwn(wire, name) && wireText(wire[name]) === wireText(item[name]))) continue;
    if (found) return undefined;
    found = w;
  }
  return found;
}

/** An attribute value as text, binary as base64 (a Buffer and a Uint8Array of the same bytes are equal). */
function wireText(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, replaced: unknown) {
    const raw = this[key];
    return raw instanceof Uint8Array ? Buffer.from(raw).toString('base64') : replaced;
  });
}

/** Rejects `write`; its predecessor, if any, is queued to be written in its place. */
function refuse(
  write: PlannedWrite,
  code: 'WRITE_REJECTED' | 'RETRIES_EXHAUSTED',
  message: string,
  ctx: WriterContext,
  outcome: BatchOutcome,
  revive: PlannedWrite[],
): void {
  const predecessor = write.predecessor;
  if (predecessor === undefined) {
    outcome.rejected.push(reject(write, code, message, ctx));
    return;
  }
  const origin = predecessor.origin.file === write.origin.file ? `line ${predecessor.origin.line}` : `${predecessor.origin.file}:${predecessor.origin.line}`;
  outcome.rejected.push(reject(write, code, `${message}; the earlier row with this primary key (${origin}) is written in its place`, ctx));
  revive.push(predecessor);
}

function reject(write: PlannedWrite, code: 'WRITE_REJECTED' | 'RETRIES_EXHAUSTED', message: string, ctx: WriterContext): RejectedRow {
  const row: RejectedRow = { origin: write.origin, code, message };
  const key = keyForDisplay(write.item, ctx.keySchema);
  if (key) row.key = key;
  return row;
}
