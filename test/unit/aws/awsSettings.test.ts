import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fatalAwsError } from '../../../src/aws/awsErrors.js';
import {
  checkEndpointUrl,
  checkProfileFound,
  checkRegion,
  DYNAMODB,
  endpointOf,
  profileNameOf,
  regionOf,
  S3,
  type ProfileSections,
} from '../../../src/aws/awsSettings.js';
import { readProfileSections } from '../../../src/aws/sharedConfig.js';
import { LoaderError } from '../../../src/shared/errors.js';
import { loaderErrorOf } from '../../support/thrown.js';

const noProfile: ProfileSections = { name: 'default', named: false, profile: undefined, services: undefined };
const profile = (keys: Record<string, string>, services?: Record<string, string>): ProfileSections => ({
  name: 'local',
  named: true,
  profile: keys,
  services,
});

describe('checkEndpointUrl: an endpoint as the AWS CLI accepts one', () => {
  it.each([
    ['127.0.0.1:8000', 'the scheme is missing; write it as http://127.0.0.1:8000'],
    ['localhost', 'the scheme is missing; write it as http://localhost'],
    ['dynamodb.eu-west-1.amazonaws.com/', 'the scheme is missing; write it as http://dynamodb.eu-west-1.amazonaws.com/'],
    ['[::1]:8000', 'the scheme is missing; write it as http://[::1]:8000'],
    ['htp://localhost:8000', 'the scheme must be http or https, not htp'],
    ['http//localhost:8000', '"http" must be followed by "://"; write it as http://localhost:8000'],
    ['http:/localhost:8000', '"http" must be followed by "://"; write it as http://localhost:8000'],
    ['https:localhost:8000', '"https" must be followed by "://"; write it as https://localhost:8000'],
    ['ftp://localhost:8000', 'the scheme must be http or https, not ftp'],
    ['http://', 'it is not a URL'],
    ['http://user:secret@localhost:8000', 'it holds a user name or password'],
    ['local host:8000', 'it is not a URL'],
  ])('%s is refused: %s', (value, why) => {
    const error = loaderErrorOf(() => checkEndpointUrl(value, '--endpoint-url'));
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('INVALID_OPTION');
    expect((error as Error).message).toContain(`Invalid endpoint: ${value} (--endpoint-url): ${why}`);
    // One sentence: no line breaks, no stack.
    expect((error as Error).message).not.toContain('\n');
  });

  it.each(['http://localhost:8000', 'https://dynamodb.us-east-1.amazonaws.com', 'HTTP://127.0.0.1:8000/', 'http://[::1]:8000'])('%s is accepted', (value) => {
    expect(checkEndpointUrl(value, '--endpoint-url')).toBe(value);
  });
});

describe('checkRegion: botocore rule', () => {
  it.each([
    ['us_east_1', 'did you mean us-east-1?'],
    ['US East 1', 'did you mean us-east-1?'],
    ['us-east-1-', 'regions read like us-east-1 or eu-west-2'],
    ['-us', 'regions read like us-east-1 or eu-west-2'],
    ['eu/west', 'regions read like us-east-1 or eu-west-2'],
  ])('%s is refused: %s', (value, fix) => {
    const message = (loaderErrorOf(() => checkRegion({ value, source: 'AWS_REGION' })) as Error).message;
    expect(message).toBe(`Provided region_name '${value}' (AWS_REGION) doesn't match a supported format: ${fix}`);
  });

  it.each(['us-east-1', 'cn-north-1', 'us-gov-west-1', 'local'])('%s is accepted', (value) => {
    expect(checkRegion({ value, source: '--region' }).value).toBe(value);
  });
});

