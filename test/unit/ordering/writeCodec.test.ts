import { type NumberValue } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemFromAttributeValues, itemToDynamoJson, toNumberValue } from '../../../src/typing/json.js';
import type { Item, PlannedWrite } from '../../../src/shared/types.js';
import { decodeWrite, encodeWrite, partitionEnd } from '../../../src/ordering/writeCodec.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

/** Numbers as the planner makes them: canonical text (the codec writes the text and reads it back canonical). */
const n = (text: string): NumberValue => toNumberValue(text, 'test');
const bytes = (...values: number[]) => new Uint8Array(values);

const EVERY_TYPE: Item = {
  pk: 'user-1#3',
  s: 'text with "quotes", a\nline break, a\r\ncarriage return, a tab\t, U+2028 \u2028, emoji 😀, lone \ud800',
  empty: '',
  n38: n('12345678901234567890123456789012345678'),
  nNeg: n('-0.000000000000000000000000000000000000012345'),
  nBig: n('9.9999999999999999999999999999999999999E+125'),
  zero: n('0'),
  b: bytes(0, 1, 2, 253, 254, 255),
  bEmpty: bytes(),
  t: true,
  f: false,
  nul: null,
  m: { inner: 'x', deeper: { n: n('1.5'), l: [n('2'), 'y', null, bytes(9)] }, S: { S: 'looks like a descriptor' } },
  mEmpty: {},
  l: ['a', n('3'), true, null, { k: 'v' }, ['nested', [n('4')]], new Set(['in', 'a', 'list'])],
  lEmpty: [],
  ss: new Set(['b', 'a', 'é', '']),
  ns: new Set([n('1'), n('12345678901234567890123456789012345678'), n('-5.5')]),
  bs: new Set([bytes(1), bytes(2, 3), bytes()]),
  Item: { S: 'an attribute named Item' },
};

/** Builds an item whose `__proto__` attribute is an own property (an object literal would set the prototype). */
function withProto(item: Item): Item {
  const out: Item = {};
  for (const [name, value] of Object.entries(item)) out[name] = value;
  Object.defineProperty(out, '__proto__', { value: 'an attribute named __proto__', enumerable: true, writable: true, configurable: true });
  return out;
}

function write(item: Item, over: Partial<PlannedWrite> = {}): PlannedWrite {
  return {
    origin: { file: 'data/in.jsonl', line: 42, raw: '{"pk":"user-1"}' },
    item,
    keyId: '7:Suser-1#3',
    partitionId: 'Suser-1#3',
    size: 123,
    wcu: 1,
    ...over,
  };
}

/** The exact wire form DynamoDB would get, to compare items type for type. */
const wire = (item: Item) => marshall(item, { convertTopLevelContainer: false });

describe('itemToDynamoJson / itemFromAttributeValues', () => {
  it('round-trips every attribute type exactly, through JSON text', () => {
    const item = withProto(EVERY_TYPE);
    const json = itemToDynamoJson(item);
    const back = itemFromAttributeValues(JSON.parse(JSON.stringify(json)) as Record<string, unknown>);
    expect(back).toEqual(item);
    expect(Object.keys(back)).toEqual(Object.keys(item));
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(back, '__proto__')).toBe(true);
    expect((back.n38 as NumberValue).value).toBe('12345678901234567890123456789012345678');
    expect(back.b).toBeInstanceOf(Uint8Array);
    expect([...(back.b as Uint8Array)]).toEqual([0, 1, 2, 253, 254, 255]);
  });

  it('writes DynamoDB JSON as the AWS CLI does', () => {
    expect(
      itemToDynamoJson({
        s: 'x',
        n: n('1.50'),
        b: bytes(1, 2, 3),
        t: true,
        z: null,
        m: { a: n('1.0') },
        l: ['x'],
        ss: new Set(['a']),
        ns: new Set([n('2')]),
        bs: new Set([bytes(255)]),
      }),
    ).toEqual({
      s: { S: 'x' },
      n: { N: '1.5' },
      b: { B: 'AQID' },
      t: { BOOL: true },
      z: { NULL: true },
      m: { M: { a: { N: '1' } } },
      l: { L: [{ S: 'x' }] },
      ss: { SS: ['a'] },
      ns: { NS: ['2'] },
      bs: { BS: ['/w=='] },
    });
  });
});

