import { describe, expect, it } from 'vitest';
import { notActive } from '../../../src/aws/warmThroughput.js';

describe('notActive', () => {
  it('is empty once the table, its warm throughput and every GSI are ACTIVE (or report no warm throughput)', () => {
    expect(notActive({ TableStatus: 'ACTIVE' })).toEqual([]);
    expect(
      notActive({
        TableStatus: 'ACTIVE',
        WarmThroughput: { WriteUnitsPerSecond: 20_000, Status: 'ACTIVE' },
        GlobalSecondaryIndexes: [{ IndexName: 'byName', IndexStatus: 'ACTIVE', WarmThroughput: { WriteUnitsPerSecond: 20_000, Status: 'ACTIVE' } }],
      }),
    ).toEqual([]);
  });

  it('names the table, the warm throughput and each GSI still UPDATING', () => {
    expect(
      notActive({
        TableStatus: 'UPDATING',
        WarmThroughput: { Status: 'UPDATING' },
        GlobalSecondaryIndexes: [
          { IndexName: 'a', IndexStatus: 'UPDATING' },
          { IndexName: 'b', IndexStatus: 'ACTIVE', WarmThroughput: { Status: 'UPDATING' } },
        ],
      }),
    ).toEqual(['table UPDATING', 'warm throughput UPDATING', 'GSI a UPDATING', 'GSI b warm throughput UPDATING']);
  });

  it('does not wait for a GSI being created or deleted: a backfill may take hours, and the load may write meanwhile', () => {
    expect(
      notActive({
        TableStatus: 'ACTIVE',
        GlobalSecondaryIndexes: [
          { IndexName: 'new', IndexStatus: 'CREATING' },
          { IndexName: 'old', IndexStatus: 'DELETING' },
        ],
      }),
    ).toEqual([]);
  });
});
