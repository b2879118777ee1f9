import { type AttributeValue, DeleteItemCommand, PutItemCommand, type DeleteItemCommandOutput, type PutItemCommandOutput } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { backoffDelay, classifyFailure } from '../aws/backoff.js';
import { errorFacts, fatalAwsError } from '../aws/awsErrors.js';
import { LoaderError } from '../shared/errors.js';
import { ownRecord, ownValue, setOwn } from '../shared/ownRecord.js';
import type { PlannedWrite, RejectedRow } from '../shared/types.js';
import { keyForDisplay } from '../typing/key.js';
import { conditionOf, sameItem, type WriteCondition } from './condition.js';
import { endpointFailure } from './outage.js';
import type { BatchOutcome, WriterContext } from './writeBatch.js';
import { toWireItem } from './wireItem.js';

const THROTTLE_NAMES = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/** The error DynamoDB answers a PutItem/DeleteItem on an item an ongoing TransactWriteItems holds with (HTTP 400). */
const TRANSACTION_CONFLICT = 'TransactionConflictException';

/** The error DynamoDB answers a call whose condition is false with. */
export const CONDITION_FAILED = 'ConditionalCheckFailedException';

/**
 * Writes a batch's writes under a condition, each as one PutItem (or DeleteItem) call, as BatchWriteItem
 * takes no conditions. A batch never holds two writes of one key (the batcher's rule, and a conditional
 * load supersedes none), so its calls go out together; the dispatcher keeps two batches of a key apart, so a
 * key's rows are tried one after the other in input order.
 *
 * Each call is paced as a batch of one (the pacer reserves its units before and learns from its answer),
 * resent after a jittered backoff on throttling and 5xx as writeBatch does, up to maxAttempts sends, and
 * waits for the endpoint through the same watch. A ConditionalCheckFailedException is the row's outcome
 * (`conditionFailed`): neither written nor rejected, never resent. DynamoDB charges a failed condition as a
 * write (of the larger of the stored and the new item), so its units are counted as the write's.
 */
export async function writeConditional(writes: PlannedWrite[], ctx: WriterContext, condition: WriteCondition): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { written: [], rejected: [], conditionFailed: [], consumedWcu: 0, throttledItems: 0, retries: 0, revived: 0 };
  await Promise.all(writes.map((write) => writeOne(write, ctx, condition, outcome)));
  return outcome;
}

