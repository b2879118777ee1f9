/**
 * The typing of Parquet and Ion values. Numbers keep every digit (no JS double on the way),
 * timestamps keep their unit's precision, DynamoDB's Ion set annotations become sets, and every value
 * DynamoDB cannot store is a row error with its field.
 */
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { RowError } from '../../../src/shared/errors.js';
import { itemFromIon } from '../../../src/typing/ionItem.js';
import { float32Text } from '../../../src/typing/parquetValues.js';
import { decimalText, Temporal, temporalValue } from '../../../src/typing/temporal.js';
import { InvalidText, itemFromTypedValues, typedRowJson } from '../../../src/typing/typedValues.js';

const n = (text: string) => new NumberValue(text);

function rowErrorOf(fn: () => unknown): RowError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RowError) return error;
    throw error;
  }
  throw new Error('expected a RowError, nothing was thrown');
}

describe('decimalText: an unscaled integer and a scale, exactly', () => {
  it.each([
    [12345n, 2, '123.45'],
    [-5n, 4, '-0.0005'],
    [0n, 3, '0.000'],
    [12345678901234567890123456789012345678n, 4, '1234567890123456789012345678901234.5678'],
    [7n, 0, '7'],
    [7n, -2, '700'],
  ])('%s scaled by %s is %s', (value, scale, text) => {
    expect(decimalText(value, scale)).toBe(text);
  });
});

describe('temporalValue', () => {
  it('ISO text keeps the unit: micro- and nanoseconds are not cut to milliseconds', () => {
    expect(temporalValue(new Temporal('us', 1_700_000_000_123_456n), 'iso', 't')).toBe('2023-11-14T22:13:20.123456Z');
    expect(temporalValue(new Temporal('ns', 1_700_000_000_000_000_001n), 'iso', 't')).toBe('2023-11-14T22:13:20.000000001Z');
    expect(temporalValue(new Temporal('ms', 1_700_000_000_500n), 'iso', 't')).toBe('2023-11-14T22:13:20.500Z');
    expect(temporalValue(new Temporal('us', 1_700_000_000_000_000n), 'iso', 't')).toBe('2023-11-14T22:13:20Z');
    expect(temporalValue(new Temporal('days', 19_675n), 'iso', 't')).toBe('2023-11-14');
  });

  it('before 1970 floors to the second below, so the fraction stays positive', () => {
    expect(temporalValue(new Temporal('ms', -1n), 'iso', 't')).toBe('1969-12-31T23:59:59.999Z');
  });

  it('epoch numbers are exact (and canonical, so keys compare) in seconds or milliseconds', () => {
    expect(temporalValue(new Temporal('us', 1_700_000_000_123_456n), 'epoch-ms', 't')).toEqual(n('1700000000123.456'));
    expect(temporalValue(new Temporal('ns', 1_700_000_000_123_456_789n), 'epoch-s', 't')).toEqual(n('1700000000.123456789'));
    expect(temporalValue(new Temporal('days', 1n), 'epoch-s', 't')).toEqual(n('86400'));
  });

  it('a timestamp outside years 0000-9999 is a TYPE_ERROR naming the field, not a wrong date', () => {
    const error = rowErrorOf(() => temporalValue(new Temporal('ms', 10n ** 18n), 'iso', 'when'));
    expect([error.code, error.field]).toEqual(['TYPE_ERROR', 'when']);
  });
});

describe('float32Text: the shortest text of a 32-bit float', () => {
  it.each([
    [Math.fround(0.1), '0.1'],
    [Math.fround(1.5), '1.5'],
    [Math.fround(3.4028234663852886e38), '3.4028235e+38'],
    [Math.fround(1e-7), '1e-7'],
  ])('%s is %s', (value, text) => {
    expect(float32Text(value)).toEqual(n(text));
    expect(Math.fround(Number(text))).toBe(value);
  });
});

