import { loadSharedConfigFiles } from '@smithy/core/config';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LoaderError } from '../shared/errors.js';
import type { Env } from './awsEnv.js';
import type { ProfileSections, Sourced } from './awsSettings.js';

/**
 * The sections of ~/.aws/config and ~/.aws/credentials (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE) for
 * one profile, read with the SDK's own parser so both read the files alike: the profile (`default` when
 * none is named), merged from both files as the SDK merges them (the config file wins), and the
 * `[services ...]` section it names. Files that are missing read as empty, as they do for the SDK.
 */
export async function readProfileSections(profile: Sourced | undefined, env: Env): Promise<ProfileSections> {
  const name = profile?.value ?? 'default';
  const home = env['HOME'] ?? env['USERPROFILE'] ?? homedir();
  const { configFile, credentialsFile } = await loadSharedConfigFiles({
    configFilepath: env['AWS_CONFIG_FILE'] || join(home, '.aws', 'config'),
    filepath: env['AWS_SHARED_CREDENTIALS_FILE'] || join(home, '.aws', 'credentials'),
    // Read now, not from the SDK's cache of an earlier client: a test (or a long process) may change them.
    ignoreCache: true,
  });
  const fromConfig = Object.hasOwn(configFile, name) ? configFile[name] : undefined;
  const fromCredentials = Object.hasOwn(credentialsFile, name) ? credentialsFile[name] : undefined;
  const found = fromConfig === undefined && fromCredentials === undefined ? undefined : { ...fromCredentials, ...fromConfig };
  const servicesName = found?.['services'];
  let services: ProfileSections['services'];
  if (servicesName !== undefined) {
    const key = `services.${servicesName}`;
    services = Object.hasOwn(configFile, key) ? configFile[key] : undefined;
    if (services === undefined)
      throw new LoaderError(
        'INVALID_OPTION',
        `profile ${name} names the services section "${servicesName}", which is not in the config file: add [services ${servicesName}] to it, or remove "services = ${servicesName}" from the profile`,
      );
  }
  return { name, named: profile !== undefined, profile: found, services };
}
