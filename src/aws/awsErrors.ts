import { LoaderError } from '../shared/errors.js';
import { isTransientCredentialFailure, type ErrorFacts } from './backoff.js';

/** The facts classifyFailure needs, read off an SDK or network error. */
export function errorFacts(error: unknown): ErrorFacts {
  const e = error as { name?: unknown; code?: unknown; $metadata?: { httpStatusCode?: unknown }; cause?: { code?: unknown } };
  const facts: ErrorFacts = {};
  if (typeof e?.name === 'string') facts.name = e.name;
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  if (code) facts.code = code;
  if (typeof e?.$metadata?.httpStatusCode === 'number') facts.httpStatus = e.$metadata.httpStatusCode;
  if (typeof (error as Error)?.message === 'string') facts.message = (error as Error).message;
  if (process.env['AWS_CONTAINER_CREDENTIALS_FULL_URI'] || process.env['AWS_CONTAINER_CREDENTIALS_RELATIVE_URI']) facts.containerCredentials = true;
  return facts;
}

export interface AwsContext {
  table: string;
  region?: string | undefined;
  endpoint?: string | undefined;
  /** Where the endpoint came from (--endpoint-url, AWS_ENDPOINT_URL_DYNAMODB, profile local), for the fix. */
  endpointSource?: string | undefined;
}

const ACCESS_NAMES = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'MissingAuthenticationTokenException',
  'ExpiredTokenException',
  'IncompleteSignatureException',
]);
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET']);
/** The region names of the AWS partitions (the SDK's partitions.json): aws, aws-cn, aws-us-gov, the ISO ones, EUSC. */
const AWS_REGION_SHAPE = /^(us|eu|ap|sa|ca|me|af|il|mx|cn|eusc)(-(gov|iso|isob|isoe|isof|de))?-[a-z]+-\d+$/;
const CREDENTIAL_PROVIDER_NAMES = new Set(['CredentialsProviderError', 'ProviderError', 'TokenProviderError']);
/** What OpenSSL says when the other end answered a TLS hello with plain bytes (an http:// server). */
const PLAIN_HTTP_ANSWER = /wrong version number|packet length too long|http request/i;
const CERTIFICATE_CODES = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS_CERT/;

/**
 * Turns an error that stops the load into one sentence that says what to do. Credentials are never part
 * of the message: only the error's name and the service's own text are used.
 */
export function fatalAwsError(error: unknown, context: AwsContext): LoaderError {
  // Already said in ddb-spread's words (a bad region or endpoint, a missing profile, found by the client).
  if (error instanceof LoaderError) return error;
  const facts = errorFacts(error);
  const message = (error as Error)?.message ?? String(error);
  const where = `${context.endpoint ? `endpoint ${context.endpoint}` : `region ${context.region ?? '(not set)'}`}`;
  const table = context.table;
  if (facts.name === 'ResourceNotFoundException') {
    return new LoaderError('TABLE_NOT_FOUND', `table "${table}" was not found in ${where}; check --table and --region (or --endpoint-url)`, {
      table,
      cause: error,
    });
  }
  if (isTransientCredentialFailure(facts)) {
    return new LoaderError(
      'CREDENTIALS_UNAVAILABLE',
      `could not get AWS credentials for table "${table}" (${facts.name}: ${message}); the credential provider (container endpoint, SSO or instance metadata) did not answer, which is usually temporary: run the same command again`,
      { table, cause: error },
    );
  }
  const noCredentials = missingCredentials(error);
  if (noCredentials) return noCredentials;
  const notDynamoDB = notDynamoDBAnswer(error, facts, context);
  if (notDynamoDB) return notDynamoDB;
  if (facts.name && ACCESS_NAMES.has(facts.name)) {
    return new LoaderError(
      'ACCESS_DENIED',
      `access to table "${table}" was refused (${facts.name}: ${message}); check the credentials of the default chain or --profile, and that they allow dynamodb:DescribeTable and dynamodb:BatchWriteItem`,
      { table, cause: error },
    );
  }
  if (/region is missing/i.test(message)) {
    return new LoaderError('INVALID_OPTION', 'no AWS region is set; pass --region, or set AWS_REGION (or AWS_DEFAULT_REGION) or a region in your profile', {
      table,
      cause: error,
    });
  }
  if (facts.code === 'ENOTFOUND' && !context.endpoint && context.region !== undefined && !AWS_REGION_SHAPE.test(context.region)) {
    // The SDK made dynamodb.<region>.amazonaws.com of a region no AWS partition has: no retry resolves it.
    return new LoaderError(
      'INVALID_OPTION',
      `region ${context.region} is not an AWS region (dynamodb.${context.region}.amazonaws.com does not resolve); regions read like us-east-1: check --region, AWS_REGION, AWS_DEFAULT_REGION and the profile's region`,
      { table, cause: error },
    );
  }
  if (facts.code && UNREACHABLE_CODES.has(facts.code)) {
    return new LoaderError('ENDPOINT_UNREACHABLE', `cannot reach DynamoDB at ${where} (${facts.code}); check --endpoint-url, --region and your network`, {
      table,
      cause: error,
    });
  }
  return new LoaderError('AWS_ERROR', `DynamoDB call for table "${table}" failed: ${facts.name ? `${facts.name}: ` : ''}${message}`, { table, cause: error });
}