/** A random attribute value of any type, nested up to `depth`; numbers canonical, sets without duplicates. */
function randomValue(random: () => number, depth: number): unknown {
  const text = () => {
    const alphabet = ['a', 'Z', '0', ' ', '"', '\\', '\n', '\r', '\t', 'é', '😀', '\u2028', '#', ':', '{', '\u0000'];
    return Array.from({ length: Math.floor(random() * 8) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  };
  const number = () => {
    const digits = Array.from({ length: 1 + Math.floor(random() * 38) }, () => Math.floor(random() * 10)).join('');
    const exponent = Math.floor(random() * 120) - 60;
    return toNumberValue(`${random() < 0.3 ? '-' : ''}${digits}E${exponent}`, 'x');
  };
  const binary = () => Uint8Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * 256));
  const kind = Math.floor(random() * (depth > 0 ? 10 : 7));
  switch (kind) {
    case 0:
      return text();
    case 1:
      return number();
    case 2:
      return binary();
    case 3:
      return random() < 0.5;
    case 4:
      return null;
    case 5: {
      const set = new Map<string, string>();
      for (let i = 0; i < 1 + Math.floor(random() * 4); i++) set.set(text(), '');
      return new Set(set.keys());
    }
    case 6: {
      const set = new Map<string, unknown>();
      if (random() < 0.5) {
        for (let i = 0; i < 1 + Math.floor(random() * 4); i++) {
          const v = number();
          set.set(v.value, v);
        }
      } else {
        for (let i = 0; i < 1 + Math.floor(random() * 4); i++) {
          const v = binary();
          set.set(Buffer.from(v).toString('base64'), v);
        }
      }
      return new Set(set.values());
    }
    case 7:
    case 8: {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < Math.floor(random() * 4); i++) out[`${text()}${i}`] = randomValue(random, depth - 1);
      return out;
    }
    default:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth - 1));
  }
}

