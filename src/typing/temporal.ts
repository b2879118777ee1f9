import type { NumberValue } from '@aws-sdk/lib-dynamodb';
import { toNumberValue } from './json.js';
import { RowError } from '../shared/errors.js';

import type { TimestampMode } from './typeNames.js';

export { TIMESTAMP_MODES, type TimestampMode } from './typeNames.js';

const DIGITS = { days: 0, s: 0, ms: 3, us: 6, ns: 9 } as const;

/**
 * A point in time as an exact count of a unit since 1970-01-01T00:00:00Z (days for a date), read from a
 * typed input without going through a JS Date, so microseconds and nanoseconds are kept.
 */
export class Temporal {
  constructor(
    readonly unit: keyof typeof DIGITS,
    readonly count: bigint,
  ) {}
}

/**
 * The attribute value of a temporal: ISO-8601 text in UTC (dates as YYYY-MM-DD; timestamps with the
 * fraction their unit holds, as java.time.Instant prints them), or epoch seconds or milliseconds, exactly.
 */
export function temporalValue(t: Temporal, mode: TimestampMode, field: string): string | NumberValue {
  if (mode === 'iso') return isoText(t, field);
  // Everything as nanoseconds, then shifted: no digit is lost (1.5 days in epoch-s is 129600).
  const nanos = t.unit === 'days' ? t.count * 86_400_000_000_000n : t.count * 10n ** BigInt(9 - DIGITS[t.unit]);
  return toNumberValue(decimalText(nanos, mode === 'epoch-s' ? 9 : 6), field);
}

function isoText(t: Temporal, field: string): string {
  const digits = DIGITS[t.unit];
  const perSecond = 10n ** BigInt(digits);
  const seconds = t.unit === 'days' ? t.count * 86_400n : floorDiv(t.count, perSecond);
  const fraction = t.unit === 'days' ? 0n : t.count - seconds * perSecond;
  const ms = Number(seconds) * 1000;
  const date = new Date(ms);
  if (!Number.isSafeInteger(ms) || Number.isNaN(date.getTime()) || date.getUTCFullYear() < 0 || date.getUTCFullYear() > 9999) {
    throw new RowError(
      'TYPE_ERROR',
      `"${field}" is a ${t.unit === 'days' ? 'date' : 'timestamp'} outside the years 0000-9999; store it as an epoch number with --timestamps epoch-s`,
      field,
    );
  }
  const iso = date.toISOString();
  if (t.unit === 'days') return iso.slice(0, 10);
  return `${iso.slice(0, 19)}${fractionText(fraction, digits)}Z`;
}

/** As java.time.Instant prints it: no fraction when it is zero, else in groups of 3 digits (.5 is .500). */
function fractionText(fraction: bigint, digits: number): string {
  if (fraction === 0n) return '';
  let text = fraction.toString().padStart(digits, '0');
  while (text.length > 3 && text.endsWith('000')) text = text.slice(0, -3);
  return `.${text}`;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/** `value` / 10^scale as plain decimal text, exact: (-1234n, 2) is "-12.34". Trailing zeros are left to parseDynamoNumber. */
export function decimalText(value: bigint, scale: number): string {
  if (scale <= 0) return (value * 10n ** BigInt(-scale)).toString();
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
