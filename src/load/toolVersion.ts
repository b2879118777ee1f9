import { readFileSync } from 'node:fs';

/** This package's version (--version, reports, shard manifests). */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
