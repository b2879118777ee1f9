/**
 * Bench child: one load with the built library (dist/), as a user of the package would call it.
 *   node --import tsx bench/runDdbSpread.ts --input f.csv --table t --endpoint http://... --concurrency 8 [--order spread] [--key-wcu N]
 * bench.ts runs a plain-JS transpile of this file (no tsx loader in the measured process); by hand,
 * `node --import tsx` works too (its loader thread adds ~28 MB RSS).
 */
import { load, type LoadOptions } from '../dist/index.js';
import { childArgs, startMeasuring } from './childStats.js';
import { tuneHeap } from '../dist/cli/heap.js';

// The heap growth the CLI sets first thing (bin/ddb-spread.js, src/cli/heap.ts): measured as users run it.
tuneHeap();

process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';

const args = childArgs();
const done = startMeasuring();
const result = await load({
  input: args.input,
  table: args.table,
  endpoint: args.endpoint,
  region: 'us-east-1',
  concurrency: args.concurrency,
  // The CSV's number columns; DynamoDB JSON says its own types.
  ...(args.inputFormat === undefined ? { types: { amount: 'N', qty: 'N' } } : { inputFormat: args.inputFormat as LoadOptions['inputFormat'] }),
  rejectsPath: args.rejects,
  ...(args.order === undefined ? {} : { order: args.order as LoadOptions['order'] }),
  ...(args.keyWcu === undefined ? {} : { keyWcu: args.keyWcu }),
  ...(args.transform === undefined ? {} : { transform: args.transform }),
  ...(args.ifNotExists ? { ifNotExists: true } : {}),
  ...(args.itemConditions ? { itemConditions: true } : {}),
});
done(result.written, {
  rowsRead: result.rowsRead,
  rejected: result.rejected,
  superseded: result.superseded,
  retries: result.retries,
  throttledItems: result.throttledItems,
  batches: result.batches,
  ...(result.conditionFailed === undefined ? {} : { conditionFailed: result.conditionFailed }),
});