describe('encodeWrite / decodeWrite', () => {
  it('round-trips a write with every attribute type, its origin, keys, size, WCU and unshardedKey', () => {
    const original = write(withProto(EVERY_TYPE), {
      unshardedKey: 'user-1',
      size: 4321,
      wcu: 5,
      origin: { file: 'C:\\in\\data.csv', line: 1_000_001, raw: 'a,"multi\nline",b\r\n' },
    });
    const text = encodeWrite(original);
    const back = decodeWrite(text);
    expect(back).toEqual(original);
    expect(wire(back.item)).toEqual(wire(original.item));
    expect(Object.keys(back.item)).toEqual(Object.keys(original.item));
    expect(Object.prototype.hasOwnProperty.call(back.item, '__proto__')).toBe(true);
    expect(back.origin).toEqual({ file: 'C:\\in\\data.csv', line: 1_000_001, raw: 'a,"multi\nline",b\r\n' });
    expect([back.keyId, back.partitionId, back.unshardedKey, back.size, back.wcu]).toEqual(['7:Suser-1#3', 'Suser-1#3', 'user-1', 4321, 5]);
  });

  it("a write's own condition (--item-conditions) round-trips, a delete's too; a write without one encodes as before", () => {
    const plain = write({ pk: 'a' });
    const before = encodeWrite(plain);
    expect(JSON.parse(before)[8]).toBe(0);
    const conditioned = write(
      { pk: 'a' },
      { condition: { expression: '#v < :v OR attribute_not_exists(pk)', names: { '#v': 'v' }, values: { ':v': n('7'), ':b': bytes(1, 2) } } },
    );
    expect(decodeWrite(encodeWrite(conditioned))).toEqual(conditioned);
    const bare = write({ pk: 'a' }, { op: 'delete', condition: { expression: 'attribute_exists(pk)' } });
    expect(decodeWrite(encodeWrite(bare))).toEqual(bare);
    const deleted = write({ pk: 'a' }, { op: 'delete' });
    expect(JSON.parse(encodeWrite(deleted))[8]).toBe(1);
    expect(decodeWrite(encodeWrite(deleted))).toEqual(deleted);
  });

  it('a write without unshardedKey comes back without the property', () => {
    const back = decodeWrite(encodeWrite(write({ pk: 'a' })));
    expect('unshardedKey' in back).toBe(false);
    expect(back).toEqual(write({ pk: 'a' }));
  });

  it('an empty unsharded key is kept (only null means none)', () => {
    expect(decodeWrite(encodeWrite(write({ pk: 'a' }, { unshardedKey: '' }))).unshardedKey).toBe('');
  });

  it('the text is one line, well-formed UTF-16 (so UTF-8 files keep it), even when the raw text and values have line breaks', () => {
    const text = encodeWrite(write(withProto(EVERY_TYPE), { origin: { file: 'f', line: 1, raw: 'one\ntwo\rthree\r\nfour\u2028five \ud83d' } }));
    expect(text).not.toMatch(/[\n\r]/);
    expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
    expect(decodeWrite(Buffer.from(text, 'utf8').toString('utf8')).origin.raw).toBe('one\ntwo\rthree\r\nfour\u2028five \ud83d');
  });

  it('round-trips 300 random writes exactly (seeded)', () => {
    const random = mulberry32(31);
    for (let i = 0; i < 300; i++) {
      const item: Item = { pk: `k-${i}` };
      for (let a = 0; a < Math.floor(random() * 6); a++) item[`attr${a}`] = randomValue(random, 3);
      const raw = Array.from({ length: Math.floor(random() * 20) }, () => 'ab\n\r"\\é😀,'[Math.floor(random() * 11)]).join('');
      const original = write(item, {
        origin: { file: `f${i}.csv`, line: 1 + Math.floor(random() * 1e9), raw },
        size: Math.floor(random() * 400_000),
        wcu: 1 + Math.floor(random() * 400),
        ...(random() < 0.5 ? { unshardedKey: `k-${i}` } : {}),
      });
      const text = encodeWrite(original);
      expect(text, `write ${i}`).not.toMatch(/[\n\r]/);
      const back = decodeWrite(text);
      expect(back, `write ${i}`).toEqual(original);
      expect(wire(back.item), `write ${i}`).toEqual(wire(original.item));
      expect(encodeWrite(back), `write ${i}`).toBe(text);
    }
  });
});

describe('partitionEnd', () => {
  it('finds the end of the partition identity in the UTF-8 bytes of an encoding, for awkward identities', () => {
    const identities = [
      'Suser-1',
      '',
      '"',
      '\\',
      '\\"',
      'a\\\\"b',
      'tab\tnewline\n',
      'é',
      '日本語',
      '😀',
      '\u2028',
      '\ud800',
      '\u0000',
      '"]',
      '],',
      'x'.repeat(3000),
    ];
    for (const partitionId of identities) {
      const text = encodeWrite(write({ pk: partitionId }, { partitionId }));
      const bytes = Buffer.from(`12\t${text}`, 'utf8');
      const end = partitionEnd(bytes, 3);
      // The bytes up to the end are the identity's JSON text, and the next byte separates the fields.
      expect(JSON.parse(bytes.toString('utf8', 4, end)), JSON.stringify(partitionId)).toBe(partitionId);
      expect(String.fromCharCode(bytes[end]!)).toBe(',');
    }
  });

  it('equal identities have equal bytes, different ones different bytes (what buckets group by)', () => {
    const bytesOf = (partitionId: string) => {
      const b = Buffer.from(encodeWrite(write({ pk: 'x' }, { partitionId })), 'utf8');
      return b.toString('latin1', 1, partitionEnd(b, 0));
    };
    expect(bytesOf('a"b')).toBe(bytesOf('a"b'));
    expect(bytesOf('a"b')).not.toBe(bytesOf('a\\"b'));
    expect(bytesOf('é')).not.toBe(bytesOf('e'));
    expect(bytesOf('\ud800')).not.toBe(bytesOf('\ufffd'));
  });
});
