import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { numberSize, parseDynamoNumber, plainNumberSize, type DynamoNumber } from '../../../src/typing/number.js';
import { mulberry32 } from '../../../tools/mulberry32.js';
import { sized } from '../../support/testSize.js';

function parsed(text: string): DynamoNumber {
  const result = parseDynamoNumber(text);
  if (typeof result === 'string') throw new Error(`expected ${JSON.stringify(text)} to parse, got: ${result}`);
  return result;
}

describe('parseDynamoNumber: canonical text', () => {
  it.each([
    ['0', '0'],
    ['-0', '0'],
    ['-0.0', '0'],
    ['0e5', '0'],
    ['000', '0'],
    ['+5', '5'],
    ['007', '7'],
    ['1.50', '1.5'],
    ['1.0', '1'],
    ['5.', '5'],
    ['.5', '0.5'],
    ['0.05', '0.05'],
    ['-12.500', '-12.5'],
    ['1e3', '1000'],
    ['1E3', '1000'],
    ['1.2345E2', '123.45'],
    ['12345e-2', '123.45'],
    ['1e-20', '0.00000000000000000001'],
    ['1e+3', '1000'],
    ['  42  ', '42'],
    ['12345678901234567890', '12345678901234567890'],
    ['-12345678901234567890.123456789', '-12345678901234567890.123456789'],
    ['9'.repeat(38), '9'.repeat(38)],
    // A long run of trailing zeros is precision-free: one significant digit.
    [`1${'0'.repeat(38)}`, `1${'0'.repeat(38)}`],
    // Large and tiny magnitudes switch to scientific form.
    ['1e39', `1${'0'.repeat(39)}`],
    ['1e40', '1E40'],
    ['1e100', '1E100'],
    ['1.5e100', '1.5E100'],
    ['-1.5e-50', '-1.5E-50'],
    ['1E125', '1E125'],
    ['1E-130', '1E-130'],
    ['-1E-130', '-1E-130'],
    [`9.${'9'.repeat(37)}E+125`, `9.${'9'.repeat(37)}E125`],
  ])('%j -> %j', (input, text) => {
    expect(parsed(input).text).toBe(text);
  });

  it.each([
    ['123.45', { digits: '12345', exponent: 3, negative: false }],
    ['-0.05', { digits: '5', exponent: -1, negative: true }],
    ['1000', { digits: '1', exponent: 4, negative: false }],
    ['0', { digits: '', exponent: 0, negative: false }],
    ['-0', { digits: '', exponent: 0, negative: false }],
  ])('%j has digits/exponent/sign %j (value = 0.<digits> x 10^exponent)', (input, expected) => {
    expect(parsed(input)).toMatchObject(expected);
  });

  it('re-parsing the canonical text gives the same number (generated)', () => {
    const random = mulberry32(7);
    for (let i = 0; i < 500; i++) {
      const digits = String(1 + Math.floor(random() * 9)) + Array.from({ length: Math.floor(random() * 37) }, () => Math.floor(random() * 10)).join('');
      const exp = Math.floor(random() * 160) - 80;
      const input = `${random() < 0.5 ? '-' : ''}${digits}e${exp}`;
      const first = parsed(input);
      const again = parsed(first.text);
      expect(again).toEqual(first);
    }
  });
});

describe('parseDynamoNumber: rejects what DynamoDB rejects', () => {
  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['letters', 'abc'],
    ['exponent without digits', '1e'],
    ['exponent sign only', '1e+'],
    ['double sign', '--1'],
    ['plus minus', '+-1'],
    ['lone dot', '.'],
    ['lone sign', '-'],
    ['two dots', '1.2.3'],
    ['fractional exponent', '1e5.5'],
    ['hex', '0x10'],
    ['Infinity', 'Infinity'],
    ['NaN', 'NaN'],
    ['thousands separator', '1,000'],
    ['underscore separator', '1_000'],
    ['inner space', '1 000'],
    ['39 significant digits', '1'.repeat(39)],
    ['39 significant digits in a decimal', `0.${'1'.repeat(39)}`],
    ['39 significant digits across the point', `1${'2'.repeat(18)}.${'3'.repeat(20)}`],
    ['just above the largest magnitude', '1E126'],
    ['negative, just above the largest magnitude', '-1E126'],
    ['just below the smallest magnitude', '9.9E-131'],
    ['far below the smallest magnitude', '1E-131'],
    ['exponent beyond a safe integer', '1e99999999999999999999'],
  ])('%s: %j', (_label, input) => {
    expect(typeof parseDynamoNumber(input)).toBe('string');
  });

  it('the error message quotes the input', () => {
    expect(parseDynamoNumber('abc')).toContain('"abc"');
  });

  it('38 significant digits are accepted, also with leading and trailing zeros', () => {
    expect(parsed(`000${'7'.repeat(38)}`).digits).toHaveLength(38);
    expect(parsed(`0.000${'7'.repeat(38)}000`).digits).toHaveLength(38);
  });
});

