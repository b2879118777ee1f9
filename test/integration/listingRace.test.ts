import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveOwnFiles, walkLocal } from '../../src/reading/localListing.js';
import { sortOut } from '../../src/reading/listing.js';

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe('walkLocal while another worker writes its files in the folder', () => {
  // CI once saw a worker stop with exit 66: it listed another worker's `listing.json.<pid>.<hex>.tmp`,
  // which was renamed before the walker's stat. A file skipped by its name needs no stat.
  it("another load's temporary files coming and going never stop the listing; the data parts are all there", async () => {
    const folder = await mkdtemp(join(tmpdir(), 'ddb-spread-listing-race-'));
    made.push(folder);
    for (const name of ['a', 'b', 'c']) await writeFile(join(folder, `${name}.csv`), 'pk\n1\n');
    const listing = join(folder, 'listing.json');
    const own = await resolveOwnFiles([{ option: '--listing', path: listing }]);
    let writing = true;
    const churn = (async () => {
      for (let n = 0; writing; n++) {
        const temporary = `${listing}.${1000 + (n % 7)}.${n.toString(16).padStart(8, '0')}.tmp`;
        await writeFile(temporary, '{}');
        await rename(temporary, listing);
        const hidden = join(folder, `.part-${n}.crc`);
        await writeFile(hidden, 'x');
        await rm(hidden);
      }
    })();
    let walks = 0;
    try {
      for (; walks < 400; walks++) {
        const entries = await walkLocal(folder, { own, prune: true, maxDepth: Infinity });
        const { data } = sortOut(entries);
        expect(data.map((e) => e.relative)).toEqual(['a.csv', 'b.csv', 'c.csv']);
      }
    } finally {
      writing = false;
      await churn;
    }
    expect(walks).toBe(400);
  });
});
