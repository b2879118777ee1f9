/** A checkpoint file's shape is checked before it is used. */
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_VERSION } from '../../../src/checkpointing/checkpointState.js';
import { parseCheckpoint } from '../../../src/checkpointing/checkpointShape.js';
import { LoaderError } from '../../../src/shared/errors.js';

const PATH = 'runs/c.json';
/** A restart point inside files read side by side from part 3 (an export's data files). */
const SIDE_POINT = { part: 3, row: 2, line: 4, batch: 1, rowsRead: 40, otherSegments: 0, superseded: 0, rejected: 0 };

const VALID = {
  version: CHECKPOINT_VERSION,
  status: 'running',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:01.000Z',
  input: { path: '/data/c.csv', size: 10, mtimeMs: 1, edgesSha256: 'a'.repeat(64), sha256: 'b'.repeat(64) },
  options: { table: 't' },
  batchesDone: 4,
  doneAbove: [
    [6, 8],
    [9, 10],
  ],
  written: 100,
  plannedWcu: 100,
  consumedWcu: 100.5,
  writeRejects: 0,
  writeRejectLogBytes: 0,
  restartEveryRows: 65536,
  restarts: [{ part: 0, row: 65536, line: 65537, batch: 2622, rowsRead: 65536, otherSegments: 0, superseded: 12, rejected: 0 }],
};

function refusal(value: unknown): LoaderError {
  try {
    parseCheckpoint(typeof value === 'string' ? value : JSON.stringify(value), PATH);
  } catch (error) {
    expect(error).toBeInstanceOf(LoaderError);
    const e = error as LoaderError;
    expect(e.message).toContain(`checkpoint ${PATH}`);
    expect(e.message).toMatch(/delete it/);
    expect(e.message).not.toContain('probably a bug');
    return e;
  }
  throw new Error('accepted');
}

describe('parseCheckpoint', () => {
  it('accepts what ddb-spread writes', () => {
    expect(parseCheckpoint(JSON.stringify(VALID), PATH)).toEqual(VALID);
  });

  it('accepts a restart point inside files read side by side', () => {
    const sideBySide = {
      files: [
        { part: 5, row: 0, line: 0 },
        { part: 3, row: 7, line: 7 },
      ],
      next: 1,
      opened: 3,
    };
    const withSide = { ...VALID, restarts: [...VALID.restarts, { ...SIDE_POINT, sideBySide }] };
    expect(parseCheckpoint(JSON.stringify(withSide), PATH)).toEqual(withSide);
  });

  it("accepts a striped read's plan and places with byte offsets", () => {
    const piece = { part: 1, start: 0, end: 900, line: 1, skip: 0, take: null };
    const stripePlan = {
      stripes: [
        { firstLine: 0, size: 900, pieces: [piece] },
        { firstLine: 7, size: 100, pieces: [{ ...piece, start: 900, end: 1000, line: 7, take: 3, whole: true }] },
      ],
    };
    const stripes = [{ start: [0, 0], piece: 0, taken: 2, at: [1, 5, 412], read: 400, first: [1, 2], last: [1, 4, 300] }];
    const withPlan = { ...VALID, stripePlan, restarts: [{ ...SIDE_POINT, part: 0, row: 7, line: 1, stripes }] };
    expect(parseCheckpoint(JSON.stringify(withPlan), PATH)).toEqual(withPlan);
  });

  it.each([
    ['one stripe', { stripes: [{ firstLine: 0, size: 1, pieces: [{ start: 0, end: 1, line: 1, skip: 0, take: null }] }] }],
    [
      'a piece ending before it starts',
      { stripes: [0, 1].map(() => ({ firstLine: 0, size: 1, pieces: [{ start: 5, end: 1, line: 1, skip: 0, take: null }] })) },
    ],
    ['a stripe of no pieces', { stripes: [0, 1].map(() => ({ firstLine: 0, size: 1, pieces: [] })) }],
    ['a take that is not a count', { stripes: [0, 1].map(() => ({ firstLine: 0, size: 1, pieces: [{ start: 0, end: 1, line: 1, skip: 0, take: -1 }] })) }],
  ])("refuses a striped read's plan with %s", (_label, stripePlan) => {
    const e = refusal({ ...VALID, stripePlan });
    expect(e.code).toBe('CHECKPOINT_INVALID');
    expect(e.message).toContain('field stripePlan');
  });

  it.each([
    ['null', 'null', 'found null'],
    ['an array', '[]', 'an array'],
    ['truncated JSON', JSON.stringify(VALID).slice(0, 50), 'not JSON'],
    ['a string', '"x"', 'found string'],
  ])('refuses %s', (_label, text, mentions) => {
    const e = refusal(text);
    expect(e.code).toBe('CHECKPOINT_INVALID');
    expect(e.message).toContain(mentions);
  });

  it('refuses another format version as a mismatch', () => {
    expect(refusal({ version: 1 }).code).toBe('CHECKPOINT_MISMATCH');
    expect(refusal({}).message).toContain('no format version');
  });

  it('refuses a checkpoint of format 6: an export chain read by one process now empties its order and batcher between exports, so its done batch numbers would be other rows', () => {
    const e = refusal({ ...VALID, version: 6 });
    expect(e.code).toBe('CHECKPOINT_MISMATCH');
    expect(e.message).toContain('format 6');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['status', { status: 'done' }, 'field status'],
    ['input', { input: null }, 'field input'],
    ['input.size', { input: { ...VALID.input, size: -1 } }, 'field input.size'],
    ['batchesDone', { batchesDone: '4' }, 'field batchesDone'],
    ['a range touching the mark', { doneAbove: [[4, 5]] }, 'field doneAbove'],
    [
      'unsorted ranges',
      {
        doneAbove: [
          [9, 10],
          [6, 8],
        ],
      },
      'field doneAbove',
    ],
    ['written', { written: 1.5 }, 'field written'],
    [
      'a restart point without its batch',
      { restarts: [{ part: 0, row: 1, line: 2, rowsRead: 1, otherSegments: 0, superseded: 0, rejected: 0 }] },
      'field restarts',
    ],
    [
      'a restart point at line 0',
      { restarts: [{ part: 0, row: 0, line: 0, batch: 0, rowsRead: 0, otherSegments: 0, superseded: 0, rejected: 0 }] },
      'field restarts',
    ],
    [
      "files side by side with a part before the point's",
      { restarts: [{ ...SIDE_POINT, sideBySide: { files: [{ part: 2, row: 1, line: 1 }], next: 0, opened: 1 } }] },
      'field restarts',
    ],
    [
      'files side by side, one listed twice',
      {
        restarts: [
          {
            ...SIDE_POINT,
            sideBySide: {
              files: [
                { part: 3, row: 1, line: 1 },
                { part: 3, row: 2, line: 2 },
              ],
              next: 0,
              opened: 1,
            },
          },
        ],
      },
      'field restarts',
    ],
    [
      'files side by side, the rotation past them',
      { restarts: [{ ...SIDE_POINT, sideBySide: { files: [{ part: 3, row: 1, line: 1 }], next: 1, opened: 1 } }] },
      'field restarts',
    ],
    ['files side by side, none', { restarts: [{ ...SIDE_POINT, sideBySide: { files: [], next: 0, opened: 0 } }] }, 'field restarts'],
    ['a finished checkpoint without its outcome', { status: 'complete' }, 'field outcome'],
  ])('names the bad field: %s', (_label, patch, mentions) => {
    const e = refusal({ ...VALID, ...patch });
    expect(e.code).toBe('CHECKPOINT_INVALID');
    expect(e.message).toContain(mentions);
  });
});
