import { mayHoldSurrogates } from './loneSurrogates.js';
import { MAX_ITEM_BYTES, writeUnits } from './itemSize.js';
import { MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES } from './key.js';
import { plainNumberSize } from './number.js';
import type { RowPlannerOptions, SourceRecord } from './planRow.js';
import { effectiveTypes, type ColumnType } from './typeMap.js';
import { ownValue } from '../shared/ownRecord.js';
import type { KeyAttribute } from '../shared/types.js';

/** What an estimate keeps of a planned write: its keys and what it costs (PlannedWrite's figures, no item). */
export interface MeasuredWrite {
  keyId: string;
  partitionId: string;
  size: number;
  wcu: number;
}

/**
 * The planner's figures for a CSV record without building its item, for an estimate, which keeps none
 * (load/planningWorker.ts): the same key identities, size and units as RowPlanner.plan, computed from the
 * cells' text. Only for the common row: text and plain numbers. It answers undefined, and the caller plans
 * the row the full way, for anything else: a cell of another type, an inferred value that is not a plain
 * number or text, a number not already canonical, a possible lone-surrogate escape, a key the table would
 * refuse, an item near the size limit. So every rejected row, and every row whose value needs converting,
 * still goes through plan(), and its reason and figures are plan()'s own; a unit test checks the two agree
 * on generated rows. Written by hand because it is the planner's own rules, fused: typing a row into an item
 * and measuring it again was a third of the planning thread's time on the real flights file.
 *
 * undefined when the load's options need more than this (deletes, shards, GSI keys): each row then needs its item.
 */
export function csvMeasure(options: RowPlannerOptions): ((record: SourceRecord) => MeasuredWrite | undefined) | undefined {
  if (options.shard || (options.indexKeys && options.indexKeys.length > 0) || options.deletes) return undefined;
  const types: Record<string, ColumnType> = effectiveTypes(options);
  const { partitionKey, sortKey } = options.keySchema;
  const { infer, empty } = options;
  /** Per column: its name's UTF-8 bytes and its type, looked up once (a row's cells are the same columns). */
  const columns = new Map<string, { bytes: number; type: ColumnType | undefined }>();
  /** A cell's value size as typing would store it; -1: not this fast path's to say. */
  const valueSize = (text: string, type: ColumnType | undefined): number => {
    if (type === 'S' || (type === undefined && !infer)) return utf8(text);
    if (type === 'N') return plainNumberSize(text) || -1;
    if (type !== undefined) return -1;
    // Inference (typeMap.inferCell): a plain number, true/false, JSON or text that stays text.
    const first = text.charCodeAt(0);
    if ((first >= 48 && first <= 57) || first === 45) return plainNumberSize(text) || -1;
    if (text === 'true' || text === 'false') return 1;
    if (first === 123 || first === 91) return -1;
    return utf8(text);
  };
  /** The key part keyIdsOf makes of a key cell, or undefined when plan() must judge it. */
  const keyPart = (cells: Record<string, string>, attr: KeyAttribute, maxBytes: number): string | undefined => {
    const text = ownValue(cells, attr.name);
    if (text === undefined || text === '') return undefined;
    const type = ownValue(types, attr.name);
    if (type !== attr.type) return undefined;
    // A UTF-16 unit is at most 3 UTF-8 bytes: most keys are short enough not to be measured.
    if (type === 'S') return text.length * 3 <= maxBytes || utf8(text) <= maxBytes ? `S${text}` : undefined;
    return type === 'N' && plainNumberSize(text) !== 0 ? `N${text}` : undefined;
  };
  return (record) => {
    if (record.kind !== 'csv' || mayHoldSurrogates(record.origin.raw)) return undefined;
    const cells = record.cells;
    let size = 0;
    // for...in, not Object.keys: no array per row. A record's own names only (csv-parse's objects inherit none
    // that enumerate; a record with a `__proto__` column has no prototype), in Object.keys' order.
    for (const name in cells) {
      const text = cells[name]!;
      let column = columns.get(name);
      if (column === undefined) columns.set(name, (column = { bytes: utf8(name), type: ownValue(types, name) }));
      if (text === '') {
        // A key's empty cell is a reject: plan() names it.
        if (empty === 'null') size += column.bytes + 1;
        else if (empty === 'string') size += column.bytes;
        continue;
      }
      const value = valueSize(text, column.type);
      if (value < 0) return undefined;
      size += column.bytes + value;
    }
    if (size > MAX_ITEM_BYTES) return undefined;
    const pk = keyPart(cells, partitionKey, MAX_PARTITION_KEY_BYTES);
    if (pk === undefined) return undefined;
    let keyId = pk;
    if (sortKey) {
      const sk = keyPart(cells, sortKey, MAX_SORT_KEY_BYTES);
      if (sk === undefined) return undefined;
      keyId = `${pk.length}:${pk}${sk}`;
    }
    return { keyId, partitionId: pk, size, wcu: writeUnits(size) };
  };
}

/** UTF-8 bytes of a string: its length when it is ASCII (most cells), checked without a call into C++ for short ones. */
function utf8(s: string): number {
  if (s.length > 64) return Buffer.byteLength(s, 'utf8');
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return Buffer.byteLength(s, 'utf8');
  return s.length;
}
