import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RestartPoint } from '../../../src/checkpointing/checkpointState.js';
import { before, EMPTY_REJECT_FILE, rejectsBeforePoint, type RejectFileState } from '../../../src/checkpointing/rejectsBeforePoint.js';

const point = (part: number, line: number, sideBySide?: RestartPoint['sideBySide']): RestartPoint => ({
  part,
  row: 100,
  line,
  batch: 7,
  rowsRead: 100,
  otherSegments: 0,
  superseded: 0,
  rejected: 3,
  ...(sideBySide ? { sideBySide } : {}),
});

const record = (file: string, line: number, code = 'MISSING_KEY') => JSON.stringify({ file, line, code, message: 'm', raw: `row ${line}` });

function file(lines: string[]): { text: Buffer; state: RejectFileState } {
  const text = Buffer.from(lines.map((l) => `${l}\n`).join(''));
  return { text, state: { bytes: text.length, sha256: createHash('sha256').update(text).digest('hex') } };
}

const parts = new Map([
  ['a.csv', 0],
  ['b.csv', 1],
  ['c.csv', 2],
]);
const partOf = (name: string) => parts.get(name);

describe('rejectsBeforePoint', () => {
  it('keeps the rejects of rows before the point, in the order written, and drops those after it', () => {
    // Write rejects come after later planning rejects in the file: order in the file is not order in the input.
    const lines = [record('a.csv', 5), record('b.csv', 40), record('a.csv', 9, 'WRITE_REJECTED'), record('b.csv', 12), record('c.csv', 2)];
    const { text, state } = file(lines);
    expect(rejectsBeforePoint(text, state, point(1, 40), partOf)).toEqual({
      lines: [lines[0], lines[2], lines[3]],
      codes: ['MISSING_KEY', 'WRITE_REJECTED', 'MISSING_KEY'],
    });
  });

  it('reads only the bytes the checkpoint recorded: what came after (rejects of rows read again) is dropped', () => {
    const { text, state } = file([record('a.csv', 5)]);
    const longer = Buffer.concat([text, Buffer.from(`${record('a.csv', 7)}\n{"torn`)]);
    expect(rejectsBeforePoint(longer, state, point(1, 2), partOf)).toEqual({ lines: [record('a.csv', 5)], codes: ['MISSING_KEY'] });
  });

  it('refuses a file cut short, changed, foreign or naming a part not in the input', () => {
    const { text, state } = file([record('a.csv', 5), record('a.csv', 6)]);
    expect(rejectsBeforePoint(text.subarray(0, 10), state, point(1, 2), partOf)).toHaveProperty('refused');
    const changed = Buffer.from(text);
    changed[20] = changed[20] === 0x41 ? 0x42 : 0x41;
    expect(rejectsBeforePoint(changed, state, point(1, 2), partOf)).toHaveProperty('refused');
    const other = file([record('elsewhere.csv', 5)]);
    expect(rejectsBeforePoint(other.text, other.state, point(1, 2), partOf)).toHaveProperty('refused');
    const junk = file(['not json']);
    expect(rejectsBeforePoint(junk.text, junk.state, point(1, 2), partOf)).toHaveProperty('refused');
    const torn = Buffer.from(`${record('a.csv', 5)}\n{"fi`);
    const tornState = { bytes: torn.length, sha256: createHash('sha256').update(torn).digest('hex') };
    expect(rejectsBeforePoint(torn, tornState, point(1, 2), partOf)).toHaveProperty('refused');
  });

  it('an empty recorded file keeps nothing', () => {
    expect(rejectsBeforePoint(Buffer.alloc(0), EMPTY_REJECT_FILE, point(2, 9), partOf)).toEqual({ lines: [], codes: [] });
  });
});

describe('before', () => {
  it('a part read alone: parts before the point, and lines before the first record after it', () => {
    expect(before(0, 999, point(1, 10))).toBe(true);
    expect(before(1, 9, point(1, 10))).toBe(true);
    expect(before(1, 10, point(1, 10))).toBe(false);
    expect(before(2, 1, point(1, 10))).toBe(false);
  });

  it('files side by side: open files up to their last line read, finished ones whole, unopened ones none', () => {
    // Group of parts 3..8: 3 and 5 finished, 4 and 6 open, 7 and 8 not opened.
    const at = point(3, 50, {
      files: [
        { part: 4, row: 10, line: 20 },
        { part: 6, row: 0, line: 0 },
      ],
      next: 1,
      opened: 4,
    });
    expect(before(2, 1_000, at)).toBe(true);
    expect(before(3, 1_000, at)).toBe(true);
    expect(before(4, 20, at)).toBe(true);
    expect(before(4, 21, at)).toBe(false);
    expect(before(5, 7, at)).toBe(true);
    expect(before(6, 1, at)).toBe(false);
    expect(before(7, 1, at)).toBe(false);
  });

  it('keeps exactly the records before the point, whatever their order in the file', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ part: fc.integer({ min: 0, max: 2 }), line: fc.integer({ min: 1, max: 60 }) }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 1, max: 61 }),
        (rows, atPart, atLine) => {
          const names = ['a.csv', 'b.csv', 'c.csv'];
          const lines = rows.map((r) => record(names[r.part]!, r.line));
          const { text, state } = file(lines);
          const kept = rejectsBeforePoint(text, state, point(atPart, atLine), partOf);
          const expected = rows.filter((r) => r.part < atPart || (r.part === atPart && r.line < atLine)).map((r) => record(names[r.part]!, r.line));
          expect(kept).toEqual({ lines: expected, codes: expected.map(() => 'MISSING_KEY') });
        },
      ),
      { numRuns: 100 },
    );
  });
});
