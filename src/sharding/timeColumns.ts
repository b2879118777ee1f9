import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../shared/types.js';

/** Epoch bounds of a value that "looks like a time": 2000-01-01 to 2100-01-01 UTC, in seconds or milliseconds. */
const FROM_S = 946_684_800;
const TO_S = 4_102_444_800;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;
/** At most this many names in a message. */
const MAX_NAMES = 5;

/**
 * The attributes of a row, other than `except`, whose values look like a time, for the message
 * of a time rule whose attribute (by default the sort key) holds none: ISO 8601 dates and times, and
 * numbers (or numeric text) that read as epoch seconds or milliseconds between 2000 and 2100. A plain
 * count such as 42 reads as a time in 1970 and is left out. Pure.
 */
export function timeLikeAttributes(item: Item, except: string, parse: (value: unknown) => number | undefined): string[] {
  const names: string[] = [];
  for (const name of Object.keys(item)) {
    if (name === except || names.length >= MAX_NAMES) continue;
    const value: unknown = item[name];
    if (looksLikeTime(value) && parse(value) !== undefined) names.push(name);
  }
  return names;
}

function looksLikeTime(value: unknown): boolean {
  if (typeof value === 'string') {
    const text = value.trim();
    if (ISO_DATE.test(text)) return true;
    return /^\d{9,13}(\.\d+)?$/.test(text) && inEpochRange(Number(text));
  }
  if (value instanceof NumberValue) return inEpochRange(Number(value.value));
  return false;
}

function inEpochRange(n: number): boolean {
  return (n >= FROM_S && n < TO_S) || (n >= FROM_S * 1000 && n < TO_S * 1000);
}

/** The sentence naming them, or saying there is none: "columns that look like a time: createdAt, day". */
export function timeLikeHint(names: readonly string[], unit: string): string {
  if (names.length === 0) return 'no column of this row looks like a time';
  return `columns that look like a time: ${names.map((n) => `"${n}"`).join(', ')}; name one, e.g. --shard time:${unit}:${names[0]}`;
}
