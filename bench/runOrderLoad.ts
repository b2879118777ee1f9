/**
 * Bench child: one load with the built library (dist/) in a given write order, as a user of the package
 * would call it; runDdbSpread.ts with --order, --memory and --temp-dir added (bench/order.ts).
 *   node --import tsx bench/runOrderLoad.ts --input f.csv --table t --endpoint http://... --order spread
 *        [--concurrency 8] [--memory 134217728] [--temp-dir DIR] [--rejects f.jsonl]
 * The timed section is the whole load() call: for round-robin and spread it includes reading the whole
 * input before the first write, which is what the order costs a user. bench/order.ts runs a plain-JS
 * transpile of this file (no tsx loader in the measured process).
 */
import { parseArgs } from 'node:util';
import { load } from '../dist/index.js';
import { DEFAULT_CONCURRENCY, DEFAULT_MEMORY_BYTES } from '../dist/load/options.js';
import { ORDER_MODES, type OrderMode } from '../dist/ordering/order.js';
import { startMeasuring } from './childStats.js';
import { heapForOrder, tuneHeap } from '../dist/cli/heap.js';

// The heap growth the CLI sets first thing (bin/ddb-spread.js, src/cli/heap.ts): measured as users run it.
tuneHeap();

process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';

const { values } = parseArgs({
  options: {
    input: { type: 'string' },
    table: { type: 'string' },
    endpoint: { type: 'string' },
    order: { type: 'string' },
    concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
    memory: { type: 'string', default: String(DEFAULT_MEMORY_BYTES) },
    'temp-dir': { type: 'string' },
    rejects: { type: 'string' },
  },
  strict: true,
});
const { input, table, endpoint } = values;
if (!input || !table || !endpoint) throw new Error('--input, --table and --endpoint are required');
const order = values.order as OrderMode;
if (!ORDER_MODES.includes(order)) throw new Error(`--order: one of ${ORDER_MODES.join(', ')}, got ${String(values.order)}`);

const done = startMeasuring();
const t0 = performance.now();
/** Seconds from the start until the order began handing out writes (global orders read everything first). */
let readSeconds: number | undefined;
const result = await load(
  {
    input,
    table,
    endpoint,
    region: 'us-east-1',
    concurrency: Number(values.concurrency),
    types: { amount: 'N', qty: 'N' },
    rejectsPath: values.rejects ?? `${input}.rejects.jsonl`,
    order,
    memoryBytes: Number(values.memory),
    ...(values['temp-dir'] ? { tempDir: values['temp-dir'] } : {}),
  },
  {
    onEvent: (event) => {
      // As the CLI does (src/cli/main.ts): a global order gets V8's own heap growth back.
      if (event.type === 'reading') heapForOrder(event.order);
      if (event.type === 'ordering') readSeconds = (performance.now() - t0) / 1000;
    },
  },
);
done(result.written, {
  order: result.order,
  rowsRead: result.rowsRead,
  rejected: result.rejected,
  superseded: result.superseded,
  retries: result.retries,
  throttledItems: result.throttledItems,
  batches: result.batches,
  orderTempBytes: result.orderTempBytes,
  readSeconds,
});
