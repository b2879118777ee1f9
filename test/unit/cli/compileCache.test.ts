import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enableCompileCache, type CompileCacheHost } from '../../../src/cli/compileCache.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A host with its own temp dir, recording the folders the cache was enabled in. */
function hostIn(overrides: Partial<CompileCacheHost> = {}): CompileCacheHost & { enabled: string[] } {
  const tmp = mkdtempSync(join(tmpdir(), 'compile-cache-test-'));
  made.push(tmp);
  const enabled: string[] = [];
  return { enable: (dir) => enabled.push(dir), env: {}, platform: 'linux', uid: process.getuid?.() ?? 1000, tmp, enabled, ...overrides };
}

describe('the compile cache', () => {
  it("is enabled in a folder of the user's own in the temp dir, made private", () => {
    const h = hostIn();
    const dir = enableCompileCache(h);
    expect(dir).toBe(join(h.tmp, `ddb-spread-compile-cache-${h.uid}`));
    expect(h.enabled).toEqual([dir]);
    expect(statSync(dir!).mode & 0o077).toBe(0);
    // The next process finds it there and uses it again.
    expect(enableCompileCache(h)).toBe(dir);
  });

  it('is a no-op where Node has none (Node 20), and where the user chose or refused one', () => {
    expect(enableCompileCache(hostIn({ enable: undefined }))).toBeUndefined();
    for (const env of [{ NODE_DISABLE_COMPILE_CACHE: '1' }, { NODE_COMPILE_CACHE: '/somewhere' }]) {
      const h = hostIn({ env });
      expect(enableCompileCache(h)).toBeUndefined();
      expect(h.enabled).toEqual([]);
    }
  });

  it('is off when the folder was planted: others may write to it, it is a link, or it is not a folder', () => {
    const writable = hostIn();
    const dir = join(writable.tmp, `ddb-spread-compile-cache-${writable.uid}`);
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    expect(enableCompileCache(writable)).toBeUndefined();

    const linked = hostIn();
    const elsewhere = join(linked.tmp, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, join(linked.tmp, `ddb-spread-compile-cache-${linked.uid}`));
    expect(enableCompileCache(linked)).toBeUndefined();

    const someoneElse = hostIn({ uid: (process.getuid?.() ?? 1000) + 1 });
    mkdirSync(join(someoneElse.tmp, `ddb-spread-compile-cache-${someoneElse.uid}`), { mode: 0o700 });
    expect(enableCompileCache(someoneElse)).toBeUndefined();

    expect([...writable.enabled, ...linked.enabled, ...someoneElse.enabled]).toEqual([]);
  });
});
