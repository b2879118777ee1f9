/**
 * Bench child: a dry-run load() of an input (a file, a folder of parts, an export) in one --order mode
 * (the default when none is given), with the table described offline, timing when the first batch goes
 * to the sink (the first write of a real load) and when the last does.
 *   node bench/.children-<pid>/runFirstWrite.js --input f.csv [--order stripes] [--temp-dir DIR] [--s3-endpoint URL]
 *     [--key pk:S,sk:S] [--types amount:N,qty:N]   (--types '' for an export, whose items carry their types)
 * Prints one JSON line (childStats.ts) with firstWriteS (from the load's call) and firstWriteSinceStartS
 * (from the process's start, what a user waits), the order decided at the start and the order in effect
 * at the end, the stripes read (0: the input was read whole), the warnings (an auto window going over to
 * round-robin says so) and the order's temp bytes.
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
    key: { type: 'string', default: 'pk:S,sk:S' },
    types: { type: 'string', default: 'amount:N,qty:N' },
  },
});
/** "name:T,name:T" as attribute names and types. */
const pairs = (text: string) =>
  text
    .split(',')
    .filter(Boolean)
    .map((pair) => pair.split(':') as [string, string]);
const [partitionKey, sortKey] = pairs(values.key!).map(([name, type]) => ({ name, type: type as 'S' | 'N' | 'B' }));
const types = Object.fromEntries(pairs(values.types!)) as Record<string, 'N'>;
const input = values.input!;
const done = startMeasuring();
const t0 = performance.now();
let firstWriteS: number | undefined;
let firstWriteSinceStartS: number | undefined;
let batches = 0;
/** Stripes the rows came from (a striped read names each row's stripe). */
let stripes = 0;
let readingOrder: string | undefined;
const warnings: string[] = [];
const result = await load(
  {
    input,
    table: 'bench',
    types,
    ...(values.order ? { order: values.order as OrderMode } : {}),
    rejectsPath: values.rejects ?? `${input}.rejects.jsonl`,
    ...(values['temp-dir'] ? { tempDir: values['temp-dir'] } : {}),
    ...(values['s3-endpoint'] ? { s3Endpoint: values['s3-endpoint'], s3PathStyle: true, region: 'us-east-1' } : {}),
  },
  {
    // As the CLI does (src/cli/main.ts): a global order gets V8's own heap growth back.
    onEvent: (event) => {
      if (event.type === 'reading') {
        readingOrder ??= event.order;
        heapForOrder(event.order);
      }
      if (event.type === 'warning') warnings.push(event.message);
    },
    dryRun: {
      tableInfo: offlineTableInfo('bench', { partitionKey: partitionKey!, ...(sortKey ? { sortKey } : {}), billing: 'on-demand' }),
      onPlanned: (w: PlannedWrite) => {
        if (w.origin.part !== undefined && w.origin.part >= stripes) stripes = w.origin.part + 1;
        return w;
      },
      record: () => {
        firstWriteS ??= (performance.now() - t0) / 1000;
        // performance.now() counts from the process's start (its time origin): node's start-up and imports included.
        firstWriteSinceStartS ??= performance.now() / 1000;
        batches++;
      },
    },
  },
);
done(result.rowsRead, {
  firstWriteS,
  firstWriteSinceStartS,
  batches,
  stripes,
  readingOrder,
  order: result.order,
  orderTempBytes: result.orderTempBytes,
  warnings,
});
