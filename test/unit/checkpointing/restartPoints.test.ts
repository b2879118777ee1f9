import { describe, expect, it } from 'vitest';
import { restartPointsKept, resumePoint, type RestartPoint } from '../../../src/checkpointing/checkpointState.js';
import { isRestartPoint } from '../../../src/load/restartPoints.js';

const point = (batch: number, rejected = 0, part = 0): RestartPoint => ({
  part,
  row: batch * 10,
  line: batch * 10 + 2,
  batch,
  rowsRead: batch * 10,
  otherSegments: 0,
  superseded: 0,
  rejected,
});

describe('resumePoint', () => {
  const points = [point(4), point(9), point(15), point(20)];
  it('is the latest point whose batches before it are all done (batch <= K)', () => {
    expect(resumePoint(points, 14, Infinity)?.batch).toBe(9);
    expect(resumePoint(points, 15, Infinity)?.batch).toBe(15);
    expect(resumePoint(points, 3, Infinity)).toBeUndefined();
  });
  it('never starts after a reject: planning rejects before the point, or a write reject in a batch before it', () => {
    expect(resumePoint([point(4), point(9, 1), point(15, 1)], 20, Infinity)?.batch).toBe(4);
    // A write reject in batch 7: points after batch 7 would lose it from the reject file.
    expect(resumePoint(points, 20, 7)?.batch).toBe(4);
    expect(resumePoint(points, 20, 9)?.batch).toBe(9);
    expect(resumePoint(points, 20, 2)).toBeUndefined();
  });
  it('with the reject file recorded, starts after rejects too (their rejects are kept from the file)', () => {
    expect(resumePoint([point(4), point(9, 1), point(15, 1)], 20, Infinity, true)?.batch).toBe(15);
    expect(resumePoint(points, 20, 7, true)?.batch).toBe(20);
    expect(resumePoint(points, 12, 2, true)?.batch).toBe(9);
  });
  it('takes the later of two points at one batch (an empty part between them)', () => {
    const a = point(9, 0, 1);
    const b = point(9, 0, 2);
    expect(resumePoint([a, b], 10, Infinity)).toBe(b);
  });
});

describe('restartPointsKept', () => {
  it('keeps the point a resume would take now and the usable ones ahead of K', () => {
    const points = [point(4), point(9), point(15), point(20, 2)];
    expect(restartPointsKept(points, 12, Infinity).map((p) => p.batch)).toEqual([9, 15]);
    expect(restartPointsKept(points, 12, 14).map((p) => p.batch)).toEqual([9]);
    expect(restartPointsKept(points, 0, Infinity).map((p) => p.batch)).toEqual([4, 9, 15]);
    // With the reject file recorded, a point after rejects is as good as any.
    expect(restartPointsKept(points, 12, 14, true).map((p) => p.batch)).toEqual([9, 15, 20]);
  });
});

describe('isRestartPoint', () => {
  it('every part start after the first, and every `every` rows inside a part read line by line', () => {
    expect(isRestartPoint({ part: 0, row: 0, withinPart: true }, 100)).toBe(false);
    expect(isRestartPoint({ part: 3, row: 0, withinPart: false }, 100)).toBe(true);
    expect(isRestartPoint({ part: 1, row: 200, withinPart: true }, 100)).toBe(true);
    expect(isRestartPoint({ part: 1, row: 200, withinPart: false }, 100)).toBe(false);
    expect(isRestartPoint({ part: 1, row: 201, withinPart: true }, 100)).toBe(false);
  });
});
