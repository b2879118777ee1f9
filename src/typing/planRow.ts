import { RowError, type RejectCode } from '../shared/errors.js';
import { itemSize, MAX_ITEM_BYTES, writeUnits } from './itemSize.js';
import { checkIndexKeys, type IndexKeyAttribute } from './indexKeys.js';
import { isDynamoJsonItem, itemFromDynamoJson, itemFromJson, MAX_DYNAMO_JSON_DEPTH, parseJsonPrecise } from './json.js';
import { keyForDisplay, keyIdsOf } from './key.js';
import { attributeWithLoneSurrogate, mayHoldSurrogates } from './loneSurrogates.js';
import { applyShard, type ResolvedShardOptions } from '../sharding/shard.js';
import { coerceJsonItem, effectiveTypes, itemFromCells, type ColumnType, type TypeMapOptions } from './typeMap.js';
import { itemFromIon } from './ionItem.js';
import { CONDITION_FIELDS, conditionedDynamoJson } from './itemCondition.js';
import { itemFromTypedValues } from './typedValues.js';
import type { TimestampMode } from './temporal.js';
import type { Item, KeySchema, PlannedWrite, RejectedRow, RowCondition, RowOrigin } from '../shared/types.js';
import { ownValue, setOwn } from '../shared/ownRecord.js';

/** What a reader hands to the planner: a parsed CSV record, a JSON line, or a row the reader could not parse. */
export type SourceRecord =
  | { kind: 'csv'; origin: RowOrigin; cells: Record<string, string> }
  /** `flavor` overrides the load's: a DynamoDB export's item ({"Item":{...}}) or change record. */
  | { kind: 'json'; origin: RowOrigin; flavor?: RecordFlavor }
  /**
   * One Amazon Ion value (its text is origin.raw), as DynamoDB's ION exports write an item per line.
   * `flavor` 'ddb-export' / 'ddb-change': an ION export's {Item:...} line or change record.
   */
  | { kind: 'ion'; origin: RowOrigin; flavor?: RecordFlavor }
  /**
   * A row of a typed input (Parquet): values already exact (see typing/typedValues.ts). `position` says
   * where it is for messages ("row group 0 row 17"); origin.line is its 1-based row number in the file.
   */
  | { kind: 'values'; origin: RowOrigin; values: Record<string, unknown>; position: string }
  | { kind: 'unparsable'; origin: RowOrigin; code: RejectCode; message: string; field?: string }
  /** A record typed and planned on another thread (an estimate's planning thread, load/planningThread.ts): its plan as it came. */
  | { kind: 'planned'; origin: RowOrigin; planned: PlannedWrite | RejectedRow };

/** A record typed into an item (RowPlanner.typed), not yet sharded or checked. */
export interface TypedRow {
  record: SourceRecord;
  item: Item;
  isDelete: boolean;
  /** The line's own condition (--item-conditions), sent with the row's write. */
  condition?: RowCondition;
}

export type JsonFlavor = 'json' | 'ddb-json';
/** How one JSON record is read: the load's flavor, or an export's line. */
export type RecordFlavor = JsonFlavor | 'ddb-export' | 'ddb-change';

export interface RowPlanner {
  /** Validates and types one record: a write ready for batching, or a rejection with its reason. */
  plan(record: SourceRecord): PlannedWrite | RejectedRow;
  /**
   * plan's first half: the record typed into an item (a delete's cut to its key and its shard rules'
   * attributes), before sharding and the checks of keys and size. A transform (--transform) goes between.
   */
  typed(record: SourceRecord): TypedRow | RejectedRow;
  /**
   * plan's second half: an item of `typed` sharded and checked (keys, GSI keys, size) into a write. `transformed`:
   * the item is a transform's output (a delete's then cut to its key again; a reject says it was the output).
   */
  finish(typed: TypedRow, item: Item, transformed?: boolean): PlannedWrite | RejectedRow;
  /** A typed row's reject for `error` (a transform's throw or invalid return), its key named from the typed item. */
  rejection(typed: TypedRow, error: RowError): RejectedRow;
  /** Set once if plain JSON lines look like DynamoDB JSON, so the caller can warn (never silently wrong). */
  readonly suspectedDynamoJsonLine: number | undefined;
}