describe('numberSize', () => {
  // Rule (src/core/number.ts): 1 exponent byte + base-100 digit pairs aligned on the decimal point
  // + 1 byte for a negative number. Zero is 1 byte.
  it.each([
    ['0', 1],
    ['1', 2], // 01
    ['9', 2],
    ['12', 2], // 12
    ['123', 3], // 01 23
    ['1234', 3], // 12 34
    ['12345', 4], // 01 23 45
    ['10', 2], // 10
    ['100', 2], // 01 (00 is in the exponent)
    ['1000', 2], // 10
    ['101', 3], // 01 01
    ['1.5', 3], // 01 . 50
    ['1.05', 3], // 01 . 05
    ['12.5', 3], // 12 . 50
    ['0.5', 2], // . 50
    ['0.15', 2], // . 15
    ['0.05', 2], // . 05
    ['0.015', 3], // . 01 50
    ['-1', 3],
    ['-12.5', 4],
    ['-0', 1],
    ['9'.repeat(38), 20],
    [`9.${'9'.repeat(37)}`, 21],
    ['1E125', 2],
    ['1E-130', 2],
  ])('%j -> %i bytes', (input, size) => {
    expect(numberSize(parsed(input))).toBe(size);
  });

  it.each([
    ['1', 1],
    ['12', 2],
    ['123', 3],
    ['12345', 5],
    ['123456789012345678901234567890', 30],
  ])('integer %j agrees with the guide\'s "1 byte per two significant digits + 1"', (input, significant) => {
    expect(numberSize(parsed(input))).toBe(Math.ceil(significant / 2) + 1);
  });

  it("is never below the guide's approximation and at most one byte above it (generated)", () => {
    for (const seed of [1, 2, 3]) {
      const random = mulberry32(seed);
      for (let i = 0; i < 300; i++) {
        const digits = String(1 + Math.floor(random() * 9)) + Array.from({ length: Math.floor(random() * 37) }, () => Math.floor(random() * 10)).join('');
        const n = parsed(`${digits}e${Math.floor(random() * 100) - 50}`);
        const approximation = Math.ceil(n.digits.length / 2) + 1;
        const size = numberSize(n);
        expect(size - approximation, `${n.text}`).toBeGreaterThanOrEqual(0);
        expect(size - approximation, `${n.text}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('a negative number is one byte larger than its absolute value', () => {
    for (const text of ['1', '12.5', '0.015', '1E100']) {
      expect(numberSize(parsed(`-${text}`))).toBe(numberSize(parsed(text)) + 1);
    }
  });
});

describe('plainNumberSize: the fast path agrees with parseDynamoNumber', () => {
  /** Text near the edges: signs, zeros, dots, exponents, blanks, up to ~45 digits. */
  const numberLike = fc.array(fc.constantFrom('0', '0', '0', '1', '5', '9', '-', '+', '.', 'e', ' '), { maxLength: 45 }).map((chars) => chars.join(''));
  /** Canonical plain decimals of 1 to 40 digits and 0 to 25 leading fraction zeros. */
  const canonical = fc
    .tuple(fc.boolean(), fc.stringMatching(/^[1-9]\d{0,39}$/), fc.integer({ min: 0, max: 25 }), fc.stringMatching(/^(\d{0,30}[1-9])?$/))
    .map(([negative, int, zeros, frac]) => {
      const body = int.length % 3 === 0 && frac !== '' ? `0.${'0'.repeat(zeros)}${frac}` : frac === '' ? int : `${int}.${frac}`;
      return `${negative ? '-' : ''}${body}`;
    });

  function agrees(text: string): void {
    const fast = plainNumberSize(text);
    if (fast === 0) return;
    const slow = parseDynamoNumber(text);
    expect(typeof slow, text).not.toBe('string');
    expect((slow as DynamoNumber).text, text).toBe(text);
    expect(numberSize(slow as DynamoNumber), text).toBe(fast);
  }

  it('gives a size only for text that is its own canonical form, and the same size', () => {
    fc.assert(
      fc.property(numberLike, (text) => agrees(text)),
      { numRuns: sized(5000, 20000) },
    );
    fc.assert(
      fc.property(canonical, (text) => agrees(text)),
      { numRuns: sized(5000, 20000) },
    );
  });

  it('takes canonical text within plain notation and 38 digits, leaves the rest to the slow path', () => {
    fc.assert(
      fc.property(canonical, (text) => {
        const slow = parseDynamoNumber(text);
        const plainable = typeof slow !== 'string' && slow.text === text && !text.includes('E');
        expect(plainNumberSize(text) !== 0, text).toBe(plainable);
      }),
      { numRuns: sized(5000, 20000) },
    );
    for (const text of ['17', '-451.99', '0.05', '0', '100', `1${'0'.repeat(39)}`, `0.${'0'.repeat(20)}1`, '9'.repeat(38)]) {
      expect(plainNumberSize(text), text).toBe(numberSize(parsed(text)));
    }
    for (const text of ['-0', '007', '+5', '1.50', '1.', '.5', '1e5', ' 1', '', '-', `1${'0'.repeat(40)}`, `0.${'0'.repeat(21)}1`, '9'.repeat(39), '0.0']) {
      expect(plainNumberSize(text), text).toBe(0);
    }
  });
});
