import { DynamoDBClient, type ServiceInputTypes, type ServiceOutputTypes } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AbsoluteLocation, AuthScheme, FinalizeRequestHandlerOptions, FinalizeRequestMiddleware, RequestSigner } from '@smithy/types';
import { readFileSync } from 'node:fs';
import { caBundleFrom, proxyConfigured, type Env } from './awsEnv.js';
import { LoaderError } from '../shared/errors.js';
import { EnvProxyAgent } from './proxyAgent.js';
import { checkEndpointUrl, checkRegion, DYNAMODB } from './awsSettings.js';
import { configuredTarget, regionOrRefusal, resolveTarget } from './awsTarget.js';

export interface ClientOptions {
  region?: string | undefined;
  profile?: string | undefined;
  endpoint?: string | undefined;
  /** A PEM file of CA certificates to trust (--ca-bundle; AWS_CA_BUNDLE otherwise). */
  caBundle?: string | undefined;
  /** Socket timeout for one call, in ms; a timed-out call is retried by the writer. */
  requestTimeoutMs: number;
  /** Sockets kept open: at least the number of batches in flight. */
  maxSockets: number;
  /**
   * The SDK's own attempts per call: 1 for a load, whose writer retries per item itself (not named
   * maxAttempts: load() spreads its options, whose maxAttempts is that per-item budget). @default 1
   */
  sdkAttempts?: number;
}

/**
 * One client per run (dynein builds one per call). Credentials come only from the SDK's default chain
 * (env, profile, SSO, instance role); `profile` selects a profile the way --profile does in the AWS CLI.
 * The SDK's own retries are off (maxAttempts 1): the batch writer retries with its own per-item budget,
 * so the two layers never multiply. What the AWS CLI reads and SDK v3 does not is honoured here:
 * AWS_DEFAULT_REGION, AWS_CA_BUNDLE, HTTPS_PROXY / HTTP_PROXY / NO_PROXY (through EnvProxyAgent), and the
 * endpoint_url (and services section) of a --profile, not only of AWS_PROFILE (awsTarget.ts). Endpoints
 * and regions are checked as the AWS CLI checks them, wherever they come from (awsSettings.ts).
 */
export function createClient(options: ClientOptions, env: Env = process.env): DynamoDBDocumentClient {
  // A bad --endpoint-url is refused at once; the environment and the profile are read at the first call
  // (an offline estimate makes none, so a stale AWS_PROFILE does not stop it).
  if (options.endpoint !== undefined) checkEndpointUrl(options.endpoint, DYNAMODB.flag);
  if (options.region !== undefined) checkRegion({ value: options.region, source: '--region' });
  const target = resolveTarget(options, DYNAMODB, env);
  const caFile = caBundleFrom(options.caBundle, env);
  const ca = caFile === undefined ? undefined : readCaBundle(caFile, options.caBundle !== undefined);
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, ...(ca === undefined ? {} : { ca }) };
  const proxied = proxyConfigured(env);
  const base = new DynamoDBClient({
    region: async () => regionOrRefusal(await target()),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    maxAttempts: options.sdkAttempts ?? 1,
    requestHandler: {
      requestTimeout: options.requestTimeoutMs,
      // Without it the handler only logs a warning when a call runs past requestTimeout and keeps waiting on
      // the socket: a stalled answer held its batch (and an unattended job) for minutes. Now the call fails with
      // TimeoutError (ETIMEDOUT) and the writer sends it again (puts and deletes are idempotent).
      throwOnRequestTimeout: true,
      connectionTimeout: Math.min(options.requestTimeoutMs, 10_000),
      httpAgent: proxied ? new EnvProxyAgent(false, env, agentOptions) : agentOptions,
      httpsAgent: proxied ? new EnvProxyAgent(true, env, agentOptions) : agentOptions,
    },
  });
  // ddb-spread reports through its own events and never sets an SDK logger. The SDK's logger middleware
  // still walks every request and answer through its schema filter for the no-op logger: 1.2 s of the
  // client's 16.5 s of CPU for 200k rows (profiled). Without it nothing is logged either way.
  base.middlewareStack.remove('loggerMiddleware');
  configuredTarget(base, target);
  // With one attempt the SDK's retry middleware only costs: per call it acquires a retry token, draws a
  // UUID for the amz-sdk-invocation-id header and wraps the answer, then never retries. The
  // writer retries per item itself; readers that ask the SDK for more attempts keep it.
  // It is replaced by one that passes the call on (not removed: the signer is placed relative to its name).
  if ((options.sdkAttempts ?? 1) === 1) base.middlewareStack.add(passOn, ONE_ATTEMPT);
  reuseSigners(base);
  return DynamoDBDocumentClient.from(base, {
    // Items are built by ddb-spread's own type map; these settings make marshalling exact and loud.
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false, convertClassInstanceToMap: false },
    // UnprocessedItems come back with numbers as NumberValue, so they match the keys that were sent.
    unmarshallOptions: { wrapNumbers: true },
  });
}

/**
 * The SDK's default `signer` (client config) builds a new SignatureV4 for every call, from a copy of the
 * whole client config: per call, not per item, but 8,000 times for 200k rows. The signer
 * depends only on the auth scheme, the signing region and the service, so one is kept per auth scheme.
 * Credentials are still asked of the SDK's provider chain at every signature (it refreshes them).
 */
function reuseSigners(client: DynamoDBClient): void {
  const config = client.config as unknown as { signer: (authScheme?: AuthScheme) => Promise<RequestSigner> };
  const makeSigner = config.signer;
  const signers = new Map<string, Promise<RequestSigner>>();
  config.signer = (authScheme) => {
    const key =
      authScheme === undefined ? '' : JSON.stringify([authScheme.name, authScheme.signingName, authScheme.signingRegion, authScheme.signingRegionSet]);
    let signer = signers.get(key);
    if (signer === undefined) {
      signer = makeSigner(authScheme);
      signers.set(key, signer);
      // A signer that could not be made (no region yet) is asked for again at the next call.
      signer.catch(() => signers.delete(key));
    }
    return signer;
  };
}

/** A middleware that passes the call on unchanged. */
const passOn: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => next;

/** Stands in for the SDK's retryMiddleware (same name, step and priority) when the SDK makes one attempt. */
const ONE_ATTEMPT: FinalizeRequestHandlerOptions & AbsoluteLocation & { override: boolean } = {
  name: 'retryMiddleware',
  tags: ['RETRY'],
  step: 'finalizeRequest',
  priority: 'high',
  override: true,
};

/** The CA bundle's PEM text; a file that cannot be read, or holds no certificate, is one clear error. */
function readCaBundle(path: string, fromFlag: boolean): string {
  const source = fromFlag ? '--ca-bundle' : 'AWS_CA_BUNDLE';
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new LoaderError('INVALID_OPTION', `cannot read the CA bundle ${path} (${source}): ${(error as Error).message}; pass a PEM file of CA certificates`, {
      file: path,
      cause: error,
    });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new LoaderError(
      'INVALID_OPTION',
      `the CA bundle ${path} (${source}) holds no PEM certificate ("-----BEGIN CERTIFICATE-----"); pass a PEM file of CA certificates`,
      { file: path },
    );
  }
  return pem;
}
