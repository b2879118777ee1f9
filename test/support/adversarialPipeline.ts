/**
 * The adversarial suite: running generated files through the real readers and planner, reading
 * a table back exactly, checking a load against the oracle, and fast-check's run parameters from the
 * environment (FC_SEED, FC_PATH to replay a failure; FC_RUNS to scale the number of cases).
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { Readable } from 'node:stream';
import { expect } from 'vitest';
import { createRowPlanner, isRejected } from '../../src/typing/planRow.js';
import type { Item } from '../../src/shared/types.js';
import { openInput } from '../../src/reading/openInput.js';
import { readCsv } from '../../src/reading/readCsv.js';
import { readJsonLines } from '../../src/reading/readJsonLines.js';
import { keyOf, type Expected, type Fate, type PlainItem } from './adversarialOracle.js';
import { KEY_SCHEMA, setOwn, type Format } from './adversarialRows.js';
import { readRejectsIfAny } from './rejects.js';
import type { PlainValue } from './plainItem.js';

/**
 * fast-check parameters: `numRuns` scaled by FC_RUNS (a factor, default 1), and FC_SEED / FC_PATH to
 * replay the case fast-check printed ("seed: ..., path: ..."). Shrinking stays on so the report is minimal.
 */
export interface RunParams {
  numRuns: number;
  verbose: 0;
  seed?: number;
  path?: string;
}

export function fcParams(numRuns: number): RunParams {
  const factor = Number(process.env['FC_RUNS'] ?? '1');
  const params: RunParams = { numRuns: Math.max(1, Math.round(numRuns * (Number.isFinite(factor) && factor > 0 ? factor : 1))), verbose: 0 };
  const seed = process.env['FC_SEED'];
  if (seed !== undefined && seed !== '') params.seed = Number(seed);
  const path = process.env['FC_PATH'];
  if (path !== undefined && path !== '') params.path = path;
  return params;
}

/** How to replay, for test names. */
export const REPLAY = (file: string) => `replay a failure: FC_SEED=<seed> FC_PATH=<path> npx vitest run ${file}`;

/** A native item (lib-dynamodb form, numbers as NumberValue) as plain DynamoDB JSON, own keys only. */
export function nativePlain(value: unknown): PlainValue {
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'boolean') return { BOOL: value };
  if (value === null || value === undefined) return { NULL: true };
  if (value instanceof NumberValue) return { N: value.value };
  if (typeof value === 'number' || typeof value === 'bigint') return { N: String(value) };
  if (value instanceof Uint8Array) return { B: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { L: value.map(nativePlain) };
  if (value instanceof Set) {
    const elements = [...value] as unknown[];
    if (typeof elements[0] === 'string') return { SS: (elements as string[]).sort() };
    return { NS: elements.map((e) => (e instanceof NumberValue ? e.value : String(e))).sort() };
  }
  return { M: plainRecord(value as Record<string, unknown>) };
}

export function plainRecord(item: Record<string, unknown>): PlainItem {
  const out: PlainItem = {};
  for (const name of Object.keys(item).sort()) setOwn(out, name, nativePlain(item[name]));
  return out;
}

/** What the real readers and planner make of a file given in chunks: one fate per record, in order. */
export async function readerFates(chunks: Buffer[], format: Format, types: Record<string, 'N' | 'JSON'>): Promise<Fate[]> {
  const input = await openInput('-', Readable.from(chunks, { objectMode: false }));
  const records = format === 'csv' ? readCsv(input.stream, input.name, { delimiter: ',', columns: undefined }) : readJsonLines(input.stream, input.name);
  const planner = createRowPlanner({ keySchema: KEY_SCHEMA, types, infer: false, empty: 'omit', jsonFlavor: 'json' });
  const fates: Fate[] = [];
  for await (const record of records) {
    const planned = planner.plan(record);
    if (isRejected(planned)) fates.push({ line: planned.origin.line, rejected: planned.code });
    else fates.push({ line: planned.origin.line, written: plainRecord(planned.item as Item), key: keyOfItem(planned.item) });
  }
  return fates;
}

function keyOfItem(item: Item): string {
  const pk = item['pk'] as unknown;
  const sk = item['sk'] as unknown;
  return keyOf(typeof pk === 'string' ? pk : String(pk), sk instanceof NumberValue ? sk.value : String(sk));
}

/**
 * Every item of a table by a Scan over plain HTTP, parsed with JSON.parse: the SDK's deserialiser builds
 * maps by assignment, which would drop an attribute named `__proto__` on the way back and blame the loader.
 * DynamoDB Local does not check signatures, so a well-formed fake Authorization header does.
 */
export async function scanRaw(endpoint: string, table: string): Promise<Map<string, PlainItem>> {
  const items = new Map<string, PlainItem>();
  let start: unknown;
  do {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.Scan',
        'x-amz-date': '20260101T000000Z',
        authorization:
          'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=00',
      },
      body: JSON.stringify({ TableName: table, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }),
    });
    const body = JSON.parse(await res.text()) as { Items?: Record<string, unknown>[]; LastEvaluatedKey?: unknown; message?: string };
    if (!res.ok) throw new Error(`Scan of ${table} failed: ${res.status} ${JSON.stringify(body)}`);
    for (const raw of body.Items ?? []) {
      const item = wirePlain(raw);
      const pk = item['pk'];
      const sk = item['sk'];
      items.set(keyOf(pk && 'S' in pk ? pk.S : '?', sk && 'N' in sk ? sk.N : '?'), item);
    }
    start = body.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

function wirePlain(raw: Record<string, unknown>): PlainItem {
  const out: PlainItem = {};
  for (const name of Object.keys(raw).sort()) setOwn(out, name, wireValue(raw[name] as Record<string, unknown>));
  return out;
}

function wireValue(av: Record<string, unknown>): PlainValue {
  const [tag, v] = Object.entries(av)[0]!;
  switch (tag) {
    case 'L':
      return { L: (v as Record<string, unknown>[]).map(wireValue) };
    case 'M':
      return { M: wirePlain(v as Record<string, unknown>) };
    case 'SS':
    case 'NS':
    case 'BS':
      return { [tag]: [...(v as string[])].sort() } as PlainValue;
    default:
      return { [tag]: v } as PlainValue;
  }
}

/** The table equals the oracle's, item by item (types included), and the reject file holds each rejected line once with its code. */
export async function expectTableAndRejects(endpoint: string, table: string, rejectsPath: string, file: string, expected: Expected): Promise<void> {
  const actual = await scanRaw(endpoint, table);
  expect([...actual.keys()].sort(), 'primary keys in the table').toEqual([...expected.table.keys()].sort());
  for (const [key, item] of expected.table) expect(actual.get(key), `item ${JSON.stringify(key)}`).toEqual(item);
  const records = await readRejectsIfAny(rejectsPath);
  const lines = records.map((r) => r.line);
  expect(lines.length, `each rejected line once (lines ${lines.join(',')})`).toBe(new Set(lines).size);
  expect(new Map(records.map((r) => [r.line, r.code])), 'rejected lines and codes').toEqual(expected.rejects);
  for (const r of records) expect(r.file, `file of the reject at line ${r.line}`).toBe(file);
}
