import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The import graph of src/: every import points down the folder order of eslint.config.js (LAYERS), and no
 * file imports itself back through others. ESLint checks the order file by file; this checks it over the
 * whole graph, and checks what a lint rule cannot see: cycles, inside a folder too. Type-only imports count:
 * a cycle of types is still two modules that cannot be understood one without the other.
 */

const SRC = resolve('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative module a file names: import/export … from, import('…') as a value or a type. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
}

/** The file's folder under src/ (undefined for src/index.ts). */
function folderOf(file: string): string | undefined {
  const parts = relative(SRC, file).split('/');
  return parts.length > 1 ? parts[0] : undefined;
}

/** Strongly connected components of more than one file (Tarjan), each sorted, as paths under src/. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(relative(SRC, w));
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return cycles;
}

/** Imports from a file in one folder to a file in a folder above it, as "from -> to" under src/. */
function upwardImports(graph: ReadonlyMap<string, readonly string[]>, layers: readonly string[]): string[] {
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (from === undefined) continue;
    for (const target of targets) {
      const to = folderOf(target);
      if (to !== undefined && layers.indexOf(to) < layers.indexOf(from)) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  return upward;
}

const graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));
const { LAYERS } = (await import(pathToFileURL(resolve('eslint.config.js')).href)) as { LAYERS: readonly string[] };

describe('the import graph of src/', () => {
  it('places every folder in the order of eslint.config.js', () => {
    const folders = [...new Set([...graph.keys()].map(folderOf).filter((f) => f !== undefined))].sort();
    expect(folders.filter((f) => !LAYERS.includes(f))).toEqual([]);
    expect([...LAYERS].sort()).toEqual(folders);
  });

  it('has no import from a folder to one above it', () => {
    expect(upwardImports(graph, LAYERS)).toEqual([]);
  });

  it('has no import cycle between files', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('finds a cycle and an upward import when there is one', () => {
    const a = join(SRC, 'typing/a.ts');
    const b = join(SRC, 'typing/b.ts');
    const c = join(SRC, 'shared/c.ts');
    const made = new Map([
      [a, [b, c]],
      [b, [a]],
      [c, [a]],
    ]);
    expect(cyclesOf(made)).toEqual([['shared/c.ts', 'typing/a.ts', 'typing/b.ts']]);
    expect(upwardImports(made, ['typing', 'shared'])).toEqual(['shared/c.ts -> typing/a.ts']);
  });
});