/**
 * The credential chain found nothing (or a profile that gives none): nothing was refused, so not
 * ACCESS_DENIED. The AWS CLI's sentence when the chain is empty; the provider's own words otherwise (an
 * expired SSO session, a profile whose source_profile is missing), which never hold a secret.
 */
export function missingCredentials(error: unknown, table?: string): LoaderError | undefined {
  const facts = errorFacts(error);
  if (!facts.name || !CREDENTIAL_PROVIDER_NAMES.has(facts.name) || isTransientCredentialFailure(facts)) return undefined;
  const message = facts.message ?? '';
  const none = /could not load credentials from any providers/i.test(message);
  return new LoaderError(
    'CREDENTIALS_MISSING',
    none
      ? 'Unable to locate credentials. You can configure credentials by running "aws configure" (or set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; DynamoDB Local accepts any)'
      : `Unable to get credentials: ${message.replace(/\s+/g, ' ').trim()}; check --profile (or AWS_PROFILE) and run "aws configure" or "aws sso login" for it`,
    { ...(table === undefined ? {} : { table }), cause: error },
  );
}

/**
 * The endpoint answered, but not as DynamoDB does: a TLS handshake answered in plain HTTP (https:// to an
 * http:// server), a certificate not trusted, or an HTTP answer below 500 that is not DynamoDB's JSON (an S3
 * server, a web page: the SDK then says "SyntaxError: Unexpected token"). One sentence naming the endpoint,
 * what it answered and where the endpoint was set. 5xx answers are left to the caller: they may pass.
 */
function notDynamoDBAnswer(error: unknown, facts: ErrorFacts, context: AwsContext): LoaderError | undefined {
  const endpoint = context.endpoint ?? `the DynamoDB endpoint of region ${context.region ?? '(not set)'}`;
  const set = context.endpointSource ? ` (set by ${context.endpointSource})` : '';
  const options = { table: context.table, cause: error };
  const message = facts.message ?? '';
  if (facts.code === 'EPROTO' || /ssl3?_|tls/i.test(message)) {
    if (PLAIN_HTTP_ANSWER.test(message) && endpoint.startsWith('https:'))
      return new LoaderError(
        'ENDPOINT_NOT_DYNAMODB',
        `${endpoint}${set} answered the TLS handshake in plain HTTP: it is an http:// endpoint; write it as ${endpoint.replace(/^https:/, 'http:')}`,
        options,
      );
    return new LoaderError(
      'ENDPOINT_NOT_DYNAMODB',
      `the TLS handshake with ${endpoint}${set} failed (${facts.code ?? message}); check the endpoint's scheme and port`,
      options,
    );
  }
  if (facts.code !== undefined && CERTIFICATE_CODES.test(facts.code))
    return new LoaderError(
      'ENDPOINT_NOT_DYNAMODB',
      `the TLS certificate of ${endpoint}${set} is not trusted (${facts.code}); pass the CA that signed it with --ca-bundle (or AWS_CA_BUNDLE)`,
      options,
    );
  const answer = (error as { $response?: { statusCode?: unknown; headers?: Record<string, string | undefined> } }).$response;
  const status = typeof answer?.statusCode === 'number' ? answer.statusCode : facts.httpStatus;
  if (status === undefined || status >= 500) return undefined;
  const type = headerOf(answer?.headers, 'content-type');
  const unreadable = facts.name === 'SyntaxError' || /Deserialization error|Unexpected token/i.test(message);
  // DynamoDB answers JSON, and its errors have names of its model (…Exception); anything else is another server.
  const fromDynamoDB = !unreadable && (type === undefined ? /Exception$/.test(facts.name ?? '') : /json/i.test(type));
  if (fromDynamoDB) return undefined;
  const server = headerOf(answer?.headers, 'server');
  const what = [`HTTP ${status}`, type ? `as ${type.split(';')[0]!.trim()}` : 'with no content type', server ? `from server "${printable(server)}"` : '']
    .filter(Boolean)
    .join(' ');
  return new LoaderError(
    'ENDPOINT_NOT_DYNAMODB',
    `${endpoint}${set} is not a DynamoDB endpoint: it answered ${what}, not DynamoDB's JSON; check the endpoint (DynamoDB Local listens on http://localhost:8000 by default)`,
    options,
  );
}

function headerOf(headers: Record<string, string | undefined> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** A header value from a stranger, fit for one line of the terminal. */
function printable(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '?').slice(0, 60);
}
