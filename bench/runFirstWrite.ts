/**
 * Bench child: a dry-run load() of a CSV in one --order mode, with the table described offline, timing
 * when the first batch goes to the sink (the first write of a real load) and when the last does.
 *   node bench/.children-<pid>/runFirstWrite.js --input f.csv --order stripes [--temp-dir DIR] [--s3-endpoint URL]
 * Prints one JSON line (childStats.ts) with firstWriteS, the order in effect and the order's temp bytes.
 */
import { parseArgs } from 'node:util';
import { offlineTableInfo } from '../dist/estimating/offlineTable.js';
import { load } from '../dist/load/load.js';
import type { OrderMode } from '../dist/ordering/order.js';
import type { PlannedWrite } from '../dist/shared/types.js';
import { startMeasuring } from './childStats.js';
import { heapForOrder, tuneHeap } from '../dist/cli/heap.js';

// The heap growth the CLI sets first thing (bin/ddb-spread.js, src/cli/heap.ts): measured as users run it.
tuneHeap();

const { values } = parseArgs({
  options: {
    input: { type: 'string' },
    order: { type: 'string' },
    'temp-dir': { type: 'string' },
    rejects: { type: 'string' },
    's3-endpoint': { type: 'string' },
  },
});
const input = values.input!;
const done = startMeasuring();
const t0 = performance.now();
let firstWriteS: number | undefined;
let batches = 0;
const result = await load(
  {
    input,
    table: 'bench',
    types: { amount: 'N', qty: 'N' },
    order: values.order as OrderMode,
    rejectsPath: values.rejects ?? `${input}.rejects.jsonl`,
    ...(values['temp-dir'] ? { tempDir: values['temp-dir'] } : {}),
    ...(values['s3-endpoint'] ? { s3Endpoint: values['s3-endpoint'], s3PathStyle: true, region: 'us-east-1' } : {}),
  },
  {
    // As the CLI does (src/cli/main.ts): a global order gets V8's own heap growth back.
    onEvent: (event) => void (event.type === 'reading' && heapForOrder(event.order)),
    dryRun: {
      tableInfo: offlineTableInfo('bench', { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' }, billing: 'on-demand' }),
      onPlanned: (w: PlannedWrite) => w,
      record: () => {
        firstWriteS ??= (performance.now() - t0) / 1000;
        batches++;
      },
    },
  },
);
done(result.rowsRead, { firstWriteS, batches, order: result.order, orderTempBytes: result.orderTempBytes });
