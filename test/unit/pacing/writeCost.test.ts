import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { itemSize } from '../../../src/typing/itemSize.js';
import type { IndexInfo, TableInfo } from '../../../src/shared/tableInfo.js';
import type { Item } from '../../../src/shared/types.js';
import { consumedFromResponse, createWriteCostModel, writeCostOf, type WriteCost } from '../../../src/pacing/writeCost.js';

const n = (text: string) => new NumberValue(text);
const x = (length: number) => 'x'.repeat(length);

const KEYS_ONLY: IndexInfo = { name: 'keys', partitionKey: { name: 'g1', type: 'S' }, projection: 'KEYS_ONLY', nonKeyAttributes: [] };
const INCLUDE: IndexInfo = {
  name: 'incl',
  partitionKey: { name: 'g2', type: 'S' },
  sortKey: { name: 'g2s', type: 'N' },
  projection: 'INCLUDE',
  nonKeyAttributes: ['a', 'b'],
};
const ALL: IndexInfo = { name: 'all', partitionKey: { name: 'g3', type: 'S' }, projection: 'ALL', nonKeyAttributes: [] };
// Keyed on the table's sort key, so every item lands in it; its entry is the table keys, stored once.
const ON_TABLE_KEY: IndexInfo = { name: 'bySk', partitionKey: { name: 'sk', type: 'N' }, projection: 'KEYS_ONLY', nonKeyAttributes: [] };
const MULTI: IndexInfo = {
  name: 'multi',
  partitionKey: { name: 'm1', type: 'S' },
  extraKeyAttributes: [{ name: 'm2', type: 'S' }],
  projection: 'INCLUDE',
  nonKeyAttributes: ['a'],
};

const TABLE: Pick<TableInfo, 'keySchema' | 'gsis'> = {
  keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } },
  gsis: [KEYS_ONLY, INCLUDE, ALL],
};

// pk 'p' (2 + 1) + sk 1 (2 + 2: a number is 1 byte per 2 digits + 1): 7 bytes of table key in every item below.
const KEY = { pk: 'p', sk: n('1') };

describe('writeCostOf', () => {
  it.each<[string, Pick<TableInfo, 'keySchema' | 'gsis'>, Item, WriteCost]>([
    ['no GSI attributes: only the table', TABLE, { ...KEY, c: 'v' }, { table: 1, indexes: {}, total: 1 }],
    ['a table without GSIs', { keySchema: TABLE.keySchema, gsis: [] }, { ...KEY, g1: 'a' }, { table: 1, indexes: {}, total: 1 }],
    // 7 + c (1 + 1016) = 1024 bytes.
    ['item of exactly 1024 bytes: 1 unit', TABLE, { ...KEY, c: x(1016) }, { table: 1, indexes: {}, total: 1 }],
    ['item of 1025 bytes: 2 units', TABLE, { ...KEY, c: x(1017) }, { table: 2, indexes: {}, total: 2 }],
    ['KEYS_ONLY: a large non-key attribute is not in the entry', TABLE, { ...KEY, g1: 'k', c: x(3000) }, { table: 3, indexes: { keys: 1 }, total: 4 }],
    // Entry: keys 7 + g2 (2 + 1) + g2s (3 + 2) + a (1 + 1008) = 1024.
    [
      'INCLUDE entry of exactly 1024 bytes: 1 unit',
      TABLE,
      { ...KEY, g2: 'q', g2s: n('5'), a: x(1008), c: x(2000) },
      { table: 3, indexes: { incl: 1 }, total: 4 },
    ],
    ['INCLUDE entry of 1025 bytes: 2 units', TABLE, { ...KEY, g2: 'q', g2s: n('5'), a: x(1009), c: x(2000) }, { table: 3, indexes: { incl: 2 }, total: 5 }],
    ['INCLUDE: both projected attributes count', TABLE, { ...KEY, g2: 'q', g2s: n('5'), a: x(600), b: x(600) }, { table: 2, indexes: { incl: 2 }, total: 4 }],
    ['INCLUDE: attributes not listed do not count', TABLE, { ...KEY, g2: 'q', g2s: n('5'), c: x(5000) }, { table: 5, indexes: { incl: 1 }, total: 6 }],
    ['sparse: missing index sort key -> not in the index', TABLE, { ...KEY, g2: 'q', a: x(100) }, { table: 1, indexes: {}, total: 1 }],
    ['sparse: missing index partition key -> not in the index', TABLE, { ...KEY, g2s: n('5'), a: x(100) }, { table: 1, indexes: {}, total: 1 }],
    ['sparse: an undefined attribute is not there', TABLE, { ...KEY, g1: undefined }, { table: 1, indexes: {}, total: 1 }],
    ['ALL: the entry is the whole item', TABLE, { ...KEY, g3: 'r', c: x(2100) }, { table: 3, indexes: { all: 3 }, total: 6 }],
    [
      'several GSIs at once',
      TABLE,
      { ...KEY, g1: 'k', g2: 'q', g2s: n('5'), g3: 'r', a: x(1500), c: x(1500) },
      { table: 3, indexes: { keys: 1, incl: 2, all: 3 }, total: 9 },
    ],
    [
      'an index keyed on a table key: every item lands, keys counted once',
      { keySchema: TABLE.keySchema, gsis: [ON_TABLE_KEY] },
      { ...KEY, c: x(3000) },
      { table: 3, indexes: { bySk: 1 }, total: 4 },
    ],
    [
      'multi-attribute key: all attributes needed',
      { keySchema: TABLE.keySchema, gsis: [MULTI] },
      { ...KEY, m1: 'a', a: x(2000) },
      { table: 2, indexes: {}, total: 2 },
    ],
    [
      'multi-attribute key: all present',
      { keySchema: TABLE.keySchema, gsis: [MULTI] },
      { ...KEY, m1: 'a', m2: 'b', a: x(2000) },
      { table: 2, indexes: { multi: 2 }, total: 4 },
    ],
  ])('%s', (_label, table, item, expected) => {
    const size = itemSize(item);
    expect(writeCostOf(item, size, table)).toEqual(expected);
    expect(createWriteCostModel(table)(item, size)).toEqual(expected);
  });

  it('INCLUDE entries size names and values by DynamoDB rules (UTF-8 names, numbers, maps)', () => {
    const table = { keySchema: TABLE.keySchema, gsis: [{ ...INCLUDE, nonKeyAttributes: ['é', 'm'] }] };
    const projected: Item = { ...KEY, g2: 'q', g2s: n('5'), é: '', m: { k: [n('12')] } };
    // Fill the entry to exactly 1024 bytes, then one more; a non-projected attribute must not matter.
    const filler = 1024 - itemSize(projected);
    const at = (length: number): Item => ({ ...projected, é: x(length), other: x(3000) });
    expect(writeCostOf(at(filler), itemSize(at(filler)), table).indexes).toEqual({ incl: 1 });
    expect(writeCostOf(at(filler + 1), itemSize(at(filler + 1)), table).indexes).toEqual({ incl: 2 });
  });

  it('reuses one model per table object', () => {
    const table = { keySchema: TABLE.keySchema, gsis: [KEYS_ONLY] };
    const item: Item = { ...KEY, g1: 'k' };
    for (let i = 0; i < 3; i++) expect(writeCostOf(item, itemSize(item), table)).toEqual({ table: 1, indexes: { keys: 1 }, total: 2 });
  });
});

