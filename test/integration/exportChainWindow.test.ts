/**
 * An export chain read by one process in the default order empties the order between exports: every write
 * of an export is handed out (and batched) before the next export's first, and the next export starts with
 * the auto window small again (stages.ts, as between the exports of a chain divided between workers). Before, the window went on from one export into the next: grown on the full
 * export's last files (few of them left side by side, in runs of one key), it held a window's worth of an
 * incremental's change records, and bench/firstWrite.ts's chain of 1M items peaked at 270 MB RSS (target
 * < 256 MB). Dry runs of chains built as DynamoDB writes them (test/support/exportFixture.ts); the
 * batches are the ones a load would send.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offlineTableInfo } from '../../src/estimating/offlineTable.js';
import { load } from '../../src/load/load.js';
import type { PlannedWrite } from '../../src/shared/types.js';
import { chainExports, simulateChain, writeExport } from '../support/exportFixture.js';

const TABLE = offlineTableInfo('chain', { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' }, billing: 'on-demand' });

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-chain-window-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let cases = 0;

/** The batches a dry run of `input` makes, each write named by the export folder its row came from. */
async function batchesOf(input: string | string[], exportFolders: string[]): Promise<{ batches: number[][]; rowsRead: number; written: number }> {
  const batches: number[][] = [];
  const exportOf = (w: PlannedWrite) => exportFolders.findIndex((folder) => w.origin.file.startsWith(`${folder}/`));
  const result = await load(
    { input, table: 'chain', rejectsPath: join(dir, `${++cases}.rejects.jsonl`) },
    { dryRun: { tableInfo: TABLE, onPlanned: (w) => w, record: (writes) => batches.push(writes.map(exportOf)) } },
  );
  return { batches, rowsRead: result.rowsRead, written: result.written };
}

/** Each batch holds one export's writes, and the exports' writes come in chain order. */
function expectExportsInOrder(batches: number[][], exports: number): void {
  expect(batches.flat()).not.toContain(-1);
  for (const batch of batches) expect(new Set(batch).size).toBe(1);
  const sequence = batches.map((batch) => batch[0]!);
  expect(sequence).toEqual([...sequence].sort((a, b) => a - b));
  expect(new Set(sequence).size).toBe(exports);
}

describe('an export chain read by one process', () => {
  it('hands out every write of an export before the next export begins (the folder holding the chain, and the exports given in order)', async () => {
    // 97 keys spread over the full export's files: the auto window holds up to its 1,024 rows at the
    // export's end, which went on to be handed out among the first incremental's writes.
    const chain = simulateChain(31, { items: 6_000, windows: 2, changesPerWindow: 1_500, partitions: 3 });
    const root = join(dir, 'chain');
    const folders: string[] = [];
    for (const fixture of chainExports(chain, 'backup')) folders.push(await writeExport(root, fixture));
    const records = [chain.full, ...chain.incrementals].reduce((n, parts) => n + parts.flat().length, 0);
    for (const input of [join(root, 'backup', 'AWSDynamoDB'), folders]) {
      const { batches, rowsRead, written } = await batchesOf(input, folders);
      expect(rowsRead).toBe(records);
      // Written or superseded in a batch: every row read is in a batch or counted (a dry run rejects nothing here).
      expect(written).toBeLessThanOrEqual(records);
      expect(batches.flat().length).toBe(written);
      expectExportsInOrder(batches, 3);
    }
  });
});