export interface RowPlannerOptions extends TypeMapOptions {
  jsonFlavor: JsonFlavor;
  /** How Parquet and Ion timestamps and dates are stored. @default 'iso' */
  timestamps?: TimestampMode;
  /** Write sharding, resolved against the table; none when undefined. */
  shard?: ResolvedShardOptions;
  /** GSI key attributes (indexKeyAttributes): a row DynamoDB would refuse for them is rejected here. */
  indexKeys?: readonly IndexKeyAttribute[];
  /**
   * Deletes: `all`, every row is a delete of its key (--delete); `column`, the attribute that
   * says "put" or "delete" per row (--operation-column), dropped from the item. An incremental export's
   * change record without NewImage is a delete either way.
   */
  deletes?: { all: boolean; column?: string | undefined };
  /**
   * --item-conditions: a DynamoDB JSON line's ConditionExpression (with its names and values) beside Item is
   * the row's condition (itemCondition.ts); without it such a line is rejected (ITEM_CONDITION).
   */
  itemConditions?: boolean;
}

export function createRowPlanner(options: RowPlannerOptions): RowPlanner {
  const types: Record<string, ColumnType> = effectiveTypes(options);
  const explicitTypes = options.types;
  let suspected: number | undefined;
  let checkedFirstJson = false;
  /** Set by toItem for a change record without NewImage: a delete of its Keys. */
  let changeIsDelete = false;
  /** Set by toItem for a DynamoDB JSON line with its own condition (--item-conditions). */
  let rowCondition: RowCondition | undefined;
  /**
   * The attributes a delete change record takes from its OldImage (NEW_AND_OLD_IMAGES exports): those of
   * hash and time rules, whose values say which shard the deleted item was written under.
   */
  const oldImageFor = options.shard ? shardAttributes(options.shard) : [];

  function toItem(record: SourceRecord): Item {
    switch (record.kind) {
      case 'csv':
        return itemFromCells(record.cells, options, types);
      case 'json': {
        const flavor = record.flavor ?? options.jsonFlavor;
        let value: unknown;
        try {
          // An export line wraps the item in one more level.
          value = flavor === 'json' ? parseJsonPrecise(record.origin.raw) : parseJsonPrecise(record.origin.raw, MAX_DYNAMO_JSON_DEPTH + 2);
        } catch (error) {
          if (error instanceof RowError) throw error;
          throw new RowError('JSON_SYNTAX', `invalid JSON: ${(error as Error).message}`);
        }
        if (flavor === 'ddb-json') {
          const line = conditionedDynamoJson(value, options.itemConditions === true);
          rowCondition = line.condition;
          return line.item;
        }
        if (flavor === 'ddb-export' || flavor === 'ddb-change') {
          const line = itemOfExportLine(value, flavor, oldImageFor);
          changeIsDelete = line.delete;
          return line.item;
        }
        if (!checkedFirstJson) {
          checkedFirstJson = true;
          // An item, {"Item": item}, or {"Item": item} with its own condition beside it (itemCondition.ts).
          if (
            isDynamoJsonItem(value) ||
            (isPlainObject(value) && isDynamoJsonItem(value.Item) && Object.keys(value).every((name) => name === 'Item' || CONDITION_FIELDS.includes(name)))
          ) {
            suspected = record.origin.line;
          }
        }
        // Keys take the table's types only when the user declared them; a JSON string in an N key is
        // rejected with a hint rather than guessed.
        return coerceJsonItem(itemFromJson(value, explicitTypes), explicitTypes);
      }
      case 'ion': {
        // itemFromIon unwraps a full export's {Item:{...}}; a change record keeps its NewImage and Keys.
        const item = itemFromIon(record.origin.raw, options.timestamps);
        if (record.flavor !== 'ddb-change') return coerceJsonItem(item, explicitTypes);
        const line = changeOfIon(item, oldImageFor);
        changeIsDelete = line.delete;
        return line.item;
      }
      case 'values':
        return coerceJsonItem(itemFromTypedValues(record.values, { empty: options.empty, timestamps: options.timestamps ?? 'iso' }), explicitTypes);
      case 'unparsable':
        throw new RowError(record.code, record.message, record.field);
      case 'planned':
        throw new Error('a record planned on another thread was typed again; this is a bug');
    }
  }

  return {
    get suspectedDynamoJsonLine() {
      return suspected;
    },
    plan(record) {
      if (record.kind === 'planned') return record.planned;
      const typed = this.typed(record);
      return isRejected(typed) ? typed : this.finish(typed, typed.item);
    },
    typed(record) {
      let item: Item | undefined;
      changeIsDelete = false;
      rowCondition = undefined;
      try {
        item = toItem(record);
        const isDelete = operationOf(item, options.deletes) || changeIsDelete;
        // A delete keeps what its shard suffix is computed from (a hash or time rule's attribute) until the
        // suffix is on; then it is cut to exactly the key attributes (below), as a DeleteRequest must be.
        if (isDelete) item = keyOnly(item, options.keySchema, options.shard ? shardAttributes(options.shard) : []);
        if (mayHoldSurrogates(record.origin.raw)) {
          const field = attributeWithLoneSurrogate(item);
          if (field !== undefined) {
            throw new RowError(
              'INVALID_UTF8',
              `"${field}" holds a lone UTF-16 surrogate (a JSON \\u escape such as \\ud800 without its pair), which UTF-8 cannot encode: DynamoDB would not store what the row says; fix or remove the escape`,
              field,
            );
          }
        }
        return rowCondition ? { record, item, isDelete, condition: rowCondition } : { record, item, isDelete };
      } catch (error) {
        return rejectionOf(error, record, item);
      }
    },
    finish(typed, output, transformed = false) {
      const { record, isDelete } = typed;
      let item = isDelete && transformed ? keyOnly(output, options.keySchema, options.shard ? shardAttributes(options.shard) : []) : output;
      try {
        // Sharding comes before the key checks, so the length limits apply to the suffixed key.
        const sharded = options.shard ? shardRow(item, options.shard, isDelete) : undefined;
        // Without --keep-original-key's attribute and the rules' attributes: DynamoDB refuses a
        // DeleteRequest whose key holds any attribute but the table's key attributes.
        if (isDelete && options.shard) item = keyOnly(item, options.keySchema);
        const { keyId, partitionId } = keyIdsOf(item, options.keySchema);
        if (options.indexKeys && !isDelete) checkIndexKeys(item, options.indexKeys);
        const size = itemSize(item);
        if (size > MAX_ITEM_BYTES) {
          throw new RowError('ITEM_TOO_LARGE', `item is ${size} bytes; DynamoDB's limit is ${MAX_ITEM_BYTES} bytes (400 KB), attribute names included`);
        }
        // A delete is planned at 1 unit: the deleted item's size is not known here (see docs/REFERENCE.md, "Deletes").
        const write: PlannedWrite = { origin: record.origin, item, keyId, partitionId, size, wcu: isDelete ? 1 : writeUnits(size) };
        if (isDelete) write.op = 'delete';
        if (sharded) write.unshardedKey = sharded.original;
        if (typed.condition) write.condition = typed.condition;
        return write;
      } catch (error) {
        const rejected = rejectionOf(error, record, item);
        // What the transform made is what was checked: say so, since the row itself may hold no such problem.
        if (transformed && !rejected.code.startsWith('TRANSFORM_')) rejected.message = `the transform's output: ${rejected.message}`;
        return rejected;
      }
    },
    rejection(typed, error) {
      return rejectionOf(error, typed.record, typed.item);
    },
  };

  function rejectionOf(error: unknown, record: SourceRecord, item: Item | undefined): RejectedRow {
    if (!(error instanceof RowError)) throw error;
    const message = withHint(error, record, options);
    const rejected: RejectedRow = {
      origin: record.origin,
      code: error.code,
      message: record.kind === 'values' ? `${record.position}: ${message}` : message,
    };
    if (error.field !== undefined) rejected.field = error.field;
    // A CSV or Parquet row that failed typing still has readable key values; name the key when it can.
    const key = item
      ? keyForDisplay(item, options.keySchema)
      : record.kind === 'csv'
        ? keyForDisplay(record.cells, options.keySchema)
        : record.kind === 'values'
          ? keyForDisplay(record.values, options.keySchema)
          : undefined;
    if (key) rejected.key = key;
    return rejected;
  }
}

