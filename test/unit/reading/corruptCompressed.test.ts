/**
 * A truncated or damaged compressed input fails naming the file and saying it is
 * truncated or corrupt (a truncated .bz2 said "Cannot read properties of undefined (reading '0')"), and
 * never ends early as if complete. Its follow-up: a flipped byte inside a zstd block decoded to other
 * bytes without an error (fzstd checks no checksum); each frame's checksum is now checked at its end.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import { openInput } from '../../../src/reading/openInput.js';
import { readRecords } from '../../../src/reading/readRecords.js';
import { zstd } from '../../support/formatFixtures.js';
import { sized } from '../../support/testSize.js';

const ROWS = 3000;
const text = `pk,qty,note\n${Array.from({ length: ROWS }, (_, i) => `r${i + 1},${i + 1},row number ${i + 1} of the bzip2 fixture`).join('\n')}\n`;
const compressed = {
  gzip: gzipSync(text),
  zstd: zstd(text),
  // Node has no bzip2 encoder: the committed fixture (scripts/makeFormatFixtures.sh) holds the same rows.
  bzip2: readFileSync(new URL('../../fixtures/formats/rows.csv.bz2', import.meta.url)),
};
const dir = await mkdtemp(join(tmpdir(), 'ddb-spread-corrupt-'));
let seq = 0;

/** The file's rows (each row's cells joined), or the error that ended the read; a read over 20 s fails the test. */
async function read(bytes: Buffer, name: string): Promise<string[] | LoaderError> {
  const path = join(dir, `${++seq}-${name}`);
  await writeFile(path, bytes);
  const rows: string[] = [];
  const reading = (async () => {
    try {
      for await (const r of readRecords(await openInput(path), 'csv', { delimiter: ',', columns: undefined }))
        rows.push(r.kind === 'csv' ? Object.values(r.cells).join(',') : JSON.stringify(r));
      return rows;
    } catch (error) {
      if (!(error instanceof LoaderError)) throw error;
      return error;
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`reading ${path} did not end in 20 s`)), 20_000)));
  try {
    return await Promise.race([reading, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const whole = text.trimEnd().split('\n').slice(1);

/**
 * A damaged file's error: it names the file. A damaged frame is checked at its end, so the CSV reader may
 * stop first on what the damage made of the header (INPUT_HEADER); else the decoder says corrupt or truncated.
 */
function expectNamed(result: LoaderError, name: string): void {
  expect(result.message).toContain(name);
  if (result.code !== 'INPUT_HEADER') expectDamaged(result, name);
}

function expectDamaged(result: string[] | LoaderError, name: string): void {
  expect(result, `${name} read ${Array.isArray(result) ? result.length : 0} rows without an error`).toBeInstanceOf(LoaderError);
  const error = result as LoaderError;
  expect(error.code).toBe('INPUT_UNREADABLE');
  expect(error.message).toContain(name);
  expect(error.message).toMatch(/corrupt or truncated/);
  expect(error.message).not.toMatch(/Cannot read properties/);
}

describe('truncated and damaged compressed inputs', () => {
  it.each(Object.keys(compressed) as (keyof typeof compressed)[])('%s: the whole file reads every row', async (kind) => {
    expect(await read(compressed[kind], `whole.csv.${kind}`)).toEqual(whole);
  });

  it.each(Object.keys(compressed) as (keyof typeof compressed)[])('%s truncated at half, or 1 byte short, fails naming the file', async (kind) => {
    const bytes = compressed[kind];
    for (const length of [Math.floor(bytes.length / 2), bytes.length - 1, 200]) {
      const name = `cut-${length}.csv.${kind}`;
      expectDamaged(await read(bytes.subarray(0, length), name), name);
    }
  });

  it.each(['gzip', 'zstd', 'bzip2'] as const)('%s with a flipped byte in the middle fails naming the file', async (kind) => {
    const bytes = Buffer.from(compressed[kind]);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x55;
    const name = `flipped.csv.${kind}`;
    expectDamaged(await read(bytes, name), name);
  });

  // Every 97th byte in the unit pass, every 31st at full size (test/support/testSize.ts).
  const step = sized(97, 31);
  it(`zstd: a byte flipped anywhere (every ${step}th byte) ends with every row or an error naming the file`, async () => {
    // fzstd alone decodes most flipped bytes to other bytes without an error (6,073 of 8,577 here); the frame's checksum finds them.
    const source = compressed.zstd;
    const silent: number[] = [];
    for (let offset = 4; offset < source.length; offset += step) {
      const bytes = Buffer.from(source);
      bytes[offset]! ^= 0x55;
      const name = `sweep-flip${offset}.csv.zst`;
      const result = await read(bytes, name);
      if (Array.isArray(result)) {
        if (JSON.stringify(result) !== JSON.stringify(whole)) silent.push(offset);
      } else expectNamed(result, name);
    }
    expect(silent, 'offsets whose flip read other rows without an error').toEqual([]);
  }, 60_000);

  it('random truncations and byte flips (every compression) end in bounded time with every row or an error naming the file', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('gzip', 'zstd', 'bzip2'),
        fc.boolean(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 255 }),
        async (kind, flip, at, xor) => {
          const source = compressed[kind as keyof typeof compressed];
          // From byte 16: a file cut before its magic bytes is not recognisably compressed (an empty file reads as empty).
          const offset = Math.min(source.length - 1, 16 + Math.floor(at * (source.length - 16)));
          const flipping = flip;
          const bytes = flipping ? Buffer.from(source) : source.subarray(0, offset);
          if (flipping) bytes[offset]! ^= xor;
          const name = `prop-${flipping ? `flip${offset}` : `cut${offset}`}.csv.${kind}`;
          const result = await read(bytes, name);
          // Never fewer rows without an error: all rows exactly, or a named error.
          if (Array.isArray(result)) expect(result, name).toEqual(whole);
          else expectNamed(result, name);
        },
      ),
      { numRuns: sized(15, 40) },
    );
  });
});
