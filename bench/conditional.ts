/**
 * What --if-not-exists costs: loads of the same CSV with and without the condition, alternating in one run
 * (ABBA), each load a child process, (1) into bench/instantSink.ts (every call answered at once, so the
 * figures are the client's own: one PutItem a row against one BatchWriteItem per 25 rows) and (2) into
 * DynamoDB Local (a fresh table each load, so every condition holds). Prints items/s and client CPU per item
 * of each, and the conditional load's ratios to the unconditional one. And what a condition per row costs
 * (--item-conditions): the same rows as DynamoDB JSON lines, each with `attribute_not_exists(pk)` beside its
 * Item, against those lines without it under --if-not-exists (the same calls: what differs is reading the
 * condition from every line).
 * Prints figures; asserts nothing; not a test.
 *
 *   npm run build && npx tsx bench/conditional.ts [--rows 100000] [--local-rows 20000] [--repeats 2] [--concurrency 8]
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { generateCsv } from './data.js';
import { Harness } from './harness.js';
import { startInstantSink } from './instantSink.js';
import { cpuOf, fmtInt, median, table } from './report.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    'local-rows': { type: 'string', default: '20000' },
    repeats: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
  },
  strict: true,
});
const ROWS = Number(values.rows);
const LOCAL_ROWS = Number(values['local-rows']);
const REPEATS = Number(values.repeats);
const CONCURRENCY = Number(values.concurrency);

const log = (msg: string) => process.stdout.write(`${msg}\n`);
const harness = new Harness({ log, childTimeoutMs: 20 * 60_000, tablePrefix: 'conditional' });
harness.cleanupOnSignals();

interface Figures {
  itemsPerSecond: number[];
  cpuUsPerItem: number[];
}

interface Loader {
  name: string;
  args: string[];
  /** The input it reads: the CSV, or the same rows as DynamoDB JSON lines without or with a condition each. */
  input: 'csv' | 'ddb-json' | 'ddb-json-conditions';
}

const loaders: Loader[] = [
  { name: 'BatchWriteItem (no condition)', args: [], input: 'csv' },
  { name: '--if-not-exists (PutItem a row)', args: ['--if-not-exists'], input: 'csv' },
  { name: 'DynamoDB JSON, --if-not-exists', args: ['--if-not-exists', '--input-format', 'ddb-json'], input: 'ddb-json' },
  { name: 'DynamoDB JSON, --item-conditions', args: ['--item-conditions', '--input-format', 'ddb-json'], input: 'ddb-json-conditions' },
];

type Inputs = Record<Loader['input'], { path: string; rows: number }>;

/** The generated CSV's rows (pk,sk,status,amount,qty,payload) as DynamoDB JSON lines, and again with `attribute_not_exists(pk)` beside each Item. */
async function asDynamoJson(csv: { path: string; rows: number }): Promise<Inputs> {
  const plain = csv.path.replace(/\.csv$/, '.json');
  const conditioned = csv.path.replace(/\.csv$/, '.conditions.json');
  const a = createWriteStream(plain);
  const b = createWriteStream(conditioned);
  let header: string[] | undefined;
  for await (const line of createInterface({ input: createReadStream(csv.path), crlfDelay: Infinity })) {
    if (line === '') continue;
    if (!header) {
      header = line.split(',');
      continue;
    }
    // The payload (last) may be quoted with commas inside; the other cells have none.
    const cells = line.split(',');
    const head = cells.slice(0, 5);
    let payload = cells.slice(5).join(',');
    if (payload.startsWith('"')) payload = payload.slice(1, -1).replace(/""/g, '"');
    const [pk, sk, status, amount, qty] = head as [string, string, string, string, string];
    const item = { pk: { S: pk }, sk: { S: sk }, status: { S: status }, amount: { N: amount }, qty: { N: qty }, payload: { S: payload } };
    if (!a.write(`${JSON.stringify({ Item: item })}\n`)) await once(a, 'drain');
    if (!b.write(`${JSON.stringify({ Item: item, ConditionExpression: 'attribute_not_exists(pk)' })}\n`)) await once(b, 'drain');
  }
  a.end();
  b.end();
  await Promise.all([once(a, 'close'), once(b, 'close')]);
  return { csv, 'ddb-json': { path: plain, rows: csv.rows }, 'ddb-json-conditions': { path: conditioned, rows: csv.rows } };
}

