import { describe, expect, it } from 'vitest';
import { doubled } from '../../../src/shared/typedArrays.js';

describe('doubled', () => {
  it('twice the length, the same type, the elements first and zeros after', () => {
    const a = Float64Array.from([1.5, 2, 3]);
    const b = doubled(a);
    expect(b).toBeInstanceOf(Float64Array);
    expect([...b]).toEqual([1.5, 2, 3, 0, 0, 0]);
    const u = doubled(Uint32Array.from([7]));
    expect(u).toBeInstanceOf(Uint32Array);
    expect([...u]).toEqual([7, 0]);
  });

  it('an empty array grows to one element, so a loop that doubles until it fits ends', () => {
    expect(doubled(new Uint32Array(0))).toHaveLength(1);
  });
});
