import { assembleEstimate } from './assembleEstimate.js';
import { EstimateTally } from './estimateTally.js';
import type { EstimateResult } from './estimateTypes.js';
import { prepareEstimate, type PreparedEstimate, type SimulationSettings } from './prepareEstimate.js';
import { load, type DryRun } from '../load/load.js';
import { normalizeOptions, type LoadOptions } from '../load/options.js';
import type { CallerFiles } from '../load/outputFiles.js';
import type { LoadEvent } from '../reporting/events.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { Readable } from 'node:stream';

export type { SimulationSettings } from './prepareEstimate.js';

export interface EstimateOptions extends LoadOptions {
  /** The table as the offline flags describe it; without it, DescribeTable is asked. */
  tableInfo?: TableInfo;
  /** Unit prices; defaults state their region and date. */
  prices?: Partial<EstimateResult['cost']['prices']>;
  /** How the table and the client are modelled (the bench matches these to its partition proxy). */
  simulation?: SimulationSettings;
  /** The table is created for the load at --wcu (offline --new-table; seed 004's bulk load). */
  newTable?: boolean;
}

export interface EstimateDependencies {
  signal?: AbortSignal;
  onEvent?: (event: LoadEvent) => void;
  stdin?: Readable;
  /** Files the caller reads besides the input (load() keeps its outputs off them). */
  files?: CallerFiles;
}

/**
 * The estimate: runs load() as a dry run (the same reading, typing, sharding, ordering and batching
 * code; nothing written) and, as the rows go by, counts sizes, write units and keys, and simulates the
 * planned order (paced as load paces) and, for contrast, the input order (unpaced) against the partition
 * model of the table. Memory stays bounded: counters, two simulations of a few batches in flight, and
 * the order's own --memory budget, fed with slim copies of the writes (key and cost only).
 */
export async function estimate(options: EstimateOptions, deps: EstimateDependencies = {}): Promise<EstimateResult> {
  const opts = normalizeOptions(options);
  // The setup needs the table, which load() knows only after DescribeTable (or the offline flags).
  let prepared: PreparedEstimate | undefined;
  let tally: EstimateTally | undefined;
  const dryRun: DryRun = {
    ...(options.tableInfo ? { tableInfo: options.tableInfo } : {}),
    onTable: (table) => {
      prepared = prepareEstimate(table, opts, { ...options.simulation, ...(options.newTable ? { newTable: true } : {}) });
      tally = new EstimateTally(prepared.costModel, prepared.simulators, prepared.indexes);
    },
    onPlanned: (w) => tally!.add(w),
    record: (writes) => tally!.addBatch(writes),
  };
  // The dry run itself is unpaced: the pacing the estimate reports is simulated (prepareEstimate).
  const run = await load(
    { ...options, pacing: false, wcu: undefined, keyWcu: undefined },
    {
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.onEvent ? { onEvent: deps.onEvent } : {}),
      ...(deps.stdin ? { stdin: deps.stdin } : {}),
      ...(deps.files ? { files: deps.files } : {}),
      dryRun,
    },
  );
  if (!prepared || !tally) throw new Error('load() finished a dry run without describing the table; this is a bug');
  return assembleEstimate({
    run,
    table: prepared.table,
    tableSource: options.tableInfo ? 'flags' : 'describe-table',
    rate: prepared.rate,
    totals: tally.finish(),
    load: { pacing: opts.pacing, keyWcu: opts.keyWcu, order: opts.order, sharded: opts.shard !== undefined },
    prices: options.prices,
  });
}
