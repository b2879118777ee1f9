import { describe, expect, it } from 'vitest';
import {
  escapeControl,
  formatBytes,
  formatCount,
  formatDuration,
  formatMoney,
  formatPercent,
  formatPrice,
  formatRate,
  HIDDEN,
  keyRedactor,
  rowExcerpt,
  shownKey,
} from '../../../src/shared/format.js';

describe('numbers', () => {
  it("a count reads exactly as toLocaleString('en-US') would write it, edge values included", () => {
    const values = [0, -0, 1, -1, 999, 1000, -1000, 1234.5, -1234.5, 0.4, -0.4, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 1e21, -1e21, NaN, Infinity, -Infinity];
    for (let digits = 1; digits <= 16; digits++) values.push(10 ** digits - 1, 10 ** digits, -(10 ** digits) + 1, Number('7'.repeat(digits)));
    expect(values.map((v) => formatCount(v))).toEqual(values.map((v) => Math.round(v).toLocaleString('en-US')));
  });

  it('a count with its noun is singular for one, plural otherwise, irregular endings included', () => {
    expect(formatCount(1, 'row')).toBe('1 row');
    expect(formatCount(0, 'row')).toBe('0 rows');
    expect(formatCount(2_500, 'row')).toBe('2,500 rows');
    expect(formatCount(1, 'batch')).toBe('1 batch');
    expect(formatCount(3, 'batch')).toBe('3 batches');
    expect(formatCount(2, 'query')).toBe('2 queries');
    expect(formatCount(2, 'key')).toBe('2 keys');
    expect(formatCount(2, 'entry')).toBe('2 entries');
    expect(formatCount(1, 'partition')).toBe('1 partition');
    // Rounded first: 1.2 reads as one.
    expect(formatCount(1.2, 'time')).toBe('1 time');
  });

  it('counts are rounded and grouped by thousands', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(1_234_567.4)).toBe('1,234,567');
  });

  it('rates keep one decimal when fractional', () => {
    expect(formatRate(1000)).toBe('1,000');
    expect(formatRate(0.44)).toBe('0.4');
    expect(formatRate(12.46)).toBe('12.5');
  });

  it('percents have one decimal, and a tiny share is not shown as 0', () => {
    expect(formatPercent(0)).toBe('0.0%');
    expect(formatPercent(0.0004)).toBe('<0.1%');
    expect(formatPercent(0.256)).toBe('25.6%');
  });

  it('bytes in binary units', () => {
    expect(formatBytes(812)).toBe('812 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(64 * 1024 ** 2)).toBe('64.0 MB');
  });

  it('money to the cent, prices to six decimals', () => {
    expect(formatMoney(1234.5)).toBe('$1,234.50');
    expect(formatMoney(0.001)).toBe('< $0.01');
    expect(formatMoney(0)).toBe('$0.00');
    expect(formatPrice(0.00065)).toBe('$0.00065');
  });
});

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, '0.0 s'],
    [0.04, '0.0 s'],
    [12.34, '12.3 s'],
    [59.94, '59.9 s'],
    [59.96, '1 min 00 s'],
    [60, '1 min 00 s'],
    [250, '4 min 10 s'],
    [605.4, '10 min 05 s'],
    [3_599.4, '59 min 59 s'],
    [3_599.6, '1 h 00 min'],
    [7_500, '2 h 05 min'],
    [7_529, '2 h 05 min'],
    [7_531, '2 h 06 min'],
    [36_000_000, '10,000 h 00 min'],
    [-3, '0.0 s'],
    [Infinity, 'never'],
    [Number.NaN, 'unknown'],
  ])('%d s -> %s', (seconds, expected) => {
    expect(formatDuration(seconds)).toBe(expected);
  });
});

describe('user data', () => {
  it('escapes control characters and bidirectional overrides', () => {
    expect(escapeControl('a\u001b[31mb\u202e')).toBe('a\\u001b[31mb\\u202e');
  });

  it('a row excerpt is one line of at most 100 characters', () => {
    expect(rowExcerpt('a,b\r\nc')).toBe('a,b⏎c');
    expect(rowExcerpt('x'.repeat(150))).toBe(`${'x'.repeat(97)}...`);
  });

  it('a key in the summary is quoted, or hidden under --no-excerpts', () => {
    expect(shownKey('cust-1', true)).toBe('"cust-1"');
    expect(shownKey('cust-1', false)).toBe('(key hidden by --no-excerpts)');
  });

  it('hides key values standing as words in free text, longest first', () => {
    const redact = keyRedactor(['1', 'cust-7', 'cust-7#2', '']);
    expect(redact('shard "cust-7#2" at 1,000 WCU; key 1.')).toBe(`shard "${HIDDEN}" at 1,000 WCU; key ${HIDDEN}.`);
    expect(redact('cust-7 and cust-70')).toBe(`${HIDDEN} and cust-70`);
    expect(keyRedactor([])('anything')).toBe('anything');
  });
});
