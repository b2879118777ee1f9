/**
 * Records travel in arrays (one await per array, not per row): readCsvChunks, a stripe's pieces cut out
 * of arrays (skip, take), the merge of the stripes, and the load's stages taking arrays. The rows, their
 * order and their count must be what one-by-one reading gives, wherever the arrays begin and end.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createBatcher } from '../../../src/batching/batch.js';
import { LoadStop } from '../../../src/load/loadStop.js';
import { LoaderError } from '../../../src/shared/errors.js';
import { LoadTally } from '../../../src/load/loadTally.js';
import { batchesOf } from '../../../src/load/stages.js';
import { merged, stripeChunks } from '../../../src/ordering/stripes/stripedRecords.js';
import type { Piece } from '../../../src/ordering/stripes/stripeLayout.js';
import { WriteOrderer } from '../../../src/ordering/writeOrderer.js';
import { StripeSchedule } from '../../../src/ordering/stripes/stripeSchedule.js';
import { readCsv, readCsvChunks } from '../../../src/reading/readCsv.js';
import type { RangeReader } from '../../../src/ordering/stripes/ranges.js';
import type { PlannedWrite } from '../../../src/shared/types.js';
import { createRowPlanner, type SourceRecord } from '../../../src/typing/planRow.js';

const row = (line: number, pk = `k${line}`): SourceRecord => ({
  kind: 'csv',
  origin: { file: 'f', line, raw: `${pk},${line}` },
  cells: { pk, n: String(line) },
});

async function* arrays(sizes: number[], first = 1): AsyncGenerator<SourceRecord[]> {
  let line = first;
  for (const size of sizes) yield Array.from({ length: size }, () => row(line++));
}

async function all<T>(gen: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

describe('readCsvChunks', () => {
  it('hands every record once, in order, in non-empty arrays of at most 8, whatever the input chunks', async () => {
    const text = 'pk,n\n' + Array.from({ length: 1000 }, (_, i) => `k${i},${i}`).join('\n') + '\n';
    const data = Buffer.from(text);
    for (const size of [1, 7, 4096, data.length]) {
      const chunks = Array.from({ length: Math.ceil(data.length / size) }, (_, i) => data.subarray(i * size, (i + 1) * size));
      const got = await all(readCsvChunks(Readable.from(chunks), 'f.csv', { delimiter: ',', columns: undefined }));
      expect(got.every((a) => a.length > 0 && a.length <= 8)).toBe(true);
      expect(got.flat().map((r) => r.origin.line)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 2));
    }
  });
  it('stops cleanly when the caller stops early, and throws an input error in place', async () => {
    const text = 'pk,n\n' + Array.from({ length: 500 }, (_, i) => `k${i},${i}`).join('\n') + '\n';
    const chunks = readCsvChunks(Readable.from([Buffer.from(text)]), 'f.csv', { delimiter: ',', columns: undefined });
    expect((await chunks.next()).done).toBe(false);
    expect((await chunks.return(undefined)).done).toBe(true);
    const broken = new Readable({ read() {} });
    broken.push(Buffer.from('pk,n\na,1\n'));
    setTimeout(() => broken.destroy(new Error('disk gone')), 10);
    await expect(all(readCsv(broken, 'f.csv', { delimiter: ',', columns: undefined }))).rejects.toThrow(/disk gone/);
  });
});

describe('stripeChunks', () => {
  const reader = (sizes: number[]): RangeReader => {
    const chunks = arrays(sizes);
    return { chunks, records: (async function* () {})(), bytesRead: () => 0, close: () => undefined };
  };
  it('cuts skip and take out of arrays at any boundary', async () => {
    const range = { start: 0, end: 1, line: 1 };
    for (const [skip, take] of [
      [0, Infinity],
      [5, 7],
      [3, 4],
      [0, 3],
      [11, Infinity],
      [12, 5],
    ] as const) {
      const pieces: Piece[] = [{ range, skip, take }];
      const got = (await all(stripeChunks(pieces, () => reader([3, 4, 5])))).flat().map((r) => r.origin.line);
      expect(got, `${skip} ${take}`).toEqual(Array.from({ length: 12 }, (_, i) => i + 1).slice(skip, skip + take));
    }
  });
});

describe('merged', () => {
  it('gives the rows in the schedule order of one-by-one merging, whatever the array sizes', async () => {
    let seed = 5;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let round = 0; round < 50; round++) {
      const stripes = 2 + random(5);
      const sizes = Array.from({ length: stripes }, () => Array.from({ length: random(6) }, () => 1 + random(9)));
      const bytes = sizes.map(() => 100 + random(1000));
      // The reference: the schedule asked row by row.
      const rows = sizes.map((s, k) => Array.from({ length: s.reduce((a, b) => a + b, 0) }, (_, i) => row(k * 1000 + i + 1)));
      const schedule = new StripeSchedule(bytes);
      const expected: number[] = [];
      const at = rows.map(() => 0);
      for (let k = schedule.next(); k !== undefined; k = schedule.next()) {
        const next = rows[k]![at[k]!++];
        if (!next) schedule.end(k);
        else {
          schedule.advance(k, next.origin.raw.length + 1);
          expected.push(next.origin.line);
        }
      }
      const got = (
        await all(
          merged(
            sizes.map((s, k) => arrays(s, k * 1000 + 1)),
            bytes,
          ),
        )
      ).flat();
      expect(got.map((r) => r.origin.line)).toEqual(expected);
      expect(got.every((r) => r.origin.part === Math.floor((r.origin.line - 1) / 1000))).toBe(true);
    }
  });
});

describe('batchesOf over arrays of records', () => {
  const stages = (orderer: WriteOrderer) => ({
    file: 'f',
    planner: createRowPlanner({ keySchema: { partitionKey: { name: 'pk', type: 'S' } }, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json' }),
    segment: undefined,
    onPlanned: (w: PlannedWrite) => w,
    orderer,
    order: 'input' as const,
    batcher: createBatcher(),
    sendLast: () => true,
    close: () => undefined,
  });
  const report = (stop: LoadStop, tally: LoadTally) => ({
    stop,
    tally,
    rejections: { reject: () => Promise.resolve() },
    progress: () => undefined,
    emit: () => undefined,
  });
  it('batches the rows of arrays as it batches them one by one', async () => {
    const orderer = new WriteOrderer({ mode: 'input', windowRows: 1, memoryBytes: 1 << 20, tempDir: '/tmp' });
    const tally = new LoadTally();
    const batches = await all(batchesOf(arrays([10, 1, 30, 19]), stages(orderer), report(new LoadStop(), tally)));
    expect(batches.map((b) => b.writes.length)).toEqual([25, 25, 10]);
    expect(tally.counters.rowsRead).toBe(60);
  });
  it('stops in the middle of an array: the rows after the stop are not counted as read', async () => {
    const orderer = new WriteOrderer({ mode: 'input', windowRows: 1, memoryBytes: 1 << 20, tempDir: '/tmp' });
    const tally = new LoadTally();
    const stop = new LoadStop();
    const seen: number[] = [];
    for await (const batch of batchesOf(arrays([40, 40]), stages(orderer), report(stop, tally))) {
      seen.push(batch.writes.length);
      stop.fail(new LoaderError('INVALID_OPTION', 'stop here'));
    }
    expect(seen).toEqual([25]);
    expect(tally.counters.rowsRead).toBe(25);
  });
});
