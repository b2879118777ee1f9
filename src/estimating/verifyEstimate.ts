import type { EstimateTable, VerifyEstimate } from './estimateTypes.js';
import type { ReadTotals } from './estimateTally.js';
import { chooseTableRead, scanSegmentsFor, verifyCosts } from './verifyCost.js';
import type { ReadPrices } from '../pacing/unitPrices.js';
import { LoaderError } from '../shared/errors.js';
import { chooseReadRate, DEFAULT_AUTO_READ_PERCENT, NEW_ON_DEMAND_RCU, parseRcuSpec, type RcuSpec } from '../pacing/readRate.js';
import type { TableInfo } from '../shared/tableInfo.js';

/** The verify's own options, as `verify` takes them (VerifyOptions), read by the estimate to price it. */
export interface VerifyPlan {
  /** --rcu: read units per second, or "auto" / "auto:P%" (a share of the table's read capacity, as verify takes it). */
  rcu?: number | string | undefined;
  /** @default true */
  consistentRead?: boolean | undefined;
  /** --sample as a share in (0, 1]. @default 1 */
  sample?: number | undefined;
  /** --scan N: the Scan's segments. @default one per 2 GB of the table */
  scanSegments?: number | undefined;
  /** --segment i/N: a verify of one segment reads its keys only. */
  segmented?: boolean | undefined;
  /** --segment i/N's N: verify's --rcu auto gives each of the N workers 1/N of its share. @default 1 */
  workers?: number | undefined;
  /** --segment with --listing: a given --rcu is the rate of the N workers together, 1/N each while all run. */
  sharedRate?: boolean | undefined;
  prices?: Partial<ReadPrices> | undefined;
}

/**
 * The verify's options of estimate() (the names verify() takes), checked: the ranges `verify` refuses
 * are refused here too, before the input is read.
 */
export function verifyPlanOf(
  options: Omit<VerifyPlan, 'segmented' | 'workers' | 'sharedRate' | 'prices' | 'scanSegments'> & { scanSegments?: number | 'auto' | undefined },
  segmented: boolean,
  workers = 1,
  sharedRate = false,
): VerifyPlan {
  const { rcu, consistentRead, sample } = options;
  // verify's --scan auto: the estimate prices both reads anyway, the Scan in its default segments.
  const scanSegments = options.scanSegments === 'auto' ? undefined : options.scanSegments;
  // verify's own parse: the same values refused, with the same message.
  if (rcu !== undefined) parseRcuSpec(rcu);
  if (consistentRead !== undefined && typeof consistentRead !== 'boolean')
    throw new LoaderError('INVALID_OPTION', `consistentRead is true or false, got ${String(consistentRead)}`);
  if (sample !== undefined && !(typeof sample === 'number' && sample > 0 && sample <= 1))
    throw new LoaderError('INVALID_OPTION', `--sample takes a share of the keys above 0% and at most 100%, got ${String(sample)}`);
  if (scanSegments !== undefined && !(Number.isInteger(scanSegments) && scanSegments >= 1 && scanSegments <= 1_000_000))
    throw new LoaderError('INVALID_OPTION', `--scan takes a whole number of segments from 1 to 1,000,000, got ${String(scanSegments)}`);
  return { rcu, consistentRead, sample, scanSegments, segmented, ...(workers > 1 ? { workers } : {}), ...(sharedRate && workers > 1 ? { sharedRate } : {}) };
}

/**
 * The verify section of the estimate, pure: what reading back the load's keys would cost, from the
 * tally's read totals, the keys the writes decide (writes - superseded) and the table as described.
 */
export function estimateVerify(
  table: TableInfo,
  source: EstimateTable['source'],
  reads: ReadTotals,
  superseded: number,
  plan: VerifyPlan = {},
): VerifyEstimate {
  const sample = plan.sample ?? 1;
  const consistentRead = plan.consistentRead ?? true;
  // The keys the writes decide; each key's read units and bytes taken as the writes' average (exact without supersedes).
  const decided = Math.max(0, reads.writes - superseded);
  const perWrite = reads.writes > 0 ? decided / reads.writes : 0;
  const keys = decided * sample;
  const leftItems = reads.puts * perWrite;
  const leftBytes = reads.putBytes * perWrite;
  const described = source === 'describe-table' && table.sizeBytes !== undefined;
  const tableBytes = (described ? (table.sizeBytes ?? 0) : 0) + leftBytes;
  const tableItems = (described ? (table.itemCount ?? 0) : 0) + leftItems;
  const { rcu, rcuSource, rcuPercent } = readRate(table, plan.rcu, plan.workers, plan.sharedRate);
  const scanSegments = plan.scanSegments ?? scanSegmentsFor(tableBytes);
  const costs = verifyCosts({
    keys,
    strongReadUnits: reads.strongReadUnits * perWrite * sample,
    tableBytes,
    consistent: consistentRead,
    rcu,
    billing: table.billingMode,
    scanSegments,
    prices: plan.prices,
  });
  const choice = chooseTableRead(costs, { segmented: plan.segmented === true });
  // verify reads the keys with BatchGetItem unless --scan: the flags pace either read.
  const flags = plan.rcu === undefined ? `--rcu ${formatRcu(rcu)}` : '';
  return {
    keys,
    sample,
    consistentRead,
    rcu,
    rcuSource,
    rcuPercent,
    table: { bytes: tableBytes, items: tableItems, source: described ? 'describe-table' : 'input' },
    batchGet: costs.batchGet,
    scan: costs.scan,
    cheaper: choice.read,
    why: choice.why,
    prices: costs.prices,
    flags,
  };
}

/** The rate a verify reads at: --rcu, else 80% of what the table takes (provisioned RCU, warm read throughput, a new on-demand table's 12,000). */
export function readRate(
  table: TableInfo,
  given: number | string | undefined,
  workers = 1,
  sharedRate = false,
): Pick<VerifyEstimate, 'rcu' | 'rcuSource' | 'rcuPercent'> {
  // verify's own rule (pacing/readRate.ts), so the estimate prices the rate the verify will take.
  const spec: RcuSpec = given === undefined ? { kind: 'auto', percent: DEFAULT_AUTO_READ_PERCENT } : parseRcuSpec(given);
  // Shared by the workers of a --listing (verifying/sharedReadRate.ts): 1/N each while all of them read.
  if (spec.kind === 'fixed') return { rcu: sharedRate ? spec.rcu / workers : spec.rcu, rcuSource: 'given', rcuPercent: 100 };
  // With --segment i/N, verify gives each worker 1/N of the share (verify.ts readRateOf).
  const { rcu } = chooseReadRate(spec, { ...table, maxReadUnits: table.onDemandMaxReadUnits }, workers);
  const rcuSource =
    table.billingMode === 'PROVISIONED' && table.provisionedRcu !== undefined
      ? 'provisioned'
      : table.onDemandMaxReadUnits !== undefined && table.onDemandMaxReadUnits <= (table.warmReadUnits ?? NEW_ON_DEMAND_RCU)
        ? 'on-demand-max'
        : table.warmReadUnits !== undefined
          ? 'warm-throughput'
          : 'on-demand-default';
  return { rcu, rcuSource, rcuPercent: spec.percent };
}

const formatRcu = (rcu: number) => String(Math.round(rcu * 1000) / 1000);
