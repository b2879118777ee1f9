/** Rows nested thousands deep are rejected as TOO_DEEP, never a stack overflow. */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { RowError } from '../../../src/shared/errors.js';
import { checkJsonDepth, MAX_NESTING, openingBracketsAtMost, scanJsonDepth } from '../../../src/typing/jsonDepth.js';
import { createRowPlanner, isRejected, type JsonFlavor } from '../../../src/typing/planRow.js';
import type { ColumnType } from '../../../src/typing/typeMap.js';
import type { PlannedWrite, RejectedRow } from '../../../src/shared/types.js';

const nestedArrays = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
const nestedMaps = (n: number) => `${'{"m":'.repeat(n)}1${'}'.repeat(n)}`;
/** DynamoDB JSON with `n` levels of maps under attribute "deep". */
const ddbNested = (n: number) => `{"pk":{"S":"a"},"deep":${'{"M":{"m":'.repeat(n)}{"S":"x"}${'}}'.repeat(n)}}`;

function plan(raw: string, flavor: JsonFlavor = 'json', types: Record<string, ColumnType> = {}): PlannedWrite | RejectedRow {
  const planner = createRowPlanner({ keySchema: { partitionKey: { name: 'pk', type: 'S' } }, types, infer: false, empty: 'omit', jsonFlavor: flavor });
  return planner.plan({ kind: 'json', origin: { file: 'in.jsonl', line: 7, raw } });
}

function rowError(fn: () => unknown): RowError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RowError) return error;
    throw error;
  }
  throw new Error('expected a RowError');
}

describe('checkJsonDepth', () => {
  it('passes text exactly at the bound and refuses one bracket more', () => {
    expect(() => checkJsonDepth(nestedArrays(5), 5)).not.toThrow();
    expect(rowError(() => checkJsonDepth(nestedArrays(6), 5)).code).toBe('TOO_DEEP');
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(() => checkJsonDepth(JSON.stringify({ s: '[[[[[[[[{{{{{{\\"[[[[[' }), 2)).not.toThrow();
  });

  it('names the top-level attribute the deep value is under', () => {
    const error = rowError(() => checkJsonDepth(`{"a":"[x","b":{"c":1},"deep":${nestedArrays(3000)}}`, 33));
    expect(error.code).toBe('TOO_DEEP');
    expect(error.field).toBe('deep');
  });
});

describe('planner: deep rows are TOO_DEEP rejects', () => {
  const rejectedOf = (result: PlannedWrite | RejectedRow): RejectedRow => {
    if (!isRejected(result)) throw new Error('expected a reject');
    return result;
  };

  it('a JSON line nested 3,000 deep is rejected naming its attribute', () => {
    const row = rejectedOf(plan(`{"pk":"a","deep":${nestedArrays(3000)}}`));
    expect(row.code).toBe('TOO_DEEP');
    expect(row.field).toBe('deep');
    expect(row.origin.line).toBe(7);
  });

  it('a JSON line with a number that takes the lossless parser, nested 100,000 deep', () => {
    const row = rejectedOf(plan(`{"pk":"a","deep":${nestedArrays(100_000).replace('1', '12345678901234567890')}}`));
    expect(row.code).toBe('TOO_DEEP');
  });

  it(`maps ${MAX_NESTING} levels deep load; ${MAX_NESTING + 1} are TOO_DEEP`, () => {
    expect(isRejected(plan(`{"pk":"a","deep":${nestedMaps(MAX_NESTING)}}`))).toBe(false);
    const row = rejectedOf(plan(`{"pk":"a","deep":${nestedMaps(MAX_NESTING + 1)}}`));
    expect(row.code).toBe('TOO_DEEP');
    expect(row.field).toBe('deep');
  });

  it(`DynamoDB JSON: ${MAX_NESTING} levels load, ${MAX_NESTING + 1} and 3,000 are TOO_DEEP`, () => {
    expect(isRejected(plan(ddbNested(MAX_NESTING), 'ddb-json'))).toBe(false);
    for (const n of [MAX_NESTING + 1, 3000]) {
      const row = rejectedOf(plan(ddbNested(n), 'ddb-json'));
      expect(row.code).toBe('TOO_DEEP');
      expect(row.field).toBe('deep');
    }
  });

  it('a JSON string typed JSON by --types, nested 3,000 deep, is TOO_DEEP on its attribute', () => {
    const row = rejectedOf(plan(JSON.stringify({ pk: 'a', doc: nestedArrays(3000) }), 'json', { doc: 'JSON' }));
    expect(row.code).toBe('TOO_DEEP');
    expect(row.field).toBe('doc');
  });

  it.each<ColumnType>(['JSON', 'M', 'L'])('a CSV cell typed %s nested 3,000 deep is TOO_DEEP naming the column', (type) => {
    const planner = createRowPlanner({
      keySchema: { partitionKey: { name: 'pk', type: 'S' } },
      types: { doc: type },
      infer: false,
      empty: 'omit',
      jsonFlavor: 'json',
    });
    const cell = type === 'M' ? `{"m":${nestedArrays(3000)}}` : nestedArrays(3000);
    const row = rejectedOf(planner.plan({ kind: 'csv', origin: { file: 'in.csv', line: 3, raw: '' }, cells: { pk: 'a', doc: cell } }));
    expect(row.code).toBe('TOO_DEEP');
    expect(row.field).toBe('doc');
  });

  it('with --infer a deep cell stays a string (it is not JSON DynamoDB can hold)', () => {
    const planner = createRowPlanner({ keySchema: { partitionKey: { name: 'pk', type: 'S' } }, types: {}, infer: true, empty: 'omit', jsonFlavor: 'json' });
    const result = planner.plan({ kind: 'csv', origin: { file: 'in.csv', line: 3, raw: '' }, cells: { pk: 'a', doc: nestedArrays(3000) } });
    expect(isRejected(result)).toBe(false);
    expect((result as PlannedWrite).item.doc).toBe(nestedArrays(3000));
  });
});

describe('checkJsonDepth: the bracket count shortcut', () => {
  const outcome = (fn: () => void) => {
    try {
      fn();
      return 'ok';
    } catch (error) {
      return error instanceof RowError ? `${error.code}: ${error.message}` : 'other';
    }
  };
  // Brackets, quotes and escapes in any mix: strings that hide brackets, unbalanced text, deep and shallow.
  const piece = fc.constantFrom('{', '[', '}', ']', '"', '\\', '"a"', '"[{"', ':', ',', '1', '{"m":', '[[', '"x\\"["');
  test.prop([fc.array(piece, { maxLength: 80 }), fc.integer({ min: 1, max: 12 })], { numRuns: 2000 })(
    'gives what the full pass gives, for any text and depth',
    (pieces, maxDepth) => {
      const text = pieces.join('');
      expect(outcome(() => checkJsonDepth(text, maxDepth))).toBe(outcome(() => scanJsonDepth(text, maxDepth)));
    },
  );

  it('is taken only when the text cannot nest deeper than allowed', () => {
    expect(openingBracketsAtMost('{"a":[1,{"b":2}]}', 3)).toBe(true);
    expect(openingBracketsAtMost('{"a":[1,{"b":2}]}', 2)).toBe(false);
    expect(openingBracketsAtMost('{"a":"[[[["}', 2)).toBe(false);
  });
});