describe('endpointOf and regionOf: the AWS CLI order, with the source kept', () => {
  it('the flag, then AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the services section, the profile', () => {
    const sections = profile(
      { endpoint_url: 'http://profile:1', services: 'svc' },
      { 'dynamodb.endpoint_url': 'http://services:2', 's3.endpoint_url': 'http://s3svc:3' },
    );
    const env = { AWS_ENDPOINT_URL_DYNAMODB: 'http://ddbenv:4', AWS_ENDPOINT_URL: 'http://env:5' };
    expect(endpointOf('http://flag:6', DYNAMODB, env, sections)).toEqual({ value: 'http://flag:6', source: '--endpoint-url' });
    expect(endpointOf(undefined, DYNAMODB, env, sections)).toEqual({ value: 'http://ddbenv:4', source: 'AWS_ENDPOINT_URL_DYNAMODB' });
    expect(endpointOf(undefined, S3, env, sections)).toEqual({ value: 'http://env:5', source: 'AWS_ENDPOINT_URL' });
    expect(endpointOf(undefined, DYNAMODB, {}, sections)).toEqual({ value: 'http://services:2', source: 'profile local, services svc' });
    expect(endpointOf(undefined, S3, {}, sections)?.value).toBe('http://s3svc:3');
    expect(endpointOf(undefined, DYNAMODB, {}, profile({ endpoint_url: 'http://profile:1' }))).toEqual({ value: 'http://profile:1', source: 'profile local' });
    expect(endpointOf(undefined, DYNAMODB, {}, noProfile)).toBeUndefined();
  });

  it('ignore_configured_endpoint_urls (variable or profile) drops every configured endpoint, never the flag', () => {
    const sections = profile({ endpoint_url: 'http://profile:1' });
    expect(endpointOf(undefined, DYNAMODB, { AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true', AWS_ENDPOINT_URL: 'http://env:5' }, sections)).toBeUndefined();
    expect(endpointOf(undefined, DYNAMODB, {}, profile({ endpoint_url: 'http://profile:1', ignore_configured_endpoint_urls: 'true' }))).toBeUndefined();
    expect(endpointOf('http://flag:6', DYNAMODB, { AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }, sections)?.value).toBe('http://flag:6');
  });

  it('an endpoint from the environment or a profile is checked like the flag, naming where it was set', () => {
    expect((loaderErrorOf(() => endpointOf(undefined, DYNAMODB, { AWS_ENDPOINT_URL: 'localhost:8000' }, noProfile)) as Error).message).toContain(
      'Invalid endpoint: localhost:8000 (AWS_ENDPOINT_URL): the scheme is missing',
    );
    expect((loaderErrorOf(() => endpointOf(undefined, DYNAMODB, {}, profile({ endpoint_url: 'htp://x' }))) as Error).message).toContain('(profile local)');
  });

  it('region: the flag, AWS_REGION, AWS_DEFAULT_REGION, the profile; each checked', () => {
    const sections = profile({ region: 'eu-west-3' });
    expect(regionOf('eu-west-1', { AWS_REGION: 'us-east-1' }, sections)).toEqual({ value: 'eu-west-1', source: '--region' });
    expect(regionOf(undefined, { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'ap-south-1' }, sections)?.source).toBe('AWS_REGION');
    expect(regionOf(undefined, { AWS_DEFAULT_REGION: 'ap-south-1' }, sections)?.source).toBe('AWS_DEFAULT_REGION');
    expect(regionOf(undefined, {}, sections)).toEqual({ value: 'eu-west-3', source: 'profile local' });
    expect(regionOf(undefined, {}, noProfile)).toBeUndefined();
    expect(() => regionOf(undefined, { AWS_DEFAULT_REGION: 'eu_west_1' }, noProfile)).toThrow("'eu_west_1' (AWS_DEFAULT_REGION)");
  });

  it('the profile: --profile, then AWS_PROFILE; one asked for and missing is refused in the AWS CLI words', () => {
    expect(profileNameOf('dev', { AWS_PROFILE: 'prod' })).toEqual({ value: 'dev', source: '--profile' });
    expect(profileNameOf(undefined, { AWS_PROFILE: 'prod' })).toEqual({ value: 'prod', source: 'AWS_PROFILE' });
    expect(profileNameOf(undefined, { AWS_PROFILE: ' ' })).toBeUndefined();
    expect(() => checkProfileFound({ name: 'nosuch', named: true, profile: undefined, services: undefined }, 'AWS_PROFILE')).toThrow(
      'The config profile (nosuch) could not be found (AWS_PROFILE)',
    );
    expect(() => checkProfileFound(noProfile, 'none')).not.toThrow();
  });
});

describe('readProfileSections (the SDK parser over real files)', () => {
  let dir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ddb-spread-profiles-'));
    await writeFile(
      join(dir, 'config'),
      '[profile local]\nregion = eu-west-1\nservices = here\n[services here]\ndynamodb =\n  endpoint_url = http://localhost:8000\n[profile broken]\nservices = gone\n',
    );
    await writeFile(
      join(dir, 'credentials'),
      '[local]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = not-printed\n[keysonly]\naws_access_key_id = A\n',
    );
    env = { AWS_CONFIG_FILE: join(dir, 'config'), AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials') };
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('merges both files, finds the services section, and tells a named profile from the default', async () => {
    const local = await readProfileSections({ value: 'local', source: '--profile' }, env);
    expect(local).toMatchObject({ name: 'local', named: true, profile: { region: 'eu-west-1', aws_access_key_id: 'AKIDEXAMPLE' } });
    expect(local.services).toEqual({ 'dynamodb.endpoint_url': 'http://localhost:8000' });
    expect((await readProfileSections({ value: 'keysonly', source: '--profile' }, env)).profile).toEqual({ aws_access_key_id: 'A' });
    expect(await readProfileSections(undefined, env)).toEqual({ name: 'default', named: false, profile: undefined, services: undefined });
    expect((await readProfileSections({ value: 'nosuch', source: '--profile' }, env)).profile).toBeUndefined();
  });

  it('a services section named but missing is refused (the SDK refuses it too, in the middle of a call)', async () => {
    await expect(readProfileSections({ value: 'broken', source: '--profile' }, env)).rejects.toThrow('names the services section "gone"');
  });
});

describe('fatalAwsError: what the endpoint or the credential chain said, in one sentence', () => {
  const context = { table: 'Orders', endpoint: 'https://127.0.0.1:8000', endpointSource: '--endpoint-url' };

  it('no credentials: CREDENTIALS_MISSING in the AWS CLI words, not ACCESS_DENIED', () => {
    const error = fatalAwsError(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }), context);
    expect(error.code).toBe('CREDENTIALS_MISSING');
    expect(error.message).toMatch(/^Unable to locate credentials\. You can configure credentials by running "aws configure"/);
    const sso = fatalAwsError(
      Object.assign(new Error('The SSO session associated with this profile has expired'), { name: 'CredentialsProviderError' }),
      context,
    );
    expect(sso.code).toBe('CREDENTIALS_MISSING');
    expect(sso.message).toContain('has expired');
  });

  it('a refusal stays ACCESS_DENIED; a LoaderError passes through as it is', () => {
    expect(fatalAwsError(Object.assign(new Error('no'), { name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 400 } }), context).code).toBe(
      'ACCESS_DENIED',
    );
    const own = new LoaderError('INVALID_OPTION', 'mine');
    expect(fatalAwsError(own, context)).toBe(own);
  });

  it('https:// to a plain HTTP server: the endpoint, what it answered and the http:// to use', () => {
    const tls = Object.assign(new Error('write EPROTO 40E8:error:0A00010B:SSL routines:ssl3_get_record:wrong version number'), { code: 'EPROTO' });
    const error = fatalAwsError(tls, context);
    expect(error.code).toBe('ENDPOINT_NOT_DYNAMODB');
    expect(error.message).toBe(
      'https://127.0.0.1:8000 (set by --endpoint-url) answered the TLS handshake in plain HTTP: it is an http:// endpoint; write it as http://127.0.0.1:8000',
    );
  });

  it.each([
    [
      404,
      { 'content-type': 'application/xml', server: 'AmazonS3' },
      'SyntaxError',
      "Unexpected token '<'",
      'HTTP 404 as application/xml from server "AmazonS3"',
    ],
    [200, { 'content-type': 'text/html; charset=utf-8' }, 'SyntaxError', 'Unexpected token', 'HTTP 200 as text/html'],
    [405, {}, 'UnknownError', 'UnknownError', 'HTTP 405 with no content type'],
  ])('another server answering %s: ENDPOINT_NOT_DYNAMODB, naming what it answered', (status, headers, name, message, said) => {
    const answer = Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status }, $response: { statusCode: status, headers } });
    const error = fatalAwsError(answer, { table: 'Orders', endpoint: 'http://127.0.0.1:9000', endpointSource: 'AWS_ENDPOINT_URL' });
    expect(error.code).toBe('ENDPOINT_NOT_DYNAMODB');
    expect(error.message).toContain(`http://127.0.0.1:9000 (set by AWS_ENDPOINT_URL) is not a DynamoDB endpoint: it answered ${said}`);
  });

  it('a region no AWS partition has, whose endpoint does not resolve: a usage error, not "worth retrying"', () => {
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND dynamodb.useast1.amazonaws.com'), { code: 'ENOTFOUND' });
    const error = fatalAwsError(dns, { table: 'Orders', region: 'useast1' });
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('region useast1 is not an AWS region (dynamodb.useast1.amazonaws.com does not resolve)');
    // A real region whose name does not resolve is the network's failure: worth retrying.
    expect(fatalAwsError(dns, { table: 'Orders', region: 'eu-west-3' }).code).toBe('ENDPOINT_UNREACHABLE');
    expect(fatalAwsError(dns, { table: 'Orders', region: 'us-gov-west-1' }).code).toBe('ENDPOINT_UNREACHABLE');
    expect(fatalAwsError(dns, { table: 'Orders', region: 'useast1', endpoint: 'http://ddb.local:8000' }).code).toBe('ENDPOINT_UNREACHABLE');
  });

  it("DynamoDB's own JSON errors and 5xx answers are not classified as another server", () => {
    const dynamo = Object.assign(new Error('Requested resource not found'), {
      name: 'ResourceNotFoundException',
      $metadata: { httpStatusCode: 400 },
      $response: { statusCode: 400, headers: { 'content-type': 'application/x-amz-json-1.0' } },
    });
    expect(fatalAwsError(dynamo, context).code).toBe('TABLE_NOT_FOUND');
    const gateway = Object.assign(new Error('Unexpected token <'), {
      name: 'SyntaxError',
      $metadata: { httpStatusCode: 503 },
      $response: { statusCode: 503, headers: { 'content-type': 'text/html' } },
    });
    expect(fatalAwsError(gateway, context).code).not.toBe('ENDPOINT_NOT_DYNAMODB');
  });
});
