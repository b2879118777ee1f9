import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { differingAttributes } from '../../../src/verifying/attributeEquality.js';
import { itemFingerprint } from '../../../src/verifying/itemFingerprint.js';

type Item = Record<string, AttributeValue>;
const bytes = (...b: number[]) => new Uint8Array(b);

describe('itemFingerprint', () => {
  const base: Item = {
    pk: { S: 'a' },
    n: { N: '1.50' },
    ns: { NS: ['3', '1E2', '2'] },
    ss: { SS: ['y', 'x'] },
    bs: { BS: [bytes(2), bytes(1, 0)] },
    b: { B: bytes(1, 2, 3) },
    m: { M: { z: { BOOL: true }, a: { NULL: true } } },
    l: { L: [{ N: '10' }, { S: '10' }] },
  };

  it('is the same for items DynamoDB holds equal: numbers by value, sets and map attributes in any order', () => {
    const same: Item = {
      l: { L: [{ N: '1E1' }, { S: '10' }] },
      m: { M: { a: { NULL: true }, z: { BOOL: true } } },
      b: { B: bytes(1, 2, 3) },
      bs: { BS: [bytes(1, 0), bytes(2)] },
      ss: { SS: ['x', 'y'] },
      ns: { NS: ['2', '100', '3.0'] },
      n: { N: '1.5' },
      pk: { S: 'a' },
    };
    expect(differingAttributes(base, same)).toEqual([]);
    expect(itemFingerprint(same)).toBe(itemFingerprint(base));
  });

  it('differs whenever an attribute differs', () => {
    const changes: Item[] = [
      { ...base, n: { N: '1.51' } },
      { ...base, n: { S: '1.5' } },
      { ...base, ns: { NS: ['3', '100'] } },
      { ...base, ss: { SS: ['x', 'y', 'z'] } },
      { ...base, bs: { BS: [bytes(2), bytes(1, 1)] } },
      { ...base, b: { B: bytes(1, 2) } },
      { ...base, m: { M: { z: { BOOL: false }, a: { NULL: true } } } },
      { ...base, l: { L: [{ S: '10' }, { N: '10' }] } },
      { ...base, extra: { S: '' } },
      Object.fromEntries(Object.entries(base).filter(([name]) => name !== 'm')),
      // Names and values that would run together in a naive text.
      { ...base, pk: { S: 'a",n:' } },
    ];
    const fingerprints = new Set([itemFingerprint(base), ...changes.map(itemFingerprint)]);
    expect(fingerprints.size).toBe(changes.length + 1);
    for (const changed of changes) expect(differingAttributes(base, changed).length).toBeGreaterThan(0);
  });
});
