import type { CostEstimate } from './estimateTypes.js';

export type Prices = CostEstimate['prices'];

/**
 * DynamoDB Standard table class, us-east-1, after the November 2024 cut of on-demand throughput prices
 * by 50% (from $1.25 to $0.625 per million write request units); the provisioned WCU-hour price did not
 * change ($0.00065, i.e. the long-standing $0.0065 per 10 WCU-hours).
 * Sources: https://aws.amazon.com/dynamodb/pricing/on-demand/ and
 * https://aws.amazon.com/dynamodb/pricing/provisioned/ (the prices themselves render client-side), as
 * quoted for us-east-1 in https://airbyte.com/data-engineering-resources/dynamodb-pricing (July 2025).
 * Prices vary by region and change: override with --price-write-request and --price-wcu-hour.
 */
export const DEFAULT_PRICES: Readonly<Prices> = Object.freeze({
  region: 'us-east-1',
  date: '2024-11',
  onDemandPerMillionWrites: 0.625,
  provisionedPerWcuHour: 0.00065,
});

export interface CostInput {
  /** Write units of the whole load, every GSI included: on-demand bills one write request unit per KB written, index writes alike. */
  totalWcu: number;
  /** How long the load takes. */
  seconds: number;
  /** The rate the load runs at: on a provisioned table, the WCU provisioned for it. */
  targetWcu: number;
  /** The table holds no item (or does not exist yet): Import from S3 is an option. */
  tableIsEmpty: boolean;
  prices?: Partial<Prices>;
}

const SECONDS_PER_HOUR = 3600;

export function estimateCost(input: CostInput): CostEstimate {
  const { totalWcu, seconds, targetWcu } = input;
  requireFinite('totalWcu', totalWcu);
  requireFinite('seconds', seconds);
  requireFinite('targetWcu', targetWcu);
  const given = input.prices ?? {};
  const prices: Prices = {
    region: given.region ?? DEFAULT_PRICES.region,
    date: given.date ?? DEFAULT_PRICES.date,
    onDemandPerMillionWrites: given.onDemandPerMillionWrites ?? DEFAULT_PRICES.onDemandPerMillionWrites,
    provisionedPerWcuHour: given.provisionedPerWcuHour ?? DEFAULT_PRICES.provisionedPerWcuHour,
  };
  requireFinite('prices.onDemandPerMillionWrites', prices.onDemandPerMillionWrites);
  requireFinite('prices.provisionedPerWcuHour', prices.provisionedPerWcuHour);

  // Provisioned capacity is billed by the hour, so a started hour counts whole: a 61-minute load pays
  // two hours of its capacity. Capacity is whole units, too.
  const billedHours = Math.ceil(seconds / SECONDS_PER_HOUR);
  const provisionedWcuHours = Math.ceil(targetWcu) * billedHours;

  return {
    prices,
    onDemandUsd: (totalWcu / 1_000_000) * prices.onDemandPerMillionWrites,
    provisionedWcuHours,
    provisionedUsd: provisionedWcuHours * prices.provisionedPerWcuHour,
    importFromS3: input.tableIsEmpty ? IMPORT_FROM_S3 : undefined,
  };
}

/**
 * The DynamoDB Developer Guide, "DynamoDB data import from Amazon S3: how it works" and "Amazon S3 import
 * formats for DynamoDB": CSV, DynamoDB JSON or Amazon Ion, uncompressed, GZIP or ZSTD; "Import into
 * existing tables is not currently supported"; "does not consume write capacity on the new table";
 * priced on the uncompressed size of the source data; CSV non-key columns are imported as strings.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.HowItWorks.html
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
 */
const IMPORT_FROM_S3 =
  'The table is empty: DynamoDB Import from S3 loads data without consuming any write capacity (it is billed by the uncompressed size of the source data), ' +
  'but only into a NEW table it creates, so this one would have to be replaced. ' +
  'It reads CSV (every non-key column becomes a string), DynamoDB JSON or Amazon Ion, uncompressed or GZIP/ZSTD, and ddb-spread\'s typing could produce the DynamoDB JSON lines ({"Item":{...}}) it takes, types kept.';

function requireFinite(name: string, value: number): void {
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`${name} must be a finite number >= 0, got ${value}`);
}
