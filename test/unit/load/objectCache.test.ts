/**
 * The local copy of what a striped read's plan reads of S3 objects (objectCache.ts): every read gives the
 * object's own bytes, whichever of them come from the copy; bytes read once are not fetched again while
 * copying; after freeze() nothing more is copied; a copy that cannot be made leaves every read to the
 * object, said once; the copies are private and go when the load ends.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectCaches } from '../../../src/load/objectCache.js';
import type { RangeBytes } from '../../../src/ordering/stripes/ranges.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'object-cache-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const object = Buffer.from(Array.from({ length: 5_000 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join(''));

/** An object's ranged reads, in pieces of 13 bytes, each range asked for logged. */
function source(): RangeBytes & { asked: [number, number][] } {
  const asked: [number, number][] = [];
  return {
    asked,
    open: (start, end) => {
      asked.push([start, end]);
      return Readable.from(
        (function* pieces() {
          for (let at = start; at < end; at += 13) yield object.subarray(at, Math.min(end, at + 13));
        })(),
        { objectMode: false },
      );
    },
  };
}

async function read(bytes: RangeBytes, start: number, end: number, stopAfter = Infinity): Promise<Buffer> {
  const out: Buffer[] = [];
  let got = 0;
  for await (const chunk of bytes.open(start, end, 64)) {
    out.push(chunk as Buffer);
    got += (chunk as Buffer).length;
    if (got >= stopAfter) break;
  }
  return Buffer.concat(out);
}

function caches(parent: string) {
  const releases: (() => Promise<void>)[] = [];
  const warnings: string[] = [];
  const made = new ObjectCaches({ parent, keep: (release) => releases.push(release), warn: (m) => warnings.push(m) });
  return { made, warnings, release: async () => Promise.all(releases.map((r) => r())) };
}

describe('the copy of what the plan read of an S3 object', () => {
  it('gives the same bytes, fetches only what it has not copied, and reads the rest back from the copy', async () => {
    const { made, warnings, release } = caches(dir);
    const src = source();
    const bytes = made.cached('s3://b/o.csv', 0, src);
    expect(await read(bytes, 0, 1_000)).toEqual(object.subarray(0, 1_000));
    expect(await read(bytes, 500, 2_000)).toEqual(object.subarray(500, 2_000));
    expect(src.asked).toEqual([
      [0, 1_000],
      [1_000, 2_000],
    ]);
    // A stretch between two copied ones: only the gap is fetched.
    expect(await read(bytes, 3_000, 3_500)).toEqual(object.subarray(3_000, 3_500));
    expect(await read(bytes, 1_500, 4_000)).toEqual(object.subarray(1_500, 4_000));
    expect(src.asked.slice(3)).toEqual([
      [2_000, 3_000],
      [3_500, 4_000],
    ]);
    expect(made.readBack).toBe(500 + 500 + 500);
    // Side by side, over a stretch not copied yet: both whole.
    const [a, b] = await Promise.all([read(bytes, 3_900, 5_000), read(bytes, 4_100, 4_900)]);
    expect(a).toEqual(object.subarray(3_900, 5_000));
    expect(b).toEqual(object.subarray(4_100, 4_900));
    expect(warnings).toEqual([]);
    // Private, and gone when the load ends.
    const [folder] = await readdir(dir);
    expect((await stat(join(dir, folder!))).mode & 0o777).toBe(0o700);
    for (const name of await readdir(join(dir, folder!))) expect((await stat(join(dir, folder!, name))).mode & 0o777).toBe(0o600);
    await release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a read given up part way keeps what it read; after freeze() nothing more is copied', async () => {
    const { made, release } = caches(dir);
    const src = source();
    const bytes = made.cached('s3://b/o.csv', 1, src);
    const head = await read(bytes, 0, 4_000, 100);
    expect(head).toEqual(object.subarray(0, head.length));
    expect(await read(bytes, 0, 50)).toEqual(object.subarray(0, 50));
    expect(src.asked).toEqual([[0, 4_000]]);
    made.freeze();
    expect(await read(bytes, 2_000, 2_100)).toEqual(object.subarray(2_000, 2_100));
    expect(await read(bytes, 2_000, 2_100)).toEqual(object.subarray(2_000, 2_100));
    // Read from the object both times: not copied once frozen.
    expect(src.asked.slice(1)).toEqual([
      [2_000, 2_100],
      [2_000, 2_100],
    ]);
    await release();
  });

  it('a temporary folder the copy cannot be made in: every read goes to the object, and the user is told once', async () => {
    const { made, warnings, release } = caches(join(dir, 'missing', 'deeper'));
    const src = source();
    const bytes = made.cached('s3://b/o.csv', 0, src);
    expect(await read(bytes, 0, 300)).toEqual(object.subarray(0, 300));
    expect(await read(bytes, 0, 300)).toEqual(object.subarray(0, 300));
    expect(src.asked).toEqual([
      [0, 300],
      [0, 300],
    ]);
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toContain('s3://b/o.csv');
    expect(warnings[0]).toContain('--temp-dir');
    await release();
  });
  it('a temporary folder in memory (tmpfs): nothing is copied, every read goes to the object, and the user is told why', async () => {
    const shm = await mkdtemp('/dev/shm/object-cache-');
    try {
      const { made, warnings, release } = caches(shm);
      const src = source();
      const bytes = made.cached('s3://b/o.csv', 0, src);
      expect(await read(bytes, 0, 300)).toEqual(object.subarray(0, 300));
      expect(await read(bytes, 0, 300)).toEqual(object.subarray(0, 300));
      expect(src.asked.length).toBe(2);
      expect(warnings.length).toBe(1);
      expect(warnings[0]).toContain('in memory');
      await release();
    } finally {
      await rm(shm, { recursive: true, force: true });
    }
  });
});
