/**
 * Attacks on the header row a range of a part cut by byte range carries (rangeCuts.ts header(), readInputSet
 * partFromOffset): a headerless file read with --columns whose first row would not do as a header (an empty
 * cell, a value twice: the commonest rows there are), and a header naming a column twice without --columns.
 * With --columns every range must read every row of its own once under the given columns, as the whole read
 * does; the bad header must be refused before any write, as the whole read refuses it. Real files, every
 * worker in this process.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rangeShare } from '../../../src/load/rangeCuts.js';
import { divisionOf, type Share } from '../../../src/load/shares.js';
import { listInputs, type InputSet } from '../../../src/reading/inputSet.js';
import { readPartHeads } from '../../../src/reading/partHeads.js';
import { readInputSet } from '../../../src/reading/readInputSet.js';
import { LoaderError } from '../../../src/shared/errors.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'range-header-attack-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const noS3 = () => Promise.reject(new Error('no S3 here'));

async function cut(set: InputSet, workers: number, listing: string): Promise<Share[]> {
  const division = divisionOf(set, { segment: { index: 0, count: workers }, partsDisjoint: true });
  expect(division?.by).toBe('ranges');
  return Promise.all(
    Array.from({ length: workers }, (_, index) =>
      rangeShare(set, division!, {
        listing,
        listedAt: '2026-11-28T12:00:00.000Z',
        segment: { index, count: workers },
        s3: noS3,
        delimiter: undefined,
        inputFormat: undefined,
        minRangeBytes: 512,
        pollMs: 5,
        waitMs: 10_000,
        warn: () => undefined,
        stopping: () => false,
      }),
    ),
  );
}

async function cells(set: InputSet, columns: string[] | undefined): Promise<string[]> {
  const input = readInputSet(set, { format: undefined, csv: { delimiter: undefined, columns } });
  const out: string[] = [];
  try {
    for await (const r of input.records) out.push(`${r.origin.line}:${JSON.stringify(r.kind === 'csv' ? r.cells : r.kind)}`);
  } finally {
    input.close();
  }
  return out;
}

const rows = (n: number) => Array.from({ length: n }, (_, i) => `k${i % 31},${i},"note ${i}\r\nsecond line",${i % 3 === 0 ? '' : `z${i}`}`).join('\r\n');

describe("a range's carried header row, attacked", () => {
  const firstRows: [string, string][] = [
    ['an empty cell', 'k0,,first,'],
    ['a value twice', 'same,same,first,x'],
    ['a lone quote open over a line', 'k0,0,"open\r\nstill,x'],
  ];
  for (const [what, first] of firstRows) {
    it(`--columns on a headerless file whose first row has ${what}: every range reads its rows, all rows once`, async () => {
      const columns = ['pk', 'sk', 'note', 'extra'];
      const path = join(dir, `headerless-${what.replace(/\W+/g, '-')}.csv`);
      await writeFile(path, `${first}\r\n${rows(1_200)}\r\n`);
      const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
      const whole = await cells(set, columns);
      expect(whole.length).toBeGreaterThan(1_000);
      const shares = await cut(set, 3, join(dir, `${what.replace(/\W+/g, '-')}.listing.json`));
      const read: string[] = [];
      for (const share of shares) {
        const part = { ...set, parts: share.parts, totalBytes: share.bytes };
        // The look before the first write, as a worker makes it with --columns.
        const heads = await readPartHeads(part, { format: undefined, csv: { delimiter: undefined, columns } });
        expect(heads.columns.every((c) => c.names.join() === columns.join())).toBe(true);
        read.push(...(await cells(part, columns)));
      }
      expect(read).toEqual(whole);
    });
  }

  it('a header naming a column twice, no --columns: refused before any write, naming the file and the column', async () => {
    const path = join(dir, 'twice.csv');
    await writeFile(path, `pk,sk,note,sk\r\n${rows(1_200)}\r\n`);
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const refusal = async (s: InputSet) => {
      const error = await readPartHeads(s, { format: undefined, csv: { delimiter: undefined, columns: undefined } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LoaderError);
      return error as LoaderError;
    };
    const whole = await refusal(set);
    expect(whole.code).toBe('INPUT_HEADER');
    expect(whole.message).toContain('"sk" twice');
    // Each worker: refused the same, whether by its cut or by its look at the head, before reading a row.
    const shares = await cut(set, 3, join(dir, 'twice.listing.json')).then(
      (s) => s,
      (e: unknown) => e as LoaderError,
    );
    if (shares instanceof LoaderError) expect([shares.code, shares.message]).toEqual([whole.code, whole.message]);
    else
      for (const share of shares) {
        const error = await refusal({ ...set, parts: share.parts, totalBytes: share.bytes });
        expect([error.code, error.message]).toEqual([whole.code, whole.message]);
      }
  });
});