describe('consumedFromResponse', () => {
  it.each<[string, ConsumedCapacity[] | undefined, WriteCost]>([
    ['no ConsumedCapacity', undefined, { table: 0, indexes: {}, total: 0 }],
    ['empty list', [], { table: 0, indexes: {}, total: 0 }],
    [
      'DynamoDB Local shape (CapacityUnits only)',
      [{ TableName: 't', CapacityUnits: 7, Table: { CapacityUnits: 4 }, GlobalSecondaryIndexes: { a: { CapacityUnits: 2 }, b: { CapacityUnits: 1 } } }],
      { table: 4, indexes: { a: 2, b: 1 }, total: 7 },
    ],
    [
      'AWS shape with WriteCapacityUnits',
      [
        {
          TableName: 't',
          CapacityUnits: 3,
          WriteCapacityUnits: 3,
          Table: { CapacityUnits: 2, WriteCapacityUnits: 2 },
          GlobalSecondaryIndexes: { a: { CapacityUnits: 1, WriteCapacityUnits: 1 } },
        },
      ],
      { table: 2, indexes: { a: 1 }, total: 3 },
    ],
    ['TOTAL only: the aggregate counts as the table', [{ TableName: 't', CapacityUnits: 5 }], { table: 5, indexes: {}, total: 5 }],
    [
      'no Table part: table = total - GSIs',
      [{ TableName: 't', CapacityUnits: 5, GlobalSecondaryIndexes: { a: { CapacityUnits: 2 } } }],
      { table: 3, indexes: { a: 2 }, total: 5 },
    ],
    [
      'no total: the parts are summed',
      [{ TableName: 't', Table: { CapacityUnits: 2 }, GlobalSecondaryIndexes: { a: { CapacityUnits: 1 } } }],
      { table: 2, indexes: { a: 1 }, total: 3 },
    ],
    [
      'LSI units are drawn from the table',
      [
        {
          TableName: 't',
          CapacityUnits: 4,
          Table: { CapacityUnits: 2 },
          LocalSecondaryIndexes: { l: { CapacityUnits: 1 } },
          GlobalSecondaryIndexes: { a: { CapacityUnits: 1 } },
        },
      ],
      { table: 3, indexes: { a: 1 }, total: 4 },
    ],
    [
      'other tables are ignored, entries for this one are summed',
      [
        { TableName: 'other', CapacityUnits: 9, Table: { CapacityUnits: 9 } },
        { TableName: 't', CapacityUnits: 2, Table: { CapacityUnits: 1 }, GlobalSecondaryIndexes: { a: { CapacityUnits: 1 } } },
        { TableName: 't', CapacityUnits: 3, Table: { CapacityUnits: 1 }, GlobalSecondaryIndexes: { a: { CapacityUnits: 2 } } },
      ],
      { table: 2, indexes: { a: 3 }, total: 5 },
    ],
    ['an entry without a name is this table', [{ CapacityUnits: 2, Table: { CapacityUnits: 2 } }], { table: 2, indexes: {}, total: 2 }],
    [
      'an index without units counts 0',
      [{ TableName: 't', CapacityUnits: 1, Table: { CapacityUnits: 1 }, GlobalSecondaryIndexes: { a: {} } }],
      { table: 1, indexes: { a: 0 }, total: 1 },
    ],
  ])('%s', (_label, consumed, expected) => {
    expect(consumedFromResponse(consumed, 't')).toEqual(expected);
  });
});
