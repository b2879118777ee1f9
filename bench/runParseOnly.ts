/**
 * Bench child: reading and typing with no writes.
 *   node --import tsx bench/runParseOnly.ts ddb-spread --input f.csv   read + plan + batch (pipeline.ts, built dist/)
 *   node --import tsx bench/runParseOnly.ts ddb-spread-stripes --input f.csv   the same, read in stripes as a default load reads
 *   node --import tsx bench/runParseOnly.ts csv-parse --input f.csv    csv-parse with columns:true, nothing else
 *   node --import tsx bench/runParseOnly.ts jsonl-parse --input f.jsonl  readline and JSON.parse a line, nothing else
 * bench.ts runs a plain-JS transpile of this file (no tsx loader in the measured process); by hand,
 * `node --import tsx` works too (its loader thread adds ~28 MB RSS).
 */
import { parse } from 'csv-parse';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { childArgs, startMeasuring } from './childStats.js';
import { tmpdir } from 'node:os';
import { plannedWrites, writeOrderer } from './pipeline.js';

const [mode, ...rest] = process.argv.slice(2);
const args = childArgs(rest);
const done = startMeasuring();

if (mode === 'ddb-spread' || mode === 'ddb-spread-stripes') {
  // load()'s stages (src/load/stages.ts through pipeline.ts) in input order, minus describeTable and the writer.
  const input = await plannedWrites(args.input, { stripes: mode === 'ddb-spread-stripes' });
  const orderer = writeOrderer('input', { windowRows: 1, memoryBytes: 64 * 1024 * 1024, tempDir: tmpdir(), inputBytes: input.inputBytes });
  const batches = await input.countBatches(orderer);
  await orderer.close();
  done(input.counts.rows, { rejected: input.counts.rejected, batches, parts: input.parts });
} else if (mode === 'csv-parse') {
  let rows = 0;
  for await (const _record of createReadStream(args.input).pipe(parse({ columns: true }))) rows++;
  done(rows);
} else if (mode === 'jsonl-parse') {
  let rows = 0;
  for await (const line of createInterface({ input: createReadStream(args.input), crlfDelay: Infinity })) {
    if (line.length > 0 && JSON.parse(line) !== undefined) rows++;
  }
  done(rows);
} else {
  throw new Error(`unknown mode ${String(mode)}; use ddb-spread, csv-parse or jsonl-parse`);
}
