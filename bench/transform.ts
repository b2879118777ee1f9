/**
 * What --transform costs the client: loads of the same CSV into bench/instantSink.ts (an endpoint that
 * accepts every BatchWriteItem at once, so the figures are the client's own) with no transform and with an
 * identity transform (a module whose default export returns the item it is given), alternating in one run
 * (ABBA), each load a child process. Prints items/s and client CPU per item of each, and their ratios.
 * Prints figures; asserts nothing; not a test.
 *
 *   npm run build && npx tsx bench/transform.ts [--rows 200000] [--repeats 3] [--concurrency 8]
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateCsv } from './data.js';
import { Harness } from './harness.js';
import { startInstantSink } from './instantSink.js';
import { cpuOf, fmtInt, median, table } from './report.js';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '200000' }, repeats: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '8' } },
  strict: true,
});
const ROWS = Number(values.rows);
const REPEATS = Number(values.repeats);
const CONCURRENCY = Number(values.concurrency);

const log = (msg: string) => process.stdout.write(`${msg}\n`);
const harness = new Harness({ log, childTimeoutMs: 10 * 60_000, tablePrefix: 'transform' });
harness.cleanupOnSignals();

interface Figures {
  itemsPerSecond: number[];
  cpuUsPerItem: number[];
}

try {
  await harness.compileChildren(['runDdbSpread.ts', 'childStats.ts']);
  const tmp = await harness.makeTempDir('transform-bench-');
  const file = await generateCsv(join(tmp, `rows-${ROWS}.csv`), ROWS, 20240601);
  const identity = join(tmp, 'identity.mjs');
  await writeFile(identity, 'export default function identity(item) {\n  return item;\n}\n');
  // A load with a transform is not read in stripes (the auto order reads through its window instead, since
  // stripes are cut by the input's own keys): `--order window` without a transform is the same reading, so
  // the identity's ratio to it is the transform's own cost, its ratio to the default what a user sees.
  const loaders: Array<{ name: string; args: string[] }> = [
    { name: 'no transform (default order)', args: [] },
    { name: 'no transform, --order window', args: ['--order', 'window'] },
    { name: '--transform identity.mjs', args: ['--transform', identity] },
  ];
  const figures = new Map<string, Figures>(loaders.map((l) => [l.name, { itemsPerSecond: [], cpuUsPerItem: [] }]));
  const sink = await startInstantSink();
  try {
    for (let i = 0; i < REPEATS; i++) {
      for (const loader of i % 2 === 0 ? loaders : [...loaders].reverse()) {
        const stats = await harness.runChild('runDdbSpread.ts', [
          '--input',
          file.path,
          '--table',
          `sink-${i}`,
          '--endpoint',
          sink.endpoint,
          '--concurrency',
          String(CONCURRENCY),
          '--rejects',
          join(tmp, `sink-${i}.rejects.jsonl`),
          ...loader.args,
        ]);
        if (stats.items !== file.rows) log(`WARNING ${loader.name}: ${file.rows} rows, ${stats.items} written`);
        const f = figures.get(loader.name)!;
        f.itemsPerSecond.push(stats.items / stats.seconds);
        f.cpuUsPerItem.push((cpuOf(stats) * 1e6) / Math.max(1, stats.items));
        log(
          `${loader.name} #${i + 1}: ${fmtInt(stats.items / stats.seconds)} items/s, client CPU ${cpuOf(stats).toFixed(2)} s (${f.cpuUsPerItem.at(-1)!.toFixed(1)} µs/item), other processes ${stats.otherCpuS?.toFixed(1) ?? '?'} s`,
        );
      }
    }
  } finally {
    await sink.close();
  }
  const [none, window, identityFigures] = loaders.map((l) => figures.get(l.name)!);
  const rows = loaders.map((l) => {
    const f = figures.get(l.name)!;
    return [l.name, fmtInt(median(f.itemsPerSecond)), median(f.cpuUsPerItem).toFixed(1)];
  });
  log('');
  log(`--transform overhead: ${fmtInt(ROWS)} rows into the instant sink, --concurrency ${CONCURRENCY}, median of ${REPEATS}`);
  log(table(['loader', 'items/s', 'client CPU µs/item'], rows));
  const ratios = (base: Figures) => {
    const cpu = median(identityFigures!.cpuUsPerItem) / median(base.cpuUsPerItem);
    const extra = median(identityFigures!.cpuUsPerItem) - median(base.cpuUsPerItem);
    const speed = median(identityFigures!.itemsPerSecond) / median(base.itemsPerSecond);
    return `client CPU per item ${cpu.toFixed(3)}x (${extra >= 0 ? '+' : ''}${extra.toFixed(1)} µs/item), items/s ${speed.toFixed(3)}x`;
  };
  log(`identity transform / no transform, --order window (the same reading): ${ratios(window!)}`);
  log(`identity transform / no transform, default order (stripes where the file allows): ${ratios(none!)}`);
} finally {
  await harness.cleanup();
}
