/**
 * Deletes in the planner: --delete, --operation-column, and a DynamoDB export's lines (full
 * export items, incremental change records with and without NewImage). Pure.
 */
import { describe, expect, it } from 'vitest';
import { decodeWrite, encodeWrite } from '../../../src/ordering/writeCodec.js';
import { createRowPlanner, isRejected, type RowPlannerOptions, type SourceRecord } from '../../../src/typing/planRow.js';
import type { KeySchema, PlannedWrite, RejectedRow } from '../../../src/shared/types.js';
import { resolveShardOptions, type ShardOptions } from '../../../src/sharding/shard.js';
import { type ShardRule } from '../../../src/sharding/shardRule.js';

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

describe('sharded deletes', () => {
  const shard = (rules: ShardRule[], over: Partial<ShardOptions> = {}) => resolveShardOptions({ rules, seed: 3, ...over }, SCHEMA, 'T');
  const put = (p: ReturnType<typeof planner>, cells: Record<string, string>) => write(p.plan(csv(cells)));

  it("--keep-original-key: the delete lands on the put's key and carries exactly the key attributes", () => {
    const p = planner({ shard: shard([{ kind: 'hash', shards: 4 }], { keepOriginalKey: 'orig' }), deletes: { all: false, column: 'op' } });
    const stored = put(p, { pk: 'a', sk: '7', v: 'x', op: 'put' });
    expect(stored.item['orig']).toBe('a');
    const del = put(p, { pk: 'a', sk: '7', op: 'delete' });
    expect(del.op).toBe('delete');
    expect(Object.keys(del.item).sort()).toEqual(['pk', 'sk']);
    expect(del.keyId).toBe(stored.keyId);
  });

  it('hash:N on a non-key attribute: read from the delete row, then dropped; a row without it is rejected naming it', () => {
    const p = planner({ shard: shard([{ kind: 'hash', shards: 16, attribute: 'grp' }]), deletes: { all: true, column: undefined } });
    const stored = write(planner({ shard: shard([{ kind: 'hash', shards: 16, attribute: 'grp' }]) }).plan(csv({ pk: 'a', sk: '7', grp: 'g3' })));
    const del = put(p, { pk: 'a', sk: '7', grp: 'g3', other: 'y' });
    expect(Object.keys(del.item).sort()).toEqual(['pk', 'sk']);
    expect(del.keyId).toBe(stored.keyId);
    const missing = p.plan(csv({ pk: 'a', sk: '7' }));
    expect(isRejected(missing) && [missing.code, missing.field]).toEqual(['SHARD_ATTRIBUTE', 'grp']);
    expect(isRejected(missing) && missing.message).toContain('a delete needs it too');
  });

  it("random:N: the delete computes the put's suffix from the seed and the key", () => {
    const options = { shard: shard([{ kind: 'random', shards: 50 }]) };
    const stored = write(planner(options).plan(csv({ pk: 'a', sk: '123', v: 'x' })));
    const del = write(planner({ ...options, deletes: { all: true, column: undefined } }).plan(csv({ pk: 'a', sk: '123' })));
    expect(del.keyId).toBe(stored.keyId);
    expect(del.unshardedKey).toBe('a');
  });

  it("a change record without NewImage takes a hash rule's attribute from its OldImage (JSON and Ion), and only that", () => {
    const p = planner({ shard: shard([{ kind: 'hash', shards: 16, attribute: 'grp' }]) });
    const stored = write(planner({ shard: shard([{ kind: 'hash', shards: 16, attribute: 'grp' }]) }).plan(csv({ pk: 'a', sk: '7', grp: 'g3' })));
    // The rest of the OldImage is not read: a value DynamoDB JSON would refuse there does not reject the delete.
    const json = write(
      p.plan(line('{"Keys":{"pk":{"S":"a"},"sk":{"N":"7"}},"OldImage":{"pk":{"S":"a"},"sk":{"N":"7"},"grp":{"S":"g3"},"bad":{"N":"x"}}}', 'ddb-change')),
    );
    expect([json.op, json.keyId, Object.keys(json.item).sort()]).toEqual(['delete', stored.keyId, ['pk', 'sk']]);
    const ion: SourceRecord = {
      kind: 'ion',
      origin: { file: 'd.ion', line: 1, raw: '{Keys:{pk:"a",sk:7},OldImage:{pk:"a",sk:7,grp:"g3"}}' },
      flavor: 'ddb-change',
    };
    const fromIon = write(p.plan(ion));
    expect([fromIon.op, fromIon.keyId]).toEqual(['delete', stored.keyId]);
    const keysOnly = p.plan(line('{"Keys":{"pk":{"S":"a"},"sk":{"N":"7"}}}', 'ddb-change'));
    expect(isRejected(keysOnly) && keysOnly.code).toBe('SHARD_ATTRIBUTE');
  });
});
