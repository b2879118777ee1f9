import { mkdtempSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FilePin, identityChange, identityOf } from '../../../src/reading/filePin.js';
import { fileByteSource } from '../../../src/reading/byteSource.js';
import { LoaderError } from '../../../src/shared/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'filepin-'));
let n = 0;
function pinned(content: string | Buffer): { file: string; pin: FilePin } {
  const file = join(dir, `${++n}.csv`);
  writeFileSync(file, content);
  return { file, pin: new FilePin('input.csv', file, identityOf(statSync(file))) };
}

/** Reads the stream, calling `between` after the first chunk; the bytes read and the error, if any. */
async function drain(stream: Readable, between?: () => void): Promise<{ bytes: number; error: LoaderError | undefined }> {
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      if (bytes === 0) between?.();
      bytes += (chunk as Buffer).length;
    }
    return { bytes, error: undefined };
  } catch (error) {
    return { bytes, error: error as LoaderError };
  }
}

describe('FilePin: every read of a local file checked against its identity when listed', () => {
  const base = { dev: 1, ino: 2, size: 5_120_000, mtimeMs: 1_000, ctimeMs: 1_000 };
  it.each([
    ['nothing', base, undefined],
    ['another file', { ...base, ino: 3 }, 'replaced by another file'],
    ['truncated', { ...base, size: 1_048_576 }, 'size 5,120,000 -> 1,048,576 bytes'],
    ['rewritten, same size', { ...base, mtimeMs: 2_000, ctimeMs: 2_000 }, /^modified: mtime 1970-01-01T00:00:01.000Z -> /],
    ['its inode only (mtime set back)', { ...base, ctimeMs: 2_000 }, /^its inode changed/],
  ])('identityChange: %s', (_, now, expected) => {
    const found = identityChange(base, now);
    if (expected === undefined || typeof expected === 'string') expect(found).toBe(expected);
    else expect(found).toMatch(expected);
  });

  it('an unchanged file reads whole, from an offset too', async () => {
    const { pin } = pinned('x'.repeat(100_000));
    expect(await drain(pin.open(0, undefined, 4096))).toEqual({ bytes: 100_000, error: undefined });
    expect(await drain(pin.open(60_000, 70_000, 4096))).toEqual({ bytes: 10_000, error: undefined });
  });

  it.each([
    ['truncated', (file: string) => truncateSync(file, 10), /size 100,000 -> 10 bytes/],
    ['rewritten in place, same size', (file: string) => writeFileSync(file, 'y'.repeat(100_000)), /modified: mtime/],
    [
      'replaced by a rename',
      (file: string) => (writeFileSync(`${file}.new`, 'x'.repeat(100_000)), renameSync(`${file}.new`, file)),
      // The file read loses its last link (its ctime moves), and its path names another.
      /replaced by another file|its inode changed/,
    ],
  ])('a file %s after its first chunk: INPUT_CHANGED naming it, no byte read after the change handed on', async (_, change, what) => {
    const { file, pin } = pinned('x'.repeat(100_000));
    const { bytes, error } = await drain(pin.open(0, undefined, 4096), () => change(file));
    expect(error).toBeInstanceOf(LoaderError);
    expect(error!.code).toBe('INPUT_CHANGED');
    expect(error!.message).toMatch(/^input\.csv changed while it was being read \(/);
    expect(error!.message).toMatch(what);
    expect(bytes).toBeLessThan(100_000);
  });

  it('a file changed before it is opened at an offset is refused at once', async () => {
    const { file, pin } = pinned('x'.repeat(10_000));
    truncateSync(file, 5_000);
    const { bytes, error } = await drain(pin.open(6_000));
    expect([bytes, error?.code]).toEqual([0, 'INPUT_CHANGED']);
  });

  it("Parquet's positional reads check the pin", async () => {
    const { file, pin } = pinned(Buffer.alloc(50_000, 1));
    const source = await fileByteSource(file, pin);
    expect((await source.read(0, 1000)).length).toBe(1000);
    truncateSync(file, 20_000);
    await expect(source.read(30_000, 40_000)).rejects.toMatchObject({ code: 'INPUT_CHANGED' });
    await source.close();
  });
});
