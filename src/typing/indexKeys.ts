import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { RowError } from '../shared/errors.js';
import { describeType, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES } from './key.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { Item, KeyAttribute } from '../shared/types.js';

/** A key attribute of a global secondary index that is not one of the table's own key attributes. */
export interface IndexKeyAttribute extends KeyAttribute {
  /** The (first) index it is a key of, for messages. */
  index: string;
  role: 'partition' | 'sort';
}

/**
 * The GSI key attributes to check before writing, with their types from DescribeTable's
 * AttributeDefinitions (one type per attribute, whatever index uses it). The table's key attributes are
 * left out: the primary key checks cover them.
 */
export function indexKeyAttributes(table: Pick<TableInfo, 'keySchema' | 'gsis'>): IndexKeyAttribute[] {
  const seen = new Set<string>([table.keySchema.partitionKey.name]);
  if (table.keySchema.sortKey) seen.add(table.keySchema.sortKey.name);
  const out: IndexKeyAttribute[] = [];
  const add = (attr: KeyAttribute | undefined, index: string, role: IndexKeyAttribute['role']) => {
    if (!attr || seen.has(attr.name)) return;
    seen.add(attr.name);
    out.push({ name: attr.name, type: attr.type, index, role });
  };
  for (const gsi of table.gsis) {
    add(gsi.partitionKey, gsi.name, 'partition');
    add(gsi.sortKey, gsi.name, 'sort');
    // Multi-attribute keys: the extra attributes follow the first; their role does not change the checks
    // but the length limit, and the stricter one (the sort key's) would refuse valid rows: use partition.
    for (const extra of gsi.extraKeyAttributes ?? []) add(extra, gsi.name, 'partition');
  }
  return out;
}

/**
 * Throws the RowError DynamoDB's ValidationException would stand for ("Type mismatch for Index Key",
 * an empty or too long index key value), naming the field and the index. An absent attribute is fine:
 * the item is simply not in that (sparse) index.
 */
export function checkIndexKeys(item: Item, attrs: readonly IndexKeyAttribute[]): void {
  for (const attr of attrs) {
    if (!Object.hasOwn(item, attr.name)) continue;
    const value: unknown = item[attr.name];
    if (value === undefined) continue;
    const what = `"${attr.name}" is the ${attr.role} key of index ${attr.index}`;
    const ok = attr.type === 'S' ? typeof value === 'string' : attr.type === 'N' ? value instanceof NumberValue : value instanceof Uint8Array;
    if (!ok) {
      throw new RowError(
        'KEY_TYPE_MISMATCH',
        `${what}, of type ${attr.type} (the table's AttributeDefinitions), got ${describeType(value)}; DynamoDB would refuse the item: fix the value, or declare the type with --types ${attr.name}:${attr.type}`,
        attr.name,
      );
    }
    const bytes = typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value instanceof Uint8Array ? value.byteLength : undefined;
    if (bytes === 0) {
      throw new RowError(
        'MISSING_KEY',
        `${what} and is empty; DynamoDB refuses an empty index key value: leave the attribute out (--empty omit for CSV) or give it a value`,
        attr.name,
      );
    }
    const max = attr.role === 'partition' ? MAX_PARTITION_KEY_BYTES : MAX_SORT_KEY_BYTES;
    if (bytes !== undefined && bytes > max) {
      throw new RowError('KEY_TOO_LONG', `${what} and is ${bytes} bytes; DynamoDB allows at most ${max}`, attr.name);
    }
  }
}
