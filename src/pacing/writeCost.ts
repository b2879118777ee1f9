import type { Capacity, ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { valueSize, writeUnits } from '../typing/itemSize.js';
import { ownValue, setOwn } from '../shared/ownRecord.js';
import type { IndexInfo, TableInfo } from '../shared/tableInfo.js';
import type { Item } from '../shared/types.js';

/** Write units one write consumes: on the table, on each global secondary index it touches, in all. */
export interface WriteCost {
  table: number;
  /** Units per GSI, keyed by index name; an index the write does not touch has no entry. */
  indexes: Record<string, number>;
  total: number;
}

/** writeCostOf with the per-table work done once: `tableSize` is itemSize(item), which the planner already has. */
export type WriteCostModel = (item: Item, tableSize: number) => WriteCost;

export type WriteCostTable = Pick<TableInfo, 'keySchema' | 'gsis'>;

interface ProjectedName {
  name: string;
  nameBytes: number;
}

interface IndexModel {
  name: string;
  /** Attributes the item must have to land in the index (sparse indexes). */
  required: string[];
  /** Attributes of one index entry, each once; undefined for ALL (the entry is the whole item). */
  projected: ProjectedName[] | undefined;
}

/**
 * Builds the cost function for one table. DynamoDB's rules (developer guide, "Global secondary indexes",
 * sections "Data synchronization" and "Provisioned throughput considerations"):
 * - the table write costs ceil(item size / 1 KB) units, at least 1;
 * - an item lands in a GSI only if it has every index key attribute; otherwise the index costs nothing;
 * - a GSI entry holds the index keys, the table keys and the projected attributes (ALL: the whole item),
 *   and costs ceil(entry size / 1 KB) units on the index. The guide lists 100 bytes of overhead per
 *   index entry under storage only, and DynamoDB Local charges a 1,024-byte entry 1 unit, so the
 *   overhead is left out of write units.
 *
 * It assumes each put creates a new item, which is what a bulk load into a fresh key space does. A put
 * that overwrites an existing item is charged on the larger of the old and new item on the table, and
 * on a GSI: two entry writes (a delete of the old entry and a put of the new one) when it changes the
 * index key, one when only projected attributes change, none when neither changes, and a delete when the
 * new item no longer has the index key.
 */
export function createWriteCostModel(table: WriteCostTable): WriteCostModel {
  const tableKeys = [table.keySchema.partitionKey.name, ...(table.keySchema.sortKey ? [table.keySchema.sortKey.name] : [])];
  const indexes = table.gsis.map((gsi) => indexModel(gsi, tableKeys));
  // Without GSIs the cost names no index: one shared empty record, not one per write (called per row).
  if (indexes.length === 0) {
    return (_item, tableSize) => {
      const units = writeUnits(tableSize);
      return { table: units, indexes: NO_INDEXES, total: units };
    };
  }
  return (item, tableSize) => {
    const tableUnits = writeUnits(tableSize);
    const costs: Record<string, number> = {};
    let total = tableUnits;
    for (const index of indexes) {
      if (!landsIn(item, index.required)) continue;
      const units = writeUnits(index.projected === undefined ? tableSize : projectedSize(item, index.projected));
      setOwn(costs, index.name, units);
      total += units;
    }
    return { table: tableUnits, indexes: costs, total };
  };
}

const NO_INDEXES: Readonly<Record<string, number>> = Object.freeze({});

const models = new WeakMap<WriteCostTable, WriteCostModel>();

/**
 * The write cost of putting `item` (of DynamoDB size `tableSize`) as a new item; see createWriteCostModel
 * for the rules. The model is cached per table object (treat it as immutable), so calling this per row
 * stays cheap.
 */
export function writeCostOf(item: Item, tableSize: number, table: WriteCostTable): WriteCost {
  let model = models.get(table);
  if (!model) {
    model = createWriteCostModel(table);
    models.set(table, model);
  }
  return model(item, tableSize);
}

function indexModel(gsi: IndexInfo, tableKeys: string[]): IndexModel {
  const required = [gsi.partitionKey.name, ...(gsi.sortKey ? [gsi.sortKey.name] : []), ...(gsi.extraKeyAttributes ?? []).map((k) => k.name)];
  if (gsi.projection === 'ALL') return { name: gsi.name, required, projected: undefined };
  // A set, because index keys, table keys and INCLUDE names overlap and each attribute is stored once.
  const names = new Set([...required, ...tableKeys, ...(gsi.projection === 'INCLUDE' ? gsi.nonKeyAttributes : [])]);
  const projected = [...names].map((name) => ({ name, nameBytes: Buffer.byteLength(name, 'utf8') }));
  return { name: gsi.name, required, projected };
}

function landsIn(item: Item, required: string[]): boolean {
  for (const name of required) if (ownValue(item, name) === undefined) return false;
  return true;
}

function projectedSize(item: Item, projected: ProjectedName[]): number {
  let size = 0;
  for (const { name, nameBytes } of projected) {
    const value = ownValue(item, name);
    if (value !== undefined) size += nameBytes + valueSize(value);
  }
  return size;
}

/**
 * The write units DynamoDB reports for `table` in a write's ConsumedCapacity (ReturnConsumedCapacity
 * INDEXES; one entry per table). Local secondary indexes are added to `table`, because their writes are
 * drawn from the table's capacity; GSIs are listed by name. Parts may be missing: with TOTAL there is
 * only the aggregate, which then counts as the table's; without a total, the parts are summed.
 */
export function consumedFromResponse(consumed: ConsumedCapacity[] | undefined, table: string): WriteCost {
  const result: WriteCost = { table: 0, indexes: {}, total: 0 };
  for (const entry of consumed ?? []) {
    // Our writes go to one table per call, so an entry without a name can only be this table's.
    if (entry.TableName !== undefined && entry.TableName !== table) continue;
    let gsiUnits = 0;
    for (const [name, capacity] of Object.entries(entry.GlobalSecondaryIndexes ?? {})) {
      const units = unitsOf(capacity) ?? 0;
      // Index names are data too ([a-zA-Z0-9_.-]+ allows constructor and __proto__).
      setOwn(result.indexes, name, (ownValue(result.indexes, name) ?? 0) + units);
      gsiUnits += units;
    }
    let lsiUnits = 0;
    for (const capacity of Object.values(entry.LocalSecondaryIndexes ?? {})) lsiUnits += unitsOf(capacity) ?? 0;
    const total = unitsOf(entry);
    const tableUnits = unitsOf(entry.Table);
    const ownUnits = tableUnits !== undefined ? tableUnits + lsiUnits : total !== undefined ? Math.max(0, total - gsiUnits) : lsiUnits;
    result.table += ownUnits;
    result.total += total ?? ownUnits + gsiUnits;
  }
  return result;
}

/** Write units of one Capacity; WriteCapacityUnits when present, as CapacityUnits may include reads. */
function unitsOf(capacity: Capacity | undefined): number | undefined {
  const units = capacity?.WriteCapacityUnits ?? capacity?.CapacityUnits;
  return typeof units === 'number' && Number.isFinite(units) ? units : undefined;
}

/** Write units a write puts on one partition key: of the table (its partition identity) or of a GSI. */
export interface KeyUnits {
  key: string;
  units: number;
}

/** A write's cost in all and per partition key it lands on (the table's key first, then one per GSI it lands in). */
export interface WriteKeyCosts {
  total: number;
  keys: KeyUnits[];
}

/**
 * The partition keys one write spends units on, each with its own units: the table's key
 * takes the table's units only, and each GSI the item lands in takes the index's units on the index's
 * partition key, which has its own partitions and the same 1,000 WCU/s ceiling. A GSI key's identity is
 * `indexKeyId(index, value)`, which can never equal a table key's partition identity (a type letter first).
 */
export function createKeyCostModel(table: WriteCostTable): (write: { item: Item; size: number; partitionId: string }) => WriteKeyCosts {
  const costOf = createWriteCostModel(table);
  const hashKeys = new Map(table.gsis.map((gsi) => [gsi.name, indexHashKeys(gsi)]));
  return (write) => {
    const cost = costOf(write.item, write.size);
    const keys: KeyUnits[] = [{ key: write.partitionId, units: cost.table }];
    for (const [name, units] of Object.entries(cost.indexes)) {
      const value = indexKeyText(write.item, hashKeys.get(name) ?? []);
      if (value !== undefined) keys.push({ key: indexKeyId(name, value), units });
    }
    return { total: cost.total, keys };
  };
}

/** The identity of a GSI partition key value: "\u0000" + index + "\u0000" + value text. */
export function indexKeyId(index: string, value: string): string {
  return `\u0000${index}\u0000${value}`;
}

/** The index and the value of a GSI key identity, or undefined for a table key's partition identity. */
export function parseIndexKeyId(id: string): { index: string; value: string } | undefined {
  if (!id.startsWith('\u0000')) return undefined;
  const end = id.indexOf('\u0000', 1);
  return end < 0 ? undefined : { index: id.slice(1, end), value: id.slice(end + 1) };
}

/**
 * The attributes a GSI key identity is made of: the index's first partition key attribute. The extra
 * attributes of a multi-attribute key are left out, so keys that differ only there count as one: a
 * coarser key, paced no faster than the real one.
 */
function indexHashKeys(gsi: IndexInfo): string[] {
  return [gsi.partitionKey.name];
}

/**
 * A GSI partition key value as text: strings as they are, numbers in canonical text, binary in base64;
 * the parts of a multi-attribute key joined by "#". Undefined when the item lacks one (not in the index).
 */
export function indexKeyText(item: Item, names: readonly string[]): string | undefined {
  const parts: string[] = [];
  for (const name of names) {
    const value: unknown = ownValue(item, name);
    if (typeof value === 'string') parts.push(value);
    else if (value instanceof Uint8Array) parts.push(Buffer.from(value).toString('base64'));
    else if (value !== undefined && value !== null && typeof (value as { value?: unknown }).value === 'string') parts.push((value as { value: string }).value);
    else return undefined;
  }
  return parts.join('#');
}
