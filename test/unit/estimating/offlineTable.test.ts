import { describe, expect, it } from 'vitest';
import { offlineTableInfo, parseGsi, parseKeyAttribute, type OfflineTableFlags } from '../../../src/estimating/offlineTable.js';
import type { IndexInfo, TableInfo } from '../../../src/shared/tableInfo.js';
import { loaderErrorOf } from '../../support/thrown.js';

describe('parseKeyAttribute', () => {
  it.each([
    ['customerId:S', { name: 'customerId', type: 'S' }],
    ['price:N', { name: 'price', type: 'N' }],
    ['blob:B', { name: 'blob', type: 'B' }],
    // The type is after the last ":", so a name may hold colons.
    ['a:b:N', { name: 'a:b', type: 'N' }],
    ['ns:a:b:S', { name: 'ns:a:b', type: 'S' }],
    // Lower-case types and spaces around the parts are accepted.
    ['customerId:s', { name: 'customerId', type: 'S' }],
    ['price:n', { name: 'price', type: 'N' }],
    [' id : b ', { name: 'id', type: 'B' }],
  ])('%j -> %j', (text, expected) => {
    expect(parseKeyAttribute(text, '--partition-key')).toEqual(expected);
  });

  it.each([
    ['no type', 'customerId'],
    ['empty type', 'customerId:'],
    ['missing name', ':S'],
    ['blank name', '   :S'],
    ['a type DynamoDB keys cannot have', 'active:BOOL'],
    ['a set type', 'tags:SS'],
    ['a word for a type', 'id:string'],
    ['nothing', ''],
    ['only a colon', ':'],
  ])('%s (%j) -> INVALID_OPTION naming the flag', (_label, text) => {
    for (const flag of ['--partition-key', '--sort-key']) {
      const error = loaderErrorOf(() => parseKeyAttribute(text, flag));
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toContain(flag);
    }
  });
});

describe('parseGsi', () => {
  const index = (over: Partial<IndexInfo>): IndexInfo => ({
    name: 'byStatus',
    partitionKey: { name: 'status', type: 'S' },
    projection: 'ALL',
    nonKeyAttributes: [],
    ...over,
  });

  it.each([
    ['byStatus:status:S', index({})],
    ['byStatus:status:s', index({})],
    ['byStatus:status:S:createdAt:N', index({ sortKey: { name: 'createdAt', type: 'N' } })],
    ['byStatus:status:S:createdAt:n', index({ sortKey: { name: 'createdAt', type: 'N' } })],
    ['byStatus:status:S:ALL', index({})],
    ['byStatus:status:S:KEYS_ONLY', index({ projection: 'KEYS_ONLY' })],
    ['byStatus:status:S:keys_only', index({ projection: 'KEYS_ONLY' })],
    ['byStatus:status:S:INCLUDE=a+b', index({ projection: 'INCLUDE', nonKeyAttributes: ['a', 'b'] })],
    ['byStatus:status:S:include=total', index({ projection: 'INCLUDE', nonKeyAttributes: ['total'] })],
    ['byStatus:status:S:INCLUDE= a + b +', index({ projection: 'INCLUDE', nonKeyAttributes: ['a', 'b'] })],
    ['byStatus:status:S:createdAt:N:KEYS_ONLY', index({ sortKey: { name: 'createdAt', type: 'N' }, projection: 'KEYS_ONLY' })],
    ['byStatus:status:S:createdAt:N:INCLUDE=a+b', index({ sortKey: { name: 'createdAt', type: 'N' }, projection: 'INCLUDE', nonKeyAttributes: ['a', 'b'] })],
    ['byStatus:status:S:createdAt:B:ALL', index({ sortKey: { name: 'createdAt', type: 'B' } })],
    ['g:pk:N', { name: 'g', partitionKey: { name: 'pk', type: 'N' }, projection: 'ALL', nonKeyAttributes: [] }],
  ])('%j', (text, expected) => {
    expect(parseGsi(text)).toEqual(expected);
  });

  it.each([
    ['only a name', 'byStatus'],
    ['no partition key type', 'byStatus:status'],
    ['an empty name', ':status:S'],
    ['an empty partition key', 'byStatus::S'],
    ['an empty partition key type', 'byStatus:status:'],
    ['a bad partition key type', 'byStatus:status:BOOL'],
    ['a sort key without a type', 'byStatus:status:S:createdAt'],
    ['a bad sort key type', 'byStatus:status:S:createdAt:X'],
    ['an unknown projection', 'byStatus:status:S:SOME'],
    ['INCLUDE with no attributes', 'byStatus:status:S:INCLUDE='],
    ['INCLUDE with only separators', 'byStatus:status:S:INCLUDE=+'],
    ['INCLUDE without "="', 'byStatus:status:S:INCLUDE'],
    ['something after the projection', 'byStatus:status:S:ALL:extra'],
    ['a projection after a projection', 'byStatus:status:S:KEYS_ONLY:ALL'],
    ['nothing', ''],
  ])('%s (%j) -> INVALID_OPTION naming --gsi', (_label, text) => {
    const error = loaderErrorOf(() => parseGsi(text));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('--gsi');
  });
});

