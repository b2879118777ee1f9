/**
 * npm run docs:options: writes the options reference, made from src/cli/optionTable.ts, between the
 * <!-- options:begin --> and <!-- options:end --> markers of whichever doc holds them (README.md or a file
 * under docs/). The unit test test/unit/cli/optionTable.test.ts fails until this has been run after an
 * edit of the table.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withOptionReference } from '../src/cli/optionReference.js';

const root = new URL('..', import.meta.url).pathname;
const docs = ['README.md', ...(await readdir(join(root, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];
let written = 0;
for (const doc of docs) {
  const path = join(root, doc);
  const text = await readFile(path, 'utf8');
  const updated = withOptionReference(text);
  if (updated === undefined) continue;
  written++;
  if (updated !== text) await writeFile(path, updated);
  console.warn(`${doc}: options reference ${updated === text ? 'already up to date' : 'rewritten'}`);
}
if (written === 0) {
  console.error('no doc holds the <!-- options:begin --> and <!-- options:end --> markers');
  process.exitCode = 1;
}
