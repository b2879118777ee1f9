import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';

export type KeyAttributeType = 'S' | 'N' | 'B';

export interface KeyAttribute {
  name: string;
  type: KeyAttributeType;
}

/** The table's primary key, as DescribeTable reports it. */
export interface KeySchema {
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
}

/** An item in lib-dynamodb's native form: numbers are always NumberValue, so no digit is lost. */
export type Item = Record<string, NativeAttributeValue>;

/**
 * The item of a write that carries none (an estimate's slim copies, and the writes its planning thread
 * hands over): one object for all, frozen so that code writing to it fails loudly instead of writing to
 * every write at once.
 */
export const NO_ITEM: Item = Object.freeze({}) as Item;

/** Where a row came from, kept with it until it is written or rejected. */
export interface RowOrigin {
  file: string;
  /** 1-based line number of the row's first line in the source file. */
  line: number;
  /** The row's original text, for the reject file (and error excerpts the user can turn off). */
  raw: string;
  /** The stripe of a striped read the row came from (src/ordering/stripes/stripedRecords.ts); absent otherwise. */
  part?: number;
  /** Where the row's first line starts in its file, in bytes: set by a striped read's readers (its restart points). */
  offset?: number;
}

/** A row that passed validation and is ready to be written. */
export interface PlannedWrite {
  origin: RowOrigin;
  item: Item;
  /** A string that is equal for two items exactly when DynamoDB sees the same primary key. */
  keyId: string;
  /** A string that is equal for two items exactly when they share the partition key (as written, with any shard suffix). */
  partitionId: string;
  /** The partition key value before a shard suffix was added; only on sharded writes. */
  unshardedKey?: string;
  /** DynamoDB item size in bytes (attribute names + values). */
  size: number;
  /** Write capacity units one put of this item costs on the table: ceil(size / 1 KB); 1 for a delete. */
  wcu: number;
  /**
   * 'delete': a DeleteRequest of the item with this key (`item` holds the key attributes only);
   * a PutRequest when absent.
   */
  op?: 'delete';
  /**
   * The write of the same primary key this one superseded in the batcher (and its own, in a chain). When
   * DynamoDB refuses this write, the predecessor is written in its place, as writing the rows one by one
   * would have left it stored.
   */
  predecessor?: PlannedWrite;
  /**
   * The row's own condition (--item-conditions: ConditionExpression, ExpressionAttributeNames and
   * ExpressionAttributeValues beside Item in a DynamoDB JSON line), sent with its PutItem/DeleteItem.
   */
  condition?: RowCondition;
}

/** A row's own condition expression, its names, and its values typed as an item's are. */
export interface RowCondition {
  expression: string;
  names?: Record<string, string>;
  values?: Item;
}

/** A row that could not be stored, and why. */
export interface RejectedRow {
  origin: RowOrigin;
  code: import('./errors.js').RejectCode;
  message: string;
  field?: string;
  /** The primary key, when it could be read. */
  key?: Record<string, string>;
}
