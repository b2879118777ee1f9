import { describe, expect, it, vi } from 'vitest';
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

describe('heapForOrder', () => {
  it("gives a global order V8's own growth back once, and leaves streaming orders with ours", async () => {
    vi.resetModules();
    const { heapForOrder: fresh, tuneHeap: tune } = await import('../../../src/cli/heap.js');
    expect(fresh('spread')).toBe(false); // not tuned in this module instance yet
    expect(tune([], '')).toBe(true);
    expect(fresh('stripes')).toBe(false);
    expect(fresh('window')).toBe(false);
    expect(fresh('round-robin')).toBe(true);
    expect(fresh('spread')).toBe(false); // already given back
  });
});
