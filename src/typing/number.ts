/**
 * DynamoDB numbers: validation, a canonical text form and the stored size, all without going through a
 * JS double (DynamoDB keeps 38 significant digits; a double keeps about 15).
 *
 * Limits from the DynamoDB developer guide ("Data types", Number): up to 38 digits of precision,
 * positive range 1E-130 to 9.9999999999999999999999999999999999999E+125, same for negatives.
 */

const NUMBER_SYNTAX = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

export interface DynamoNumber {
  /** Canonical text: no '+' sign, no leading or trailing zeros, plain notation where it is short. */
  text: string;
  /** Significant digits after trimming leading and trailing zeros. */
  digits: string;
  negative: boolean;
  /** Value = 0.<digits> × 10^exponent. */
  exponent: number;
}

/** A parseDynamoNumber message that says the number has more digits than DynamoDB keeps (text could hold them). */
export function isTooManyDigits(message: string): boolean {
  return message.endsWith(TOO_MANY_DIGITS);
}

const TOO_MANY_DIGITS = 'DynamoDB keeps at most 38';

/** Parses a number the way DynamoDB accepts it; returns an error message instead of throwing. */
export function parseDynamoNumber(input: string): DynamoNumber | string {
  const text = input.trim();
  const match = NUMBER_SYNTAX.exec(text);
  if (!match || text === '' || (match[2] === '' && (match[3] ?? '') === '')) {
    return `"${clip(input)}" is not a number`;
  }
  const negative = match[1] === '-';
  const intPart = match[2] ?? '';
  const fracPart = match[3] ?? '';
  const exp10 = match[4] === undefined ? 0 : Number(match[4]);
  if (!Number.isSafeInteger(exp10)) return `"${clip(input)}" has an exponent out of DynamoDB's range`;

  const all = intPart + fracPart;
  const lead = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(lead).replace(/0+$/, '');
  if (digits === '') return { text: '0', digits: '', negative: false, exponent: 0 };

  const exponent = intPart.length - lead + exp10;
  if (digits.length > 38) {
    // No fix named here: only the caller knows the attribute (and whether --types can reach it).
    return `"${clip(input)}" has ${digits.length} significant digits; ${TOO_MANY_DIGITS}`;
  }
  // 0.d × 10^e >= 1E-130  <=>  e >= -129;   0.d × 10^e < 1E126  <=>  e <= 126
  if (exponent < -129 || exponent > 126) {
    return `"${clip(input)}" is outside DynamoDB's number range (1E-130 to 9.99E+125 in magnitude)`;
  }
  return { text: canonicalText(negative, digits, exponent), digits, negative, exponent };
}

function canonicalText(negative: boolean, digits: string, exponent: number): string {
  const sign = negative ? '-' : '';
  if (exponent > 40 || exponent < -20) {
    const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    return `${sign}${mantissa}E${exponent - 1}`;
  }
  if (exponent <= 0) return `${sign}0.${'0'.repeat(-exponent)}${digits}`;
  if (exponent >= digits.length) return `${sign}${digits}${'0'.repeat(exponent - digits.length)}`;
  return `${sign}${digits.slice(0, exponent)}.${digits.slice(exponent)}`;
}

/**
 * Stored size in bytes. DynamoDB stores numbers as base-100 digit pairs aligned on the decimal point
 * plus one byte of exponent, and one more byte for negative numbers; the developer guide's
 * "1 byte per two significant digits + 1" is this rule before alignment.
 */
export function numberSize(n: DynamoNumber): number {
  if (n.digits === '') return 1;
  const leftPad = ((n.exponent % 2) + 2) % 2 === 0 ? 0 : 1;
  return 1 + Math.ceil((leftPad + n.digits.length) / 2) + (n.negative ? 1 : 0);
}

/**
 * The fast path (most numbers need no full parse): the stored size of text that is already a canonical plain decimal, as most
 * CSV numbers are ("17", "-451.99", "0.05"), or 0 when it is not one. 0 means "ask parseDynamoNumber";
 * a size here is exactly numberSize(parseDynamoNumber(text)), whose canonical text is `text` itself
 * (test/unit/typing/number.test.ts checks both over generated text). Canonical plain: an optional '-',
 * an integer part without leading zeros ("0" before a fraction), a fraction not ending in 0, no '+',
 * exponent or blanks; at most 38 significant digits and 10^-20 <= magnitude < 10^40 (plain notation).
 * No allocation: one pass over the characters.
 */
export function plainNumberSize(text: string): number {
  const length = text.length;
  const negative = length > 0 && text.charCodeAt(0) === 45;
  let i = negative ? 1 : 0;
  const intStart = i;
  while (i < length && isDigit(text.charCodeAt(i))) i++;
  const intLength = i - intStart;
  if (intLength === 0 || intLength > 40) return 0;
  const zeroInt = text.charCodeAt(intStart) === 48;
  if (zeroInt && intLength > 1) return 0;
  if (i === length) {
    if (zeroInt) return negative ? 0 : 1; // "0"; "-0" is canonical "0", so not this text
    let trailing = 0;
    while (text.charCodeAt(i - 1 - trailing) === 48) trailing++;
    if (intLength - trailing > 38) return 0;
    return sizeOf(intLength - trailing, intLength, negative);
  }
  if (text.charCodeAt(i) !== 46) return 0;
  const fracStart = ++i;
  while (i < length && isDigit(text.charCodeAt(i))) i++;
  if (i !== length || i === fracStart || text.charCodeAt(i - 1) === 48) return 0;
  const fracLength = i - fracStart;
  if (!zeroInt) return intLength + fracLength > 38 ? 0 : sizeOf(intLength + fracLength, intLength, negative);
  let lead = 0;
  while (text.charCodeAt(fracStart + lead) === 48) lead++;
  if (lead > 20 || fracLength - lead > 38) return 0;
  return sizeOf(fracLength - lead, -lead, negative);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** numberSize of 0.<digitCount digits> × 10^exponent, digitCount >= 1. */
function sizeOf(digitCount: number, exponent: number, negative: boolean): number {
  const leftPad = (exponent & 1) === 0 ? 0 : 1;
  return 1 + Math.ceil((leftPad + digitCount) / 2) + (negative ? 1 : 0);
}

function clip(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
