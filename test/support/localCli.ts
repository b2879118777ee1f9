import { runCli, type ProcessRun, type RunOptions } from './cli.js';
import { localEnv } from './env.js';
import type { LocalAws } from './localAws.js';

/**
 * `node bin/ddb-spread.js ...args` against the file's DynamoDB Local (useLocalAws): run in its temp dir,
 * with localEnv (fake credentials, the endpoint, no proxy), then `defaults`, then each call's `options`
 * (an option given as undefined keeps the default).
 * The environment is read at each call, so a test that changes process.env is seen.
 */
export function localCli(
  aws: Pick<LocalAws, 'endpoint' | 'dir'>,
  defaults: Partial<RunOptions> = {},
): (args: string[], options?: Partial<RunOptions>) => Promise<ProcessRun> {
  return (args, options = {}) => runCli(args, { cwd: aws.dir(), env: localEnv(aws.endpoint), ...defined(defaults), ...defined(options) });
}

function defined<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}
