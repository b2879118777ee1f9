/**
 * Attack: a file whose name says JSON Lines but whose bytes are one JSON document (a pretty-printed array,
 * as `jq .` writes it), divided by byte range between --segment workers with --parts-disjoint. A whole
 * read finds the document by its first bytes; a range from the middle of it would read its lines as rows.
 * Every worker must refuse it with the same clear error before any write, none may load a row of it. Real
 * processes against DynamoDB Local.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import { runCli } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'range-attack-shape' });

describe('a JSON document under a .jsonl name, divided by byte range', () => {
  it('is refused by every worker before any write', async () => {
    const items = Array.from({ length: 4000 }, (_, i) => ({ pk: `p${Math.floor(i / 4)}`, sk: i, note: `note ${i} ${'d'.repeat(i % 40)}` }));
    const path = join(dir(), 'doc.jsonl');
    await writeFile(path, `${JSON.stringify(items, null, 2)}\n`);
    expect((await stat(path)).size).toBeGreaterThan(3 * 64 * 1024);
    const table = await newTable(KEYS);
    const listing = join(dir(), 'doc.listing.json');
    const runs = await Promise.all(
      [0, 1, 2].map((i) =>
        runCli(
          ['load', path, '--table', table, '--segment', `${i}/3`, '--listing', listing, '--parts-disjoint', '--rejects', join(dir(), `doc${i}.rejects.jsonl`)],
          {
            cwd: dir(),
            env: localEnv(endpoint),
            timeoutMs: 90_000,
          },
        ),
      ),
    );
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(EXIT.USAGE);
      expect(r.stderr).toMatch(/doc\.jsonl/);
      expect(r.stderr).toMatch(/one JSON document/);
      expect(r.stderr).not.toMatch(/bug/i);
    }
    expect((await scanAll(client(), table)).length).toBe(0);
  });
});