async function writeOne(write: PlannedWrite, ctx: WriterContext, condition: WriteCondition, outcome: BatchOutcome): Promise<void> {
  const sleep = ctx.sleep ?? ((ms: number) => sleepFor(ms));
  const endpoint = ctx.watch;
  const sent = [write];
  const parts = conditionOf(condition, write, ctx.keySchema);
  // A call may have landed without its answer reaching us: on a resumed load (a batch the crash left unrecorded),
  // and on a resend after a 5xx or a lost connection. Such a call's false condition then returns the stored item
  // (ALL_OLD, no extra units), and one equal to the row is the row's own earlier write, not another writer's.
  // A row without a condition (--item-conditions) cannot fail one: DynamoDB takes ReturnValuesOnConditionCheckFailure only with one.
  let ownEarlierWrites = parts !== undefined && ctx.ownEarlierWrites?.() === true;
  // This row's own call of this run may have been applied (an answer lost after a 5xx, a reset or a timeout).
  let mayHaveLanded = false;
  let attempt = 0;
  let endpointFailures = 0;
  let failingSince: number | undefined;
  for (;;) {
    if (outcome.fatal) return;
    const gate = endpoint?.beforeSend();
    if (gate) {
      const stopped = await gate;
      if (stopped) {
        outcome.fatal ??= stopped;
        return;
      }
    }
    attempt++;
    const paced = ctx.pacer?.beforeSend(sent);
    if (paced) await paced;
    if (outcome.fatal) return;
    const sentAt = endpoint?.now() ?? 0;
    let reason: string;
    try {
      const wire = toWireItem(write.item);
      const command =
        write.op === 'delete'
          ? new DeleteItemCommand({
              TableName: ctx.table,
              Key: wire,
              ...parts,
              ReturnConsumedCapacity: 'INDEXES',
              ...(ownEarlierWrites ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
            })
          : new PutItemCommand({
              TableName: ctx.table,
              Item: wire,
              ...parts,
              ReturnConsumedCapacity: 'INDEXES',
              ...(ownEarlierWrites ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
            });
      const response = await (
        ctx.client as unknown as { send(c: PutItemCommand | DeleteItemCommand): Promise<PutItemCommandOutput | DeleteItemCommandOutput> }
      ).send(command);
      endpoint?.answered();
      const consumed = response.ConsumedCapacity?.CapacityUnits;
      outcome.consumedWcu += consumed ?? write.wcu;
      outcome.written.push(write);
      ctx.pacer?.afterSend({ sent, stored: sent, throttled: [], consumedUnits: consumed, throttleReasons: [] });
      return;
    } catch (error) {
      const facts = errorFacts(error);
      const down = endpointFailure(facts);
      if (down === undefined) {
        endpoint?.answered();
        endpointFailures = 0;
        failingSince = undefined;
      }
      if (facts.name === CONDITION_FAILED) {
        // Not stored, and not to be resent: the table holds a newer item (or the key). Its units are spent all the same.
        // After a crash, the stored item may be this very row, put by the earlier run: it is written, not a conflict.
        // A delete's own earlier call leaves no item: an absent one is the delete done (its condition, such as
        // attribute_exists, now false because of it), but only after this run's own call may have landed: on a
        // resume every absent key would look so, and the rest of the file's deletes of absent keys be counted written.
        const stored = (error as { Item?: Record<string, AttributeValue> }).Item;
        if (ownEarlierWrites && (write.op === 'delete' ? mayHaveLanded && absent(stored) : sameItem(toWireItem(write.item), stored)))
          outcome.written.push(write);
        else outcome.conditionFailed!.push(write);
        outcome.consumedWcu += write.wcu;
        ctx.pacer?.afterSend({ sent, stored: sent, throttled: [], consumedUnits: undefined, throttleReasons: [] });
        return;
      }
      // The item is in another writer's transaction (DynamoDB refused this call, nothing stored): resent after a
      // backoff as a 5xx is, the row's attempts counted; not a reason to stop the load.
      const conflict = facts.name === TRANSACTION_CONFLICT;
      const kind = conflict ? 'retry' : classifyFailure(facts);
      if (kind === 'fatal') {
        outcome.fatal ??= fatalAwsError(error, ctx);
        return;
      }
      if (kind === 'reject') {
        outcome.rejected.push(reject(write, 'WRITE_REJECTED', `DynamoDB rejected the item: ${facts.name ?? 'error'}: ${(error as Error).message}`, ctx));
        ctx.pacer?.afterSend({ sent, stored: [], throttled: [], consumedUnits: undefined, throttleReasons: [] });
        return;
      }
      const throttled = facts.name !== undefined && THROTTLE_NAMES.has(facts.name);
      const throttleReasons = throttleReasonsOf(error);
      if (throttled) {
        outcome.throttledItems++;
        const counts = (outcome.throttles ??= ownRecord<number>());
        for (const kind of new Set(throttleReasons.length > 0 ? throttleReasons : [facts.name!])) setOwn(counts, kind, (ownValue(counts, kind) ?? 0) + 1);
      }
      ctx.pacer?.afterSend({ sent, stored: [], throttled: throttled ? sent : [], consumedUnits: undefined, throttleReasons });
      // A throttled call was refused whole; any other failure (a 5xx, a reset, a timeout) may have been stored.
      if (!throttled && !conflict) {
        mayHaveLanded = true;
        ownEarlierWrites = parts !== undefined;
      }
      reason = facts.name ?? facts.code ?? `HTTP ${facts.httpStatus ?? '?'}`;
      if (down !== undefined) {
        // The endpoint's failure, not the row's: no attempt of its budget spent, never a reject.
        attempt--;
        endpointFailures++;
        failingSince ??= sentAt;
        const stopped = endpoint
          ? endpoint.failed(down, sentAt, failingSince)
          : endpointFailures >= ctx.maxAttempts
            ? new LoaderError(
                'ENDPOINT_UNREACHABLE',
                `${endpointFailures} calls in a row to DynamoDB${ctx.endpoint ? ` at ${ctx.endpoint}` : ''} failed (${down}); no row was rejected for it: rows not written are counted as not written`,
                { table: ctx.table },
              )
            : undefined;
        if (stopped) {
          outcome.fatal ??= stopped;
          return;
        }
        outcome.retries++;
        const delayMs = endpoint?.down ? 0 : backoffDelay(endpointFailures, ctx.random, ctx.backoff);
        ctx.onRetry?.({ reason: down, items: 1, attempt: attempt + 1, delayMs });
        if (delayMs > 0) await sleep(delayMs);
        continue;
      }
    }
    if (attempt >= ctx.maxAttempts) {
      outcome.rejected.push(
        reject(write, 'RETRIES_EXHAUSTED', `not stored after ${attempt} attempts (last: ${reason}); retry later or raise --max-attempts`, ctx),
      );
      return;
    }
    const delayMs = backoffDelay(attempt, ctx.random, ctx.backoff);
    outcome.retries++;
    ctx.onRetry?.({ reason, items: 1, attempt, delayMs });
    await sleep(delayMs);
  }
}

/** No item under the key (a false condition's ALL_OLD answer without one). */
function absent(stored: Record<string, AttributeValue> | undefined): boolean {
  return stored === undefined || Object.keys(stored).length === 0;
}

function throttleReasonsOf(error: unknown): string[] {
  const reasons = (error as { ThrottlingReasons?: Array<{ reason?: unknown }> })?.ThrottlingReasons;
  return Array.isArray(reasons) ? reasons.map((r) => r?.reason).filter((r): r is string => typeof r === 'string') : [];
}

function reject(write: PlannedWrite, code: 'WRITE_REJECTED' | 'RETRIES_EXHAUSTED', message: string, ctx: WriterContext): RejectedRow {
  const row: RejectedRow = { origin: write.origin, code, message };
  const key = keyForDisplay(write.item, ctx.keySchema);
  if (key) row.key = key;
  return row;
}
