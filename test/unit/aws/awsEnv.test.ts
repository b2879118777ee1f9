// Corporate networks: how the environment's proxy, region, CA bundle and retry variables are read.
import { describe, expect, it } from 'vitest';
import { caBundleFrom, ignoredRetryEnvNotice, proxyConfigured, proxyForUrl } from '../../../src/aws/awsEnv.js';

const url = (u: string) => new URL(u);

describe('proxyForUrl', () => {
  it.each<[string, Record<string, string>, string | undefined]>([
    ['http://dynamodb.local:8000', { HTTP_PROXY: 'http://proxy:3128' }, 'http://proxy:3128'],
    ['http://dynamodb.local:8000', { http_proxy: 'http://lower:3128', HTTP_PROXY: 'http://upper:3128' }, 'http://lower:3128'],
    ['https://dynamodb.us-east-1.amazonaws.com', { HTTPS_PROXY: 'http://proxy:3128' }, 'http://proxy:3128'],
    ['https://dynamodb.us-east-1.amazonaws.com', { https_proxy: 'proxy:3128' }, 'http://proxy:3128'],
    ['https://dynamodb.us-east-1.amazonaws.com', { HTTP_PROXY: 'http://proxy:3128' }, undefined],
    ['http://dynamodb.local:8000', { HTTPS_PROXY: 'http://proxy:3128' }, undefined],
    ['http://dynamodb.local:8000', { HTTP_PROXY: '  ' }, undefined],
    ['https://dynamodb.us-east-1.amazonaws.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'amazonaws.com' }, undefined],
    ['https://dynamodb.us-east-1.amazonaws.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '.amazonaws.com' }, undefined],
    ['https://dynamodb.us-east-1.amazonaws.com', { HTTPS_PROXY: 'http://p:1', no_proxy: '*.amazonaws.com' }, undefined],
    ['https://dynamodb.us-east-1.amazonaws.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'notamazonaws.com' }, 'http://p:1'],
    ['https://evilamazonaws.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'amazonaws.com' }, 'http://p:1'],
    ['http://127.0.0.1:8000', { HTTP_PROXY: 'http://p:1', NO_PROXY: 'localhost, 127.0.0.1' }, undefined],
    ['http://127.0.0.1:8000', { HTTP_PROXY: 'http://p:1', NO_PROXY: '127.0.0.1:8000' }, undefined],
    ['http://127.0.0.1:8000', { HTTP_PROXY: 'http://p:1', NO_PROXY: '127.0.0.1:9000' }, 'http://p:1'],
    ['https://example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com:443' }, undefined],
    ['http://[::1]:8000', { HTTP_PROXY: 'http://p:1', NO_PROXY: '::1' }, undefined],
    ['http://[::1]:8000', { HTTP_PROXY: 'http://p:1', NO_PROXY: '[::1]:8000' }, undefined],
    ['http://anything:1', { HTTP_PROXY: 'http://p:1', NO_PROXY: '*' }, undefined],
  ])('%s with %j -> %s', (target, env, proxy) => {
    expect(proxyForUrl(url(target), env)).toBe(proxy);
  });

  it('proxyConfigured is true only when a proxy variable is set', () => {
    expect(proxyConfigured({})).toBe(false);
    expect(proxyConfigured({ NO_PROXY: '*' })).toBe(false);
    expect(proxyConfigured({ https_proxy: 'http://p:1' })).toBe(true);
    expect(proxyConfigured({ HTTP_PROXY: 'http://p:1' })).toBe(true);
  });
});

describe('caBundleFrom (the region: awsSettings.test.ts)', () => {
  it('--ca-bundle, then AWS_CA_BUNDLE', () => {
    expect(caBundleFrom('/flag.pem', { AWS_CA_BUNDLE: '/env.pem' })).toBe('/flag.pem');
    expect(caBundleFrom(undefined, { AWS_CA_BUNDLE: '/env.pem' })).toBe('/env.pem');
    expect(caBundleFrom(undefined, {})).toBeUndefined();
  });
});

describe('ignoredRetryEnvNotice', () => {
  it('says nothing when neither variable is set', () => {
    expect(ignoredRetryEnvNotice({}, 15)).toBeUndefined();
  });
  it('names the variables set and --max-attempts in force', () => {
    expect(ignoredRetryEnvNotice({ AWS_MAX_ATTEMPTS: '5' }, 15)).toBe(
      "AWS_MAX_ATTEMPTS=5 is ignored: ddb-spread is the one retry layer (the SDK's retries are off); use --max-attempts (now 15) for the sends per item",
    );
    expect(ignoredRetryEnvNotice({ AWS_RETRY_MODE: 'adaptive', AWS_MAX_ATTEMPTS: '2' }, 4)).toMatch(
      /^AWS_MAX_ATTEMPTS=2 and AWS_RETRY_MODE=adaptive are ignored: .*now 4/,
    );
  });
});