function withHint(error: RowError, record: SourceRecord, options: TypeMapOptions): string {
  if (
    error.code === 'KEY_TYPE_MISMATCH' &&
    record.kind !== 'csv' &&
    record.kind !== 'unparsable' &&
    error.field &&
    !Object.hasOwn(options.types, error.field)
  ) {
    return `${error.message}; to convert it, pass --types ${error.field}:${typeOfKey(error.field, options)}`;
  }
  return error.message;
}

function typeOfKey(field: string, options: TypeMapOptions): string {
  const { partitionKey, sortKey } = options.keySchema;
  return partitionKey.name === field ? partitionKey.type : (sortKey?.type ?? 'S');
}

/**
 * The item of a full export's line ({"Item":{...}}), or of an incremental export's change record: its
 * NewImage (a put), or without one its Keys (a delete), with the `fromOldImage` attributes of its OldImage.
 */
function itemOfExportLine(value: unknown, flavor: 'ddb-export' | 'ddb-change', fromOldImage: readonly string[]): { item: Item; delete: boolean } {
  if (!isPlainObject(value)) throw new RowError('NOT_AN_OBJECT', 'an export line must be a JSON object');
  refuseExportCondition(Object.keys(value));
  if (flavor === 'ddb-export') {
    if (!isPlainObject(value.Item)) throw new RowError('NOT_AN_OBJECT', 'a full export line must be {"Item":{...}}');
    return { item: itemFromDynamoJson(value.Item), delete: false };
  }
  if (isPlainObject(value.NewImage)) return { item: itemFromDynamoJson(value.NewImage), delete: false };
  if (isPlainObject(value.Keys)) {
    const keys = itemFromDynamoJson(value.Keys);
    if (fromOldImage.length === 0 || !isPlainObject(value.OldImage)) return { item: keys, delete: true };
    return { item: withOldImage(keys, itemFromDynamoJson(pick(value.OldImage, fromOldImage)), fromOldImage), delete: true };
  }
  throw new RowError('NOT_AN_OBJECT', 'a change record of an incremental export needs NewImage (a put) or Keys (a delete)');
}

