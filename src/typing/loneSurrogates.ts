import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../shared/types.js';

/**
 * Lone UTF-16 surrogates. A JSON `\ud800` escape is ASCII in the file, so the readers' strict
 * UTF-8 check lets it through, yet no UTF-8 text holds a lone surrogate: sent on, the value (or name) was
 * stored as something else than the row says, and two such keys could be one item to DynamoDB. Pure.
 */

/** An escape that may decode to a surrogate: only text holding one needs the walk below. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `raw` (a row's text) has an escape that may decode to a surrogate. */
export function mayHoldSurrogates(raw: string): boolean {
  return SURROGATE_ESCAPE.test(raw);
}

/** The top-level attribute whose name or value (at any depth) holds a lone surrogate, if any. */
export function attributeWithLoneSurrogate(item: Item): string | undefined {
  for (const name of Object.keys(item)) if (LONE_SURROGATE.test(name) || holdsLone(item[name])) return name;
  return undefined;
}

function holdsLone(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (value === null || typeof value !== 'object' || value instanceof NumberValue || value instanceof Uint8Array) return false;
  if (value instanceof Set || Array.isArray(value)) {
    for (const element of value as Iterable<unknown>) if (holdsLone(element)) return true;
    return false;
  }
  for (const name of Object.keys(value)) if (LONE_SURROGATE.test(name) || holdsLone((value as Record<string, unknown>)[name])) return true;
  return false;
}
