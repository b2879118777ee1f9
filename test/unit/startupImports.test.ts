import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * What a process loads before it runs anything: the modules reached from an entry point by static imports
 * (a dynamic import() or a type-only import loads nothing at start-up). Packages that only some inputs,
 * commands or settings need are loaded where they are first used, so a run without them does not pay
 * for them: the S3 client (~0.2 s of CPU), Ion, Parquet, the proxy agents, and, for --version, --help and a
 * usage error, the load and the estimate themselves. Several --segment workers started at once on few
 * cores pay this once each (bench/startup.ts measures it).
 */

const SRC = resolve('src');

const parsed = new Map<string, string[]>();

/** The modules a file loads when it is loaded: relative ones as paths, packages by name. */
function staticImportsOf(file: string): string[] {
  const known = parsed.get(file);
  if (known) return known;
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  for (const node of source.statements) {
    // `import type` and `export type` are erased; `import { type X }` is not (verbatimModuleSyntax keeps it as `import {}`).
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text);
  }
  const loaded = specifiers.map((s) => (s.startsWith('.') ? resolve(dirname(file), s.replace(/\.js$/, '.ts')) : s));
  parsed.set(file, loaded);
  return loaded;
}

/** Every module loaded with `entry`, as paths under src/ and package names. */
function loadedWith(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [resolve(SRC, entry)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    const name = file.startsWith(SRC) ? relative(SRC, file) : file;
    if (seen.has(name)) continue;
    seen.add(name);
    if (file.startsWith(SRC) && existsSync(file)) queue.push(...staticImportsOf(file));
  }
  return seen;
}

/** Packages that only some inputs or settings need (fflate: reading back what an order spilled to disk). */
const LOADED_WHEN_NEEDED = ['@aws-sdk/client-s3', 'ion-js', 'hyparquet', 'hyparquet-compressors', 'http-proxy-agent', 'https-proxy-agent', 'fflate'];

describe('what start-up loads', () => {
  it('the CLI loads neither a command, nor the SDK, nor a package some inputs need before it knows the command', () => {
    const loaded = loadedWith('cli/main.ts');
    // Nor the DynamoDB SDK: --help, --version and a usage error start without it (typing/typeNames.ts).
    const commands = ['load/load.ts', 'estimating/estimate.ts', 'querying/queryShards.ts', 'load/readStatus.ts'];
    expect([...LOADED_WHEN_NEEDED, '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', ...commands].filter((m) => loaded.has(m))).toEqual([]);
    expect(loaded.has('commander')).toBe(true);
  });

  it('a load loads the DynamoDB client and the CSV reader, and none of the packages some inputs need', () => {
    const loaded = loadedWith('load/load.ts');
    expect(LOADED_WHEN_NEEDED.filter((m) => loaded.has(m))).toEqual([]);
    expect(
      ['@aws-sdk/client-dynamodb', 'csv-parse', 'reading/readParquetInput.ts', 'typing/ionItem.ts', 'aws/proxyAgent.ts'].filter((m) => !loaded.has(m)),
    ).toEqual([]);
  });

  it('an estimate likewise', () => {
    const loaded = loadedWith('estimating/estimate.ts');
    expect(LOADED_WHEN_NEEDED.filter((m) => loaded.has(m))).toEqual([]);
  });

  it('sees a package loaded through a chain of files', () => {
    expect(loadedWith('reading/s3Part.ts').has('@aws-sdk/client-s3')).toBe(true);
    expect(loadedWith('reading/parquetThread.ts').has('hyparquet')).toBe(true);
  });
});
