/**
 * Bench child: `estimate` of a skewed CSV or JSONL with the table described offline (no AWS), for rows/s
 * and peak RSS against bare parsing (runParseOnly.ts csv-parse / jsonl-parse) of the same file.
 *   node --import tsx bench/runEstimateOnly.ts --input f.csv
 */
import { estimate } from '../dist/estimating/estimate.js';
import { offlineTableInfo } from '../dist/estimating/offlineTable.js';
import { childArgs, startMeasuring } from './childStats.js';
import { tuneHeap } from '../dist/cli/heap.js';

// The heap growth the CLI sets first thing (bin/ddb-spread.js, src/cli/heap.ts): measured as users run it.
tuneHeap();

const args = childArgs();
const done = startMeasuring();
const result = await estimate({
  input: args.input,
  table: 'estimate',
  types: { amount: 'N', qty: 'N' },
  rejectsPath: args.rejects,
  wcu: 1000,
  tableInfo: offlineTableInfo('estimate', {
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
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
});
