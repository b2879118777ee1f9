/**
 * Where a client goes (endpoint, region) and which profile it reads, decided the way the AWS CLI decides
 * it, with the source of each value kept for messages: a flag, then its environment variables, then the
 * profile (--profile, else AWS_PROFILE, else default) and its `services` section. The SDK reads a profile's
 * endpoint_url only for AWS_PROFILE, never for a profile given to the client, so --profile and
 * AWS_PROFILE behaved differently; deciding here, once, makes them the same for every client
 * (DynamoDB and S3). Pure: the environment and the profile's sections are passed in.
 */
import { LoaderError } from '../shared/errors.js';
import type { Env } from './awsEnv.js';

/** A value and where it came from, as a person would look for it: "--endpoint-url", "AWS_REGION", "profile local". */
export interface Sourced {
  value: string;
  source: string;
}

/** The sections of the shared config files that matter for one profile (sharedConfig.ts reads them). */
export interface ProfileSections {
  /** The profile's name, and whether it was asked for (--profile or AWS_PROFILE) rather than the default. */
  name: string;
  named: boolean;
  /** Its keys (config file and credentials file merged), or undefined when neither file has it. */
  profile: Readonly<Record<string, string | undefined>> | undefined;
  /** The `[services <name>]` section it names, when it names one and the section exists. */
  services: Readonly<Record<string, string | undefined>> | undefined;
}

/** The service a client is for: how its variables and its `services` keys are spelled. */
export interface ServiceNames {
  /** The flag that sets its endpoint: --endpoint-url, --s3-endpoint-url. */
  flag: string;
  /** AWS_ENDPOINT_URL_<ID>, and `<id> =` in a services section: DYNAMODB / dynamodb, S3 / s3. */
  id: string;
}

export const DYNAMODB: ServiceNames = { flag: '--endpoint-url', id: 'dynamodb' };
export const S3: ServiceNames = { flag: '--s3-endpoint-url', id: 's3' };

const trimmed = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

/**
 * The profile to read: --profile, then AWS_PROFILE; undefined means the default profile, which may be
 * missing (credentials then come from elsewhere in the chain).
 */
export function profileNameOf(flag: string | undefined, env: Env): Sourced | undefined {
  const fromFlag = trimmed(flag);
  if (fromFlag !== undefined) return { value: fromFlag, source: '--profile' };
  const fromEnv = trimmed(env['AWS_PROFILE']);
  return fromEnv === undefined ? undefined : { value: fromEnv, source: 'AWS_PROFILE' };
}

/**
 * A profile that was asked for by name and is in neither file is refused, in the AWS CLI's words:
 * the SDK would go on down its chain and end with a message that never names the profile.
 */
export function checkProfileFound(sections: ProfileSections, source: string): void {
  if (!sections.named || sections.profile !== undefined) return;
  throw new LoaderError(
    'INVALID_OPTION',
    `The config profile (${sections.name}) could not be found (${source}): add it with "aws configure --profile ${sections.name}", or name one of ~/.aws/config (AWS_CONFIG_FILE) or ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE)`,
  );
}

/**
 * The endpoint: the flag, AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, then the profile's services
 * section (`<service> = \n  endpoint_url = ...`) and its own endpoint_url; none of the configured ones when
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or the profile's ignore_configured_endpoint_urls is true (the flag
 * still counts). Undefined: the SDK's endpoint for the region. Each value is checked (checkEndpointUrl).
 */
export function endpointOf(flag: string | undefined, service: ServiceNames, env: Env, sections: ProfileSections): Sourced | undefined {
  const given = trimmed(flag);
  if (given !== undefined) return checked({ value: given, source: service.flag });
  if (isTrue(env['AWS_IGNORE_CONFIGURED_ENDPOINT_URLS']) || isTrue(sections.profile?.['ignore_configured_endpoint_urls'])) return undefined;
  const variable = `AWS_ENDPOINT_URL_${service.id.toUpperCase()}`;
  for (const name of [variable, 'AWS_ENDPOINT_URL']) {
    const value = trimmed(env[name]);
    if (value !== undefined) return checked({ value, source: name });
  }
  const fromServices = trimmed(sections.services?.[`${service.id}.endpoint_url`]);
  if (fromServices !== undefined) return checked({ value: fromServices, source: `profile ${sections.name}, services ${sections.profile?.['services'] ?? ''}` });
  const fromProfile = trimmed(sections.profile?.['endpoint_url']);
  return fromProfile === undefined ? undefined : checked({ value: fromProfile, source: `profile ${sections.name}` });
}

