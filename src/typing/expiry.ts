import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../shared/types.js';
import { ownValue } from '../shared/ownRecord.js';

/*
 * DynamoDB's Time to Live rules, as the Developer Guide states them ("Using DynamoDB Time to Live (TTL)",
 * Formatting an item's TTL attribute: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-before-you-start.html):
 * an item is eligible for expiry only when its TTL attribute is a top-level Number holding Unix epoch
 * seconds, and no more than five years in the past; the TTL process "ignores" any other item. An item is
 * expired when that number is less than the current epoch time (UpdateTimeToLive: "If the epoch time value
 * stored in the attribute is less than the current time, the item is marked as expired").
 * --skip-expired follows them exactly: a row it skips is one DynamoDB would expire at once. A string, a set,
 * a missing attribute or a number more than five years old is written, as DynamoDB would keep that item.
 */

/** Five years in seconds, as 5 × 365.25 days: the guide gives no finer boundary. */
export const TTL_MAX_AGE_SECONDS = 5 * 365.25 * 24 * 3600;

/** Why a row's TTL attribute does not expire it (for counts and the first warning), or 'expired'. */
export type ExpiryVerdict = 'expired' | 'live' | 'absent' | 'not-a-number' | 'too-old';

/**
 * The verdict on one item, against `nowSeconds` (the load's fixed load time, epoch seconds). Pure: compares
 * the number's digits as a double only after its exact text says it is within range (a TTL is at most 11
 * digits before the point; the comparison is exact for integers up to 2^53).
 */
export function expiryOf(item: Item, attribute: string, nowSeconds: number): ExpiryVerdict {
  const value = ownValue(item, attribute);
  if (value === undefined) return 'absent';
  if (!(value instanceof NumberValue)) return typeof value === 'number' || typeof value === 'bigint' ? verdict(Number(value), nowSeconds) : 'not-a-number';
  return verdict(Number(value.value), nowSeconds);
}

function verdict(seconds: number, nowSeconds: number): ExpiryVerdict {
  if (!Number.isFinite(seconds)) return 'not-a-number';
  if (seconds >= nowSeconds) return 'live';
  return nowSeconds - seconds > TTL_MAX_AGE_SECONDS ? 'too-old' : 'expired';
}

/** Whether an attribute value looks like a number held as a string (a CSV cell without --types name:N). */
export function looksNumeric(item: Item, attribute: string): boolean {
  const value = ownValue(item, attribute);
  return typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value);
}
