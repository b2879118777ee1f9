/**
 * Deletes in the planner (issue 16): --delete, --operation-column, and a DynamoDB export's lines (full
 * export items, incremental change records with and without NewImage). Pure.
 */
import { describe, expect, it } from 'vitest';
import { decodeWrite, encodeWrite } from '../../../src/ordering/writeCodec.js';
import { createRowPlanner, isRejected, type RowPlannerOptions, type SourceRecord } from '../../../src/typing/planRow.js';
import type { KeySchema, PlannedWrite, RejectedRow } from '../../../src/shared/types.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const planner = (over: Partial<RowPlannerOptions> = {}) =>
  createRowPlanner({ keySchema: SCHEMA, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json', ...over });
const csv = (cells: Record<string, string>): SourceRecord => ({ kind: 'csv', origin: { file: 'f.csv', line: 2, raw: '' }, cells });
const line = (raw: string, flavor: 'ddb-export' | 'ddb-change'): SourceRecord => ({ kind: 'json', origin: { file: 'd.json.gz', line: 1, raw }, flavor });

function write(result: PlannedWrite | RejectedRow): PlannedWrite {
  if (isRejected(result)) throw new Error(`expected a write, got ${result.code}: ${result.message}`);
  return result;
}

describe('deletes in the planner', () => {
  it('--delete: the key attributes only, 1 planned unit, op delete', () => {
    const w = write(planner({ deletes: { all: true, column: undefined } }).plan(csv({ pk: 'a', sk: '7', big: 'x'.repeat(5000) })));
    expect(w.op).toBe('delete');
    expect(Object.keys(w.item).sort()).toEqual(['pk', 'sk']);
    expect(w.wcu).toBe(1);
  });

  it('--operation-column: put, delete (any case, trimmed), empty as put; the column is dropped; anything else is rejected', () => {
    const p = planner({ deletes: { all: false, column: 'op' } });
    const put = write(p.plan(csv({ pk: 'a', sk: '1', op: 'put', v: 'x' })));
    expect(put.op).toBeUndefined();
    expect(Object.keys(put.item).sort()).toEqual(['pk', 'sk', 'v']);
    expect(write(p.plan(csv({ pk: 'a', sk: '1', op: ' Delete ', v: 'x' }))).op).toBe('delete');
    expect(write(p.plan(csv({ pk: 'a', sk: '1', op: '' }))).op).toBeUndefined();
    const bad = p.plan(csv({ pk: 'a', sk: '1', op: 'upsert' }));
    expect(isRejected(bad) && bad.code).toBe('TYPE_ERROR');
  });

  it('an empty operation with --delete too is a delete', () => {
    expect(write(planner({ deletes: { all: true, column: 'op' } }).plan(csv({ pk: 'a', sk: '1', op: '' }))).op).toBe('delete');
  });

  it("export lines: a full export's Item; a change record's NewImage (put) or Keys (delete)", () => {
    const p = planner();
    const item = write(p.plan(line('{"Item":{"pk":{"S":"a"},"sk":{"N":"1"},"n":{"N":"1.50"}}}', 'ddb-export')));
    expect(item.op).toBeUndefined();
    expect(String(item.item.n)).toBe('1.5');
    const put = write(
      p.plan(
        line(
          '{"Metadata":{"WriteTimestampMicros":{"N":"1"}},"Keys":{"pk":{"S":"a"},"sk":{"N":"1"}},"NewImage":{"pk":{"S":"a"},"sk":{"N":"1"},"v":{"S":"n"}}}',
          'ddb-change',
        ),
      ),
    );
    expect(put.op).toBeUndefined();
    expect(put.item.v).toBe('n');
    const del = write(
      p.plan(
        line('{"Metadata":{"WriteTimestampMicros":{"N":"2"}},"Keys":{"pk":{"S":"a"},"sk":{"N":"1"}},"OldImage":{"pk":{"S":"a"},"sk":{"N":"1"}}}', 'ddb-change'),
      ),
    );
    expect(del.op).toBe('delete');
    expect(del.keyId).toBe(put.keyId);
    const neither = p.plan(line('{"Metadata":{}}', 'ddb-change'));
    expect(isRejected(neither) && neither.code).toBe('NOT_AN_OBJECT');
    const notItem = p.plan(line('{"pk":{"S":"a"}}', 'ddb-export'));
    expect(isRejected(notItem) && notItem.code).toBe('NOT_AN_OBJECT');
  });

  it('a delete survives the write codec (the order spills writes to temporary files)', () => {
    const del = write(planner({ deletes: { all: true, column: undefined } }).plan(csv({ pk: 'a', sk: '1' })));
    expect(decodeWrite(encodeWrite(del)).op).toBe('delete');
    const put = write(planner().plan(csv({ pk: 'a', sk: '1' })));
    expect(decodeWrite(encodeWrite(put)).op).toBeUndefined();
  });
});
