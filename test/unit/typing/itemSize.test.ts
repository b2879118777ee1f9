import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemSize, MAX_ITEM_BYTES, valueSize, writeUnits } from '../../../src/typing/itemSize.js';
import type { Item } from '../../../src/shared/types.js';

const n = (text: string) => new NumberValue(text);

describe('valueSize', () => {
  it.each<[string, unknown, number]>([
    ['ASCII string', 'abc', 3],
    ['empty string', '', 0],
    ['2-byte UTF-8', 'é', 2],
    ['3-byte UTF-8', '日本', 6],
    ['4-byte UTF-8 (surrogate pair)', '😀', 4],
    ['mixed', 'aé日😀', 1 + 2 + 3 + 4],
    ['NumberValue 12', n('12'), 2],
    ['NumberValue 123', n('123'), 3],
    ['NumberValue -1', n('-1'), 3],
    ['NumberValue 1.50 counts as 1.5', n('1.50'), 3],
    ['NumberValue 0', n('0'), 1],
    ['JS number 123', 123, 3],
    ['bigint 12', 12n, 2],
    ['binary: raw bytes', new Uint8Array(10), 10],
    ['empty binary', new Uint8Array(0), 0],
    ['Buffer', Buffer.from('héllo'), 6],
    ['null', null, 1],
    ['true', true, 1],
    ['false', false, 1],
    ['empty list', [], 3],
    ['list: 3 + 1 per element + elements', ['a', 'bc'], 3 + (1 + 1) + (1 + 2)],
    ['list of null', [null, null], 3 + 2 * (1 + 1)],
    ['empty map', {}, 3],
    ['map: 3 + per entry 1 + name + value', { x: 'ab' }, 3 + 1 + 1 + 2],
    ['map with multi-byte names', { é: 'é' }, 3 + 1 + 2 + 2],
    ['map skips undefined entries', { x: 'ab', y: undefined }, 3 + 1 + 1 + 2],
    ['nested map and list', { l: [null] }, 3 + 1 + 1 + (3 + 1 + 1)],
    ['list of maps', [{ a: 'b' }, {}], 3 + (1 + (3 + 1 + 1 + 1)) + (1 + 3)],
    ['string set: sum of elements', new Set(['a', 'bc']), 3],
    ['string set with multi-byte', new Set(['é', '日']), 5],
    ['number set', new Set([n('1'), n('12'), n('123')]), 2 + 2 + 3],
    ['binary set', new Set([new Uint8Array(2), new Uint8Array(3)]), 5],
  ])('%s', (_label, value, size) => {
    expect(valueSize(value)).toBe(size);
  });
});

describe('itemSize', () => {
  it.each<[string, Item, number]>([
    ['empty item', {}, 0],
    ['names count', { abc: 'x' }, 3 + 1],
    ['multi-byte names count as UTF-8', { é日: 'x' }, 5 + 1],
    ['a number attribute', { price: n('12.5') }, 5 + 3],
    ['null and booleans are 1 byte', { a: null, b: true, c: false }, 3 * (1 + 1)],
    ['binary', { b: new Uint8Array(100) }, 1 + 100],
    ['undefined attributes are not stored', { a: 'x', b: undefined }, 2],
    ['empty string attribute', { s: '' }, 1],
    [
      'a realistic item',
      { pk: 'user#1', sk: n('42'), tags: new Set(['a', 'b']), profile: { name: 'Zoë', age: n('30') } },
      2 + 6 + (2 + 2) + (4 + 2) + (7 + 3 + (1 + 4 + 4) + (1 + 3 + 2)),
    ],
  ])('%s', (_label, item, size) => {
    expect(itemSize(item)).toBe(size);
  });

  it('is the sum of name bytes and value sizes', () => {
    const item: Item = { pk: 'a', list: [n('1'), 'x', { k: true }], bytes: new Uint8Array(7) };
    const expected = Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);
    expect(itemSize(item)).toBe(expected);
  });

  it('MAX_ITEM_BYTES is 400 KB (409600 bytes)', () => {
    expect(MAX_ITEM_BYTES).toBe(409_600);
  });

  it('an item built to exactly 400 KB measures exactly 400 KB and costs 400 WCU', () => {
    const item: Item = { pk: 'a', data: 'x'.repeat(MAX_ITEM_BYTES - 2 - 1 - 4) };
    expect(itemSize(item)).toBe(MAX_ITEM_BYTES);
    expect(writeUnits(itemSize(item))).toBe(400);
    item.data = `${item.data as string}x`;
    expect(itemSize(item)).toBe(MAX_ITEM_BYTES + 1);
    expect(writeUnits(itemSize(item))).toBe(401);
  });

  it('a 2-byte character counts twice toward the size', () => {
    expect(itemSize({ s: 'é'.repeat(1000) })).toBe(1 + 2000);
  });
});

describe('writeUnits', () => {
  it.each([
    [0, 1],
    [1, 1],
    [1023, 1],
    [1024, 1],
    [1025, 2],
    [2048, 2],
    [2049, 3],
    [409_600, 400],
  ])('%i bytes -> %i WCU', (size, wcu) => {
    expect(writeUnits(size)).toBe(wcu);
  });
});
