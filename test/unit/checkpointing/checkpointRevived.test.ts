/**
 * Across a resume: superseded rows written in place of a refused successor are counted in the
 * checkpoint, so a resumed load (which reads those rows again and sees them superseded again) can take
 * them out of "superseded" and the counts still add up.
 */
import { describe, expect, it } from 'vitest';
import { BatchProgress } from '../../../src/checkpointing/checkpointState.js';

const done = (revived?: number) => ({ written: 10, plannedWcu: 10, consumedWcu: 10, writeRejects: 0, ...(revived === undefined ? {} : { revived }) });

describe('revived rows in the checkpoint', () => {
  it('sums revived over every done batch, counted once each, also above the low-water mark', () => {
    const progress = new BatchProgress();
    progress.complete(1, done(2));
    // Batch 1 is done above K = 0: its counters are in the checkpoint with it (the done ranges above K).
    expect(progress.batchesDone).toBe(0);
    expect(progress.totals.revived).toBe(2);
    progress.complete(0, done(1));
    expect(progress.batchesDone).toBe(2);
    expect(progress.totals.revived).toBe(3);
    expect(progress.complete(1, done(2))).toBe(false);
    progress.complete(2, done());
    expect(progress.totals.revived).toBe(3);
  });

  it('continues from a saved count, and a checkpoint without any stays without the field', () => {
    const saved = { batchesDone: 4, doneAbove: [], written: 40, plannedWcu: 40, consumedWcu: 40, writeRejects: 0 };
    const resumed = new BatchProgress({ ...saved, revived: 5 });
    resumed.complete(4, done(1));
    expect(resumed.totals.revived).toBe(6);
    const plain = new BatchProgress(saved);
    plain.complete(4, done(0));
    expect('revived' in plain.totals).toBe(false);
  });
});