/** Runs every loader REPEATS times (ABBA) against `target`; returns each loader's figures. */
async function measure(where: string, inputs: Inputs, target: (i: number) => Promise<{ endpoint: string; table: string }>, tmp: string) {
  const figures = new Map<string, Figures>(loaders.map((l) => [l.name, { itemsPerSecond: [], cpuUsPerItem: [] }]));
  for (let i = 0; i < REPEATS; i++) {
    for (const loader of i % 2 === 0 ? loaders : [...loaders].reverse()) {
      const file = inputs[loader.input];
      const { endpoint, table: name } = await target(i);
      const stats = await harness.runChild('runDdbSpread.ts', [
        '--input',
        file.path,
        '--table',
        name,
        '--endpoint',
        endpoint,
        '--concurrency',
        String(CONCURRENCY),
        '--rejects',
        join(tmp, `${name}.rejects.jsonl`),
        ...loader.args,
      ]);
      if (stats.items !== file.rows) log(`WARNING ${where} ${loader.name}: ${file.rows} rows, ${stats.items} written`);
      const f = figures.get(loader.name)!;
      f.itemsPerSecond.push(stats.items / stats.seconds);
      f.cpuUsPerItem.push((cpuOf(stats) * 1e6) / Math.max(1, stats.items));
      log(
        `${where}, ${loader.name} #${i + 1}: ${fmtInt(stats.items / stats.seconds)} items/s, client CPU ${cpuOf(stats).toFixed(2)} s (${f.cpuUsPerItem.at(-1)!.toFixed(1)} µs/item)`,
      );
    }
  }
  return figures;
}

function report(where: string, rows: number, figures: Map<string, Figures>): void {
  const [plain, conditional] = loaders.map((l) => figures.get(l.name)!);
  log('');
  log(`${where}: ${fmtInt(rows)} rows, --concurrency ${CONCURRENCY}, median of ${REPEATS}`);
  log(
    table(
      ['loader', 'items/s', 'client CPU µs/item'],
      loaders.map((l) => [l.name, fmtInt(median(figures.get(l.name)!.itemsPerSecond)), median(figures.get(l.name)!.cpuUsPerItem).toFixed(1)]),
    ),
  );
  const cpu = median(conditional!.cpuUsPerItem) / median(plain!.cpuUsPerItem);
  const speed = median(conditional!.itemsPerSecond) / median(plain!.itemsPerSecond);
  log(`--if-not-exists / no condition: client CPU per item ${cpu.toFixed(2)}x, items/s ${speed.toFixed(2)}x`);
  const [, , oneCondition, perRow] = loaders.map((l) => figures.get(l.name)!);
  log(
    `--item-conditions / --if-not-exists (DynamoDB JSON): client CPU per item ${(median(perRow!.cpuUsPerItem) / median(oneCondition!.cpuUsPerItem)).toFixed(2)}x, items/s ${(median(perRow!.itemsPerSecond) / median(oneCondition!.itemsPerSecond)).toFixed(2)}x`,
  );
}

try {
  await harness.compileChildren(['runDdbSpread.ts', 'childStats.ts']);
  const tmp = await harness.makeTempDir('conditional-bench-');
  const file = await asDynamoJson(await generateCsv(join(tmp, `rows-${ROWS}.csv`), ROWS, 20240601));
  const sink = await startInstantSink();
  let sinkFigures: Map<string, Figures>;
  try {
    sinkFigures = await measure('instant sink', file, (i) => Promise.resolve({ endpoint: sink.endpoint, table: `sink-${i}` }), tmp);
  } finally {
    await sink.close();
  }
  const localFile = await asDynamoJson(await generateCsv(join(tmp, `rows-${LOCAL_ROWS}.csv`), LOCAL_ROWS, 20240601));
  await harness.startLocal();
  let last: string | undefined;
  const localFigures = await measure(
    'DynamoDB Local',
    localFile,
    async () => {
      if (last) await harness.dropTable(last);
      last = await harness.createTable();
      return { endpoint: harness.endpoint, table: last };
    },
    tmp,
  );
  report('instant sink', ROWS, sinkFigures);
  report('DynamoDB Local', LOCAL_ROWS, localFigures);
} finally {
  await harness.cleanup();
}