/**
 * An export's line or change record never carries a condition (DynamoDB writes {"Item":...} and Metadata, Keys,
 * NewImage, OldImage only), and its reader does not apply one: a line that does (a hand-made folder) is refused,
 * as a DynamoDB JSON line's is without --item-conditions and an Ion line's always, never written without it.
 */
function refuseExportCondition(names: readonly string[]): void {
  const fields = names.filter((name) => CONDITION_FIELDS.includes(name));
  if (fields.length === 0) return;
  throw new RowError(
    'ITEM_CONDITION',
    `the export's line carries its own condition (${fields.join(', ')}), which ddb-spread applies from DynamoDB JSON lines only (--input-format ddb-json --item-conditions), not from an export's: load the lines as DynamoDB JSON, or remove those fields to write the items unconditionally`,
    fields[0],
  );
}

/** An incremental ION export's change record (read by itemFromIon): its NewImage (a put), or without one its Keys (a delete). */
function changeOfIon(record: Item, fromOldImage: readonly string[]): { item: Item; delete: boolean } {
  refuseExportCondition(Object.keys(record));
  const image = ownValue(record, 'NewImage') as unknown;
  if (isPlainObject(image) && !(image instanceof Set) && !(image instanceof Uint8Array)) return { item: image as Item, delete: false };
  const keys = ownValue(record, 'Keys') as unknown;
  if (isPlainObject(keys) && !(keys instanceof Set) && !(keys instanceof Uint8Array)) {
    const old = ownValue(record, 'OldImage') as unknown;
    const image = isPlainObject(old) && !(old instanceof Set) && !(old instanceof Uint8Array) ? (old as Item) : undefined;
    return { item: image ? withOldImage(keys as Item, image, fromOldImage) : (keys as Item), delete: true };
  }
  throw new RowError('NOT_AN_OBJECT', 'a change record of an incremental export needs NewImage (a put) or Keys (a delete)');
}

