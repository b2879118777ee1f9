import { RowError, type RejectCode } from '../shared/errors.js';
import { itemSize, MAX_ITEM_BYTES, writeUnits } from './itemSize.js';
import { checkIndexKeys, type IndexKeyAttribute } from './indexKeys.js';
import { isDynamoJsonItem, itemFromDynamoJson, itemFromJson, MAX_DYNAMO_JSON_DEPTH, parseJsonPrecise } from './json.js';
import { keyForDisplay, keyIdsOf } from './key.js';
import { attributeWithLoneSurrogate, mayHoldSurrogates } from '../reading/loneSurrogates.js';
import { applyShard, type ResolvedShardOptions } from '../sharding/shard.js';
import { coerceJsonItem, effectiveTypes, itemFromCells, type ColumnType, type TypeMapOptions } from './typeMap.js';
import { itemFromIon } from './ionItem.js';
import { itemFromTypedValues } from './typedValues.js';
import type { TimestampMode } from './temporal.js';
import type { Item, PlannedWrite, RejectedRow, RowOrigin } from '../shared/types.js';

/** What a reader hands to the planner: a parsed CSV record, a JSON line, or a row the reader could not parse. */
export type SourceRecord =
  | { kind: 'csv'; origin: RowOrigin; cells: Record<string, string> }
  | { kind: 'json'; origin: RowOrigin }
  /** One Amazon Ion value (its text is origin.raw), as DynamoDB's ION exports write an item per line. */
  | { kind: 'ion'; origin: RowOrigin }
  /**
   * A row of a typed input (Parquet): values already exact (see typing/typedValues.ts). `position` says
   * where it is for messages ("row group 0 row 17"); origin.line is its 1-based row number in the file.
   */
  | { kind: 'values'; origin: RowOrigin; values: Record<string, unknown>; position: string }
  | { kind: 'unparsable'; origin: RowOrigin; code: RejectCode; message: string; field?: string };

export type JsonFlavor = 'json' | 'ddb-json';

export interface RowPlanner {
  /** Validates and types one record: a write ready for batching, or a rejection with its reason. */
  plan(record: SourceRecord): PlannedWrite | RejectedRow;
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
}

export function createRowPlanner(options: RowPlannerOptions): RowPlanner {
  const types: Record<string, ColumnType> = effectiveTypes(options);
  const explicitTypes = options.types;
  let suspected: number | undefined;
  let checkedFirstJson = false;

  function toItem(record: SourceRecord): Item {
    switch (record.kind) {
      case 'csv':
        return itemFromCells(record.cells, options, types);
      case 'json': {
        let value: unknown;
        try {
          value = options.jsonFlavor === 'ddb-json' ? parseJsonPrecise(record.origin.raw, MAX_DYNAMO_JSON_DEPTH) : parseJsonPrecise(record.origin.raw);
        } catch (error) {
          if (error instanceof RowError) throw error;
          throw new RowError('JSON_SYNTAX', `invalid JSON: ${(error as Error).message}`);
        }
        if (options.jsonFlavor === 'ddb-json') return itemFromDynamoJson(value);
        if (!checkedFirstJson) {
          checkedFirstJson = true;
          if (isDynamoJsonItem(value) || (isPlainObject(value) && Object.keys(value).join() === 'Item' && isDynamoJsonItem(value.Item))) {
            suspected = record.origin.line;
          }
        }
        // Keys take the table's types only when the user declared them; a JSON string in an N key is
        // rejected with a hint rather than guessed.
        return coerceJsonItem(itemFromJson(value), explicitTypes);
      }
      case 'ion':
        return coerceJsonItem(itemFromIon(record.origin.raw, options.timestamps), explicitTypes);
      case 'values':
        return coerceJsonItem(itemFromTypedValues(record.values, { empty: options.empty, timestamps: options.timestamps ?? 'iso' }), explicitTypes);
      case 'unparsable':
        throw new RowError(record.code, record.message, record.field);
    }
  }

  return {
    get suspectedDynamoJsonLine() {
      return suspected;
    },
    plan(record) {
      let item: Item | undefined;
      try {
        item = toItem(record);
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
        // Sharding comes before the key checks, so the length limits apply to the suffixed key.
        const sharded = options.shard ? applyShard(item, options.shard) : undefined;
        const { keyId, partitionId } = keyIdsOf(item, options.keySchema);
        if (options.indexKeys) checkIndexKeys(item, options.indexKeys);
        const size = itemSize(item);
        if (size > MAX_ITEM_BYTES) {
          throw new RowError('ITEM_TOO_LARGE', `item is ${size} bytes; DynamoDB's limit is ${MAX_ITEM_BYTES} bytes (400 KB), attribute names included`);
        }
        const write: PlannedWrite = { origin: record.origin, item, keyId, partitionId, size, wcu: writeUnits(size) };
        if (sharded) write.unshardedKey = sharded.original;
        return write;
      } catch (error) {
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
    },
  };
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isRejected(result: PlannedWrite | RejectedRow): result is RejectedRow {
  return 'code' in result;
}
