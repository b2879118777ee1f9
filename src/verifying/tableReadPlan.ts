import { chooseTableRead, scanSegmentsFor, verifyCosts, type TableRead } from '../estimating/verifyCost.js';

/** --scan: a Scan of this many segments, or the cheaper of the two reads (auto). */
export type ScanOption = number | 'auto';

/** What pass one of verify learnt about the input, for the choice of --scan auto. */
export interface InputReadTally {
  /** Planned writes of the input (pass one). */
  writes: number;
  /** Distinct keys the writes decide. */
  keys: number;
  /** Over all writes: read units of a strongly consistent read of the item (deletes: the minimum, 1). */
  strongReadUnits: number;
  /** Over the writes that put an item: their sizes in bytes. */
  putBytes: number;
}

/** How verify reads the table: BatchGetItem of the input's keys, or a Scan of the whole table in `segments`. */
export interface TableReadPlan {
  read: TableRead;
  /** The Scan's segments (TotalSegments); 0 for BatchGetItem. */
  segments: number;
  why: string;
}

/**
 * The way verify reads the table, pure. Without --scan, BatchGetItem of the input's keys (the default:
 * DescribeTable's TableSizeBytes, which --scan auto goes by, is updated only every six hours or so);
 * --scan N, a Scan in N segments; --scan auto, the cheaper of the two as the estimate prices them
 * (estimating/verifyCost.ts), from the input's keys and item sizes (each key's read units and bytes taken
 * as the writes' average, as the estimate does) and the table's size. The table holds at least what the
 * input leaves in it: a smaller TableSizeBytes (a table loaded since DynamoDB last measured it) is raised
 * to that, so a stale 0 does not make a Scan of a large table look free.
 */
export function planTableRead(
  scan: ScanOption | undefined,
  facts: {
    tally: InputReadTally;
    /** DescribeTable's TableSizeBytes, if reported. */
    tableBytes: number | undefined;
    consistent: boolean;
    /** The share of the keys checked (--sample). */
    sample: number;
    /** The paced rate (--rcu) and the table's billing mode; unpaced: the read units alone decide. */
    rcu: number | undefined;
    billing: 'PROVISIONED' | 'PAY_PER_REQUEST';
    segmented: boolean;
  },
): TableReadPlan {
  if (scan === undefined)
    return { read: 'batch-get', segments: 0, why: 'BatchGetItem of the keys, the default (--scan N or --scan auto reads the table by a Scan)' };
  if (scan !== 'auto') return { read: 'scan', segments: scan, why: `--scan ${scan}: a Scan of the table in ${scan} segment${scan === 1 ? '' : 's'}` };
  const { tally, sample } = facts;
  const perWrite = tally.writes > 0 ? tally.keys / tally.writes : 0;
  const inputBytes = Math.round(tally.putBytes * perWrite);
  const described = facts.tableBytes ?? 0;
  const tableBytes = Math.max(described, inputBytes);
  const segments = scanSegmentsFor(tableBytes);
  const costs = verifyCosts({
    keys: tally.keys * sample,
    strongReadUnits: tally.strongReadUnits * perWrite * sample,
    tableBytes,
    consistent: facts.consistent,
    rcu: facts.rcu ?? 1,
    billing: facts.rcu === undefined ? 'PAY_PER_REQUEST' : facts.billing,
    scanSegments: segments,
  });
  const choice = chooseTableRead(costs, { segmented: facts.segmented });
  const size =
    facts.tableBytes === undefined
      ? `the table's size unreported, taken as the input's ${formatBytes(inputBytes)}`
      : described < inputBytes
        ? `the table's size reported as ${formatBytes(described)}, less than the input's ${formatBytes(inputBytes)}: taken as the input's`
        : `the table ${formatBytes(described)}`;
  return { read: choice.read, segments: choice.read === 'scan' ? segments : 0, why: `--scan auto: ${choice.why} (${size})` };
}

function formatBytes(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
