import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, tuneHeap } from '../../../src/cli/heap.js';

describe('tuneHeap', () => {
  it('sets the heap growth when the user did not', () => {
    expect(HEAP_GROWING_PERCENT).toBe(100);
    expect(tuneHeap([], '')).toBe(true);
    expect(tuneHeap(['--enable-source-maps'], '--max-old-space-size=4096')).toBe(true);
  });

  it("leaves the user's own setting alone, on the command line or in NODE_OPTIONS, in either spelling", () => {
    expect(tuneHeap(['--heap-growing-percent=20'], '')).toBe(false);
    expect(tuneHeap([], '--max-old-space-size=512 --heap_growing_percent=80')).toBe(false);
  });
});
