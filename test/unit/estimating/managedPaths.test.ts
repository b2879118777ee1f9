import { describe, expect, it } from 'vitest';
import { adviseManagedPaths, IMPORT_FROM_S3_USD_PER_GB, type ManagedPathInput } from '../../../src/estimating/managedPaths.js';

const base: ManagedPathInput = {
  kind: 'dynamodb-json',
  inS3: true,
  deletes: false,
  tableIsEmpty: false,
  globalTable: false,
  inputBytes: 10 * 1024 ** 3,
  compressed: false,
  onDemandUsd: 62.5,
};
const pathsOf = (input: Partial<ManagedPathInput>) => {
  const [importFromS3, bulkPut] = adviseManagedPaths({ ...base, ...input });
  return { importFromS3: importFromS3!, bulkPut: bulkPut! };
};

describe('adviseManagedPaths', () => {
  it('bulk put items serves DynamoDB JSON or Ion into an existing table; Import from S3 does not', () => {
    for (const kind of ['dynamodb-json', 'ion'] as const) {
      const { importFromS3, bulkPut } = pathsOf({ kind });
      expect(bulkPut.serves).toBe(true);
      expect(importFromS3.serves).toBe(false);
      expect(importFromS3.why).toMatch(/new table/);
    }
  });

  it('bulk put items does not read CSV or Parquet, delete, or write a global table', () => {
    expect(pathsOf({ kind: 'csv' }).bulkPut.serves).toBe(false);
    expect(pathsOf({ kind: 'other' }).bulkPut.why).toMatch(/CSV, Parquet/);
    expect(pathsOf({ deletes: true }).bulkPut.serves).toBe(false);
    const global = pathsOf({ globalTable: true }).bulkPut;
    expect(global.serves).toBe(false);
    expect(global.why).toMatch(/global table/);
    expect(global.wouldNot).toMatch(/pace per partition key/);
  });

  it('Import from S3 serves an empty table from CSV, DynamoDB JSON or Ion, priced per GB of source', () => {
    const { importFromS3 } = pathsOf({ tableIsEmpty: true, kind: 'csv' });
    expect(importFromS3.serves).toBe(true);
    expect(importFromS3.why).toMatch(/NEW table it creates, using no write capacity/);
    expect(importFromS3.wouldNot).toMatch(/every non-key column becomes a string/);
    expect(importFromS3.cost).toContain(`$${(10 * IMPORT_FROM_S3_USD_PER_GB).toFixed(2)}`);
    expect(importFromS3.cost).toContain('$62.50');
    expect(pathsOf({ tableIsEmpty: true, kind: 'other' }).importFromS3.serves).toBe(false);
    const unknown = pathsOf({ tableIsEmpty: 'unknown' }).importFromS3;
    expect(unknown.serves).toBe(true);
    expect(unknown.why).toMatch(/may be empty \(its item count is unknown\)/);
    expect(pathsOf({ tableIsEmpty: true, compressed: true }).importFromS3.cost).toMatch(/uncompressed size it bills is larger/);
  });

  it('says plainly that no public price was found for bulk put items', () => {
    expect(pathsOf({}).bulkPut.cost).toMatch(/no public per-unit price was found/);
  });
});
