import { openStripedRead } from './src/load/stripedRecords.ts';
import { createRowPlanner } from './src/typing/planRow.ts';
import { readCsv } from './src/reading/readCsv.ts';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
const f = '/tmp/fw/big.csv';
const size = (await stat(f)).size;
const mode = process.argv[2];
let t = performance.now();
let n = 0;
if (mode === 'plain') {
  for await (const r of readCsv(createReadStream(f, { highWaterMark: 64 * 1024 }), f, { delimiter: ',', columns: undefined })) n++;
} else {
  const planner = createRowPlanner({ keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } }, types: { amount: 'N', qty: 'N' }, infer: false, empty: 'omit', jsonFlavor: 'json' } as never);
  const s = await openStripedRead({ path: f, file: f, size, how: { syntax: 'csv', delimiter: ',', columns: undefined }, parts: 64, probe: planner });
  console.log('open', (performance.now() - t).toFixed(0));
  t = performance.now();
  for await (const r of s!.records) n++;
}
console.log(mode, (performance.now() - t).toFixed(0), 'ms', n, process.cpuUsage());
