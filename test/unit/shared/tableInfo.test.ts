import type { TableDescription } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../../src/shared/errors.js';
import { tableInfoFromDescription, type TableInfo } from '../../../src/shared/tableInfo.js';

const ATTRS: TableDescription['AttributeDefinitions'] = [
  { AttributeName: 'pk', AttributeType: 'S' },
  { AttributeName: 'sk', AttributeType: 'N' },
  { AttributeName: 'g1', AttributeType: 'S' },
  { AttributeName: 'g2', AttributeType: 'B' },
  { AttributeName: 'g2s', AttributeType: 'N' },
];
const KEYS: TableDescription['KeySchema'] = [
  { AttributeName: 'pk', KeyType: 'HASH' },
  { AttributeName: 'sk', KeyType: 'RANGE' },
];
const KEY_SCHEMA: TableInfo['keySchema'] = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

describe('tableInfoFromDescription', () => {
  it('knows the table by its TableId, else its creation time: one created again under its name is another', () => {
    const base = { TableName: 'orders', AttributeDefinitions: ATTRS, KeySchema: KEYS };
    const created = new Date(Date.UTC(2026, 10, 27, 9, 0, 0));
    expect(tableInfoFromDescription({ ...base, TableId: 'a1b2', CreationDateTime: created }).identity).toBe('id a1b2');
    expect(tableInfoFromDescription({ ...base, CreationDateTime: created }).identity).toBe('created 2026-11-27T09:00:00.000Z');
    expect(tableInfoFromDescription(base).identity).toBeUndefined();
  });

  it.each<[string, TableDescription, TableInfo]>([
    [
      'provisioned, with warm throughput and two GSIs (KEYS_ONLY, INCLUDE)',
      {
        TableName: 'orders',
        AttributeDefinitions: ATTRS,
        KeySchema: KEYS,
        BillingModeSummary: { BillingMode: 'PROVISIONED' },
        ProvisionedThroughput: { ReadCapacityUnits: 50, WriteCapacityUnits: 40, NumberOfDecreasesToday: 0 },
        WarmThroughput: { ReadUnitsPerSecond: 12000, WriteUnitsPerSecond: 4000, Status: 'ACTIVE' },
        // AWS reports -1 for "no cap".
        OnDemandThroughput: { MaxReadRequestUnits: -1, MaxWriteRequestUnits: -1 },
        ItemCount: 1234,
        TableSizeBytes: 56789,
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byG1',
            KeySchema: [{ AttributeName: 'g1', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'KEYS_ONLY' },
            ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 7 },
            WarmThroughput: { ReadUnitsPerSecond: 12000, WriteUnitsPerSecond: 4000, Status: 'ACTIVE' },
            IndexStatus: 'ACTIVE',
          },
          {
            IndexName: 'byG2',
            KeySchema: [
              { AttributeName: 'g2', KeyType: 'HASH' },
              { AttributeName: 'g2s', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['a', 'b'] },
            ProvisionedThroughput: { ReadCapacityUnits: 6, WriteCapacityUnits: 8 },
            IndexStatus: 'CREATING',
          },
        ],
      },
      {
        name: 'orders',
        keySchema: KEY_SCHEMA,
        billingMode: 'PROVISIONED',
        provisionedRcu: 50,
        provisionedWcu: 40,
        warmWriteUnits: 4000,
        warmReadUnits: 12000,
        itemCount: 1234,
        sizeBytes: 56789,
        gsis: [
          {
            name: 'byG1',
            partitionKey: { name: 'g1', type: 'S' },
            projection: 'KEYS_ONLY',
            nonKeyAttributes: [],
            provisionedWcu: 7,
            warmWriteUnits: 4000,
            status: 'ACTIVE',
          },
          {
            name: 'byG2',
            partitionKey: { name: 'g2', type: 'B' },
            sortKey: { name: 'g2s', type: 'N' },
            projection: 'INCLUDE',
            nonKeyAttributes: ['a', 'b'],
            provisionedWcu: 8,
            status: 'CREATING',
          },
        ],
      },
    ],
    [
      'on-demand with a write cap and warm throughput; provisioned 0s are not capacities',
      {
        TableName: 'events',
        AttributeDefinitions: ATTRS,
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
        ProvisionedThroughput: { ReadCapacityUnits: 0, WriteCapacityUnits: 0 },
        OnDemandThroughput: { MaxReadRequestUnits: -1, MaxWriteRequestUnits: 500 },
        WarmThroughput: { ReadUnitsPerSecond: 12000, WriteUnitsPerSecond: 4000 },
        ItemCount: 0,
        TableSizeBytes: 0,
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byG1',
            KeySchema: [{ AttributeName: 'g1', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'ALL' },
            ProvisionedThroughput: { ReadCapacityUnits: 0, WriteCapacityUnits: 0 },
            OnDemandThroughput: { MaxWriteRequestUnits: 200 },
            WarmThroughput: { WriteUnitsPerSecond: 4000 },
          },
        ],
      },
      {
        name: 'events',
        keySchema: { partitionKey: { name: 'pk', type: 'S' } },
        billingMode: 'PAY_PER_REQUEST',
        warmWriteUnits: 4000,
        warmReadUnits: 12000,
        onDemandMaxWriteUnits: 500,
        itemCount: 0,
        sizeBytes: 0,
        gsis: [
          { name: 'byG1', partitionKey: { name: 'g1', type: 'S' }, projection: 'ALL', nonKeyAttributes: [], onDemandMaxWriteUnits: 200, warmWriteUnits: 4000 },
        ],
      },
    ],
    [
      'DynamoDB Local, provisioned: BillingModeSummary null, no warm throughput -> PROVISIONED from the WCU',
      {
        TableName: 'local',
        AttributeDefinitions: ATTRS,
        KeySchema: KEYS,
        BillingModeSummary: null as never,
        ProvisionedThroughput: { ReadCapacityUnits: 50, WriteCapacityUnits: 40 },
        ItemCount: 3,
        TableSizeBytes: 120,
      },
      { name: 'local', keySchema: KEY_SCHEMA, billingMode: 'PROVISIONED', provisionedRcu: 50, provisionedWcu: 40, itemCount: 3, sizeBytes: 120, gsis: [] },
    ],
    [
      'no BillingModeSummary and 0 WCU -> PAY_PER_REQUEST',
      { TableName: 'od', AttributeDefinitions: ATTRS, KeySchema: KEYS, ProvisionedThroughput: { ReadCapacityUnits: 0, WriteCapacityUnits: 0 } },
      { name: 'od', keySchema: KEY_SCHEMA, billingMode: 'PAY_PER_REQUEST', gsis: [] },
    ],
    [
      'nothing but the keys -> PAY_PER_REQUEST, no optional fields',
      { TableName: 'bare', AttributeDefinitions: ATTRS, KeySchema: KEYS },
      { name: 'bare', keySchema: KEY_SCHEMA, billingMode: 'PAY_PER_REQUEST', gsis: [] },
    ],
    [
      'an unknown BillingMode falls back to the WCU rule',
      {
        TableName: 'x',
        AttributeDefinitions: ATTRS,
        KeySchema: KEYS,
        BillingModeSummary: { BillingMode: 'SOMETHING_NEW' as never },
        ProvisionedThroughput: { WriteCapacityUnits: 10 },
      },
      { name: 'x', keySchema: KEY_SCHEMA, billingMode: 'PROVISIONED', provisionedWcu: 10, gsis: [] },
    ],
    [
      'GSI WCU is ignored on an on-demand table; a missing projection type counts as ALL',
      {
        TableName: 'y',
        AttributeDefinitions: ATTRS,
        KeySchema: KEYS,
        BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
        GlobalSecondaryIndexes: [{ IndexName: 'g', KeySchema: [{ AttributeName: 'g1', KeyType: 'HASH' }], ProvisionedThroughput: { WriteCapacityUnits: 9 } }],
      },
      {
        name: 'y',
        keySchema: KEY_SCHEMA,
        billingMode: 'PAY_PER_REQUEST',
        gsis: [{ name: 'g', partitionKey: { name: 'g1', type: 'S' }, projection: 'ALL', nonKeyAttributes: [] }],
      },
    ],
    [
      'multi-attribute GSI keys keep the extra attributes',
      {
        TableName: 'z',
        AttributeDefinitions: ATTRS,
        KeySchema: KEYS,
        GlobalSecondaryIndexes: [
          {
            IndexName: 'multi',
            KeySchema: [
              { AttributeName: 'g1', KeyType: 'HASH' },
              { AttributeName: 'pk', KeyType: 'HASH' },
              { AttributeName: 'g2s', KeyType: 'RANGE' },
              { AttributeName: 'sk', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      },
      {
        name: 'z',
        keySchema: KEY_SCHEMA,
        billingMode: 'PAY_PER_REQUEST',
        gsis: [
          {
            name: 'multi',
            partitionKey: { name: 'g1', type: 'S' },
            sortKey: { name: 'g2s', type: 'N' },
            extraKeyAttributes: [
              { name: 'pk', type: 'S' },
              { name: 'sk', type: 'N' },
            ],
            projection: 'KEYS_ONLY',
            nonKeyAttributes: [],
          },
        ],
      },
    ],
  ])('%s', (_label, description, expected) => {
    expect(tableInfoFromDescription(description)).toEqual(expected);
  });

  it('names the table in messages by the name given, else by TableName', () => {
    const info = tableInfoFromDescription({ AttributeDefinitions: ATTRS, KeySchema: KEYS }, 'arn:aws:dynamodb:eu-west-1:1:table/t');
    expect(info.name).toBe('arn:aws:dynamodb:eu-west-1:1:table/t');
  });

  it.each<[string, TableDescription, string]>([
    ['no description at all', {}, 'DescribeTable for "t" returned no partition key'],
    ['no HASH key', { AttributeDefinitions: ATTRS, KeySchema: [{ AttributeName: 'sk', KeyType: 'RANGE' }] }, 'DescribeTable for "t" returned no partition key'],
    ['partition key without a type', { AttributeDefinitions: [], KeySchema: KEYS }, 'DescribeTable for "t" gave no type for key attribute "pk"'],
    [
      'sort key with an unknown type',
      {
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'X' as never },
        ],
        KeySchema: KEYS,
      },
      'DescribeTable for "t" gave no type for key attribute "sk"',
    ],
    [
      'GSI key without a type',
      { AttributeDefinitions: ATTRS, KeySchema: KEYS, GlobalSecondaryIndexes: [{ IndexName: 'g', KeySchema: [{ AttributeName: 'nope', KeyType: 'HASH' }] }] },
      'DescribeTable for "t" gave no type for key attribute "nope"',
    ],
    [
      'GSI without a partition key',
      { AttributeDefinitions: ATTRS, KeySchema: KEYS, GlobalSecondaryIndexes: [{ IndexName: 'g', KeySchema: [] }] },
      'DescribeTable for "t" returned no partition key for index "g"',
    ],
    [
      'GSI without a name',
      { AttributeDefinitions: ATTRS, KeySchema: KEYS, GlobalSecondaryIndexes: [{ KeySchema: [{ AttributeName: 'g1', KeyType: 'HASH' }] }] },
      'DescribeTable for "t" returned a global secondary index with no name',
    ],
  ])('throws AWS_ERROR: %s', (_label, description, message) => {
    let error: unknown;
    try {
      tableInfoFromDescription(description, 't');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LoaderError);
    expect(error).toMatchObject({ code: 'AWS_ERROR', table: 't', message });
  });
});
