import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Item } from '../../../src/shared/types.js';
import { expiryOf, looksNumeric, TTL_MAX_AGE_SECONDS } from '../../../src/typing/expiry.js';

const NOW = 1_764_288_000; // 2025-11-28T00:00:00Z
const item = (ttl: unknown) => ({ pk: 'a', ttl }) as unknown as Item;

describe('--skip-expired: DynamoDB TTL rules', () => {
  it.each<[string, unknown, string]>([
    ['a Number a second past', new NumberValue(String(NOW - 1)), 'expired'],
    ['a Number a day past', new NumberValue(String(NOW - 86_400)), 'expired'],
    ['a Number with a fraction just past', new NumberValue(`${NOW - 1}.5`), 'expired'],
    ['exactly now (not less than the current time)', new NumberValue(String(NOW)), 'live'],
    ['a Number in the future', new NumberValue(String(NOW + 3600)), 'live'],
    ['milliseconds (far in the future as seconds)', new NumberValue(String(NOW * 1000)), 'live'],
    ['five years past to the second: still expired', new NumberValue(String(NOW - TTL_MAX_AGE_SECONDS)), 'expired'],
    ['more than five years past: ignored by TTL', new NumberValue(String(NOW - TTL_MAX_AGE_SECONDS - 1)), 'too-old'],
    ['zero (1970)', new NumberValue('0'), 'too-old'],
    ['a string of digits', String(NOW - 10), 'not-a-number'],
    ['a number set', new Set([new NumberValue('1')]), 'not-a-number'],
    ['a map holding the number', { ttl: new NumberValue(String(NOW - 10)) }, 'not-a-number'],
    ['a native number (library items)', NOW - 10, 'expired'],
  ])('%s', (_, value, verdict) => {
    expect(expiryOf(item(value), 'ttl', NOW)).toBe(verdict);
  });

  it('a missing attribute is absent, and a name on the prototype is not the attribute', () => {
    expect(expiryOf({ pk: 'a' }, 'ttl', NOW)).toBe('absent');
    expect(expiryOf({ pk: 'a' }, 'constructor', NOW)).toBe('absent');
  });

  it('only a string of digits looks numeric (the warning for a CSV column without --types)', () => {
    expect(looksNumeric(item('1764288000'), 'ttl')).toBe(true);
    expect(looksNumeric(item('soon'), 'ttl')).toBe(false);
    expect(looksNumeric(item(new NumberValue('1')), 'ttl')).toBe(false);
  });
});
