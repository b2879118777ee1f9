import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvMeasure } from '../../../src/typing/measureCsv.js';
import { createRowPlanner, isRejected, type RowPlannerOptions, type SourceRecord } from '../../../src/typing/planRow.js';
import type { ColumnType, EmptyPolicy } from '../../../src/typing/typeMap.js';

const NAMES = ['pk', 'sk', 'a', 'b', 'é', '__proto__', 'constructor'] as const;

/** Cell texts near every rule the fast path takes or declines: plain and non-canonical numbers, text, booleans, JSON. */
const cellText = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '-0',
    '1',
    '17',
    '-451.99',
    '0.05',
    '1.0',
    '007',
    '+1',
    '1e5',
    '1.50',
    'NaN',
    'true',
    'false',
    '{"x":1}',
    '[1]',
    '{',
    'x',
    'ü',
    '😀',
  ),
  fc.stringMatching(/^-?(0|[1-9]\d{0,45})(\.\d{0,25})?$/),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.integer({ min: 2040, max: 2060 }).map((n) => 'k'.repeat(n)),
  fc.integer({ min: 1020, max: 1030 }).map((n) => 'é'.repeat(n / 2)),
);

/** A key cell: mostly plain text or a plain number, sometimes any cell, sometimes missing. */
const keyText = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('ANC', 'LAX', '12', '-7', '0.5', 'é') },
  { weight: 3, arbitrary: cellText },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const otherCells = fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES.filter((n) => n !== 'pk' && n !== 'sk')), cellText), {
  selector: ([name]) => name,
  maxLength: 5,
});

const columnType = fc.constantFrom<ColumnType | undefined>(undefined, undefined, 'S', 'N', 'BOOL', 'SS', 'JSON');

const options = fc.record({
  pkType: fc.constantFrom<'S' | 'N'>('S', 'N'),
  skType: fc.constantFrom<'S' | 'N' | undefined>('S', 'N', undefined),
  infer: fc.boolean(),
  empty: fc.constantFrom<EmptyPolicy>('omit', 'null', 'string'),
  types: fc.dictionary(
    fc.constantFrom(...NAMES),
    columnType.filter((t): t is ColumnType => t !== undefined),
    { maxKeys: 4 },
  ),
});

interface Drawn {
  pkType: 'S' | 'N';
  skType: 'S' | 'N' | undefined;
  infer: boolean;
  empty: EmptyPolicy;
  types: Record<string, ColumnType>;
}

function plannerOptions(o: Drawn): RowPlannerOptions {
  const types = Object.create(null) as Record<string, ColumnType>;
  for (const [name, type] of Object.entries(o.types)) types[name] = type;
  return {
    keySchema: { partitionKey: { name: 'pk', type: o.pkType }, ...(o.skType ? { sortKey: { name: 'sk', type: o.skType } } : {}) },
    types,
    infer: o.infer,
    empty: o.empty,
    jsonFlavor: 'json',
  };
}

function csvRecord(cells: [string, string][], raw = 'row'): SourceRecord {
  const record = Object.create(null) as Record<string, string>;
  for (const [name, text] of cells) record[name] = text;
  return { kind: 'csv', origin: { file: 'f.csv', line: 2, raw }, cells: record };
}

describe('csvMeasure', () => {
  it("gives plan()'s keys, size and units, or leaves the row to plan()", () => {
    let measured = 0;
    fc.assert(
      fc.property(options, keyText, keyText, otherCells, (o, pk, sk, others) => {
        const opts = plannerOptions(o);
        const measure = csvMeasure(opts)!;
        const record = csvRecord([
          ...(pk === undefined ? [] : [['pk', pk] as [string, string]]),
          ...(sk === undefined ? [] : [['sk', sk] as [string, string]]),
          ...others,
        ]);
        const got = measure(record);
        if (got === undefined) return;
        measured++;
        const planned = createRowPlanner(opts).plan(record);
        // The fast path never takes a row plan() rejects, and agrees on every figure the estimate keeps.
        expect(isRejected(planned)).toBe(false);
        if (isRejected(planned)) return;
        expect(got).toEqual({ keyId: planned.keyId, partitionId: planned.partitionId, size: planned.size, wcu: planned.wcu });
        expect(planned.op).toBeUndefined();
      }),
      { numRuns: 3000 },
    );
    // Not a path that always declines: a good share of the rows drawn are measured (about one in six; 250 is far below what a run draws).
    expect(measured).toBeGreaterThan(250);
  });

  it('measures the common row, and leaves what needs converting or rejecting to plan()', () => {
    const opts = plannerOptions({ pkType: 'S', skType: 'N', infer: false, empty: 'omit', types: { n: 'N' } as Record<string, ColumnType> });
    const measure = csvMeasure(opts)!;
    const row = (n: string, pk = 'ANC', sk = '12') =>
      measure(
        csvRecord([
          ['pk', pk],
          ['sk', sk],
          ['n', n],
        ]),
      );
    expect(row('-13')).toEqual({ keyId: '4:SANCN12', partitionId: 'SANC', size: 2 + 3 + (2 + 2) + (1 + 3), wcu: 1 });
    // A number not already canonical is converted by plan(); a bad one is its reject.
    expect(row('1.0')).toBeUndefined();
    expect(row('x')).toBeUndefined();
    expect(row('1', 'ANC', '012')).toBeUndefined();
    expect(row('1', '')).toBeUndefined();
    expect(row('1', 'k'.repeat(2049))).toBeUndefined();
    // A JSON-style escape that may be a lone surrogate is checked by plan().
    expect(
      measure(
        csvRecord(
          [
            ['pk', 'a'],
            ['sk', '1'],
          ],
          'a,\\ud800',
        ),
      ),
    ).toBeUndefined();
    expect(measure({ kind: 'json', origin: { file: 'f', line: 1, raw: '{}' } })).toBeUndefined();
  });

  it('is not offered where each row needs its item: deletes, shards, GSI keys', () => {
    const base = plannerOptions({ pkType: 'S', skType: undefined, infer: false, empty: 'omit', types: {} });
    expect(csvMeasure({ ...base, deletes: { all: false, column: 'op' } })).toBeUndefined();
    expect(csvMeasure({ ...base, indexKeys: [{ index: 'g', name: 'a', type: 'S', role: 'partition' }] })).toBeUndefined();
    expect(csvMeasure(base)).toBeDefined();
  });
});
