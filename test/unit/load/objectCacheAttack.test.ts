/**
 * Attacks on the local copy of what a striped read's plan reads of S3 objects (objectCache.ts): the
 * temporary folder removed while the load runs (an operator's cleanup, a tmp reaper), a disk that fills
 * mid-copy, reads side by side while one is extending the copy, a read given up while its bytes are being
 * written. Every read must still give the object's own bytes, each exactly once, whichever of them come
 * from the copy.
 */
import { mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectCaches } from '../../../src/load/objectCache.js';
import type { RangeBytes } from '../../../src/ordering/stripes/ranges.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'object-cache-attack-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const object = Buffer.from(Array.from({ length: 8_000 }, (_, i) => String.fromCharCode(97 + ((i * 11) % 26))).join(''));

/** An object's ranged reads, in pieces of 17 bytes, each piece after a turn of the event loop; each range asked for logged. */
function source(): RangeBytes & { asked: [number, number][] } {
  const asked: [number, number][] = [];
  return {
    asked,
    open: (start, end) => {
      asked.push([start, end]);
      return Readable.from(
        (async function* pieces() {
          for (let at = start; at < end; at += 17) {
            await new Promise((resolve) => setImmediate(resolve));
            yield object.subarray(at, Math.min(end, at + 17));
          }
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

async function caches() {
  const parent = await mkdtemp(join(dir, 'place-'));
  const releases: (() => Promise<void>)[] = [];
  const warnings: string[] = [];
  const made = new ObjectCaches({ parent, keep: (release) => releases.push(release), warn: (m) => warnings.push(m) });
  return { parent, made, warnings, release: async () => Promise.all(releases.map((r) => r())) };
}

describe('the copy of what the plan read, attacked', () => {
  it('its folder removed after the plan copied: the copied stretches still read whole (no ENOENT), nothing lost or twice', async () => {
    const { parent, made, release } = await caches();
    const src = source();
    const bytes = made.cached('s3://b/o.csv', 0, src);
    expect(await read(bytes, 0, 3_000)).toEqual(object.subarray(0, 3_000));
    made.freeze();
    const [folder] = await readdir(parent);
    await rm(join(parent, folder!), { recursive: true, force: true });
    // A stripe over the copied stretch and past it: the object's bytes, in order, once.
    expect(await read(bytes, 1_000, 5_000)).toEqual(object.subarray(1_000, 5_000));
    expect(await read(bytes, 0, 8_000)).toEqual(object);
    await release();
  });

  it('its folder removed mid-copy (before the plan ends): later reads still give the object, the copy going on or stopped', async () => {
    const { parent, made, release } = await caches();
    const src = source();
    const bytes = made.cached('s3://b/o.csv', 0, src);
    expect(await read(bytes, 0, 2_000)).toEqual(object.subarray(0, 2_000));
    const [folder] = await readdir(parent);
    await rm(join(parent, folder!), { recursive: true, force: true });
    const other = made.cached('s3://b/p.csv', 1, src);
    expect(await read(other, 0, 2_000)).toEqual(object.subarray(0, 2_000));
    expect(await read(bytes, 1_500, 4_000)).toEqual(object.subarray(1_500, 4_000));
    made.freeze();
    expect(await read(bytes, 0, 8_000)).toEqual(object);
    expect(await read(other, 0, 8_000)).toEqual(object);
    await release();
  });

  it('a copy that cannot be read back (released while a stripe still reads): the object is read instead, said once', async () => {
    const { made, warnings, release } = await caches();
    const src = source();
    const bytes = made.cached('s3://b/o.csv', 0, src);
    expect(await read(bytes, 0, 3_000)).toEqual(object.subarray(0, 3_000));
    made.freeze();
    await release();
    expect(await read(bytes, 500, 4_000)).toEqual(object.subarray(500, 4_000));
    expect(src.asked.at(-1)).toEqual([500, 4_000]);
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toContain('s3://b/o.csv');
  });

  it('a disk that fills mid-copy (a copy whose writes fail: /dev/full): said once, the object read instead, the copies made still read', async () => {
    const { parent, made, warnings, release } = await caches();
    const src = source();
    const first = made.cached('s3://b/o.csv', 0, src);
    expect(await read(first, 0, 2_000)).toEqual(object.subarray(0, 2_000));
    // The second object's copy is a file every write to fails with ENOSPC.
    const [folder] = await readdir(parent);
    await symlink('/dev/full', join(parent, folder!, 'object-1.bytes'));
    const second = made.cached('s3://b/p.csv', 1, src);
    expect(await read(second, 0, 3_000)).toEqual(object.subarray(0, 3_000));
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toContain('s3://b/p.csv');
    made.freeze();
    const asked = src.asked.length;
    // Nothing of the second was recorded as copied: fetched again, whole (/dev/full reads as zeros).
    expect(await read(second, 0, 3_000)).toEqual(object.subarray(0, 3_000));
    expect(src.asked.slice(asked)).toEqual([[0, 3_000]]);
    // The first's copy still read, not fetched.
    expect(await read(first, 0, 2_000)).toEqual(object.subarray(0, 2_000));
    expect(src.asked.length).toBe(asked + 1);
    await release();
  });

  it('reads side by side while one extends the copy, and one given up mid-write: each gives its own bytes exactly', async () => {
    const { made, warnings, release } = await caches();
    const src = source();
    const bytes = made.cached('s3://b/o.csv', 0, src);
    const ranges: [number, number, number?][] = [
      [0, 4_000],
      [100, 2_500, 700],
      [1_000, 6_000],
      [3_999, 4_001],
      [0, 8_000],
      [2_000, 2_017],
      [5_000, 8_000, 50],
      [7_990, 8_000],
    ];
    const got = await Promise.all(ranges.map(([s, e, stop]) => read(bytes, s, e, stop)));
    ranges.forEach(([s, e, stop], i) => {
      if (stop === undefined) expect(got[i]).toEqual(object.subarray(s, e));
      else expect(got[i]).toEqual(object.subarray(s, s + got[i]!.length));
    });
    // Then, again side by side, over stretches now copied and not: the same.
    made.freeze();
    const again = await Promise.all(ranges.map(([s, e]) => read(bytes, s, e)));
    ranges.forEach(([s, e], i) => expect(again[i]).toEqual(object.subarray(s, e)));
    expect(warnings).toEqual([]);
    await release();
  });
});
