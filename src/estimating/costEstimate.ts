import type { CostEstimate } from './estimateTypes.js';
// The prices and their sources live with the unit model the load's cost guard shares (pacing/unitPrices.ts).
import { DEFAULT_PRICES, type Prices } from '../pacing/unitPrices.js';

export type { Prices };
export { DEFAULT_PRICES };

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
