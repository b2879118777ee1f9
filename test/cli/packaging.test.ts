// Packaging: the published package carries its LICENSE, and its source maps are complete
// (dist/ shipped maps whose sources, ../src/*.ts, were not in the package).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt } from '../support/cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

beforeAll(assertCliBuilt);

/** The files `npm pack` would publish (no scripts run: dist/ is the one the build left). */
function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
}

describe('npm pack', () => {
  it('ships the Apache-2.0 LICENSE that package.json names, with the copyright line', () => {
    const files = packedFiles();
    expect(files).toContain('LICENSE');
    const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(text.split('\n')[0]).toBe('Copyright 2026 the ddb-spread authors');
    expect(text).toContain('Apache License');
    expect(text).toContain('Version 2.0, January 2004');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
    expect((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string }).license).toBe('Apache-2.0');
  });

  it('every source map it ships can show its sources: inlined, or a file in the package', () => {
    const files = packedFiles();
    const maps = files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    const shipped = new Set(files);
    for (const map of maps) {
      const parsed = JSON.parse(readFileSync(join(ROOT, map), 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      parsed.sources.forEach((source, i) => {
        const inlined = typeof parsed.sourcesContent?.[i] === 'string' && parsed.sourcesContent[i]!.length > 0;
        const packed = shipped.has(posix.normalize(posix.join(posix.dirname(map), source)));
        expect(inlined || packed, `${map}: ${source}`).toBe(true);
      });
    }
    expect(existsSync(join(ROOT, dirname(maps[0]!)))).toBe(true);
  });
});
