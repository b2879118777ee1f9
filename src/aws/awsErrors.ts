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
}

const ACCESS_NAMES = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'MissingAuthenticationTokenException',
  'ExpiredTokenException',
  'CredentialsProviderError',
  'IncompleteSignatureException',
]);
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET']);

/**
 * Turns an error that stops the load into one sentence that says what to do. Credentials are never part
 * of the message: only the error's name and the service's own text are used.
 */
export function fatalAwsError(error: unknown, context: AwsContext): LoaderError {
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
  if (facts.code && UNREACHABLE_CODES.has(facts.code)) {
    return new LoaderError('ENDPOINT_UNREACHABLE', `cannot reach DynamoDB at ${where} (${facts.code}); check --endpoint-url, --region and your network`, {
      table,
      cause: error,
    });
  }
  return new LoaderError('AWS_ERROR', `DynamoDB call for table "${table}" failed: ${facts.name ? `${facts.name}: ` : ''}${message}`, { table, cause: error });
}
