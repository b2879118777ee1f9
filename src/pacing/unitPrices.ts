/**
 * The prices of DynamoDB write units, and the price of a number of them: the one cost model of the
 * estimate (estimating/costEstimate.ts) and the load's cost guard (--max-cost, load/costGuard.ts). Pure.
 *
 * Defaults: DynamoDB Standard table class, us-east-1, after the November 2024 cut of on-demand throughput
 * prices by 50% (from $1.25 to $0.625 per million write request units); the provisioned WCU-hour price did
 * not change ($0.00065, i.e. the long-standing $0.0065 per 10 WCU-hours).
 * Sources: https://aws.amazon.com/dynamodb/pricing/on-demand/ and
 * https://aws.amazon.com/dynamodb/pricing/provisioned/ (the prices themselves render client-side), as
 * quoted for us-east-1 in https://airbyte.com/data-engineering-resources/dynamodb-pricing (July 2025).
 * Prices vary by region and change: override with --price-write-request and --price-wcu-hour.
 */
export interface Prices {
  region: string;
  date: string;
  onDemandPerMillionWrites: number;
  provisionedPerWcuHour: number;
}

export const DEFAULT_PRICES: Readonly<Prices> = Object.freeze({
  region: 'us-east-1',
  date: '2024-11',
  onDemandPerMillionWrites: 0.625,
  provisionedPerWcuHour: 0.00065,
});

/**
 * USD per write unit as the cost guard counts them. On demand: one write request unit per unit written.
 * Provisioned: the capacity the writes occupy, a unit per second for an hour being one WCU-hour (units / 3600
 * WCU-hours) - the least a load of these units can use of provisioned capacity; the capacity the table is
 * provisioned with is billed by the hour whether the load uses it or not (the estimate prices that apart).
 */
export function usdPerUnit(billing: 'PROVISIONED' | 'PAY_PER_REQUEST', prices: Pick<Prices, 'onDemandPerMillionWrites' | 'provisionedPerWcuHour'>): number {
  return billing === 'PROVISIONED' ? prices.provisionedPerWcuHour / 3600 : prices.onDemandPerMillionWrites / 1_000_000;
}

/**
 * The prices of DynamoDB read units, for the estimate's price of a verify (estimating/verifyCost.ts).
 * Defaults: DynamoDB Standard, us-east-1, after the same November 2024 cut: $0.125 per million read request
 * units on demand (from $0.25); provisioned, $0.00013 per RCU-hour (the long-standing $0.0065 per 50
 * RCU-hours, unchanged). One read request unit reads 4 KB strongly consistent, two eventually consistent, so
 * read request units are counted as read units are. Sources as for the write prices above.
 */
export interface ReadPrices {
  region: string;
  date: string;
  onDemandPerMillionReads: number;
  provisionedPerRcuHour: number;
}

export const DEFAULT_READ_PRICES: Readonly<ReadPrices> = Object.freeze({
  region: 'us-east-1',
  date: '2024-11',
  onDemandPerMillionReads: 0.125,
  provisionedPerRcuHour: 0.00013,
});
