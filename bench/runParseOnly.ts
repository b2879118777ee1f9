/**
 * Bench child: reading and typing with no writes.
 *   node --import tsx bench/runParseOnly.ts ddb-spread --input f.csv   readCsv + row planner + batcher (built dist/)
 *   node --import tsx bench/runParseOnly.ts csv-parse --input f.csv    csv-parse with columns:true, nothing else
 * bench.ts runs a plain-JS transpile of this file (no tsx loader in the measured process); by hand,
 * `node --import tsx` works too (its loader thread adds ~28 MB RSS).
 */
import { parse } from 'csv-parse';
import { createReadStream } from 'node:fs';
import { createBatcher } from '../dist/batching/batch.js';
import { createRowPlanner, isRejected } from '../dist/typing/planRow.js';
import { openInput } from '../dist/reading/openInput.js';
import { readCsv } from '../dist/reading/readCsv.js';
import { childArgs, startMeasuring } from './childStats.js';

const [mode, ...rest] = process.argv.slice(2);
const args = childArgs(rest);
const done = startMeasuring();

if (mode === 'ddb-spread') {
  // The same path load() takes, minus describeTable and the writer.
  const input = await openInput(args.input);
  const planner = createRowPlanner({
    keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } },
    types: { amount: 'N', qty: 'N' },
    infer: false,
    empty: 'omit',
    jsonFlavor: 'json',
  });
  const batcher = createBatcher();
  let rows = 0;
  let rejected = 0;
  let batches = 0;
  for await (const record of readCsv(input.stream, input.name, { delimiter: ',', columns: undefined })) {
    rows++;
    const planned = planner.plan(record);
    if (isRejected(planned)) {
      rejected++;
      continue;
    }
    if (batcher.push(planned).full) batches++;
  }
  if (batcher.flush()) batches++;
  done(rows, { rejected, batches });
} else if (mode === 'csv-parse') {
  let rows = 0;
  for await (const _record of createReadStream(args.input).pipe(parse({ columns: true }))) rows++;
  done(rows);
} else {
  throw new Error(`unknown mode ${String(mode)}; use ddb-spread or csv-parse`);
}
