import { MAX_KEYS_PER_CALL } from '../pacing/readUnits.js';
import { DEFAULT_READ_PRICES, type ReadPrices } from '../pacing/unitPrices.js';

/**
 * What a verify costs, two ways, pure: BatchGetItem of the input's keys, or a parallel Scan of the whole
 * table merged against them. DynamoDB's rules (developer guide, "DynamoDB read and write operations",
 * "Capacity unit consumption for read operations", and "Scanning tables"):
 * - BatchGetItem: each item is a GetItem of its own, its size rounded up to 4 KB before the sizes are
 *   added (1.5 KB and 6.5 KB read as 4 KB + 8 KB); a key with no item still costs the minimum (1 unit
 *   strongly consistent); at most 100 keys a call.
 * - Scan: charged on the items it evaluates, not on what it returns (a projection or filter saves
 *   nothing): the sizes of the items of a page are added, then rounded up to 4 KB, and a page ends past
 *   1 MB. So the Scan costs the table's bytes / 4 KB, plus at most one unit of rounding per page.
 * - Eventually consistent reads cost half, in read units and in on-demand read request units alike.
 */

/** One way to read the table for a verify. */
export type TableRead = 'batch-get' | 'scan';

export interface VerifyCostInput {
  /** Keys BatchGetItem would read: one per key the input leaves decided, sampled. */
  keys: number;
  /** The read units of those keys, strongly consistent: the sum over keys of max(1, ceil(size / 4096)). */
  strongReadUnits: number;
  /** The whole table, as DescribeTable reports it (or as the input leaves it, offline). */
  tableBytes: number;
  consistent: boolean;
  /** Read units per second both ways run at (--rcu, or a share of the table's read capacity). */
  rcu: number;
  billing: 'PROVISIONED' | 'PAY_PER_REQUEST';
  /** The Scan's parallel segments (TotalSegments): each one ends on a page of its own. */
  scanSegments: number;
  prices?: Partial<ReadPrices> | undefined;
}

export interface TableReadCost {
  /** Read units (on demand: read request units) of the whole read. */
  readUnits: number;
  /** BatchGetItem calls (100 keys each), or Scan pages at most (1 MB or more each, and a last page per segment). */
  calls: number;
  /** The read units at the rate (`rcu`); calls in flight and latency not counted. */
  seconds: number;
  /** On demand: read request units at the price per million. */
  onDemandUsd: number;
  /** Provisioned: the rate for the hours the read takes, a started hour counted whole (as the load's estimate prices its WCU). */
  provisionedRcuHours: number;
  provisionedUsd: number;
  /** The price on this table's billing mode. */
  usd: number;
}

export interface VerifyCosts {
  batchGet: TableReadCost;
  scan: TableReadCost & { segments: number };
  prices: ReadPrices;
}

const KB4 = 4096;
const PAGE_BYTES = 1024 * 1024;
const SECONDS_PER_HOUR = 3600;

