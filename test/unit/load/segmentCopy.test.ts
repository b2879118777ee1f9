/**
 * The local copy of a scanned segment (load/segmentCopy.ts): a range read over it must give the part's own
 * bytes whatever its edges (a range opens a byte before its first record, and ends past the segment), the
 * copy is private, and a copy that is not whole is never read.
 */
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InputPart } from '../../../src/reading/inputPart.js';
import { SegmentCopies } from '../../../src/load/segmentCopy.js';

/** An in-memory S3-like part that counts the bytes it hands out. */
function memoryPart(bytes: Buffer): InputPart & { served: number } {
  const part = {
    name: 's3://bucket/big.csv',
    size: bytes.length,
    etag: '"abc"',
    served: 0,
    open: (from = 0, to = bytes.length) => {
      const slice = bytes.subarray(from, to);
      part.served += slice.length;
      // In small chunks, as a stream comes.
      const chunks: Buffer[] = [];
      for (let i = 0; i < slice.length; i += 7) chunks.push(slice.subarray(i, i + 7));
      return Promise.resolve(Readable.from(chunks));
    },
    outline: () => Promise.resolve({ name: 's3://bucket/big.csv', size: bytes.length, mtimeMs: 0, edges: '"abc"' }),
    contentHash: () => Promise.resolve('"abc"'),
  };
  return part;
}

async function readAll(part: InputPart, from?: number, to?: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await part.open(from, to)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function copiesIn(parent: string) {
  const releases: (() => Promise<void>)[] = [];
  const warnings: string[] = [];
  const copies = new SegmentCopies({ parent, keep: (r) => releases.push(r), warn: (m) => warnings.push(m) });
  return { copies, warnings, release: () => Promise.all(releases.map((r) => r())) };
}

async function copySegment(copies: SegmentCopies, part: InputPart, start: number, end: number) {
  const copy = (await copies.start(part, start, end - start, '0-1'))!;
  for await (const chunk of await part.open(start, end)) await copy.write(chunk as Buffer);
  return { copy, copied: await copy.finish(end) };
}

describe('the local copy of a scanned segment', () => {
  it('reads as the part itself over any range, the copied bytes from the copy and only the rest from the part', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'segment-copy-'));
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join(''));
    const part = memoryPart(bytes);
    const { copies, release } = await copiesIn(parent);
    const { copied } = await copySegment(copies, part, 1000, 2000);
    expect(copied).toBeDefined();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 3000 }), async (a, b) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        part.served = 0;
        const before = copies.tally.bytes;
        const read = await readAll(copied!, from, to);
        expect(read.equals(bytes.subarray(from, to))).toBe(true);
        const inCopy = Math.max(0, Math.min(to, 2000) - Math.max(from, 1000));
        expect(copies.tally.bytes - before).toBe(inCopy);
        expect(part.served).toBe(to - from - inCopy);
      }),
      { numRuns: 200 },
    );
    // To the end by default, as a range's last segment is opened.
    expect((await readAll(copied!, 999)).equals(bytes.subarray(999))).toBe(true);
    await release();
  });

  it('is private, and removed when the load ends', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'segment-copy-'));
    const part = memoryPart(Buffer.from('a,b\n'.repeat(500)));
    const { copies, release } = await copiesIn(parent);
    const { copy } = await copySegment(copies, part, 100, 900);
    const [folder] = await readdir(parent);
    expect(folder).toMatch(/^ddb-spread-/);
    expect((await stat(join(parent, folder!))).mode & 0o777).toBe(0o700);
    expect((await stat(copy.path)).mode & 0o777).toBe(0o600);
    await release();
    expect(await readdir(parent)).toEqual([]);
  });

  it('a copy that is not the whole segment is dropped and said, and the range is read from the part', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'segment-copy-'));
    const part = memoryPart(Buffer.from('x\n'.repeat(1000)));
    const { copies, warnings, release } = await copiesIn(parent);
    const copy = (await copies.start(part, 0, 1000, '0-0'))!;
    await copy.write(Buffer.alloc(600, 'x'));
    expect(await copy.finish(1000)).toBeUndefined();
    expect(warnings.join('\n')).toMatch(/is 600 bytes, not 1000.*fetches its range from S3 again/);
    await expect(stat(copy.path)).rejects.toThrow(/ENOENT/);
    await release();
  });

  it('no copy where it would leave the file system too little room: said, with what to do', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'segment-copy-'));
    const part = memoryPart(Buffer.from('x\n'));
    const { copies, warnings, release } = await copiesIn(parent);
    expect(await copies.start(part, 0, 2 ** 52, '0-0')).toBeUndefined();
    expect(warnings.join('\n')).toMatch(/not copying .* --temp-dir a folder with room/);
    await release();
  });
});
