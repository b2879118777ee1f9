/**
 * Attacks on the estimate's verify price: it must price the read rate verify itself will take
 * (pacing/readRate.ts chooseReadRate, as verify.ts readRateOf calls it), else its seconds (and a
 * provisioned table's RCU-hours) are off by more than rounding.
 */
import { describe, expect, it } from 'vitest';
import { estimateVerify, verifyPlanOf } from '../../../src/estimating/verifyEstimate.js';
import { chooseReadRate } from '../../../src/pacing/readRate.js';
import { tableInfoFromDescription, type TableInfo } from '../../../src/shared/tableInfo.js';

const provisioned: TableInfo = {
  name: 't',
  keySchema: { partitionKey: { name: 'pk', type: 'S' } },
  billingMode: 'PROVISIONED',
  provisionedRcu: 1_000,
  provisionedWcu: 10,
  gsis: [],
};
/** 100,000 puts of 1,000 bytes: 1 strong read unit each. */
const reads = { writes: 100_000, strongReadUnits: 100_000, puts: 100_000, putBytes: 100_000_000 };

describe("the estimate's verify rate is the one verify takes", () => {
  it('with --segment i/N, --rcu auto gives each worker 1/N of the share, as verify does', () => {
    const verifyTakes = chooseReadRate({ kind: 'auto', percent: 80 }, { billingMode: 'PROVISIONED', provisionedRcu: 1_000 }, 4).rcu;
    expect(verifyTakes).toBe(200);
    const v = estimateVerify(provisioned, 'describe-table', reads, 0, verifyPlanOf({}, true, 4));
    expect(v.rcu).toBe(verifyTakes);
    // 100,000 units at 200 RCU/s: 500 s, not the 125 s of the whole table's 800.
    expect(v.batchGet.seconds).toBe(500);
    // The flags the estimate tells the user to add make verify read at that rate.
    expect(v.flags).toBe('--rcu 200');
  });

  it("on demand with a MaxReadRequestUnits cap, --rcu auto stays within P% of the cap, as verify's does", () => {
    const table = tableInfoFromDescription({
      TableName: 't',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
      OnDemandThroughput: { MaxReadRequestUnits: 1_000, MaxWriteRequestUnits: -1 },
    });
    const verifyTakes = chooseReadRate({ kind: 'auto', percent: 80 }, { billingMode: 'PAY_PER_REQUEST', warmReadUnits: undefined, maxReadUnits: 1_000 }).rcu;
    expect(verifyTakes).toBe(800);
    const v = estimateVerify(table, 'describe-table', reads, 0, verifyPlanOf({}, false));
    expect(v.rcu).toBe(verifyTakes);
    expect(v.rcuSource).toBe('on-demand-max');
    expect(v.batchGet.seconds).toBe(125);
  });
});
