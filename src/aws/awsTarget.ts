import { LoaderError } from '../shared/errors.js';
import type { Env } from './awsEnv.js';
import { checkProfileFound, endpointOf, profileNameOf, regionOf, type ServiceNames, type Sourced } from './awsSettings.js';
import { readProfileSections } from './sharedConfig.js';

/** Where one client goes, decided once (awsSettings.ts) from its flags, the environment and the profile. */
export interface AwsTarget {
  region: Sourced | undefined;
  endpoint: Sourced | undefined;
}

export interface TargetFlags {
  region?: string | undefined;
  profile?: string | undefined;
  endpoint?: string | undefined;
}

/**
 * The target, read at the first call and kept: the profile's files are read once per client, and a
 * profile named but missing, or a value that is not an endpoint or a region, fails every call alike.
 */
export function resolveTarget(flags: TargetFlags, service: ServiceNames, env: Env): () => Promise<AwsTarget> {
  let target: Promise<AwsTarget> | undefined;
  return () =>
    (target ??= (async () => {
      const profile = profileNameOf(flags.profile, env);
      const sections = await readProfileSections(profile, env);
      if (profile) checkProfileFound(sections, profile.source);
      return { region: regionOf(flags.region, env, sections), endpoint: endpointOf(flags.endpoint, service, env, sections) };
    })());
}

/** The region to sign for, or the one sentence that says how to set one. */
export function regionOrRefusal(target: AwsTarget): string {
  if (target.region) return target.region.value;
  throw new LoaderError('INVALID_OPTION', 'You must specify a region: pass --region, or set AWS_REGION (or AWS_DEFAULT_REGION) or a region in your profile');
}

interface EndpointHook {
  /**
   * The SDK's hook for an endpoint "from configuration" (AWS_ENDPOINT_URL*, the profile's endpoint_url
   * and services section), asked at the first call when no endpoint was given in code. Its own version
   * reads the profile of AWS_PROFILE only, never the client's `profile`, so --profile local went to AWS
   * while AWS_PROFILE=local went to the profile's endpoint.
   */
  serviceConfiguredEndpoint?: () => Promise<string | undefined>;
}

const targets = new WeakMap<object, () => Promise<AwsTarget>>();

/**
 * Gives an SDK client (DynamoDB or S3) the target's endpoint where the SDK looks for a configured one, and
 * remembers the target for messages (targetOf). An endpoint given in code (the flag) is the client's
 * own `endpoint` and never reaches the hook.
 */
export function configuredTarget(client: { config: object }, target: () => Promise<AwsTarget>): void {
  (client.config as EndpointHook).serviceConfiguredEndpoint = async () => (await target()).endpoint?.value;
  targets.set(client.config, target);
}

/** The endpoint (and where it was set) and region a client made by this module goes to, for messages; {} when unknown or not valid. */
export async function targetOf(client: { config: object }): Promise<{ region?: string; endpoint?: string; endpointSource?: string }> {
  const target = await targets
    .get(client.config)?.()
    .catch(() => undefined);
  return {
    ...(target?.region ? { region: target.region.value } : {}),
    ...(target?.endpoint ? { endpoint: target.endpoint.value, endpointSource: target.endpoint.source } : {}),
  };
}
