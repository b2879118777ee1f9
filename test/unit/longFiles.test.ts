/**
 * The long project reruns at full size exactly the unit files that cut their sizes with `sized`
 * (test/support/testSize.ts): a file that uses it but is not listed would lose its full-size run in
 * `npm test`, and a listed file that does not would run twice for nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LONG_UNIT_FILES } from '../../vitest.config.js';

it('LONG_UNIT_FILES lists every unit test file that uses sized(), and only those', () => {
  const root = join(import.meta.dirname, '..', '..');
  const files = readdirSync(join(root, 'test', 'unit'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => `test/unit/${file.split('\\').join('/')}`)
    .filter((file) => /^import .* from '\.\.\/\.\.\/support\/testSize\.js';$/m.test(readFileSync(join(root, file), 'utf8')));
  expect(files.length).toBeGreaterThan(0);
  expect([...LONG_UNIT_FILES].sort()).toEqual(files.sort());
});
