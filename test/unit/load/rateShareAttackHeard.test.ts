import { describe, expect, it } from 'vitest';
import { heardFrom } from '../../../src/load/rateSharing.js';
import { SILENT_AFTER_MS } from '../../../src/load/loadStatus.js';

const WALL = Date.parse('2026-11-28T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('heardFrom: when a peer was last heard, by this worker clock', () => {
  it('a document seen to change was written since the last read, whatever its clock says', () => {
    const behind = heardFrom(undefined, iso(WALL - 60_000), { at: 1000, wall: WALL, first: false });
    expect(behind.at).toBe(1000);
    const again = heardFrom(behind, iso(WALL - 58_000), { at: 3000, wall: WALL + 2000, first: false });
    expect(again.at).toBe(3000);
  });

  it('a document that does not change ages by this worker clock, even when it says it was written in the future', () => {
    const ahead = heardFrom(undefined, iso(WALL + 600_000), { at: 1000, wall: WALL, first: true });
    expect(ahead.at).toBe(1000);
    const same = heardFrom(ahead, iso(WALL + 600_000), { at: 1000 + SILENT_AFTER_MS + 1, wall: WALL + SILENT_AFTER_MS + 1, first: false });
    expect(same).toBe(ahead);
    expect(1000 + SILENT_AFTER_MS + 1 - same.at).toBeGreaterThan(SILENT_AFTER_MS);
  });

  it('a document already there when this worker joins is as old as it says, never younger than now', () => {
    expect(heardFrom(undefined, iso(WALL - 3_600_000), { at: 5000, wall: WALL, first: true }).at).toBe(5000 - 3_600_000);
    expect(heardFrom(undefined, iso(WALL - 3_600_000), { at: 5000, wall: WALL, first: false }).at).toBe(5000);
  });
});
