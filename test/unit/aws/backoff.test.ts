import { describe, expect, it } from 'vitest';
import { backoffDelay, classifyFailure, DEFAULT_BACKOFF, isTransientCredentialFailure, type ErrorFacts, type FailureKind } from '../../../src/aws/backoff.js';

const constant = (value: number) => () => value;

describe('backoffDelay', () => {
  it('the first retry waits up to 50 ms; the default cap is above the doubling table below', () => {
    expect(DEFAULT_BACKOFF.baseMs).toBe(50);
    expect(DEFAULT_BACKOFF.capMs).toBeGreaterThanOrEqual(3200);
  });

  it.each([1, 2, 3, 8, 30, 2000])('random 0 -> 0 ms (attempt %i)', (attempt) => {
    expect(backoffDelay(attempt, constant(0))).toBe(0);
  });

  // The ceiling doubles from 50 ms per attempt; 0.999 lands just under it.
  it.each([
    [1, 50, 49],
    [2, 100, 99],
    [3, 200, 199],
    [4, 400, 399],
    [5, 800, 799],
    [6, 1600, 1598],
    [7, 3200, 3196],
  ])('attempt %i: ceiling %i ms, random 0.999 -> %i ms', (attempt, ceiling, delay) => {
    expect(backoffDelay(attempt, constant(0.999))).toBe(delay);
    expect(delay).toBeLessThan(ceiling);
    expect(backoffDelay(attempt, constant(0.5))).toBe(ceiling / 2);
  });

  it.each([20, 50, 1024, 2000])('attempt %i stops at the default cap', (attempt) => {
    const cap = DEFAULT_BACKOFF.capMs;
    expect(backoffDelay(attempt, constant(0.999))).toBe(Math.floor(0.999 * cap));
    expect(backoffDelay(attempt, constant(0.5))).toBe(Math.floor(cap / 2));
  });

  it.each([
    [7, 3200, 3196],
    [8, 5000, 4995],
    [9, 5000, 4995],
    [2000, 5000, 4995],
  ])('with capMs 5000, attempt %i: ceiling %i ms, random 0.999 -> %i ms', (attempt, ceiling, delay) => {
    const policy = { baseMs: 50, capMs: 5000 };
    expect(backoffDelay(attempt, constant(0.999), policy)).toBe(delay);
    expect(backoffDelay(attempt, constant(0.5), policy)).toBe(ceiling / 2);
  });

  it('a custom policy scales and caps the same way', () => {
    const policy = { baseMs: 100, capMs: 1000 };
    expect(backoffDelay(1, constant(0.5), policy)).toBe(50);
    expect(backoffDelay(4, constant(0.5), policy)).toBe(400);
    expect(backoffDelay(5, constant(0.5), policy)).toBe(500);
    expect(backoffDelay(60, constant(0.999), policy)).toBe(999);
  });

  it('is a whole number of ms in [0, ceiling) for any random value in [0, 1)', () => {
    for (let attempt = 1; attempt <= 16; attempt++) {
      const ceiling = Math.min(DEFAULT_BACKOFF.capMs, 50 * 2 ** (attempt - 1));
      for (const r of [0, 0.001, 0.25, 0.5, 0.75, 0.999999]) {
        const delay = backoffDelay(attempt, constant(r));
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    }
  });

  it('draws exactly one random number per delay', () => {
    let calls = 0;
    backoffDelay(3, () => {
      calls++;
      return 0.3;
    });
    expect(calls).toBe(1);
  });
});

describe('classifyFailure', () => {
  it.each<[string, ErrorFacts, FailureKind]>([
    ['provisioned throughput exceeded', { name: 'ProvisionedThroughputExceededException', httpStatus: 400 }, 'retry'],
    ['throttling', { name: 'ThrottlingException', httpStatus: 400 }, 'retry'],
    ['request limit exceeded', { name: 'RequestLimitExceeded', httpStatus: 400 }, 'retry'],
    ['internal server error', { name: 'InternalServerError', httpStatus: 500 }, 'retry'],
    ['service unavailable', { name: 'ServiceUnavailable', httpStatus: 503 }, 'retry'],
    ['item collection size limit', { name: 'ItemCollectionSizeLimitExceededException' }, 'retry'],
    ['SDK timeout', { name: 'TimeoutError' }, 'retry'],
    ['request timeout', { name: 'RequestTimeout' }, 'retry'],
    ['abort from our own timeout', { name: 'AbortError' }, 'retry'],
    ['connection reset', { name: 'Error', code: 'ECONNRESET' }, 'retry'],
    ['connection refused', { code: 'ECONNREFUSED' }, 'retry'],
    ['socket timeout', { code: 'ETIMEDOUT' }, 'retry'],
    ['DNS hiccup', { code: 'EAI_AGAIN' }, 'retry'],
    ['undici socket error', { code: 'UND_ERR_SOCKET' }, 'retry'],
    ['unknown 500', { name: 'SomethingNew', httpStatus: 500 }, 'retry'],
    ['unknown 502', { httpStatus: 502 }, 'retry'],
    ['unknown 503', { httpStatus: 503 }, 'retry'],
    ['429', { name: 'TooManyRequests', httpStatus: 429 }, 'retry'],
    ['validation', { name: 'ValidationException', httpStatus: 400 }, 'reject'],
    ['serialization', { name: 'SerializationException', httpStatus: 400 }, 'reject'],
    ['table not found', { name: 'ResourceNotFoundException', httpStatus: 400 }, 'fatal'],
    ['access denied', { name: 'AccessDeniedException', httpStatus: 400 }, 'fatal'],
    ['bad credentials', { name: 'UnrecognizedClientException', httpStatus: 400 }, 'fatal'],
    ['unknown 400', { name: 'SomethingNew', httpStatus: 400 }, 'fatal'],
    ['unknown 403', { httpStatus: 403 }, 'fatal'],
    ['unknown without facts', {}, 'fatal'],
    ['unknown error code', { code: 'EWHATEVER' }, 'fatal'],
  ])('%s -> %s', (_label, facts, kind) => {
    expect(classifyFailure(facts)).toBe(kind);
  });
});

// A credential provider failure that may pass is retried instead of ending the load.
describe('isTransientCredentialFailure', () => {
  it.each<[string, ErrorFacts, boolean]>([
    ['container endpoint timed out', { name: 'CredentialsProviderError', message: 'TimeoutError: Connection timed out after 1000 ms' }, true],
    ['container endpoint 503', { name: 'CredentialsProviderError', message: 'Server responded with status: 503' }, true],
    ['container endpoint refused', { name: 'CredentialsProviderError', message: 'Error: connect ECONNREFUSED 169.254.170.2:80' }, true],
    ['IMDS timeout', { name: 'ProviderError', message: 'TimeoutError: socket hang up' }, true],
    ['SSO throttled', { name: 'TooManyRequestsException', httpStatus: 429 }, true],
    ['SSO token refresh timed out', { name: 'TokenProviderError', message: 'ETIMEDOUT' }, true],
    [
      'chain end with a container endpoint configured',
      { name: 'CredentialsProviderError', message: 'Could not load credentials from any providers', containerCredentials: true },
      true,
    ],
    [
      'chain end with no container endpoint: no credentials at all',
      { name: 'CredentialsProviderError', message: 'Could not load credentials from any providers' },
      false,
    ],
    ['container endpoint 403', { name: 'CredentialsProviderError', message: 'Server responded with status: 403' }, false],
    ['SSO session expired', { name: 'CredentialsProviderError', message: 'The SSO session associated with this profile has expired' }, false],
    ['expired token from DynamoDB', { name: 'ExpiredTokenException', message: 'The security token included in the request is expired' }, false],
    ['a timeout that is not about credentials', { name: 'ValidationException', message: 'timeout' }, false],
  ])('%s -> %s', (_name, facts, transient) => {
    expect(isTransientCredentialFailure(facts)).toBe(transient);
    expect(classifyFailure(facts)).toBe(transient ? 'retry' : facts.name === 'ValidationException' ? 'reject' : 'fatal');
  });
});
