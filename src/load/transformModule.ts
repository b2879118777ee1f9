import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LoaderError } from '../shared/errors.js';
import type { TransformFunction } from '../typing/transform.js';

/** --transform as given: a module's path, or (the library's) a function. */
export type TransformSource = string | TransformFunction;

/** A transform ready to call, and what pins it in a checkpoint. */
export interface LoadedTransform {
  fn: TransformFunction;
  /**
   * What a checkpoint records of it (writeAffectingOptions): "sha256:<hex>" of the module file's bytes, or of a
   * library function's source text. A resume under another is refused: its outputs could differ.
   */
  pin: string;
  /** The module's path, or "a function", for messages. */
  name: string;
}

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);

/**
 * Imports the module of --transform (relative to the working directory) and takes its default export, or
 * takes the function given. Before anything is listed or described: a wrong path costs nothing. Only the
 * module's own file is pinned, not the modules it imports.
 */
export async function loadTransform(source: TransformSource): Promise<LoadedTransform> {
  if (typeof source === 'function') return { fn: source, pin: `sha256:${sha256(Function.prototype.toString.call(source))}`, name: 'a function' };
  const path = resolve(source);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new LoaderError('INVALID_OPTION', `cannot read --transform ${source}: ${(error as Error).message}`, { file: source, cause: error });
  }
  let module: { default?: unknown };
  try {
    // The hash in the URL: the module imported is the one whose bytes were hashed, even if an earlier load of
    // this process imported an older version of the file.
    module = (await import(`${pathToFileURL(path).href}?sha256=${sha256(bytes)}`)) as { default?: unknown };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const hint =
      TYPESCRIPT.has(extname(path).toLowerCase()) && (code === 'ERR_UNKNOWN_FILE_EXTENSION' || code === 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING')
        ? `; this Node.js (${process.version}) does not run TypeScript itself (Node.js 22.18 and later strip types by default, 22.6 to 22.17 with --experimental-strip-types): compile it to JavaScript (.mjs), or run ddb-spread through tsx`
        : '';
    throw new LoaderError('INVALID_OPTION', `cannot import --transform ${source}: ${(error as Error).message}${hint}`, { file: source, cause: error });
  }
  if (typeof module.default !== 'function')
    throw new LoaderError(
      'INVALID_OPTION',
      `--transform ${source} has no default export that is a function (it has ${module.default === undefined ? 'no default export' : `a default export of type ${typeof module.default}`}); write "export default function (item, origin) { return item; }"`,
      { file: source },
    );
  return { fn: module.default as TransformFunction, pin: `sha256:${sha256(bytes)}`, name: source };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
