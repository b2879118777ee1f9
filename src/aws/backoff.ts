/**
 * Capped exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter";
 * the DynamoDB guide: "up to 50 milliseconds before the first retry, up to 100 ... 200 ...").
 * Pure: the random source is injected.
 */
export interface BackoffPolicy {
  /** Upper bound of the first delay, in ms. @default 50 */
  baseMs: number;
  /** No delay is longer than this, in ms. @default 8000 */
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 50, capMs: 8000 };

/** Delay before retry number `attempt` (1 = first retry): uniform in [0, min(cap, base * 2^(attempt-1))]. */
export function backoffDelay(attempt: number, random: () => number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** How a failed BatchWriteItem call is handled. */
export type FailureKind =
  /** Send the same requests again after a backoff. */
  | 'retry'
  /** The requests themselves are at fault: split the batch to find the bad rows, reject them. */
  | 'reject'
  /** Nothing this run sends can succeed (wrong table, credentials, endpoint): stop the load. */
  | 'fatal';

const RETRYABLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'ItemCollectionSizeLimitExceededException',
  'ReplicatedWriteConflictException',
  'TransactionInProgressException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'AbortError',
]);

/** Node's codes of a connection that failed or gave no answer: worth another try, and the signs of an outage (writing/outage.ts). */
export const TRANSPORT_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const REJECT_NAMES = new Set(['ValidationException', 'SerializationException']);

export interface ErrorFacts {
  name?: string;
  code?: string;
  httpStatus?: number;
  /** The error's message (credential provider errors say what failed only there). */
  message?: string;
  /** A container credential endpoint is configured (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI). */
  containerCredentials?: boolean;
}

const CREDENTIAL_PROVIDER_NAMES = new Set(['CredentialsProviderError', 'ProviderError', 'TokenProviderError']);
const TRANSIENT_CREDENTIAL_MESSAGE =
  /timed? ?out|timeout|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ETIMEDOUT|socket hang up|status:? (5\d\d|429)\b|throttl|TooManyRequests|Rate exceeded/i;

/**
 * A credential failure that may pass on its own: the container credential endpoint (ECS, EKS Pod
 * Identity) timing out or answering 5xx, an SSO refresh throttled or failing on the network, IMDS
 * timing out. The SDK's chain ends in "Could not load credentials from any providers", hiding the
 * cause; where a container endpoint is configured, that is its failure, so it counts as temporary.
 * Refused or missing credentials (no provider configured) are not.
 */
export function isTransientCredentialFailure(facts: ErrorFacts): boolean {
  if (facts.name === 'TooManyRequestsException') return true;
  if (!facts.name || !CREDENTIAL_PROVIDER_NAMES.has(facts.name)) return false;
  if (facts.message !== undefined && TRANSIENT_CREDENTIAL_MESSAGE.test(facts.message)) return true;
  return facts.containerCredentials === true && /could not load credentials from any providers/i.test(facts.message ?? '');
}

/**
 * Classifies an error from one BatchWriteItem call (DynamoDB guide, "Error handling": retry throttling,
 * 500 and 503; do not retry validation, access or missing-resource errors). Network resets and timeouts
 * are retried: puts and deletes are idempotent, so a write that did land is harmless to repeat.
 */
export function classifyFailure(facts: ErrorFacts): FailureKind {
  if (facts.name && RETRYABLE_NAMES.has(facts.name)) return 'retry';
  if (isTransientCredentialFailure(facts)) return 'retry';
  if (facts.code && TRANSPORT_ERROR_CODES.has(facts.code)) return 'retry';
  if (facts.name && REJECT_NAMES.has(facts.name)) return 'reject';
  if (facts.httpStatus !== undefined && (facts.httpStatus >= 500 || facts.httpStatus === 429)) return 'retry';
  return 'fatal';
}