/** The region: the flag, AWS_REGION, AWS_DEFAULT_REGION (the AWS CLI's), the profile's region; each checked. */
export function regionOf(flag: string | undefined, env: Env, sections: ProfileSections | undefined): Sourced | undefined {
  const candidates: Array<[string | undefined, string]> = [
    [flag, '--region'],
    [env['AWS_REGION'], 'AWS_REGION'],
    [env['AWS_DEFAULT_REGION'], 'AWS_DEFAULT_REGION'],
    [sections?.profile?.['region'], `profile ${sections?.name ?? 'default'}`],
  ];
  for (const [raw, source] of candidates) {
    const value = trimmed(raw);
    if (value !== undefined) return checkRegion({ value, source });
  }
  return undefined;
}

function isTrue(value: string | undefined): boolean {
  return value !== undefined && value.trim().toLowerCase() === 'true';
}

function checked(endpoint: Sourced): Sourced {
  return { value: checkEndpointUrl(endpoint.value, endpoint.source), source: endpoint.source };
}

/**
 * An endpoint URL as the AWS CLI accepts one: http:// or https:// and a host ("Invalid endpoint: ..."
 * otherwise). The WHATWG parser alone takes `127.0.0.1:8000` for scheme `127.0.0.1:` and `htp://x` as
 * fine: the first failed deep in the SDK with "TypeError: Invalid URL", the second at the first call.
 */
export function checkEndpointUrl(value: string, source: string): string {
  const refuse = (why: string, fix: string) => new LoaderError('INVALID_OPTION', `Invalid endpoint: ${value} (${source}): ${why}; ${fix}`);
  const example = 'such as http://localhost:8000 for DynamoDB Local or https://dynamodb.us-east-1.amazonaws.com';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1];
  if (scheme === undefined) {
    // http//host, http:/host, https:host: the scheme is there, its "://" is not.
    const mangled = /^(https?)(?::\/?|\/\/|:\/\/\/+)([^/].*)$/i.exec(value);
    if (mangled) throw refuse(`"${mangled[1]}" must be followed by "://"`, `write it as ${mangled[1]!.toLowerCase()}://${mangled[2]!}`);
    // host:port, or a bare host: the scheme is what is missing.
    const bare = /^[a-z0-9.-]+(:\d+)?(\/.*)?$/i.test(value) || /^\[[0-9a-f:.]+\](:\d+)?(\/.*)?$/i.test(value);
    throw bare ? refuse('the scheme is missing', `write it as http://${value} (or https://${value})`) : refuse('it is not a URL', `give one ${example}`);
  }
  if (!/^https?$/i.test(scheme)) throw refuse(`the scheme must be http or https, not ${scheme}`, `give one ${example}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('it is not a URL', `give one ${example}`);
  }
  if (url.hostname === '') throw refuse('it names no host', `give one ${example}`);
  if (url.username !== '' || url.password !== '')
    throw refuse('it holds a user name or password', 'credentials come from the SDK chain (--profile, environment), never from the URL');
  return value;
}

/** botocore's rule for a region name: letters, digits and hyphens, 1 to 63 of them, no hyphen at either end. */
const REGION = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

/** A region the AWS CLI accepts ("Provided region_name ... doesn't match a supported format." otherwise). */
export function checkRegion(region: Sourced): Sourced {
  if (REGION.test(region.value)) return region;
  const likely = region.value.toLowerCase().replace(/[_\s.]+/g, '-');
  const fix = REGION.test(likely) ? `did you mean ${likely}?` : 'regions read like us-east-1 or eu-west-2';
  throw new LoaderError('INVALID_OPTION', `Provided region_name '${region.value}' (${region.source}) doesn't match a supported format: ${fix}`);
}
