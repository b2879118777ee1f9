/**
 * One-line notices about the environment the CLI runs in, printed once at the start of a load or an
 * estimate (not with --quiet): an old Node.js, and SDK retry variables that ddb-spread does not use.
 * Pure: the environment and the Node version are passed in.
 */
import { ignoredRetryEnvNotice, type Env } from '../aws/awsEnv.js';

/** The oldest Node.js major the AWS SDK supports after January 2027 (20 is past end of life). */
export const SUPPORTED_NODE_MAJOR = 22;

/** A line for a Node.js older than SUPPORTED_NODE_MAJOR, else undefined. */
export function nodeVersionNotice(nodeVersion: string): string | undefined {
  const major = Number(nodeVersion.replace(/^v/, '').split('.')[0]);
  if (!Number.isInteger(major) || major >= SUPPORTED_NODE_MAJOR) return undefined;
  return `Node.js ${major} is past end of life; AWS SDK releases after January 2027 need Node.js ${SUPPORTED_NODE_MAJOR} or newer`;
}

export function startupNotices(env: Env, nodeVersion: string, maxAttempts: number): string[] {
  return [nodeVersionNotice(nodeVersion), ignoredRetryEnvNotice(env, maxAttempts)].filter((n): n is string => n !== undefined);
}
