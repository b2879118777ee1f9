/**
 * The BatchWriteItem body ddb-spread builds from each item's wire JSON must be, byte for byte,
 * the body the SDK's own JSON protocol writes for the same items as AttributeValues (toWireItem). Both go
 * through a real client down to its HTTP handler, which records the signed request and answers at once.
 */
import { fc, it as fcIt } from '@fast-check/vitest';
import { BatchWriteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, NumberValue } from '@aws-sdk/lib-dynamodb';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ownRecord } from '../../../src/shared/ownRecord.js';
import type { Item } from '../../../src/shared/types.js';
import { preSerializedBatchWrite, sentInputOf } from '../../../src/writing/preSerialized.js';
import { toWireItem } from '../../../src/writing/wireItem.js';
import { itemJson } from '../../../src/writing/wireJson.js';
import { sized } from '../../support/testSize.js';

const TABLE = 'Orders.v2-x_1';

interface Sent {
  body: Buffer;
  headers: Record<string, string>;
}

/** A document client (as createClient makes) whose HTTP handler records each request and answers `{}`. */
function recordingClient() {
  const sent: Sent[] = [];
  const base = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://localhost:8000',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: { body?: unknown; headers: Record<string, string> }) => {
        const body = request.body;
        sent.push({ body: typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body as Uint8Array), headers: { ...request.headers } });
        return {
          response: {
            statusCode: 200,
            headers: { 'content-type': 'application/x-amz-json-1.0' },
            body: Readable.from([Buffer.from('{"UnprocessedItems":{}}')]),
          },
        };
      },
    },
  });
  base.middlewareStack.remove('loggerMiddleware');
  const client = DynamoDBDocumentClient.from(base);
  const send = (command: BatchWriteItemCommand) => (client as unknown as { send(c: BatchWriteItemCommand): Promise<unknown> }).send(command);
  return { sent, send, destroy: () => client.destroy() };
}

/** What the SDK itself sends for these items, and what ddb-spread sends. */
async function bothBodies(items: Item[]): Promise<{ sdk: Sent; ours: Sent }> {
  const c = recordingClient();
  try {
    await c.send(
      new BatchWriteItemCommand({
        RequestItems: { [TABLE]: items.map((item) => ({ PutRequest: { Item: toWireItem(item) } })) },
        ReturnConsumedCapacity: 'INDEXES',
      }),
    );
    await c.send(preSerializedBatchWrite(TABLE, items.map(itemJson)));
    expect(c.sent).toHaveLength(2);
    return { sdk: c.sent[0]!, ours: c.sent[1]! };
  } finally {
    c.destroy();
  }
}

/* ==== generated items ==== */

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
/** DynamoDB numbers as typed from text: up to 38 significant digits, signs, fractions, exponents. */
const numberText = fc.oneof(
  fc.tuple(fc.constantFrom('', '-'), digits(1, 38)).map(([s, d]) => `${s}${d}`),
  fc.tuple(fc.constantFrom('', '-'), digits(1, 19), digits(1, 19)).map(([s, a, b]) => `${s}${a}.${b}`),
  fc.tuple(digits(1, 5), fc.constantFrom('E', 'e', 'E+', 'e-'), fc.integer({ min: 0, max: 125 })).map(([d, e, x]) => `${d}${e}${x}`),
);
/** Strings without lone surrogates: any code point, and the characters JSON escapes or writes as UTF-8. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  // 0x00-0x7f: the plain ASCII fast path of wireJson's strings and its edges (`"`, `\`, controls, DEL).
  fc.string({ unit: 'binary-ascii', maxLength: 20 }),
  fc.string({
    unit: fc.constantFrom('"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u001f', '\u007f', '\u2028', '\u2029', 'é', '€', '😀', 'a'),
    maxLength: 20,
  }),
);
const name = fc.oneof(
  text.filter((s) => s.length > 0),
  fc.constantFrom('__proto__', 'constructor', 'toString', '0', '1', '10', 'pk', 'sk'),
);
const bytes = fc.uint8Array({ maxLength: 40 }).map((b) => (b.length % 2 === 0 ? b : Buffer.from(b)));
const scalar = fc.oneof(
  text,
  numberText.map((n) => new NumberValue(n)),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  bytes,
  fc.uniqueArray(text, { minLength: 1, maxLength: 5 }).map((xs) => new Set(xs)),
  fc.uniqueArray(numberText, { minLength: 1, maxLength: 5 }).map((xs) => new Set(xs.map((n) => new NumberValue(n)))),
  fc.uniqueArray(fc.integer(), { minLength: 1, maxLength: 5 }).map((xs) => new Set(xs)),
  fc
    .uniqueArray(fc.uint8Array({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4, selector: (b) => Buffer.from(b).toString('hex') })
    .map((xs) => new Set(xs)),
);
/** A map with no prototype (as typing builds them), so `__proto__` is an ordinary attribute name. */
const record = (entries: Array<[string, unknown]>): Item => {
  const out = ownRecord<unknown>();
  for (const [k, v] of entries) out[k] = v;
  return out as Item;
};
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(fc.oneof(tie('value'), fc.constant(undefined)), { maxLength: 4 }),
    fc.array(fc.tuple(name, fc.oneof(tie('value'), fc.constant(undefined))), { maxLength: 4 }).map(record),
  ),
}));
const item = fc.array(fc.tuple(name, value), { minLength: 1, maxLength: 8 }).map(record);

