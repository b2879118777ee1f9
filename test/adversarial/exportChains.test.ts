/**
 * Adversarial: DynamoDB export chains from a simulated source table, given to load()
 * as arguments in a random order, with a random window left out, or as DynamoDB's own AWSDynamoDB/ folder
 * (ExportIds in random name order). Invariant: a load either leaves exactly the source table (the chain
 * whole and, for arguments, in chain order) or is refused before any write (the table stays empty); it
 * never exits with a table the source never held.
 */
import { fc, it } from '@fast-check/vitest';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { load, LoaderError } from '../../src/index.js';
import { fcParams, REPLAY } from '../support/adversarialPipeline.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { chainExports, simulateChain, writeExport } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';

const FILE = 'test/adversarial/exportChains.test.ts';
const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-chains', processCredentials: true, keys: KEYS });
let seq = 0;

const caseArb = fc
  .record({ seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }), windows: fc.integer({ min: 1, max: 3 }), folder: fc.boolean(), drop: fc.option(fc.nat()) })
  .chain((c) => fc.tuple(fc.constant(c), fc.shuffledSubarray([...Array(c.windows + 1).keys()], { minLength: c.windows + 1, maxLength: c.windows + 1 })));

describe('export chains, adversarial', () => {
  it.prop([caseArb], fcParams(10))(`loaded whole in chain order, or refused before any write (${REPLAY(FILE)})`, async ([c, order]) => {
    const chain = simulateChain(c.seed, { items: 80, windows: c.windows, changesPerWindow: 60 });
    const root = join(dir(), `case-${++seq}`);
    const folders: string[] = [];
    for (const fixture of chainExports(chain, 'src')) folders.push(await writeExport(root, fixture));
    // A window left out (an incremental other than the last: leaving out the last is a shorter chain).
    const dropped = c.drop !== null && c.windows >= 2 ? 1 + (c.drop % (c.windows - 1)) : undefined;
    if (dropped !== undefined) await rm(folders[dropped]!, { recursive: true });
    const kept = order.filter((i) => i !== dropped);
    const input = c.folder ? join(root, 'src', 'AWSDynamoDB') : kept.map((i) => folders[i]!);
    const whole = dropped === undefined && (c.folder || kept.every((v, i) => v === i));
    const table = await newTable();
    try {
      let error: unknown;
      const result = await load({ input, table, endpoint, region: 'us-east-1', rejectsPath: join(root, 'rejects.jsonl') }).catch((e: unknown) => {
        error = e;
        return undefined;
      });
      const items = await scanAll(client(), table);
      if (whole) {
        expect(error).toBeUndefined();
        expect(result!.rejected).toBe(0);
        const got = new Map(items.map((i) => [`${i.pk!.S}/${i.sk!.N}`, `${i.v!.S}|${i.n!.N}`]));
        const want = new Map([...chain.final].map(([k, i]) => [k, `${i.v!.S}|${i.n!.N}`]));
        expect(got).toEqual(want);
      } else {
        expect(error).toBeInstanceOf(LoaderError);
        expect((error as LoaderError).code).toBe('INVALID_OPTION');
        expect((error as LoaderError).message).toMatch(dropped !== undefined ? /gap: / : /out of order|is not first/);
        expect(items).toEqual([]);
      }
    } finally {
      await dropTable(table);
    }
  });
});
