import { normalize } from 'node:path/posix';

/**
 * Globs of local inputs, pure: `*` and `?` within one path segment, `**` across segments. Enough for the
 * parts a Spark or Athena job writes (`out/part-*.csv.gz`, `dump/**\/*.jsonl`) without a dependency.
 */
export function hasGlob(path: string): boolean {
  return /[*?]/.test(path);
}

/** The folder to walk: the segments before the first one holding a wildcard ("." when none). */
export function globBase(pattern: string): string {
  const segments = normalize(pattern).split('/');
  const first = segments.findIndex((segment) => hasGlob(segment));
  const base = segments.slice(0, first).join('/');
  return base === '' ? (pattern.startsWith('/') ? '/' : '.') : base;
}

/** How deep under globBase a match lies, in segments: Infinity when a `**` may cross any number of them. */
export function globDepth(pattern: string): number {
  const segments = normalize(pattern).split('/');
  if (segments.some((segment) => segment.includes('**'))) return Infinity;
  return segments.length - segments.findIndex((segment) => hasGlob(segment));
}

/** A test of a path (as path.join spells it under globBase) against the pattern. */
export function globMatcher(pattern: string): (path: string) => boolean {
  const normalized = normalize(pattern);
  let source = '';
  for (let i = 0; i < normalized.length; i++) {
    const c = normalized[i]!;
    if (c === '*' && normalized[i + 1] === '*') {
      const slash = normalized[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const regex = new RegExp(`^${source}$`);
  return (path) => regex.test(normalize(path));
}