describe('wire JSON', () => {
  fcIt.prop([text, fc.string({ unit: 'binary-ascii', maxLength: 30 })], { numRuns: sized(1250, 5000) })(
    'writes a string value and an attribute name as JSON.stringify does, plain ASCII or not',
    (value, ascii) => {
      for (const s of [value, ascii]) {
        const named = ownRecord<unknown>();
        named[s] = 'x';
        expect(itemJson(named as Item)).toBe(`{${JSON.stringify(s)}:{"S":"x"}}`);
        expect(itemJson({ v: s })).toBe(`{"v":{"S":${JSON.stringify(s)}}}`);
        expect(itemJson({ v: new NumberValue(s) })).toBe(`{"v":{"N":${JSON.stringify(s)}}}`);
      }
    },
  );

  fcIt.prop([fc.array(item, { minLength: 1, maxLength: 25 })], { numRuns: sized(38, 150) })(
    "the batch body is byte for byte the SDK's own serialisation of toWireItem's AttributeValues",
    async (items) => {
      const { sdk, ours } = await bothBodies(items);
      expect(ours.body.toString('utf8')).toBe(sdk.body.toString('utf8'));
      expect(ours.body.equals(sdk.body)).toBe(true);
      expect(ours.headers['content-length']).toBe(String(sdk.body.length));
    },
  );

  it('writes a 38-digit number, binary, sets, nested maps and lists, and unicode as the SDK does', async () => {
    const items: Item[] = [
      record([
        ['pk', 'café "quoted" \\ \n\u0001 😀 \u2028'],
        ['n', new NumberValue('-12345678901234567890123456789012345678')],
        ['f', new NumberValue('0.00000000000000000000000000000000000001')],
        ['b', new Uint8Array([0, 255, 1, 2])],
        ['ss', new Set(['b', 'a'])],
        ['ns', new Set([new NumberValue('1E+5'), new NumberValue('2')])],
        ['bs', new Set([new Uint8Array([1]), new Uint8Array([2, 3])])],
        ['m', record([['__proto__', record([['1', [true, null, undefined, 'x']]])]])],
        ['0', 7],
        ['skip', undefined],
      ]),
    ];
    const { sdk, ours } = await bothBodies(items);
    expect(ours.body.equals(sdk.body)).toBe(true);
    // An attribute the SDK would drop as undefined is absent from both; integer-like names come first in both.
    expect(ours.body.toString('utf8')).not.toContain('skip');
    expect(ours.body.toString('utf8')).toMatch(/^\{"RequestItems":\{"Orders\.v2-x_1":\[\{"PutRequest":\{"Item":\{"0":\{"N":"7"\},"pk"/);
  });

  it('a call that does not ask for ConsumedCapacity sends what the SDK sends without it, byte for byte', async () => {
    const items = [
      record([
        ['pk', 'a'],
        ['n', 1],
      ]),
      record([
        ['pk', 'b'],
        ['s', 'x"y'],
      ]),
    ];
    const c = recordingClient();
    try {
      await c.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: items.map((item) => ({ PutRequest: { Item: toWireItem(item) } })) } }));
      await c.send(preSerializedBatchWrite(TABLE, items.map(itemJson), undefined, false));
      expect(c.sent[1]!.body.toString('utf8')).toBe(c.sent[0]!.body.toString('utf8'));
      expect(c.sent[1]!.body.toString('utf8')).not.toContain('ReturnConsumedCapacity');
    } finally {
      c.destroy();
    }
  });

  it('the body goes out signed: the middleware runs before content length and signing', async () => {
    const c = recordingClient();
    try {
      const command = preSerializedBatchWrite(TABLE, [itemJson(record([['pk', 'a']]))]);
      await c.send(command);
      const { body, headers } = c.sent[0]!;
      expect(body.toString('utf8')).toBe('{"RequestItems":{"Orders.v2-x_1":[{"PutRequest":{"Item":{"pk":{"S":"a"}}}}]},"ReturnConsumedCapacity":"INDEXES"}');
      expect(headers['content-length']).toBe(String(body.length));
      expect(headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=local\//);
      expect(headers['x-amz-target']).toBe('DynamoDB_20120810.BatchWriteItem');
      // What a fake client reads back is the body, not the command's placeholder input.
      expect(sentInputOf(command).RequestItems?.[TABLE]).toEqual([{ PutRequest: { Item: { pk: { S: 'a' } } } }]);
    } finally {
      c.destroy();
    }
  });
});
