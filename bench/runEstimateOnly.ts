/**
 * Bench child: `estimate` of a CSV or JSONL with the table described offline (no AWS), for rows/s and
 * peak RSS against bare parsing (runParseOnly.ts csv-parse / jsonl-parse) of the same file.
 *   node --import tsx bench/runEstimateOnly.ts --input f.csv [--pk pk:S] [--sk sk:S] [--types amount:N,qty:N] [--order window]
 * Without --order, the library default (as a user runs `estimate` with no --order). --one-thread: its rows
 * planned on its own thread (load/planningThread.ts not used), for a comparison.
 */
import { parseArgs } from 'node:util';
import { estimate } from '../dist/estimating/estimate.js';
import { parseTypeList } from '../dist/load/options.js';
import { offlineTableInfo, parseKeyAttribute } from '../dist/estimating/offlineTable.js';
import type { OrderMode } from '../dist/ordering/order.js';
import { startMeasuring } from './childStats.js';
import { tuneHeap } from '../dist/cli/heap.js';

// The heap growth the CLI sets first thing (bin/ddb-spread.js, src/cli/heap.ts): measured as users run it.
tuneHeap();

const { values: args } = parseArgs({
  options: {
    input: { type: 'string' },
    rejects: { type: 'string' },
    pk: { type: 'string', default: 'pk:S' },
    sk: { type: 'string', default: 'sk:S' },
    types: { type: 'string', default: 'amount:N,qty:N' },
    order: { type: 'string' },
    // The estimate's rows planned on its own thread, as before the planning thread (for a comparison).
    'one-thread': { type: 'boolean' },
  },
  strict: true,
});
if (!args.input) throw new Error('--input is required');

const done = startMeasuring();
const result = await estimate({
  input: args.input,
  table: 'estimate',
  types: parseTypeList(args.types),
  rejectsPath: args.rejects ?? `${args.input}.rejects.jsonl`,
  wcu: 1000,
  ...(args.order ? { order: args.order as OrderMode } : {}),
  ...(args['one-thread'] ? { simulation: { planningThread: false } } : {}),
  tableInfo: offlineTableInfo('estimate', {
    partitionKey: parseKeyAttribute(args.pk, '--pk'),
    sortKey: parseKeyAttribute(args.sk, '--sk'),
    billing: 'provisioned',
    tableWcu: 1000,
  }),
});
done(result.input.rows, {
  estimatedSeconds: result.time.estimatedSeconds,
  startupSeconds: result.time.startupSeconds,
  readSeconds: result.time.readSeconds,
  writeSeconds: result.time.writeSeconds,
  distinct: result.keys.distinct,
  rejected: result.input.rejected,
  order: result.simulations.planned.order,
});