/** Whether a row is a delete by --delete or its --operation-column (which is taken off the item). */
function operationOf(item: Item, deletes: RowPlannerOptions['deletes']): boolean {
  if (!deletes) return false;
  if (deletes.column === undefined) return deletes.all;
  const value = ownValue(item, deletes.column) as unknown;
  Reflect.deleteProperty(item, deletes.column);
  const op = typeof value === 'string' ? value.trim().toLowerCase() : value === undefined ? '' : undefined;
  if (op === 'delete') return true;
  if (op === 'put' || (op === '' && !deletes.all)) return false;
  if (op === '') return deletes.all;
  throw new RowError('TYPE_ERROR', `"${deletes.column}" must be "put" or "delete" (--operation-column), got ${JSON.stringify(value)}`, deletes.column);
}

/** The key attributes of an item only (what a DeleteRequest sends), and `also` when given. */
function keyOnly(item: Item, schema: KeySchema, also: readonly string[] = []): Item {
  const key: Item = {};
  for (const name of [schema.partitionKey.name, schema.sortKey?.name, ...also]) {
    if (name !== undefined && Object.hasOwn(item, name)) setOwn(key, name, ownValue(item, name));
  }
  return key;
}

/** applyShard, whose SHARD_ATTRIBUTE message says why a delete needs the attribute too. */
function shardRow(item: Item, shard: ResolvedShardOptions, isDelete: boolean): ReturnType<typeof applyShard> {
  try {
    return applyShard(item, shard);
  } catch (error) {
    if (!isDelete || !(error instanceof RowError) || error.code !== 'SHARD_ATTRIBUTE') throw error;
    throw new RowError(
      'SHARD_ATTRIBUTE',
      `${error.message}; a delete needs it too, since its item was written under the suffix computed from it: give "${error.field ?? ''}" in the delete row (an export's change record takes it from its OldImage)`,
      error.field,
    );
  }
}

/** The attributes hash and time rules take their suffixes from. */
function shardAttributes(shard: ResolvedShardOptions): string[] {
  return shard.rules.flatMap((rule) => (rule.kind === 'random' ? [] : [rule.attribute]));
}

/** Only `names` of a DynamoDB JSON object (the rest of an OldImage is neither read nor checked). */
function pick(value: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(value, name)) setOwn(picked, name, value[name]);
  return picked;
}

/** A delete's Keys with the `names` attributes of the OldImage beside them (the Keys' own values win). */
function withOldImage(keys: Item, image: Item, names: readonly string[]): Item {
  const item: Item = { ...keys };
  for (const name of names) if (!Object.hasOwn(keys, name) && Object.hasOwn(image, name)) setOwn(item, name, ownValue(image, name));
  return item;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isRejected<T extends object>(result: T | RejectedRow): result is RejectedRow {
  return 'code' in result;
}