export function verifyCosts(input: VerifyCostInput): VerifyCosts {
  for (const name of ['keys', 'strongReadUnits', 'tableBytes'] as const) requireFinite(name, input[name], 0);
  requireFinite('rcu', input.rcu, Number.MIN_VALUE);
  if (!(Number.isInteger(input.scanSegments) && input.scanSegments >= 1))
    throw new RangeError(`scanSegments must be a whole number >= 1, got ${input.scanSegments}`);
  const given = input.prices ?? {};
  const prices: ReadPrices = {
    region: given.region ?? DEFAULT_READ_PRICES.region,
    date: given.date ?? DEFAULT_READ_PRICES.date,
    onDemandPerMillionReads: given.onDemandPerMillionReads ?? DEFAULT_READ_PRICES.onDemandPerMillionReads,
    provisionedPerRcuHour: given.provisionedPerRcuHour ?? DEFAULT_READ_PRICES.provisionedPerRcuHour,
  };
  requireFinite('prices.onDemandPerMillionReads', prices.onDemandPerMillionReads, 0);
  requireFinite('prices.provisionedPerRcuHour', prices.provisionedPerRcuHour, 0);
  const share = input.consistent ? 1 : 0.5;
  const priced = (readUnits: number, calls: number): TableReadCost => {
    const seconds = readUnits / input.rcu;
    const provisionedRcuHours = Math.ceil(input.rcu) * Math.ceil(seconds / SECONDS_PER_HOUR);
    const onDemandUsd = (readUnits / 1_000_000) * prices.onDemandPerMillionReads;
    const provisionedUsd = provisionedRcuHours * prices.provisionedPerRcuHour;
    return {
      readUnits,
      calls,
      seconds,
      onDemandUsd,
      provisionedRcuHours,
      provisionedUsd,
      usd: input.billing === 'PROVISIONED' ? provisionedUsd : onDemandUsd,
    };
  };
  const pages = scanPages(input.tableBytes, input.scanSegments);
  return {
    batchGet: priced(input.strongReadUnits * share, Math.ceil(input.keys / MAX_KEYS_PER_CALL)),
    scan: { ...priced((Math.ceil(input.tableBytes / KB4) + pages) * share, pages), segments: input.scanSegments },
    prices,
  };
}

/**
 * Pages a Scan of `bytes` in `segments` takes at most. A page ends once the items it read exceed 1 MB
 * ("If the total size of scanned items exceeds the maximum dataset size limit of 1 MB, the scan completes"),
 * so every page but a segment's last holds 1 MB or more: floor(b / 1 MB) + 1 pages for a segment of b bytes.
 */
export function scanPages(bytes: number, segments: number): number {
  return Math.floor(bytes / PAGE_BYTES) + segments;
}

/** The Scan's segments for a table of `bytes`: one per 2 GB, AWS's rule of thumb for a parallel scan, 1 at least. */
export function scanSegmentsFor(bytes: number): number {
  return Math.max(1, Math.min(1_000_000, Math.ceil(bytes / (2 * 1024 ** 3))));
}

export interface TableReadChoice {
  read: TableRead;
  why: string;
}

/**
 * The way to read the table that costs less: fewer dollars on the table's billing mode, then (a
 * provisioned table pays by the started hour, so both may cost the same) fewer read units, which is also
 * less time at the same rate. A tie goes to BatchGetItem, which reads only the input's keys. A verify of
 * one --segment cannot Scan (the other segments' items would all look extra).
 */
export function chooseTableRead(costs: Pick<VerifyCosts, 'batchGet' | 'scan'>, options: { segmented?: boolean } = {}): TableReadChoice {
  const { batchGet, scan } = costs;
  if (options.segmented) return { read: 'batch-get', why: "a verify of one --segment reads its own keys: a Scan would see the other segments' items as extra" };
  const scanCheaper = scan.usd < batchGet.usd || (scan.usd === batchGet.usd && scan.readUnits < batchGet.readUnits);
  const ratio = (a: number, b: number) => (b > 0 ? ` (${(a / b).toFixed(a / b >= 10 ? 0 : 1)}x as many)` : '');
  return scanCheaper
    ? {
        read: 'scan',
        why: `a Scan of the table reads ${formatUnits(scan.readUnits)} read units, BatchGetItem of the keys ${formatUnits(batchGet.readUnits)}${ratio(batchGet.readUnits, scan.readUnits)}: rounding each key up to 4 KB costs more than reading the whole table`,
      }
    : {
        read: 'batch-get',
        why: `BatchGetItem of the keys reads ${formatUnits(batchGet.readUnits)} read units, a Scan of the table ${formatUnits(scan.readUnits)}${ratio(scan.readUnits, batchGet.readUnits)}`,
      };
}

function formatUnits(units: number): string {
  return units.toLocaleString('en-US', { maximumFractionDigits: 1 });
}

function requireFinite(name: string, value: number, min: number): void {
  if (!(Number.isFinite(value) && value >= min)) throw new RangeError(`${name} must be a finite number >= ${min}, got ${value}`);
}