describe('itemFromTypedValues', () => {
  const opts = { empty: 'omit', timestamps: 'iso' } as const;

  it('maps each JS value to its DynamoDB type, numbers by their exact text', () => {
    const item = itemFromTypedValues(
      {
        s: 'x',
        i: 9007199254740993n,
        d: 0.1,
        neg: -0,
        ok: true,
        b: new Uint8Array([1, 2]),
        l: [1, 'a', null],
        m: { k: 2n },
        dec: n('1.50'),
        t: new Temporal('days', 0n),
      },
      opts,
    );
    expect(item).toEqual({
      s: 'x',
      i: n('9007199254740993'),
      d: n('0.1'),
      neg: n('0'),
      ok: true,
      b: new Uint8Array([1, 2]),
      l: [n('1'), 'a', null],
      m: { k: n('2') },
      dec: n('1.5'),
      t: '1970-01-01',
    });
  });

  it('nulls follow --empty in rows and maps; a list keeps its NULL', () => {
    const row = { pk: 'a', gone: null, m: { x: null, y: 1 }, l: [null] };
    expect(itemFromTypedValues(row, opts)).toEqual({ pk: 'a', m: { y: n('1') }, l: [null] });
    expect(itemFromTypedValues(row, { ...opts, empty: 'null' })).toEqual({ pk: 'a', gone: null, m: { x: null, y: n('1') }, l: [null] });
    expect(itemFromTypedValues(row, { ...opts, empty: 'string' })).toEqual({ pk: 'a', gone: '', m: { x: '', y: n('1') }, l: [null] });
  });

  it('NaN, infinities and numbers out of range reject the row with the field', () => {
    expect(rowErrorOf(() => itemFromTypedValues({ x: Number.NaN }, opts)).field).toBe('x');
    expect(rowErrorOf(() => itemFromTypedValues({ m: { y: Infinity } }, opts)).field).toBe('m.y');
    expect(rowErrorOf(() => itemFromTypedValues({ big: 1e300 }, opts)).code).toBe('TYPE_ERROR');
  });

  it('text that was not UTF-8 rejects the row (INVALID_UTF8), never stored with U+FFFD', () => {
    const error = rowErrorOf(() => itemFromTypedValues({ name: new InvalidText(new Uint8Array([0xff])) }, opts));
    expect([error.code, error.field]).toEqual(['INVALID_UTF8', 'name']);
  });

  it('nesting past 32 levels is TOO_DEEP', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(rowErrorOf(() => itemFromTypedValues({ deep }, opts)).code).toBe('TOO_DEEP');
  });

  it('the reject file rendering keeps every digit and shows bytes as base64', () => {
    expect(JSON.parse(typedRowJson({ i: 2n ** 70n, d: n('0.10'), b: new Uint8Array([255]) }))).toEqual({ i: '1180591620717411303424', d: '0.10', b: '/w==' });
  });
});

describe('itemFromIon: Ion as DynamoDB ION exports write it', () => {
  const line =
    '$ion_1_0 {Item:{"Authors":$dynamodb_SS::["Author1","Author2"],"Id":103.,"Price":20.50,"Big":12345678901234567890123456789012345678,' +
    '"Small":1.5d-100,"Blob":{{aGVsbG8=}},"Nums":$dynamodb_NS::[1.0,2.50,1],"Bins":$dynamodb_BS::[{{AQ==}}],"None":null,"Flag":false,' +
    '"List":[1,"a",{b:null}],"Map":{"x":{"y":7}}}}';

  it('maps every DynamoDB type exactly', () => {
    expect(itemFromIon(line)).toEqual({
      Authors: new Set(['Author1', 'Author2']),
      Id: n('103'),
      Price: n('20.5'),
      Big: n('12345678901234567890123456789012345678'),
      Small: n('1.5E-100'),
      Blob: new Uint8Array(Buffer.from('hello')),
      Nums: new Set([n('1'), n('2.5')]),
      Bins: new Set([new Uint8Array([1])]),
      None: null,
      Flag: false,
      List: [n('1'), 'a', { b: null }],
      Map: { x: { y: n('7') } },
    });
  });

  it('a bare struct is an item too', () => {
    expect(itemFromIon('{pk:"a", n:2}')).toEqual({ pk: 'a', n: n('2') });
  });

  it('floats take their shortest exact text; NaN rejects', () => {
    expect(itemFromIon('{x:1.5e0}')).toEqual({ x: n('1.5') });
    expect(rowErrorOf(() => itemFromIon('{x:nan}')).field).toBe('x');
  });

  it('timestamps are ISO text, or epoch numbers with --timestamps', () => {
    expect(itemFromIon('{t:2024-01-15T13:45:00.123Z}')).toEqual({ t: '2024-01-15T13:45:00.123Z' });
    expect(itemFromIon('{t:2024-01-15T13:45:00.123Z}', 'epoch-ms')).toEqual({ t: n('1705326300123') });
  });

  it.each([
    ['{Item:{pk:"a"', 'ION_SYNTAX'],
    ['{a:1} {b:2}', 'ION_SYNTAX'],
    ['[1,2]', 'NOT_AN_OBJECT'],
    ['$ion_1_0', 'NOT_AN_OBJECT'],
    ['{s:$dynamodb_SS::[1]}', 'TYPE_ERROR'],
    ['{s:$dynamodb_SS::[]}', 'TYPE_ERROR'],
    ['{n:$dynamodb_NS::[1e200]}', 'TYPE_ERROR'],
  ])('%s is a %s row error', (text, code) => {
    expect(rowErrorOf(() => itemFromIon(text)).code).toBe(code);
  });

  it('nesting past 32 levels is TOO_DEEP', () => {
    const text = `{a:${'['.repeat(40)}1${']'.repeat(40)}}`;
    expect(rowErrorOf(() => itemFromIon(text)).code).toBe('TOO_DEEP');
  });
});
