import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { packValue, unpackValue } from '../../../src/reading/clonedValues.js';
import { Temporal } from '../../../src/typing/temporal.js';
import { InvalidJson, InvalidText } from '../../../src/typing/typedValues.js';

/** What the load's thread gets of a value the Parquet worker posts. */
const across = (value: unknown) => unpackValue(structuredClone(packValue(value)));

describe('typed values across the Parquet worker boundary', () => {
  it('keeps the classes typing tells by instanceof, nested in lists and structs', () => {
    const row: Record<string, unknown> = {
      at: new Temporal('us', 1_705_326_300_123_456n),
      day: new Temporal('days', 19_737n),
      price: new NumberValue('1234567890123456789012345678901234.5678'),
      bad: new InvalidText(new Uint8Array([0xff, 0xfe])),
      json: new InvalidJson('{', 'Unexpected end'),
      list: [new NumberValue('1'), null, 'x', [new Temporal('ms', -5n)]],
      struct: { inner: new NumberValue('-0.0005'), bytes: new Uint8Array([0, 1, 255]), big: 9007199254740993n },
      tags: new Set(['a', 'b']),
    };
    const back = across(row) as Record<string, unknown>;
    expect(back['at']).toBeInstanceOf(Temporal);
    expect(back['at']).toEqual(row['at']);
    expect(back['day']).toEqual(new Temporal('days', 19_737n));
    expect(back['price']).toBeInstanceOf(NumberValue);
    expect((back['price'] as NumberValue).value).toBe('1234567890123456789012345678901234.5678');
    expect(back['bad']).toBeInstanceOf(InvalidText);
    expect((back['bad'] as InvalidText).bytes).toEqual(new Uint8Array([0xff, 0xfe]));
    expect(back['json']).toBeInstanceOf(InvalidJson);
    expect(back['json']).toEqual(row['json']);
    const list = back['list'] as unknown[];
    expect(list[0]).toBeInstanceOf(NumberValue);
    expect((list[3] as unknown[])[0]).toBeInstanceOf(Temporal);
    const struct = back['struct'] as Record<string, unknown>;
    expect(struct['inner']).toBeInstanceOf(NumberValue);
    expect(struct['bytes']).toEqual(new Uint8Array([0, 1, 255]));
    expect(struct['big']).toBe(9007199254740993n);
    expect(back['tags']).toEqual(new Set(['a', 'b']));
  });

  it('keeps own keys named like Object.prototype members as own properties', () => {
    const row: Record<string, unknown> = {};
    for (const name of ['__proto__', 'constructor', 'toString'])
      Object.defineProperty(row, name, { value: { [name]: 1 }, enumerable: true, writable: true, configurable: true });
    const back = across(row) as Record<string, unknown>;
    expect(Object.keys(back)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual(Object.getOwnPropertyDescriptor(row, '__proto__')?.value);
  });
});
