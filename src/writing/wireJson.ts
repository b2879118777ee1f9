import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../shared/types.js';

/**
 * An item's wire JSON, the very bytes the SDK's JSON protocol writes for `toWireItem(item)`:
 * the same walk as toWireItem, emitting text instead of AttributeValue objects, so the SDK's schema walk
 * over those objects (the biggest single cost in the client's profile) is done once per item, here.
 *
 * What makes the bytes equal (test/unit/writing/wireJson.test.ts compares them over generated items):
 * - Strings: the SDK escapes `"`, `\` and C0 controls as JSON.stringify does (`\b \t \n \f \r`, else
 *   `\u00xx`), writes other characters as UTF-8, and lone surrogates as `\udxxx`, as JSON.stringify does.
 * - Attribute names in Object.keys order: toWireItem builds its map in that order and the SDK walks it
 *   with for...in, which gives the same order for an object without a prototype chain of its own keys.
 * - Binary as standard base64 with padding; NS and SS as JSON string arrays; each AttributeValue has one
 *   member, so the SDK's schema order of union members does not come into it.
 */
export function itemJson(item: Item): string {
  let out = '';
  for (const name of Object.keys(item)) {
    const value = valueJson(item[name]);
    if (value === undefined) continue;
    out += `${out === '' ? '{' : ','}${nameJson(name)}:${value}`;
  }
  return out === '' ? '{}' : `${out}}`;
}

function valueJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return `{"S":${stringJson(value)}}`;
  if (value instanceof NumberValue) return `{"N":${stringJson(value.value)}}`;
  if (typeof value === 'number' || typeof value === 'bigint') return `{"N":${JSON.stringify(String(value))}}`;
  if (typeof value === 'boolean') return value ? '{"BOOL":true}' : '{"BOOL":false}';
  if (value === null) return '{"NULL":true}';
  if (value instanceof Uint8Array) return `{"B":"${base64(value)}"}`;
  if (Array.isArray(value)) return `{"L":[${value.map((element) => valueJson(element) ?? '{"NULL":true}').join(',')}]}`;
  if (value instanceof Set) {
    const elements = [...(value as Set<unknown>)];
    const first = elements[0];
    if (typeof first === 'string') return `{"SS":${JSON.stringify(elements)}}`;
    if (first instanceof Uint8Array) return `{"BS":[${(elements as Uint8Array[]).map((e) => `"${base64(e)}"`).join(',')}]}`;
    return `{"NS":${JSON.stringify(elements.map((e) => (e instanceof NumberValue ? e.value : String(e))))}}`;
  }
  return `{"M":${itemJson(value as Item)}}`;
}

/** Printable ASCII without `"` and `\`: characters JSON.stringify writes as they are. */
const PLAIN_ASCII = /^[ !#-[\]-~]*$/;

/** JSON.stringify of a string; most values are plain ASCII, which needs no escaping pass. */
function stringJson(text: string): string {
  return PLAIN_ASCII.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** Attribute names repeat on every row: their JSON is kept, up to a bound (a map of user keys could be endless). */
const NAME_CACHE_LIMIT = 4096;
const nameJsons = new Map<string, string>();

function nameJson(name: string): string {
  let json = nameJsons.get(name);
  if (json === undefined) {
    json = JSON.stringify(name);
    if (nameJsons.size < NAME_CACHE_LIMIT) nameJsons.set(name, json);
  }
  return json;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * The BatchWriteItem body for puts of items already in wire JSON, with ReturnConsumedCapacity INDEXES
 * when `askCapacity`, in the SDK's member order (RequestItems, then ReturnConsumedCapacity).
 */
export function batchWriteBody(table: string, itemJsons: readonly string[], deletes?: readonly boolean[], askCapacity = true): string {
  let requests = '';
  for (let i = 0; i < itemJsons.length; i++) {
    // A delete's item is its key: a DeleteRequest.
    const request = deletes?.[i] === true ? `{"DeleteRequest":{"Key":${itemJsons[i]}}}` : `{"PutRequest":{"Item":${itemJsons[i]}}}`;
    requests += `${i === 0 ? '' : ','}${request}`;
  }
  return `{"RequestItems":{${JSON.stringify(table)}:[${requests}]}${askCapacity ? ',"ReturnConsumedCapacity":"INDEXES"' : ''}}`;
}
