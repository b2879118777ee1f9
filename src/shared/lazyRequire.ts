import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded at its first use instead of at start-up, for code that uses it synchronously
 * and only for some inputs (Ion values, a proxy): a run that never needs it does not pay to load it, which
 * counts most when several --segment workers start at once on few cores. It is the very module an
 * `import` would give (Node loads a CommonJS package once, whichever way it is asked for).
 *
 * A package that cannot be loaded (a broken install) is an error naming it and what needed it, thrown
 * where it is first used, never mistaken for bad input by the caller's handling of the input's errors.
 */
export function lazyRequire<T>(specifier: string, neededFor: string): () => T {
  let loaded: T | undefined;
  return () => {
    if (loaded === undefined) {
      try {
        loaded = require(specifier) as T;
      } catch (cause) {
        throw new Error(`cannot load the package ${specifier}, which ${neededFor} needs (${(cause as Error).message}); reinstall ddb-spread`, { cause });
      }
    }
    return loaded;
  };
}
