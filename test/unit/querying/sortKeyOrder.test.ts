import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemJsonLine } from '../../../src/querying/itemJson.js';
import { compareSortKeys } from '../../../src/querying/sortKeyOrder.js';

describe('compareSortKeys: the order DynamoDB returns a partition in', () => {
  it('numbers by value, with every digit and any spelling', () => {
    const texts = ['10', '9', '-1', '0', '-0.5', '1E+3', '12345678901234567890123456789012345679', '12345678901234567890123456789012345678', '0.001', '-100'];
    const sorted = texts
      .map((t) => new NumberValue(t))
      .sort(compareSortKeys)
      .map((n) => n.value);
    expect(sorted).toEqual([
      '-100',
      '-1',
      '-0.5',
      '0',
      '0.001',
      '9',
      '10',
      '1E+3',
      '12345678901234567890123456789012345678',
      '12345678901234567890123456789012345679',
    ]);
  });

  it('strings by UTF-8 bytes (not UTF-16 units), binary by unsigned bytes', () => {
    // U+FF5E is 0xEF 0xBD 0x9E in UTF-8, U+1F600 is 0xF0 ...: by UTF-16 units the emoji (0xD83D) would come first.
    expect(['😀', '～', 'a', 'B'].sort(compareSortKeys)).toEqual(['B', 'a', '～', '😀']);
    expect([new Uint8Array([0xff]), new Uint8Array([0x01, 0x02]), new Uint8Array([0x01])].sort(compareSortKeys)).toEqual([
      new Uint8Array([0x01]),
      new Uint8Array([0x01, 0x02]),
      new Uint8Array([0xff]),
    ]);
  });
});

describe('itemJsonLine', () => {
  const item = {
    pk: 'k#1',
    n: new NumberValue('12345678901234567890123456789012345678'),
    b: new Uint8Array([1, 2, 3]),
    s: new Set(['x', 'y']),
    m: { l: [true, null] },
  };

  it('plain JSON keeps every digit, binary as base64, sets as lists', () => {
    expect(itemJsonLine(item)).toBe('{"pk":"k#1","n":12345678901234567890123456789012345678,"b":"AQID","s":["x","y"],"m":{"l":[true,null]}}\n');
  });

  it('--ddb-json writes DynamoDB JSON', () => {
    expect(JSON.parse(itemJsonLine(item, true))).toEqual({
      pk: { S: 'k#1' },
      n: { N: '12345678901234567890123456789012345678' },
      b: { B: 'AQID' },
      s: { SS: ['x', 'y'] },
      m: { M: { l: { L: [{ BOOL: true }, { NULL: true }] } } },
    });
  });
});