describe('offlineTableInfo', () => {
  const partitionKey = { name: 'id', type: 'S' } as const;

  it.each<[string, OfflineTableFlags, TableInfo]>([
    ['on-demand by default, no throughput', { partitionKey }, { name: 'Items', keySchema: { partitionKey }, billingMode: 'PAY_PER_REQUEST', gsis: [] }],
    [
      'on-demand with --table-wcu as its warm throughput',
      { partitionKey, tableWcu: 4000 },
      { name: 'Items', keySchema: { partitionKey }, billingMode: 'PAY_PER_REQUEST', warmWriteUnits: 4000, gsis: [] },
    ],
    [
      'on-demand named explicitly',
      { partitionKey, billing: 'on-demand', tableWcu: 4000 },
      { name: 'Items', keySchema: { partitionKey }, billingMode: 'PAY_PER_REQUEST', warmWriteUnits: 4000, gsis: [] },
    ],
    [
      'provisioned with WCU',
      { partitionKey, billing: 'provisioned', tableWcu: 1000 },
      { name: 'Items', keySchema: { partitionKey }, billingMode: 'PROVISIONED', provisionedWcu: 1000, gsis: [] },
    ],
    [
      'provisioned with WCU and RCU',
      { partitionKey, billing: 'provisioned', tableWcu: 1000, tableRcu: 500 },
      { name: 'Items', keySchema: { partitionKey }, billingMode: 'PROVISIONED', provisionedWcu: 1000, provisionedRcu: 500, gsis: [] },
    ],
    [
      'a sort key, GSIs and an item count',
      {
        partitionKey,
        sortKey: { name: 'sk', type: 'N' },
        gsis: [parseGsi('byStatus:status:S:KEYS_ONLY')],
        itemCount: 0,
      },
      {
        name: 'Items',
        keySchema: { partitionKey, sortKey: { name: 'sk', type: 'N' } },
        billingMode: 'PAY_PER_REQUEST',
        gsis: [{ name: 'byStatus', partitionKey: { name: 'status', type: 'S' }, projection: 'KEYS_ONLY', nonKeyAttributes: [] }],
        itemCount: 0,
      },
    ],
    [
      'an item count on a provisioned table',
      { partitionKey, billing: 'provisioned', tableWcu: 50, itemCount: 1_000_000 },
      { name: 'Items', keySchema: { partitionKey }, billingMode: 'PROVISIONED', provisionedWcu: 50, itemCount: 1_000_000, gsis: [] },
    ],
  ])('%s', (_label, flags, expected) => {
    expect(offlineTableInfo('Items', flags)).toEqual(expected);
  });

  it.each<[string, OfflineTableFlags]>([
    ['without --table-wcu', { partitionKey, billing: 'provisioned' }],
    ['with --table-wcu 0', { partitionKey, billing: 'provisioned', tableWcu: 0 }],
    ['with a negative --table-wcu', { partitionKey, billing: 'provisioned', tableWcu: -5 }],
    ['with --table-rcu only', { partitionKey, billing: 'provisioned', tableRcu: 500 }],
  ])('provisioned %s -> INVALID_OPTION naming --table-wcu', (_label, flags) => {
    const error = loaderErrorOf(() => offlineTableInfo('Items', flags));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain('--table-wcu');
  });
});
