import { describe, expect, it } from 'vitest';
import { partsRefusal, type PartIdentity } from '../../../src/checkpointing/checkpointState.js';

const a: PartIdentity = { name: 'd/a.csv', size: 200_000, mtimeMs: 1_000, edges: 'e'.repeat(64), hash: '1'.repeat(64) };
const b: PartIdentity = { name: 'd/b.csv', size: 100_000, mtimeMs: 5_000, edges: 'f'.repeat(64), hash: '2'.repeat(64) };

describe('partsRefusal: each part of a set against the checkpoint, whatever the other parts are', () => {
  it('the same parts, or a part whose time moved but whose content hashes the same: resumed', () => {
    expect(partsRefusal([a, b], [a, b], 'ck.json')).toBeUndefined();
    expect(partsRefusal([a, b], [{ ...a, mtimeMs: 1_001 }, b], 'ck.json')).toBeUndefined();
  });

  it.each([
    [
      'the older part changed in place (same size, its time moved, still older than b)',
      [{ ...a, mtimeMs: 1_001, hash: '3'.repeat(64) }, b],
      /d\/a\.csv changed since checkpoint ck\.json was written \(same size, but its content differs/,
    ],
    ['a part of another size', [{ ...a, size: 1 }, b], /d\/a\.csv changed .*\(size 200000 -> 1 bytes\)/],
    ['a part whose edges differ', [a, { ...b, edges: '0'.repeat(64) }], /d\/b\.csv changed .*first or last 64 KB/],
    ['a part added', [a, b, { ...b, name: 'd/c.csv' }], /3 parts, checkpoint ck\.json recorded 2/],
    ['a part renamed', [{ ...a, name: 'd/z.csv' }, b], /part 1 of the input is d\/z\.csv, checkpoint ck\.json recorded d\/a\.csv/],
    ['a part whose time moved, with no hash to compare', [{ ...a, mtimeMs: 7, hash: undefined }, b], /modification time differs, and no content hash/],
  ])('refused: %s', (_, found, message) => {
    const refusal = partsRefusal([a, b], found as PartIdentity[], 'ck.json');
    expect(refusal).toMatch(message);
    expect(refusal).toMatch(/delete ck\.json \(or pass another --checkpoint\) to start over$/);
  });
});
